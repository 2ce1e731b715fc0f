// RUN: dlc-opt %s -p cpu | filecheck %s

// Two dense layers sharing one structure: graph-opt fuses matmul + relu into groups, the two
// groups become one kernel (their weights are arguments), and the intermediate between the
// calls lives in the planned workspace: one buffer taken from its cache slot in @main, a byte
// offset into it.

// CHECK-LABEL: llvm.func @main
// CHECK:         %[[WS:.*]] = llvm.call @dlc_buffer_take
// CHECK:         llvm.call @[[KERNEL:fused_matmul_relu_0]](%{{.*}}, %{{.*}}, %[[VIEW:.*]]) :
// CHECK:         llvm.call @[[KERNEL]](%[[VIEW]], %{{.*}}, %{{.*}}) :
// CHECK:         llvm.call @dlc_buffer_release(%{{.*}}, %[[WS]])
// CHECK:       llvm.func internal @[[KERNEL]](
// CHECK-NOT:   llvm.func internal @fused_matmul_relu_1
// CHECK:       llvm.mlir.global external constant @dlc_metadata
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w1 = graph.constant dense<0.5> : tensor<8x8xf32>
  %w2 = graph.constant dense<0.25> : tensor<8x8xf32>
  %a = graph.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = graph.relu %a : tensor<4x8xf32>
  %c = graph.matmul %b, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d = graph.relu %c : tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}
