// RUN: dlc-opt %s --split-input-file -p 'graph-conv-split-bands{min_saved_macs=0 min_band_outputs=1}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p graph-conv-split-bands | filecheck %s --check-prefix=DEFAULT
// RUN: dlc-opt %s --split-input-file -p 'graph-conv-split-bands{min_saved_macs=0 min_band_outputs=1}' | filecheck %s --check-prefix=COUNT

// A 3x1 conv, dilation 3 and padding 3 down a 4-row map: the top tap reads the image only for
// output row 3, the bottom one only for row 0. Three bands: row 0 (taps 1 and 2, over the
// whole input), rows 1-2 (the centre tap alone, a 1x1 conv of input rows 1-2), row 3 (taps 0
// and 1), concatenated along H; no band has padding.
// CHECK-LABEL: @row_bands
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x4x2xf32>, %[[B:.*]]: tensor<1xf32>)
// CHECK-NEXT:  %[[W0:.*]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00], [3.000000e+00]]]]> : tensor<1x1x2x1xf32>
// CHECK-NEXT:  %[[TOP:.*]] = graph.conv2d %[[X]], %[[W0]], %[[B]] {dilation = array<i64: 3, 1>} : (tensor<1x1x4x2xf32>, tensor<1x1x2x1xf32>, tensor<1xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:  %[[ROWS:.*]] = graph.slice %[[X]] {starts = array<i64: 0, 0, 1, 0>, sizes = array<i64: 1, 1, 2, 2>, steps = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:  %[[W1:.*]] = graph.constant dense<2.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT:  %[[MID:.*]] = graph.conv2d %[[ROWS]], %[[W1]], %[[B]] : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:  %[[W2:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00], [2.000000e+00]]]]> : tensor<1x1x2x1xf32>
// CHECK-NEXT:  %[[BOTTOM:.*]] = graph.conv2d %[[X]], %[[W2]], %[[B]] {dilation = array<i64: 3, 1>} : (tensor<1x1x4x2xf32>, tensor<1x1x2x1xf32>, tensor<1xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.concat %[[TOP]], %[[MID]], %[[BOTTOM]] {axis = 2 : i64}
// CHECK-NEXT:  func.return %[[R]]
// The default options keep a conv this small whole (it saves 8 multiply-adds, not 2^20 per
// extra conv, and its bands have 2 and 4 outputs, not 16).
// DEFAULT-LABEL: @row_bands
// DEFAULT-NEXT:  graph.constant
// DEFAULT-NEXT:  graph.conv2d {{.*}} {padding = array<i64: 3, 0, 3, 0>, dilation = array<i64: 3, 1>}
// DEFAULT-NEXT:  func.return
func.func @row_bands(%x: tensor<1x1x4x2xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x2xf32> {
  %w = graph.constant dense<[[[[1.0], [2.0], [3.0]]]]> : tensor<1x1x3x1xf32>
  %r = graph.conv2d %x, %w, %b {padding = array<i64: 3, 0, 3, 0>, dilation = array<i64: 3, 1>} : (tensor<1x1x4x2xf32>, tensor<1x1x3x1xf32>, tensor<1xf32>) -> tensor<1x1x4x2xf32>
  func.return %r : tensor<1x1x4x2xf32>
}

// -----

// DeepLab's ASPP in small: a 3x3 conv, dilation 3 and padding 3, on a 4x4 map splits along H
// into three bands, and each of those along W: nine convs (the centre one 1x1), three concats
// along W and one along H.
// CHECK-LABEL: @both_axes
// CHECK:       graph.conv2d {{.*}} : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK:       %[[R:.*]] = graph.concat {{.*}} {axis = 2 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:  func.return %[[R]]
// COUNT-LABEL:    @both_axes
// COUNT-COUNT-9:  graph.conv2d
// COUNT-NOT:      graph.conv2d
// COUNT:          func.return
func.func @both_axes(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %r = graph.conv2d %x, %w {padding = array<i64: 3, 3, 3, 3>, dilation = array<i64: 3, 3>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  func.return %r : tensor<1x1x4x4xf32>
}

// -----

// A weight that is not a constant is cut by a slice.
// CHECK-LABEL: @weight_argument
// CHECK:       graph.slice %w {starts = array<i64: 0, 0, 1, 0>, sizes = array<i64: 1, 1, 2, 1>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x1xf32>) -> tensor<1x1x2x1xf32>
// CHECK:       graph.concat {{.*}} {axis = 2 : i64}
func.func @weight_argument(%x: tensor<1x1x4x2xf32>, %w: tensor<1x1x3x1xf32>) -> tensor<1x1x4x2xf32> {
  %r = graph.conv2d %x, %w {padding = array<i64: 3, 0, 3, 0>, dilation = array<i64: 3, 1>} : (tensor<1x1x4x2xf32>, tensor<1x1x3x1xf32>) -> tensor<1x1x4x2xf32>
  func.return %r : tensor<1x1x4x2xf32>
}

// -----

// A 'same' 3x3 conv on an 8x8 map: its border taps read padding over one row or column of
// eight, 1/12 of the multiply-adds, less than min_saved_fraction: the conv stays whole.
// CHECK-LABEL: @negative_same_conv
// CHECK-NEXT:  graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>}
// CHECK-NEXT:  func.return
func.func @negative_same_conv(%x: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32> {
  %r = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32>
  func.return %r : tensor<1x1x8x8xf32>
}

// -----

// Output row 0 of this conv reads only padding (padding 4 above a 3x1 kernel of dilation 1):
// that band would be the bias alone, so the conv stays whole.
// CHECK-LABEL: @negative_padding_only_output
// CHECK-NEXT:  graph.conv2d %x, %w {padding = array<i64: 4, 0, 0, 0>}
// CHECK-NEXT:  func.return
func.func @negative_padding_only_output(%x: tensor<1x1x4x2xf32>, %w: tensor<1x1x3x1xf32>) -> tensor<1x1x6x2xf32> {
  %r = graph.conv2d %x, %w {padding = array<i64: 4, 0, 0, 0>} : (tensor<1x1x4x2xf32>, tensor<1x1x3x1xf32>) -> tensor<1x1x6x2xf32>
  func.return %r : tensor<1x1x6x2xf32>
}
