// RUN: dlc-opt %s --split-input-file -p graph-conv-column-to-row | filecheck %s

// A 3x1 conv down a 6x1 column, stride 2 and dilation 1 down the column: the same conv along
// a 1x6 row (strides, dilations and pads exchanged), the weight a reshaped constant.

// CHECK-LABEL: @column
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x6x1xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT:  %[[ROW:.*]] = graph.reshape %[[X]] {shape = array<i64: 1, 2, 1, 6>} : (tensor<1x2x6x1xf32>) -> tensor<1x2x1x6xf32>
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<1.000000e+00> : tensor<4x2x1x3xf32>
// CHECK-NEXT:  %[[CONV:.*]] = graph.conv2d %[[ROW]], %[[W]], %[[B]] {strides = array<i64: 1, 2>, padding = array<i64: 0, 1, 0, 0>} : (tensor<1x2x1x6xf32>, tensor<4x2x1x3xf32>, tensor<4xf32>) -> tensor<1x4x1x3xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[CONV]] {shape = array<i64: 1, 4, 3, 1>} : (tensor<1x4x1x3xf32>) -> tensor<1x4x3x1xf32>
// CHECK-NEXT:  func.return %[[R]]
func.func @column(%x: tensor<1x2x6x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x1xf32> {
  %w = graph.constant dense<1.0> : tensor<4x2x3x1xf32>
  %r = graph.conv2d %x, %w, %b {strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 0, 0>} : (tensor<1x2x6x1xf32>, tensor<4x2x3x1xf32>, tensor<4xf32>) -> tensor<1x4x3x1xf32>
  func.return %r : tensor<1x4x3x1xf32>
}

// -----

// A weight that is not a constant is reshaped by an op.

// CHECK-LABEL: @weight_argument
// CHECK:       graph.reshape %{{.*}} {shape = array<i64: 3, 2, 1, 2>} : (tensor<3x2x2x1xf32>) -> tensor<3x2x1x2xf32>
// CHECK:       graph.conv2d {{.*}} -> tensor<1x3x1x4xf32>
func.func @weight_argument(%x: tensor<1x2x5x1xf32>, %w: tensor<3x2x2x1xf32>) -> tensor<1x3x4x1xf32> {
  %r = graph.conv2d %x, %w : (tensor<1x2x5x1xf32>, tensor<3x2x2x1xf32>) -> tensor<1x3x4x1xf32>
  func.return %r : tensor<1x3x4x1xf32>
}

// -----

// CHECK-LABEL: @negative_wide_input
// CHECK-NEXT:  graph.constant
// CHECK-NEXT:  graph.conv2d %{{.*}} : (tensor<1x2x6x2xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x4x2xf32>
func.func @negative_wide_input(%x: tensor<1x2x6x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<1.0> : tensor<4x2x3x1xf32>
  %r = graph.conv2d %x, %w : (tensor<1x2x6x2xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x4x2xf32>
  func.return %r : tensor<1x4x4x2xf32>
}

// -----

// CHECK-LABEL: @negative_side_padding
// CHECK-NEXT:  graph.constant
// CHECK-NEXT:  graph.conv2d %{{.*}} : (tensor<1x2x6x1xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x4x3xf32>
func.func @negative_side_padding(%x: tensor<1x2x6x1xf32>) -> tensor<1x4x4x3xf32> {
  %w = graph.constant dense<1.0> : tensor<4x2x3x1xf32>
  %r = graph.conv2d %x, %w {padding = array<i64: 0, 1, 0, 1>} : (tensor<1x2x6x1xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x4x3xf32>
  func.return %r : tensor<1x4x4x3xf32>
}
