// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p graph-mark-valid-extents | filecheck %s

// NonZero's indices, transposed: the valid extent moves to axis 0 of the result, which is
// marked for trimming by the count, returned as one more result.
// CHECK-LABEL: func.func @nonzero_transposed
// CHECK-SAME:  -> (tensor<6x2xi64> {onnx.name = "y", dlc.valid_extent = array<i64: 0, 1>}, tensor<i64> {dlc.extent_count, onnx.name = "y_count"})
// CHECK:         %[[I:.*]], %[[N:.*]] = graph.nonzero
// CHECK:         %[[T:.*]] = graph.transpose %[[I]]
// CHECK-NEXT:    func.return %[[T]], %[[N]] : tensor<6x2xi64>, tensor<i64>
func.func @nonzero_transposed(%x: tensor<2x3xf32>) -> (tensor<6x2xi64> {onnx.name = "y"}) {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %t = graph.transpose %i {perm = array<i64: 1, 0>} : (tensor<2x6xi64>) -> tensor<6x2xi64>
  func.return %t : tensor<6x2xi64>
}

// -----

// Gathering with the padded indices (the padding holds index 0) keeps the extent on the
// indices' axis; two results with one count share it; an unpadded result is left alone.
// CHECK-LABEL: func.func @gather_at_nonzero
// CHECK-SAME:  -> (tensor<1x6xf32> {dlc.valid_extent = array<i64: 1, 3>}, tensor<2x6xi64> {dlc.valid_extent = array<i64: 1, 3>}, tensor<6xf32>, tensor<i64> {dlc.extent_count})
// CHECK:         func.return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x6xf32>, tensor<2x6xi64>, tensor<6xf32>, tensor<i64>
func.func @gather_at_nonzero(%x: tensor<2x3xf32>, %f: tensor<6xf32>) -> (tensor<1x6xf32>, tensor<2x6xi64>, tensor<6xf32>) {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %row = graph.slice %i {starts = array<i64: 1, 0>, sizes = array<i64: 1, 6>, steps = array<i64: 1, 1>} : (tensor<2x6xi64>) -> tensor<1x6xi64>
  %g = graph.gather %f, %row {axis = 0 : i64} : (tensor<6xf32>, tensor<1x6xi64>) -> tensor<1x6xf32>
  func.return %g, %i, %f : tensor<1x6xf32>, tensor<2x6xi64>, tensor<6xf32>
}

// -----

// NonMaxSuppression's rows are padded along axis 0: an unsqueeze (a reshape keeping the axis)
// moves the extent to axis 1, a broadcast add of a [1, 1, 3] row keeps it, a concat along the
// last axis of two values padded alike keeps it.
// CHECK-LABEL: func.func @nms_reshaped_and_concatenated
// CHECK-SAME:  -> (tensor<1x4x6xi64> {dlc.valid_extent = array<i64: 1, 1>}, tensor<i64> {dlc.extent_count})
func.func @nms_reshaped_and_concatenated(%b: tensor<1x2x4xf32>, %s: tensor<1x2x2xf32>, %m: tensor<i64>, %t: tensor<f32>, %o: tensor<1x1x3xi64>) -> tensor<1x4x6xi64> {
  %r, %n = graph.non_max_suppression %b, %s, %m, %t {bound = 2 : i64} : tensor<1x2x4xf32>, tensor<1x2x2xf32>, tensor<i64>, tensor<f32> -> tensor<4x3xi64>, tensor<i64>
  %u = graph.reshape %r {shape = array<i64: 1, 4, 3>} : (tensor<4x3xi64>) -> tensor<1x4x3xi64>
  %a = graph.add %u, %o : (tensor<1x4x3xi64>, tensor<1x1x3xi64>) -> tensor<1x4x3xi64>
  %c = graph.concat %u, %a {axis = 2 : i64} : (tensor<1x4x3xi64>, tensor<1x4x3xi64>) -> tensor<1x4x6xi64>
  func.return %c : tensor<1x4x6xi64>
}

// -----

// A concat along the padded axis would put the second operand after the first one's padding.
// CHECK: 'graph.concat' op consumes the data-dependent extent of 'graph.nonzero' op along axis 1 (it concatenates along the padded axis)
func.func @negative_concat_padded_axis(%x: tensor<2x3xf32>) -> tensor<2x12xi64> {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %c = graph.concat %i, %i {axis = 1 : i64} : (tensor<2x6xi64>, tensor<2x6xi64>) -> tensor<2x12xi64>
  func.return %c : tensor<2x12xi64>
}

// -----

// A reshape that merges the padded axis with another one interleaves the padding.
// CHECK: 'graph.reshape' op consumes the data-dependent extent of 'graph.nonzero' op along axis 1 (it merges or splits the padded axis)
func.func @negative_reshape_merges_padded_axis(%x: tensor<2x3xf32>) -> tensor<12xi64> {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %r = graph.reshape %i {shape = array<i64: 12>} : (tensor<2x6xi64>) -> tensor<12xi64>
  func.return %r : tensor<12xi64>
}
// -----

// A function already marked is left alone.
// CHECK-LABEL: func.func @already_marked
// CHECK-SAME:  -> (tensor<2x6xi64> {dlc.valid_extent = array<i64: 1, 1>}, tensor<i64> {dlc.extent_count})
// CHECK-NEXT:    graph.nonzero
// CHECK-NEXT:    func.return %{{.*}}, %{{.*}} : tensor<2x6xi64>, tensor<i64>
func.func @already_marked(%x: tensor<2x3xf32>) -> (tensor<2x6xi64> {dlc.valid_extent = array<i64: 1, 1>}, tensor<i64> {dlc.extent_count}) {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  func.return %i, %n : tensor<2x6xi64>, tensor<i64>
}

// -----

// A reduction over the padded axis would sum the padding: an error naming it.
// CHECK: 'graph.reduce' op consumes the data-dependent extent of 'graph.nonzero' op along axis 1 (it is not known to ignore the padding)
func.func @negative_reduce_over_padding(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %s = graph.reduce %i {kind = "sum", axes = array<i64: 1>, keepdims = false} : (tensor<2x6xi64>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// -----

// Slicing the padded axis would cut at the bound, not at the count.
// CHECK: 'graph.slice' op consumes the data-dependent extent of 'graph.nonzero' op along axis 1 (it slices the padded axis)
func.func @negative_slice_padded_axis(%x: tensor<2x3xf32>) -> tensor<2x2xi64> {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %s = graph.slice %i {starts = array<i64: 0, 0>, sizes = array<i64: 2, 2>, steps = array<i64: 1, 1>} : (tensor<2x6xi64>) -> tensor<2x2xi64>
  func.return %s : tensor<2x2xi64>
}

// -----

// An elementwise op with an operand that is not broadcast along the padded axis.
// CHECK: 'graph.add' op consumes the data-dependent extent of 'graph.nonzero' op along axis 1 (another operand is not broadcast along the padded axis)
func.func @negative_add_unpadded(%x: tensor<2x3xf32>, %y: tensor<2x6xi64>) -> tensor<2x6xi64> {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %s = graph.add %i, %y : (tensor<2x6xi64>, tensor<2x6xi64>) -> tensor<2x6xi64>
  func.return %s : tensor<2x6xi64>
}
