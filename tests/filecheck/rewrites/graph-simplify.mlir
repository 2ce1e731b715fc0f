// RUN: dlc-opt %s --split-input-file -p graph-simplify | filecheck %s
// RUN: dlc-opt %s --split-input-file -p canonicalize | filecheck %s
// RUN: dlc-opt %s --split-input-file -p graph-simplify | filecheck %s --check-prefix=TENSOR

// The same patterns run as graph-simplify and as the ops' canonicalization patterns (those of
// dialects/graph/ops.py; the ops of ops_tensor.py, checked with TENSOR, only in graph-simplify).

// CHECK-LABEL: @transpose_of_transpose_composes
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:  %[[T:.*]] = graph.transpose %[[X]] {perm = array<i64: 2, 0, 1>}
// CHECK-NEXT:  func.return %[[T]]
func.func @transpose_of_transpose_composes(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %a = graph.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %b = graph.transpose %a {perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  func.return %b : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: @inverse_transposes_cancel
// CHECK-SAME:  (%[[X:.*]]: tensor<1x3x8x8xf32>)
// CHECK-NEXT:  func.return %[[X]]
func.func @inverse_transposes_cancel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %a = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
  %b = graph.transpose %a {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x3x8x8xf32>
  func.return %b : tensor<1x3x8x8xf32>
}

// -----

// CHECK-LABEL: @identity_transpose_removed
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:  func.return %[[X]]
func.func @identity_transpose_removed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = graph.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: @transpose_of_unit_axes_is_reshape
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x1x64xf32>)
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[X]] {shape = array<i64: 1, 64, 1, 1>}
// CHECK-NEXT:  func.return %[[R]]
func.func @transpose_of_unit_axes_is_reshape(%x: tensor<1x1x1x64xf32>) -> tensor<1x64x1x1xf32> {
  %a = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x1x1x64xf32>) -> tensor<1x64x1x1xf32>
  func.return %a : tensor<1x64x1x1xf32>
}

// -----

// CHECK-LABEL: @negative_transpose_moves_data
// CHECK-NEXT:  graph.transpose
func.func @negative_transpose_moves_data(%x: tensor<1x2x1x3xf32>) -> tensor<1x3x1x2xf32> {
  %a = graph.transpose %x {perm = array<i64: 0, 3, 2, 1>} : (tensor<1x2x1x3xf32>) -> tensor<1x3x1x2xf32>
  func.return %a : tensor<1x3x1x2xf32>
}

// -----

// CHECK-LABEL: @reshape_chain_merges
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[X]] {shape = array<i64: 4, 6>}
// CHECK-NEXT:  func.return %[[R]]
func.func @reshape_chain_merges(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %a = graph.reshape %x {shape = array<i64: 6, -1>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %b = graph.flatten %a {axis = 0 : i64} : (tensor<6x4xf32>) -> tensor<1x24xf32>
  %c = graph.reshape %b {shape = array<i64: 4, 6>} : (tensor<1x24xf32>) -> tensor<4x6xf32>
  func.return %c : tensor<4x6xf32>
}

// -----

// CHECK-LABEL: @reshape_to_same_shape_removed
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:  func.return %[[X]], %[[X]]
func.func @reshape_to_same_shape_removed(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = graph.reshape %x {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = graph.flatten %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: @negative_reshape_of_shared_reshape_keeps_it
// CHECK-SAME:  (%[[X:.*]]: tensor<2x6xf32>)
// CHECK-NEXT:  %[[A:.*]] = graph.reshape %[[X]] {shape = array<i64: 3, 4>}
// CHECK-NEXT:  %[[B:.*]] = graph.reshape %[[X]] {shape = array<i64: 12>}
// CHECK-NEXT:  func.return %[[A]], %[[B]]
func.func @negative_reshape_of_shared_reshape_keeps_it(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, tensor<12xf32>) {
  %a = graph.reshape %x {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %b = graph.reshape %a {shape = array<i64: 12>} : (tensor<3x4xf32>) -> tensor<12xf32>
  func.return %a, %b : tensor<3x4xf32>, tensor<12xf32>
}

// -----

// CHECK-LABEL: @concat_of_one_removed
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:  func.return %[[X]]
func.func @concat_of_one_removed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = graph.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: @neutral_operands_removed
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>, %[[N:.*]]: tensor<2x3xi32>)
// CHECK-NEXT:  func.return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[N]]
func.func @neutral_operands_removed(%x: tensor<2x3xf32>, %n: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>) {
  %zero = graph.constant dense<0.0> : tensor<3xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %ione = graph.constant dense<1> : tensor<1x3xi32>
  %a = graph.add %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = graph.add %zero, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = graph.mul %one, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = graph.sub %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %e = graph.div %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %f = graph.mul %n, %ione : (tensor<2x3xi32>, tensor<1x3xi32>) -> tensor<2x3xi32>
  func.return %a, %b, %c, %d, %e, %f : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: @negative_neutral_operand_broadcasts
// CHECK-NEXT:  graph.constant
// CHECK-NEXT:  %[[A:.*]] = graph.add
// CHECK-NEXT:  func.return %[[A]]
func.func @negative_neutral_operand_broadcasts(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %a = graph.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: @negative_non_neutral_constant
// CHECK:       graph.sub
// CHECK:       graph.mul
func.func @negative_non_neutral_constant(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %zero = graph.constant dense<0.0> : tensor<3xf32>
  %c = graph.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32>
  %a = graph.sub %zero, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = graph.mul %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %a, %b : tensor<3xf32>, tensor<3xf32>
}

// -----

// TENSOR-LABEL: @no_op_tensor_ops_removed
// TENSOR-SAME:  (%[[X:.*]]: tensor<2x3xf32>)
// TENSOR-NEXT:  func.return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @no_op_tensor_ops_removed(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %c = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = graph.pad %x {pads = array<i64: 0, 0, 0, 0>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %b = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = graph.slice %x {starts = array<i64: 0, 0>, sizes = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c, %p, %b, %s : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// TENSOR-LABEL: @negative_reversing_slice_and_real_cast
// TENSOR:       graph.cast
// TENSOR:       graph.slice
func.func @negative_reversing_slice_and_real_cast(%x: tensor<2x3xf32>) -> (tensor<2x3xi32>, tensor<2x3xf32>) {
  %c = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %s = graph.slice %x {starts = array<i64: 0, 2>, sizes = array<i64: 2, 3>, steps = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %c, %s : tensor<2x3xi32>, tensor<2x3xf32>
}

// -----

// A graph.if on a constant condition is replaced by the branch it takes.

// CHECK-LABEL: @constant_if_inlined
// CHECK-SAME:  (%[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:  %[[E:.*]] = graph.exp %[[X]] : tensor<2xf32>
// CHECK-NEXT:  func.return %[[E]], %[[X]] : tensor<2xf32>, tensor<2xf32>
func.func @constant_if_inlined(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = graph.constant dense<false> : tensor<1xi1>
  %r:2 = graph.if %c : tensor<1xi1> -> (tensor<2xf32>, tensor<2xf32>) {
    %t = graph.relu %x : tensor<2xf32>
    graph.yield %t, %t : tensor<2xf32>, tensor<2xf32>
  } else {
    %e = graph.exp %x : tensor<2xf32>
    graph.yield %e, %x : tensor<2xf32>, tensor<2xf32>
  }
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: @negative_runtime_if
// CHECK:       graph.if %c
func.func @negative_runtime_if(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
    %t = graph.relu %x : tensor<2xf32>
    graph.yield %t : tensor<2xf32>
  } else {
    graph.yield %x : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// A dilated conv on a map smaller than its dilation (DeepLab's ASPP): only the centre tap ever
// reads the image, the others read zero padding; the conv becomes a 1x1 conv without padding.
// CHECK-LABEL: @padding_only_taps_dropped
// CHECK:       %[[W:.*]] = graph.constant dense<5.000000e+00> : tensor<1x1x1x1xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.conv2d %x, %[[W]], %b : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
// CHECK-NEXT:  func.return %[[R]]
func.func @padding_only_taps_dropped(%x: tensor<1x1x4x4xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %r = graph.conv2d %x, %w, %b {padding = array<i64: 4, 4, 4, 4>, dilation = array<i64: 4, 4>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  func.return %r : tensor<1x1x4x4xf32>
}

// -----

// Only the rows are cut (dilation 3 over 3 rows); the columns all read the image and keep
// their padding and dilation.
// CHECK-LABEL: @padding_only_rows_dropped
// CHECK:       %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK-NEXT:  graph.conv2d %x, %[[W]] {padding = array<i64: 0, 1, 0, 1>} : (tensor<1x1x3x5xf32>, tensor<1x1x1x3xf32>) -> tensor<1x1x3x5xf32>
func.func @padding_only_rows_dropped(%x: tensor<1x1x3x5xf32>) -> tensor<1x1x3x5xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %r = graph.conv2d %x, %w {padding = array<i64: 3, 1, 3, 1>, dilation = array<i64: 3, 1>} : (tensor<1x1x3x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x5xf32>
  func.return %r : tensor<1x1x3x5xf32>
}

// -----

// Every tap reads the image somewhere (an ordinary padded 3x3 conv), or the weight is not a
// constant to cut: the convs stay.
// CHECK-LABEL: @negative_taps_read_the_image
// CHECK:       graph.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>}
// CHECK-SAME:  tensor<1x1x3x3xf32>
// CHECK:       graph.conv2d %x, %w1 {padding = array<i64: 4, 4, 4, 4>, dilation = array<i64: 4, 4>}
func.func @negative_taps_read_the_image(%x: tensor<1x1x4x4xf32>, %w1: tensor<1x1x3x3xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w0 = graph.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %r0 = graph.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  %r1 = graph.conv2d %x, %w1 {padding = array<i64: 4, 4, 4, 4>, dilation = array<i64: 4, 4>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  func.return %r0, %r1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// A reduction over axes of size 1 that keeps them is its operand (the mean of one element);
// one over a longer axis, or dropping the unit axis, stays.
// CHECK-LABEL: @unit_reduce_removed
// CHECK-NEXT:  %r1 = graph.reduce %x {axes = array<i64: 0>, kind = "sum"}
// CHECK-NEXT:  %r2 = graph.reduce %x {axes = array<i64: 1>, keepdims = false, kind = "max"}
// CHECK-NEXT:  func.return %x, %r1, %r2
func.func @unit_reduce_removed(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<1x1xf32>, tensor<4xf32>) {
  %r0 = graph.reduce %x {axes = array<i64: 1>, kind = "mean"} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %r1 = graph.reduce %x {axes = array<i64: 0>, kind = "sum"} : (tensor<4x1xf32>) -> tensor<1x1xf32>
  %r2 = graph.reduce %x {axes = array<i64: 1>, keepdims = false, kind = "max"} : (tensor<4x1xf32>) -> tensor<4xf32>
  func.return %r0, %r1, %r2 : tensor<4x1xf32>, tensor<1x1xf32>, tensor<4xf32>
}

// -----

// A quantize of a dequantize with equal constant scales, zero points and axis (separate
// constants of one value, per tensor and per channel) is its integer operand: exact, since
// (n s) / s rounds back to n for |n| <= 255.
// CHECK-LABEL: @quantize_round_trip_removed
// CHECK-NOT:   graph.quantize
// CHECK-NOT:   graph.dequantize
// CHECK:       func.return %q, %p
func.func @quantize_round_trip_removed(%q: tensor<1x2x4xui8>, %p: tensor<1x2x4xi8>) -> (tensor<1x2x4xui8>, tensor<1x2x4xi8>) {
  %s = graph.constant dense<0.0119807012> : tensor<f32>
  %z = graph.constant dense<131> : tensor<ui8>
  %s2 = graph.constant dense<0.0119807012> : tensor<f32>
  %z2 = graph.constant dense<131> : tensor<ui8>
  %d = graph.dequantize %q, %s, %z : (tensor<1x2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4xf32>
  %r = graph.quantize %d, %s2, %z2 : (tensor<1x2x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4xui8>
  %cs = graph.constant dense<[0.5, 3.0e-3]> : tensor<2xf32>
  %cz = graph.constant dense<[0, -7]> : tensor<2xi8>
  %e = graph.dequantize %p, %cs, %cz {axis = 1 : i64} : (tensor<1x2x4xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<1x2x4xf32>
  %t = graph.quantize %e, %cs, %cz {axis = -2 : i64} : (tensor<1x2x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<1x2x4xi8>
  func.return %r, %t : tensor<1x2x4xui8>, tensor<1x2x4xi8>
}

// -----

// Round trips that change values stay: another scale (a requantization), another zero point,
// another element type, per-channel scales along another axis.
// CHECK-LABEL: @quantize_requantizes
// CHECK-COUNT-4: graph.quantize
func.func @quantize_requantizes(%q: tensor<2x2xui8>, %p: tensor<2x2xi8>) -> (tensor<2x2xui8>, tensor<2x2xui8>, tensor<2x2xi8>, tensor<2x2xi8>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %s2 = graph.constant dense<0.25> : tensor<f32>
  %z = graph.constant dense<3> : tensor<ui8>
  %z2 = graph.constant dense<4> : tensor<ui8>
  %zi = graph.constant dense<3> : tensor<i8>
  %d = graph.dequantize %q, %s, %z : (tensor<2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x2xf32>
  %r0 = graph.quantize %d, %s2, %z : (tensor<2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8>
  %r1 = graph.quantize %d, %s, %z2 : (tensor<2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8>
  %r2 = graph.quantize %d, %s, %zi : (tensor<2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
  %cs = graph.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %cz = graph.constant dense<[0, 1]> : tensor<2xi8>
  %e = graph.dequantize %p, %cs, %cz {axis = 0 : i64} : (tensor<2x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2xf32>
  %r3 = graph.quantize %e, %cs, %cz {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2xi8>
  func.return %r0, %r1, %r2, %r3 : tensor<2x2xui8>, tensor<2x2xui8>, tensor<2x2xi8>, tensor<2x2xi8>
}
