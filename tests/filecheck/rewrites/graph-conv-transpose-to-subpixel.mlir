// RUN: dlc-opt %s --split-input-file -p graph-conv-transpose-to-subpixel | filecheck %s

// Kernel 2, stride 2: each output phase (p_h, p_w) is one tap, a 1x1 conv whose weight is
// w[:, :, p_h, p_w]; the four phases become channels, shuffled into place; no crop.

// CHECK-LABEL: @k2_s2_phases
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x3x3xf32>)
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<4x1x1x1xf32>
// CHECK-NEXT:  %[[PHASES:.*]] = graph.conv2d %[[X]], %[[W]] : (tensor<1x1x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:  %[[SPLIT:.*]] = graph.reshape %[[PHASES]] {shape = array<i64: 1, 1, 2, 2, 1, 3, 3>}
// CHECK-NEXT:  %[[SHUFFLED:.*]] = graph.transpose %[[SPLIT]] {perm = array<i64: 0, 1, 4, 5, 2, 6, 3>} : (tensor<1x1x2x2x1x3x3xf32>) -> tensor<1x1x1x3x2x3x2xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[SHUFFLED]] {shape = array<i64: 1, 1, 6, 6>}
// CHECK-NEXT:  func.return %[[R]] : tensor<1x1x6x6xf32>
// CHECK-NOT:   graph.conv_transpose2d
func.func @k2_s2_phases(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x6x6xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x6x6xf32>
  func.return %r : tensor<1x1x6x6xf32>
}

// -----

// Kernel 3, stride 2, pads 1 and output padding 1 (U-Net's decoder): two taps per phase (the
// 3-tap kernel padded to 4 with zeros), the conv padded by one on each side, the bias repeated
// for the four phases, the full 10x10 output cropped at (1, 1).

// CHECK-LABEL: @k3_s2_crop
// CHECK:       %[[B:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<12xf32>
// CHECK-NEXT:  %[[PHASES:.*]] = graph.conv2d %{{.*}}, %{{.*}}, %[[B]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<12x2x2x2xf32>, tensor<12xf32>) -> tensor<1x12x5x5xf32>
// CHECK-NEXT:  graph.reshape %[[PHASES]] {shape = array<i64: 1, 1, 2, 2, 3, 5, 5>}
// CHECK-NEXT:  graph.transpose
// CHECK-NEXT:  %[[FULL:.*]] = graph.reshape %{{.*}} {shape = array<i64: 1, 3, 10, 10>}
// CHECK-NEXT:  %[[R:.*]] = graph.slice %[[FULL]] {starts = array<i64: 0, 0, 1, 1>, sizes = array<i64: 1, 3, 8, 8>, steps = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:  func.return %[[R]]
func.func @k3_s2_crop(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<2x3x3x3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
  func.return %r : tensor<1x3x8x8xf32>
}

// -----

// Stride 1 with groups: one phase, so no shuffle; the flipped kernel on the input padded by
// K-1-pad; the groups kept.

// CHECK-LABEL: @s1_groups
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}3.000000e+00, 2.000000e+00, 1.000000e+00]]], {{\[\[\[}}6.000000e+00, 5.000000e+00, 4.000000e+00]]]]> : tensor<2x1x1x3xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.conv2d %{{.*}}, %[[W]] {padding = array<i64: 0, 1, 0, 1>, groups = 2 : i64} : (tensor<1x2x1x5xf32>, tensor<2x1x1x3xf32>) -> tensor<1x2x1x5xf32>
// CHECK-NEXT:  func.return %[[R]]
func.func @s1_groups(%x: tensor<1x2x1x5xf32>) -> tensor<1x2x1x5xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0]]], [[[4.0, 5.0, 6.0]]]]> : tensor<2x1x1x3xf32>
  %r = graph.conv_transpose2d %x, %w {padding = array<i64: 0, 1, 0, 1>, groups = 2 : i64} : (tensor<1x2x1x5xf32>, tensor<2x1x1x3xf32>) -> tensor<1x2x1x5xf32>
  func.return %r : tensor<1x2x1x5xf32>
}

// -----

// CHECK-LABEL: @negative_dilated
// CHECK:       graph.conv_transpose2d
func.func @negative_dilated(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x9x9xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x3x3xf32>
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x9x9xf32>
  func.return %r : tensor<1x1x9x9xf32>
}

// -----

// CHECK-LABEL: @negative_weight_not_constant
// CHECK:       graph.conv_transpose2d
func.func @negative_weight_not_constant(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x6x6xf32> {
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x6x6xf32>
  func.return %r : tensor<1x1x6x6xf32>
}

// -----

// Over a runtime height and width it stays: its depth-to-space would reshape runtime dims
// into one (the compute definition makes the sub-pixel conv itself, `topi.nn`).
// CHECK-LABEL: @negative_runtime_sizes
// CHECK:       graph.conv_transpose2d
func.func @negative_runtime_sizes(%x: tensor<?x1x?x?xf32>) -> tensor<?x1x?x?xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x2x2xf32>
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<?x1x?x?xf32>, tensor<1x1x2x2xf32>) -> tensor<?x1x?x?xf32>
  func.return %r : tensor<?x1x?x?xf32>
}
