// RUN: dlc-opt %s --split-input-file -p graph-conv-subsample | filecheck %s

// A 1x1 conv with stride 2 (ResNet's downsampling shortcut): it reads input rows and columns
// 0, 2, 4; the slice keeps those, and the conv runs with stride 1 on the 3x3 plane.

// CHECK-LABEL: @pointwise_stride_2
// CHECK-SAME:  (%[[X:.*]]: tensor<1x4x6x6xf32>, %[[W:.*]]: tensor<8x4x1x1xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT:  %[[S:.*]] = graph.slice %[[X]] {starts = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 4, 3, 3>, steps = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.conv2d %[[S]], %[[W]], %[[B]] : (tensor<1x4x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
// CHECK-NEXT:  func.return %[[R]]
func.func @pointwise_stride_2(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x1x1xf32>, %b: tensor<8xf32>) -> tensor<1x8x3x3xf32> {
  %r = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
  func.return %r : tensor<1x8x3x3xf32>
}

// -----

// Only the axis with one tap is subsampled: a 3x1 kernel with strides (2, 3) on a 7x7 input
// keeps its stride 2 (and padding) down the rows; the columns 0, 3, 6 are sliced out.

// CHECK-LABEL: @one_axis
// CHECK-NEXT:  %[[S:.*]] = graph.slice %{{.*}} {starts = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 7, 3>, steps = array<i64: 1, 1, 1, 3>}
// CHECK-NEXT:  graph.conv2d %[[S]], %{{.*}} {strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 1, 0>, dilation = array<i64: 2, 1>} : (tensor<1x2x7x3xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x3x3xf32>
func.func @one_axis(%x: tensor<1x2x7x7xf32>, %w: tensor<4x2x3x1xf32>) -> tensor<1x4x3x3xf32> {
  %r = graph.conv2d %x, %w {strides = array<i64: 2, 3>, padding = array<i64: 1, 0, 1, 0>, dilation = array<i64: 2, 1>} : (tensor<1x2x7x7xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x3x3xf32>
  func.return %r : tensor<1x4x3x3xf32>
}

// -----

// Channels last (NHWC / HWIO, as graph-convert-layout writes a MobileNet's convs), grouped:
// the slice steps along the H and W positions of the layout.

// CHECK-LABEL: @nhwc_grouped
// CHECK-NEXT:  %[[S:.*]] = graph.slice %{{.*}} {starts = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 2, 4>, steps = array<i64: 1, 2, 2, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK-NEXT:  graph.conv2d %[[S]], %{{.*}} {groups = 2 : i64, layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x2x2x4xf32>, tensor<1x1x2x6xf32>) -> tensor<1x2x2x6xf32>
func.func @nhwc_grouped(%x: tensor<1x4x4x4xf32>, %w: tensor<1x1x2x6xf32>) -> tensor<1x2x2x6xf32> {
  %r = graph.conv2d %x, %w {strides = array<i64: 2, 2>, groups = 2 : i64, layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x4xf32>, tensor<1x1x2x6xf32>) -> tensor<1x2x2x6xf32>
  func.return %r : tensor<1x2x2x6xf32>
}

// -----

// Left alone: stride 1; a strided 3x3 kernel (its taps overlap the lines between); a 1x1
// kernel with padding along the strided axis (border outputs read the padding).

// CHECK-LABEL: @negative
// CHECK-NOT:   graph.slice
// CHECK:       func.return
func.func @negative(%x: tensor<1x2x6x6xf32>, %w1: tensor<4x2x1x1xf32>, %w3: tensor<4x2x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>) {
  %a = graph.conv2d %x, %w1 : (tensor<1x2x6x6xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x6x6xf32>
  %b = graph.conv2d %x, %w3 {strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32>
  %c = graph.conv2d %x, %w1 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
  func.return %a, %b, %c : tensor<1x4x6x6xf32>, tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>
}
