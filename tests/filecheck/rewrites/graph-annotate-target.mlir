// RUN: dlc-opt %s --split-input-file -p 'graph-annotate-target{targets="opencl,llvm"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-annotate-target{targets="opencl,llvm" overrides="graph.matmul=llvm,last=llvm"}' | filecheck %s --check-prefix=OVERRIDE
// RUN: not dlc-opt %s -p 'graph-annotate-target{targets="opencl,tpu"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// UNKNOWN: unknown partition target 'tpu' (known targets: cblas, llvm, onednn, opencl)

// Every op goes to the first target that supports it; constants are not placed.

// CHECK-LABEL: @first_supporting_target
// CHECK:       graph.constant dense<1.000000e+00> : tensor<2x4xf32>
// CHECK-NEXT:  graph.relu %{{.*}} {dlc.partition_target = "opencl"}
// CHECK:       graph.matmul %{{.*}} {dlc.partition_target = "opencl"}
// CHECK:       graph.tanh %{{.*}} {dlc.partition_target = "opencl"}

// Overrides by op name and by node name (the op's location) win over the predicates.

// OVERRIDE-LABEL: @first_supporting_target
// OVERRIDE:       graph.relu %{{.*}} {dlc.partition_target = "opencl"}
// OVERRIDE:       graph.matmul %{{.*}} {dlc.partition_target = "llvm"}
// OVERRIDE:       graph.tanh %{{.*}} {dlc.partition_target = "llvm"}
func.func @first_supporting_target(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %c = graph.constant dense<1.0> : tensor<2x4xf32>
  %a = graph.relu %x : tensor<2x3xf32>
  %m = graph.matmul %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = graph.tanh %m : tensor<2x4xf32> loc("last")
  func.return %t : tensor<2x4xf32>
}
