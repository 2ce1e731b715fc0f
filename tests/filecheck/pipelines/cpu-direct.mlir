// RUN: dlc-opt %s -p cpu-direct | filecheck %s
// RUN: dlc-opt %s -p cpu | filecheck %s --check-prefix=WINOGRAD

// A 3x3 conv with 16 channels: `cpu` runs it as Winograd F(4, 3) along the rows (the products
// of its 6 transform rows are one nest per call), `cpu-direct` as the direct conv.

// CHECK-LABEL: llvm.func @main
// CHECK:         llvm.call @fused_conv2d_relu_0(
// CHECK-NOT:     winograd
// CHECK:       llvm.mlir.global external constant @dlc_metadata

// WINOGRAD-LABEL: llvm.func @main
// WINOGRAD:         llvm.call @fused_conv2d_winograd_relu_0(
// WINOGRAD:       llvm.func internal @fused_conv2d_winograd_relu_0(
func.func @main(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %w = graph.constant dense<0.5> : tensor<16x16x3x3xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = graph.relu %c : tensor<1x16x8x8xf32>
  func.return %r : tensor<1x16x8x8xf32>
}
