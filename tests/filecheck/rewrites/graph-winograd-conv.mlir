// RUN: dlc-opt %s --split-input-file -p 'graph-winograd-conv{min-channels=1 min-width=1}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-winograd-conv{tile=2 min-channels=1 min-width=1}' | filecheck %s --check-prefix=TILE2
// RUN: dlc-opt %s --split-input-file -p graph-winograd-conv | filecheck %s --check-prefix=DEFAULT

// The weight column [1, 2, 3] transformed by F(2, 3)'s G: [1, (1+2+3)/2, (1-2+3)/2, 3].

// TILE2-LABEL: @weight_transform
// TILE2-SAME:  (%[[X:.*]]: tensor<1x1x6x5xf32>, %[[B:.*]]: tensor<1xf32>)
// TILE2-NEXT:  %[[U:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}3.000000e+00]]], {{\[\[\[}}1.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<4x1x1x1xf32>
// TILE2-NEXT:  %[[R:.*]] = graph.conv2d_winograd %[[X]], %[[U]], %[[B]] {padding = array<i64: 1, 0, 1, 0>, tile = 2 : i64} : (tensor<1x1x6x5xf32>, tensor<4x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x6x5xf32>
// TILE2-NEXT:  func.return %[[R]]

// 6 output rows: F(4, 3) takes 2 tiles of 6 products (12 of the direct 18), F(2, 3) 3 of 4.
// CHECK-LABEL: @weight_transform
// CHECK:       graph.conv2d_winograd {{.*}}tile = 4 : i64{{.*}} : (tensor<1x1x6x5xf32>, tensor<6x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x6x5xf32>
// CHECK-NOT:   graph.conv2d %

// DEFAULT-LABEL: @weight_transform
// DEFAULT:       graph.conv2d %
// DEFAULT-NOT:   graph.conv2d_winograd
func.func @weight_transform(%x: tensor<1x1x6x5xf32>, %b: tensor<1xf32>) -> tensor<1x1x6x5xf32> {
  %w = graph.constant dense<[[[[1.0], [2.0], [3.0]]]]> : tensor<1x1x3x1xf32>
  %r = graph.conv2d %x, %w, %b {padding = array<i64: 1, 0, 1, 0>} : (tensor<1x1x6x5xf32>, tensor<1x1x3x1xf32>, tensor<1xf32>) -> tensor<1x1x6x5xf32>
  func.return %r : tensor<1x1x6x5xf32>
}

// -----

// ResNet's 3x3 conv at 16 channels and 14x14: rewritten with the default options.

// DEFAULT-LABEL: @resnet_conv
// DEFAULT-NEXT:  %[[U:.*]] = graph.constant {{.*}} : tensor<6x16x16x3xf32>
// DEFAULT-NEXT:  graph.conv2d_winograd %{{.*}}, %[[U]] {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<1x16x14x14xf32>, tensor<6x16x16x3xf32>) -> tensor<1x16x14x14xf32>
func.func @resnet_conv(%x: tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32> {
  %w = graph.constant dense<0.5> : tensor<16x16x3x3xf32>
  %r = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x14x14xf32>
  func.return %r : tensor<1x16x14x14xf32>
}

// -----

// Left alone: a strided conv, a grouped one, a weight that is not a constant, a 1-row kernel,
// and one output row (no tile saves a quarter of the multiplies).

// CHECK-LABEL: @not_rewritten
// CHECK-NOT:   graph.conv2d_winograd
// CHECK-COUNT-5: graph.conv2d %
// CHECK-NOT:   graph.conv2d_winograd
func.func @not_rewritten(%x: tensor<1x2x8x8xf32>, %v: tensor<2x2x3x3xf32>, %y: tensor<1x2x3x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>) {
  %w = graph.constant dense<1.0> : tensor<2x2x3x3xf32>
  %g = graph.constant dense<1.0> : tensor<2x1x3x3xf32>
  %p = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %strided = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %grouped = graph.conv2d %x, %g {padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x8x8xf32>
  %argument = graph.conv2d %x, %v {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x8xf32>
  %pointwise = graph.conv2d %x, %p : (tensor<1x2x8x8xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x8x8xf32>
  %one_row = graph.conv2d %y, %w {padding = array<i64: 0, 1, 0, 1>} : (tensor<1x2x3x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x1x8xf32>
  func.return %strided, %grouped, %argument, %pointwise, %one_row : tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x1x8xf32>
}

// -----

// Convs over runtime planes (a model compiled over runtime shapes), of 64 and 16 channels:
// rewritten with F(4, 3), whatever their rows (counted at run time) and widths; one over a
// runtime batch of static 8x8 planes (graph-batch-rows compiles its rows as static blocks)
// stays direct.

// CHECK-LABEL: @runtime_plane
// CHECK:       graph.conv2d_winograd {{.*}}tile = 4 : i64{{.*}} -> tensor<?x64x?x?xf32>
// TILE2-LABEL: @runtime_plane
// TILE2:       graph.conv2d_winograd {{.*}}tile = 2 : i64{{.*}} -> tensor<?x64x?x?xf32>
// DEFAULT-LABEL: @runtime_plane
// DEFAULT:       graph.conv2d_winograd %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<?x64x?x?xf32>, tensor<6x64x64x3xf32>) -> tensor<?x64x?x?xf32>
// DEFAULT:       graph.conv2d_winograd %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<?x16x?x?xf32>, tensor<6x16x16x3xf32>) -> tensor<?x16x?x?xf32>
// DEFAULT:       graph.conv2d %{{.*}} : (tensor<?x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x8x8xf32>
func.func @runtime_plane(%x: tensor<?x64x?x?xf32>, %z: tensor<?x16x?x?xf32>, %y: tensor<?x16x8x8xf32>) -> (tensor<?x64x?x?xf32>, tensor<?x16x?x?xf32>, tensor<?x16x8x8xf32>) {
  %v = graph.constant dense<0.5> : tensor<64x64x3x3xf32>
  %w = graph.constant dense<0.5> : tensor<16x16x3x3xf32>
  %r = graph.conv2d %x, %v {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x64x?x?xf32>, tensor<64x64x3x3xf32>) -> tensor<?x64x?x?xf32>
  %t = graph.conv2d %z, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x16x?x?xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x?x?xf32>
  %s = graph.conv2d %y, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<?x16x8x8xf32>
  func.return %r, %t, %s : tensor<?x64x?x?xf32>, tensor<?x16x?x?xf32>, tensor<?x16x8x8xf32>
}
