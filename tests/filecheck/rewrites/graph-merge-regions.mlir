// RUN: dlc-opt %s --split-input-file -p graph-merge-regions | filecheck %s

// Consecutive ops of one target share a region; constants between them do not split it.

// CHECK-LABEL: @runs_of_one_target
// CHECK:       graph.relu {{.*}}dlc.partition_region = 0 : i64
// CHECK:       graph.sigmoid {{.*}}dlc.partition_region = 0 : i64
// CHECK:       graph.matmul {{.*}}dlc.partition_region = 1 : i64
// CHECK:       graph.add {{.*}}dlc.partition_region = 2 : i64
// CHECK:       graph.tanh {{.*}}dlc.partition_region = 2 : i64
func.func @runs_of_one_target(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %a = graph.relu %x {dlc.partition_target = "opencl"} : tensor<2x3xf32>
  %b = graph.sigmoid %a {dlc.partition_target = "opencl"} : tensor<2x3xf32>
  %m = graph.matmul %b, %w {dlc.partition_target = "llvm"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %c = graph.constant dense<1.0> : tensor<2x4xf32>
  %s = graph.add %m, %c {dlc.partition_target = "opencl"} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = graph.tanh %s {dlc.partition_target = "opencl"} : tensor<2x4xf32>
  func.return %t : tensor<2x4xf32>
}

// -----

// A region never spans ops of another function, nor a call between its ops.

// CHECK-LABEL: @split_by_call
// CHECK:       graph.relu {{.*}}dlc.partition_region = 0 : i64
// CHECK:       func.call @f
// CHECK:       graph.relu {{.*}}dlc.partition_region = 1 : i64
func.func @split_by_call(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = graph.relu %x {dlc.partition_target = "llvm"} : tensor<2xf32>
  %b = func.call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %c = graph.relu %b {dlc.partition_target = "llvm"} : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
