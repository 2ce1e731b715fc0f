// RUN: dlc-opt %s --split-input-file -p graph-partition --check-semantics | filecheck %s
// RUN: dlc-opt %s --split-input-file -p graph-partition{outline=cblas} | filecheck %s --check-prefix=OUTLINE

// Each region becomes a private function marked with its target, called in its place; its
// arguments are the values it reads from outside, its results those used after it; constants
// are copied into the regions that read them.

// CHECK-LABEL: @main
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>)
// CHECK-NEXT:  %[[A:.*]] = func.call @opencl_region_0(%[[X]]) {dlc.partition_target = "opencl"}
// CHECK-NEXT:  %[[M:.*]] = func.call @llvm_region_1(%[[A]], %[[W]]) {dlc.partition_target = "llvm"}
// CHECK-NEXT:  %[[T:.*]] = func.call @opencl_region_2(%[[M]]) {dlc.partition_target = "opencl"}
// CHECK-NEXT:  func.return %[[T]]
// CHECK:       func.func private @opencl_region_0({{.*}}) -> tensor<2x3xf32> attributes {dlc.partition_target = "opencl"}
// CHECK-NEXT:  graph.relu
// CHECK-NOT:   dlc.partition_region
// CHECK:       func.func private @llvm_region_1({{.*}}) -> tensor<2x4xf32> attributes {dlc.partition_target = "llvm"}
// CHECK-NEXT:  graph.matmul
// CHECK:       func.func private @opencl_region_2(%[[ARG:.*]]: tensor<2x4xf32>)
// CHECK-NEXT:  %[[C:.*]] = graph.constant dense<1.000000e+00>
// CHECK-NEXT:  %[[S:.*]] = graph.add %[[ARG]], %[[C]]
// CHECK-NEXT:  graph.tanh %[[S]]
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %c = graph.constant dense<1.0> : tensor<2x4xf32>
  %a = graph.relu %x {dlc.partition_target = "opencl", dlc.partition_region = 0 : i64} : tensor<2x3xf32>
  %m = graph.matmul %a, %w {dlc.partition_target = "llvm", dlc.partition_region = 1 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %s = graph.add %m, %c {dlc.partition_target = "opencl", dlc.partition_region = 2 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = graph.tanh %s {dlc.partition_target = "opencl", dlc.partition_region = 2 : i64} : tensor<2x4xf32>
  func.return %t : tensor<2x4xf32>
}

// -----

// A value made in a region and used both inside and after it is a result of the region.

// CHECK-LABEL: @value_escapes
// CHECK:       %[[A:.*]], %[[B:.*]] = func.call @llvm_region_0
// CHECK-NEXT:  graph.add %[[A]], %[[B]]
// CHECK:       func.return %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xf32>
func.func @value_escapes(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = graph.relu %x {dlc.partition_target = "llvm", dlc.partition_region = 0 : i64} : tensor<2xf32>
  %b = graph.tanh %a {dlc.partition_target = "llvm", dlc.partition_region = 0 : i64} : tensor<2xf32>
  %c = graph.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}

// -----

// An external target's region (cblas) reads constants as arguments; with outline=cblas the
// other regions stay in place, unmarked.

// CHECK-LABEL: @external_region
// CHECK:       %[[W:.*]] = graph.constant
// CHECK-NEXT:  %[[R:.*]] = func.call @llvm_region_0(%{{.*}}) {dlc.partition_target = "llvm"}
// CHECK-NEXT:  func.call @cblas_region_1(%[[R]], %[[W]]) {dlc.partition_target = "cblas"}
// CHECK:       func.func private @cblas_region_1(%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<3x4xf32>)
// CHECK-NEXT:  graph.matmul

// OUTLINE-LABEL: @external_region
// OUTLINE:       %[[W:.*]] = graph.constant
// OUTLINE-NEXT:  %[[R:.*]] = graph.relu %{{.*}} : tensor<2x3xf32>
// OUTLINE-NEXT:  func.call @cblas_region_1(%[[R]], %[[W]]) {dlc.partition_target = "cblas"}
// OUTLINE-NOT:   llvm_region
func.func @external_region(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = graph.constant dense<1.0> : tensor<3x4xf32>
  %r = graph.relu %x {dlc.partition_target = "llvm", dlc.partition_region = 0 : i64} : tensor<2x3xf32>
  %m = graph.matmul %r, %w {dlc.partition_target = "cblas", dlc.partition_region = 1 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %m : tensor<2x4xf32>
}
