// RUN: dlc-opt %s -p convert-graph-to-tensor-expr --split-input-file --verify-diagnostics --allow-unregistered-dialect | filecheck %s

// Broadcasting elementwise: the broadcast operand reads only the axes it has.
// CHECK-LABEL: func.func @add_broadcast
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK:      %[[R:.*]] = tensor_expr.compute "add" tag "injective" -> tensor<2x3xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[X:.*]] = tensor_expr.read %a[%[[I]], %[[J]]] : tensor<2x3xf32>
// CHECK-NEXT:   %[[Y:.*]] = tensor_expr.read %b[%[[J]]] : tensor<3xf32>
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]]
// CHECK-NOT:  graph.

// -----

// Unary: sigmoid is 1 / (1 + exp(-x)); the location's name becomes `onnx_node`.
// CHECK-LABEL: func.func @sigmoid
func.func @sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.sigmoid %x : tensor<4xf32> loc("Sigmoid_3")
  func.return %r : tensor<4xf32>
}
// CHECK:      tensor_expr.compute "sigmoid" tag "injective" -> tensor<4xf32> attributes {onnx_node = "Sigmoid_3"} {
// CHECK:        %[[X:.*]] = tensor_expr.read %x[%{{.*}}] : tensor<4xf32>
// CHECK-NEXT:   %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:   %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:   %[[Y:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[Y]] : f32

// -----

// Rounding: ceil, floor, and round as math.roundeven (ONNX Round takes halves to even).
// CHECK-LABEL: func.func @rounding
func.func @rounding(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %c = graph.ceil %x : tensor<4xf16>
  %f = graph.floor %x : tensor<4xf16>
  %r = graph.round %x : tensor<4xf16>
  func.return %c, %f, %r : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}
// CHECK:      tensor_expr.compute "ceil" tag "injective" -> tensor<4xf16> {
// CHECK:        %[[X:.*]] = tensor_expr.read %x[%{{.*}}] : tensor<4xf16>
// CHECK-NEXT:   %[[C:.*]] = math.ceil %[[X]] : f16
// CHECK-NEXT:   tensor_expr.yield %[[C]] : f16
// CHECK:      tensor_expr.compute "floor" tag "injective" -> tensor<4xf16> {
// CHECK:        math.floor %{{.*}} : f16
// CHECK:      tensor_expr.compute "round" tag "injective" -> tensor<4xf16> {
// CHECK:        math.roundeven %{{.*}} : f16
// CHECK-NOT:  graph.

// -----

// A padded conv2d with bias: a "pad" compute (clamped read + select), the reduction reading it
// at h * stride + rh, then the bias.
// CHECK-LABEL: func.func @conv2d_padded_bias
func.func @conv2d_padded_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %r = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  func.return %r : tensor<1x4x4x4xf32>
}
// CHECK:      %[[PAD:.*]] = tensor_expr.compute "pad" tag "pad" -> tensor<1x3x10x10xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[C:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index):
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[IH:.*]] = arith.subi %[[H]], %[[ONE]] : index
// CHECK-NEXT:   %[[IW:.*]] = arith.subi %[[W]], %[[ONE]] : index
// CHECK-NEXT:   %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-NEXT:   %[[INH:.*]] = arith.cmpi ult, %[[IH]], %[[EIGHT]] : index
// CHECK-NEXT:   %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK-NEXT:   %[[CH:.*]] = arith.minui %[[IH]], %[[SEVEN]] : index
// CHECK-NEXT:   %[[INW:.*]] = arith.cmpi ult, %[[IW]], %[[EIGHT]] : index
// CHECK-NEXT:   %[[IN:.*]] = arith.andi %[[INH]], %[[INW]] : i1
// CHECK-NEXT:   %[[CW:.*]] = arith.minui %[[IW]], %[[SEVEN]] : index
// CHECK-NEXT:   %[[V:.*]] = tensor_expr.read %x[%[[N]], %[[C]], %[[CH]], %[[CW]]] : tensor<1x3x8x8xf32>
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[P:.*]] = arith.select %[[IN]], %[[V]], %[[ZERO]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[P]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[CONV:.*]] = tensor_expr.compute "conv2d" tag "conv2d_nchw" reduce [3, 3, 3] sum init 0.000000e+00 : f32 -> tensor<1x4x4x4xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[O:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index, %[[RC:.*]]: index, %[[RH:.*]]: index, %[[RW:.*]]: index):
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[H2:.*]] = arith.muli %[[H]], %[[TWO]] : index
// CHECK-NEXT:   %[[IH:.*]] = arith.addi %[[H2]], %[[RH]] : index
// CHECK-NEXT:   %[[W2:.*]] = arith.muli %[[W]], %[[TWO]] : index
// CHECK-NEXT:   %[[IW:.*]] = arith.addi %[[W2]], %[[RW]] : index
// CHECK-NEXT:   %[[XV:.*]] = tensor_expr.read %[[PAD]][%[[N]], %[[RC]], %[[IH]], %[[IW]]] : tensor<1x3x10x10xf32>
// CHECK-NEXT:   %[[WV:.*]] = tensor_expr.read %w[%[[O]], %[[RC]], %[[RH]], %[[RW]]] : tensor<4x3x3x3xf32>
// CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[XV]], %[[WV]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[M]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = tensor_expr.compute "bias_add" tag "injective" -> tensor<1x4x4x4xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[O:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index):
// CHECK-NEXT:   %[[S:.*]] = tensor_expr.read %[[CONV]][%[[N]], %[[O]], %[[H]], %[[W]]] : tensor<1x4x4x4xf32>
// CHECK-NEXT:   %[[B:.*]] = tensor_expr.read %b[%[[O]]] : tensor<4xf32>
// CHECK-NEXT:   arith.addf %[[S]], %[[B]] : f32
// CHECK:      func.return %[[R]]

// -----

// Depthwise: no input-channel reduction; output channel o reads input channel o.
// CHECK-LABEL: func.func @depthwise_conv2d
func.func @depthwise_conv2d(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %r = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  func.return %r : tensor<1x4x4x4xf32>
}
// CHECK:      tensor_expr.compute "conv2d" tag "depthwise_conv2d_nchw" reduce [3, 3] sum init 0.000000e+00 : f32 -> tensor<1x4x4x4xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[C:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index, %[[RH:.*]]: index, %[[RW:.*]]: index):
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[IH:.*]] = arith.addi %[[H]], %[[RH]] : index
// CHECK-NEXT:   %[[IW:.*]] = arith.addi %[[W]], %[[RW]] : index
// CHECK-NEXT:   tensor_expr.read %x[%[[N]], %[[C]], %[[IH]], %[[IW]]] : tensor<1x4x6x6xf32>
// CHECK-NEXT:   tensor_expr.read %w[%[[C]], %[[ZERO]], %[[RH]], %[[RW]]] : tensor<4x1x3x3xf32>

// -----

// Batched matmul with a broadcast rhs.
// CHECK-LABEL: func.func @matmul_batched
func.func @matmul_batched(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %r = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  func.return %r : tensor<2x3x5xf32>
}
// CHECK:      tensor_expr.compute "matmul" tag "batch_matmul" reduce [4] sum init 0.000000e+00 : f32 -> tensor<2x3x5xf32> {
// CHECK-NEXT: ^bb0(%[[B:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:   %[[X:.*]] = tensor_expr.read %a[%[[B]], %[[I]], %[[K]]] : tensor<2x3x4xf32>
// CHECK-NEXT:   %[[Y:.*]] = tensor_expr.read %b[%[[K]], %[[J]]] : tensor<4x5xf32>
// CHECK-NEXT:   arith.mulf %[[X]], %[[Y]] : f32

// -----

// Max pool with padding: a "pad" compute holds the input with -inf around it (read through
// clamped indices, never out of bounds), and the windows read it at plain affine indices
// (h * 2 + rh, w * 2 + rw), which vectorize.
// CHECK-LABEL: func.func @max_pool_padded
func.func @max_pool_padded(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %r = graph.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  func.return %r : tensor<1x2x3x3xf32>
}
// CHECK:      %[[PAD:.*]] = tensor_expr.compute "pad" tag "pad" -> tensor<1x2x7x7xf32> {
// CHECK:        %[[V:.*]] = tensor_expr.read %x[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x2x5x5xf32>
// CHECK-NEXT:   %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:   %[[S:.*]] = arith.select %{{.*}}, %[[V]], %[[NINF]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[S]] : f32
// CHECK:      tensor_expr.compute "max_pool2d" tag "pool_max" reduce [3, 3] max init 0xff800000 : f32 -> tensor<1x2x3x3xf32> {
// CHECK-NEXT: ^{{.*}}(%[[I0:.*]]: index, %[[I1:.*]]: index, %[[I2:.*]]: index, %[[I3:.*]]: index, %[[R0:.*]]: index, %[[R1:.*]]: index):
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[H:.*]] = arith.muli %[[I2]], %[[TWO]] : index
// CHECK-NEXT:   %[[HR:.*]] = arith.addi %[[H]], %[[R0]] : index
// CHECK-NEXT:   %[[W:.*]] = arith.muli %[[I3]], %[[TWO]] : index
// CHECK-NEXT:   %[[WR:.*]] = arith.addi %[[W]], %[[R1]] : index
// CHECK-NEXT:   %[[E:.*]] = tensor_expr.read %[[PAD]][%[[I0]], %[[I1]], %[[HR]], %[[WR]]] : tensor<1x2x7x7xf32>
// CHECK-NEXT:   tensor_expr.yield %[[E]] : f32

// -----

// Average pool: a window sum, then a division by the (here constant) element count.
// CHECK-LABEL: func.func @avg_pool
func.func @avg_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %r = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %r : tensor<1x2x2x2xf32>
}
// CHECK:      %[[SUM:.*]] = tensor_expr.compute "avg_pool2d_sum" tag "pool_avg" reduce [2, 2] sum init 0.000000e+00 : f32 -> tensor<1x2x2x2xf32> {
// CHECK:      tensor_expr.compute "avg_pool2d" tag "injective" -> tensor<1x2x2x2xf32> {
// CHECK:        %[[S:.*]] = tensor_expr.read %[[SUM]][
// CHECK-NEXT:   %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:   arith.divf %[[S]], %[[FOUR]] : f32

// -----

// Softmax: max, exp(x - max), sum, times the sum's reciprocal.
// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %r = graph.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  func.return %r : tensor<2x10xf32>
}
// CHECK:      %[[MAX:.*]] = tensor_expr.compute "softmax_max" tag "softmax_max" reduce [10] max init 0xff800000 : f32 -> tensor<2xf32> {
// CHECK:      %[[EXP:.*]] = tensor_expr.compute "softmax_exp" tag "softmax_exp" -> tensor<2x10xf32> {
// CHECK:        tensor_expr.read %[[MAX]]
// CHECK:        math.exp
// CHECK:      %[[SUM:.*]] = tensor_expr.compute "softmax_sum" tag "softmax_sum" reduce [10] sum init 0.000000e+00 : f32 -> tensor<2xf32> {
// CHECK:        tensor_expr.read %[[EXP]]
// CHECK:      tensor_expr.compute "softmax" tag "softmax_norm" -> tensor<2x10xf32> {
// CHECK:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[TOTAL:.*]] = tensor_expr.read %[[SUM]]
// CHECK-NEXT:   %[[SCALE:.*]] = arith.divf %[[ONE]], %[[TOTAL]]
// CHECK-NEXT:   %[[E:.*]] = tensor_expr.read %[[EXP]]
// CHECK-NEXT:   arith.mulf %[[E]], %[[SCALE]]

// -----

// batch_norm: one injective compute over per-channel parameters.
// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %r = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.000000e-03 : f32} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  func.return %r : tensor<1x4x2x2xf32>
}
// CHECK:      tensor_expr.compute "batch_norm" tag "injective" -> tensor<1x4x2x2xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %[[C:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK:        tensor_expr.read %m[%[[C]]] : tensor<4xf32>
// CHECK:        math.sqrt
// CHECK:        tensor_expr.read %s[%[[C]]] : tensor<4xf32>
// CHECK:        tensor_expr.read %b[%[[C]]] : tensor<4xf32>

// -----

// Reduction with keepdims: the kept size-1 axis is not read; a mean divides the sum.
// CHECK-LABEL: func.func @reduce_mean
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %r = graph.reduce %x {axes = array<i64: 1>, kind = "mean"} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  func.return %r : tensor<2x1x4xf32>
}
// CHECK:      %[[SUM:.*]] = tensor_expr.compute "reduce_mean_sum" tag "reduce_sum" reduce [3] sum init 0.000000e+00 : f32 -> tensor<2x1x4xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %{{.*}}: index, %[[K:.*]]: index, %[[R:.*]]: index):
// CHECK-NEXT:   tensor_expr.read %x[%[[I]], %[[R]], %[[K]]] : tensor<2x3x4xf32>
// CHECK:      tensor_expr.compute "reduce_mean" tag "injective" -> tensor<2x1x4xf32> {
// CHECK:        arith.constant 3.000000e+00 : f32

// -----

// Reshape: only the merged axes are linearized and delinearized.
// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %r = graph.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  func.return %r : tensor<6x4xf32>
}
// CHECK:      tensor_expr.compute "reshape" tag "injective" -> tensor<6x4xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:   %[[HI:.*]] = arith.divui %[[I]], %[[THREE]] : index
// CHECK-NEXT:   %[[LO:.*]] = arith.remui %[[I]], %[[THREE]] : index
// CHECK-NEXT:   tensor_expr.read %x[%[[HI]], %[[LO]], %[[J]]] : tensor<2x3x4xf32>

// -----

// Transpose: a permuted read.
// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %r = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  func.return %r : tensor<4x2x3xf32>
}
// CHECK:      tensor_expr.compute "transpose" tag "injective" -> tensor<4x2x3xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:   tensor_expr.read %x[%[[J]], %[[K]], %[[I]]] : tensor<2x3x4xf32>

// -----

// Concat: both inputs read at clamped indices, a select on the axis index picks one.
// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
  %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  func.return %r : tensor<2x8xf32>
}
// CHECK:      tensor_expr.compute "concat" tag "injective" -> tensor<2x8xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[THREE:.*]] = arith.constant 3 : index
// CHECK-NEXT:   %[[JB:.*]] = arith.subi %[[J]], %[[THREE]] : index
// CHECK-NEXT:   %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:   %[[CB:.*]] = arith.minui %[[JB]], %[[FOUR]] : index
// CHECK-NEXT:   %[[VB:.*]] = tensor_expr.read %b[%[[I]], %[[CB]]] : tensor<2x5xf32>
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[CA:.*]] = arith.minui %[[J]], %[[TWO]] : index
// CHECK-NEXT:   %[[VA:.*]] = tensor_expr.read %a[%[[I]], %[[CA]]] : tensor<2x3xf32>
// CHECK-NEXT:   %[[ISA:.*]] = arith.cmpi ult, %[[J]], %[[THREE]] : index
// CHECK-NEXT:   %[[V:.*]] = arith.select %[[ISA]], %[[VA]], %[[VB]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[V]] : f32

// -----

// A fused group becomes a private function called from its parent; its constant operand
// becomes an arith.constant with the same elements.
// CHECK-LABEL: func.func @fused_group
func.func @fused_group(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %r = graph.fused (%x, %w) {kind = "out_fusable", name = "fused_matmul_relu"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>):
    %m = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %y = graph.relu %m : tensor<2x4xf32>
    graph.yield %y : tensor<2x4xf32>
  }
  func.return %r : tensor<2x4xf32>
}
// CHECK-NEXT:   %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00], [9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01]]> : tensor<3x4xf32>
// CHECK-NEXT:   %[[R:.*]] = func.call @fused_matmul_relu_0(%x, %[[W]]) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:   func.return %[[R]] : tensor<2x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @fused_matmul_relu_0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT:   %[[M:.*]] = tensor_expr.compute "matmul" tag "matmul" reduce [3] sum
// CHECK:        %[[Y:.*]] = tensor_expr.compute "relu" tag "injective"
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:     tensor_expr.read %[[M]]
// CHECK:        func.return %[[Y]] : tensor<2x4xf32>
// CHECK-NOT:  graph.

// -----

// A group that is one concat of its inputs, in order, is marked `dlc.concat_axis` (the axis in
// [0, rank)) for loop-plan-memory's in-place concatenation; a concat that also reads a value
// twice, or anything more than the concat, is not.
// CHECK-LABEL: func.func @concat_groups
// CHECK:       func.func private @fused_concat_0(%a: tensor<1x2x3xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x6x3xf32> attributes {dlc.concat_axis = 1 : i64} {
// CHECK:       func.func private @fused_concat_twice_0(
// CHECK-NOT:     dlc.concat_axis
// CHECK-SAME:    {
// CHECK:       func.func private @fused_relu_concat_0(
// CHECK-NOT:     dlc.concat_axis
// CHECK-SAME:    {
func.func @concat_groups(%x: tensor<1x2x3xf32>, %y: tensor<1x4x3xf32>) -> (tensor<1x6x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>) {
  %r = graph.fused (%x, %y) {kind = "injective", name = "fused_concat"} : (tensor<1x2x3xf32>, tensor<1x4x3xf32>) -> tensor<1x6x3xf32> {
  ^bb0(%a: tensor<1x2x3xf32>, %b: tensor<1x4x3xf32>):
    %c = graph.concat %a, %b {axis = -2 : i64} : (tensor<1x2x3xf32>, tensor<1x4x3xf32>) -> tensor<1x6x3xf32>
    graph.yield %c : tensor<1x6x3xf32>
  }
  %t = graph.fused (%x) {kind = "injective", name = "fused_concat_twice"} : (tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  ^bb0(%a: tensor<1x2x3xf32>):
    %c = graph.concat %a, %a {axis = 1 : i64} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
    graph.yield %c : tensor<1x4x3xf32>
  }
  %u = graph.fused (%x) {kind = "injective", name = "fused_relu_concat"} : (tensor<1x2x3xf32>) -> tensor<1x4x3xf32> {
  ^bb0(%a: tensor<1x2x3xf32>):
    %e = graph.relu %a : tensor<1x2x3xf32>
    %c = graph.concat %a, %e {axis = 1 : i64} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x4x3xf32>
    graph.yield %c : tensor<1x4x3xf32>
  }
  func.return %r, %t, %u : tensor<1x6x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>
}

// -----

// Gather: the index read from the tensor is wrapped (negative counts from the end) and clamped.
// CHECK-LABEL: func.func @gather
func.func @gather(%x: tensor<2x5xf32>, %i: tensor<3xi64>) -> tensor<2x3xf32> {
  %r = graph.gather %x, %i {axis = 1 : i64} : (tensor<2x5xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK:      tensor_expr.compute "gather" tag "injective" -> tensor<2x3xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[RAW:.*]] = tensor_expr.read %i[%[[J]]] : tensor<3xi64>
// CHECK-NEXT:   %[[P:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:   %[[NEG:.*]] = arith.cmpi slt, %[[P]], %[[ZERO]] : index
// CHECK-NEXT:   %[[FIVE:.*]] = arith.constant 5 : index
// CHECK-NEXT:   %[[UP:.*]] = arith.addi %[[P]], %[[FIVE]] : index
// CHECK-NEXT:   %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[P]] : index
// CHECK-NEXT:   %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:   %[[C:.*]] = arith.minui %[[W]], %[[FOUR]] : index
// CHECK-NEXT:   tensor_expr.read %x[%[[I]], %[[C]]] : tensor<2x5xf32>

// -----

// Resize: the taps are computed at compile time into i64 tables; nearest is a gather. Along an
// axis upsampled by an integer factor k whose taps are o // k (both axes of the first case), no
// table: the output index divided by k.
// CHECK-LABEL: func.func @resize_nearest
func.func @resize_nearest(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %r = graph.resize %x {sizes = array<i64: 1, 1, 4, 6>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32>
  func.return %r : tensor<1x1x4x6xf32>
}
// CHECK-NEXT: tensor_expr.compute "resize" tag "injective" -> tensor<1x1x4x6xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[C:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index):
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[IH:.*]] = arith.divui %[[H]], %[[TWO]] : index
// CHECK-NEXT:   %[[IW:.*]] = arith.divui %[[W]], %[[TWO]] : index
// CHECK-NEXT:   tensor_expr.read %x[%[[N]], %[[C]], %[[IH]], %[[IW]]] : tensor<1x1x2x3xf32>

// CHECK-LABEL: func.func @resize_nearest_gather
func.func @resize_nearest_gather(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x4x6xf32> {
  %r = graph.resize %x {sizes = array<i64: 1, 1, 4, 6>, scales = array<f64: 1.0, 1.0, 2.0, 1.5>} : (tensor<1x1x2x4xf32>) -> tensor<1x1x4x6xf32>
  func.return %r : tensor<1x1x4x6xf32>
}
// CHECK-NEXT: %[[TW:.*]] = arith.constant dense<[0, 0, 1, 2, 2, 3]> : tensor<6xi64>
// CHECK-NEXT: tensor_expr.compute "resize" tag "injective" -> tensor<1x1x4x6xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[C:.*]]: index, %[[H:.*]]: index, %[[W:.*]]: index):
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[IH:.*]] = arith.divui %[[H]], %[[TWO]] : index
// CHECK-NEXT:   %[[RW:.*]] = tensor_expr.read %[[TW]][%[[W]]] : tensor<6xi64>
// CHECK-NEXT:   %[[IW:.*]] = arith.index_cast %[[RW]] : i64 to index
// CHECK-NEXT:   tensor_expr.read %x[%[[N]], %[[C]], %[[IH]], %[[IW]]] : tensor<1x1x2x4xf32>

// -----

// TopK, an op with two results: a rank compute (NaN above every number), the indices selected
// by rank, then the values read at those indices.
// CHECK-LABEL: func.func @topk
func.func @topk(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = graph.topk %x {k = 2 : i64, axis = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}
// CHECK:      %[[RANK:.*]] = tensor_expr.compute "topk_rank" tag "topk" reduce [4] sum init 0 : i64 -> tensor<3x4xi64> {
// CHECK:        arith.cmpf uno
// CHECK:        arith.cmpf ugt
// CHECK:      %[[I:.*]] = tensor_expr.compute "topk_indices" tag "topk" reduce [4] sum init 0 : i64 -> tensor<3x2xi64> {
// CHECK:        tensor_expr.read %[[RANK]]
// CHECK:      %[[V:.*]] = tensor_expr.compute "topk_values" tag "topk" -> tensor<3x2xf32> {
// CHECK:        tensor_expr.read %[[I]]
// CHECK:      func.return %[[V]], %[[I]] : tensor<3x2xf32>, tensor<3x2xi64>

// -----

// NonZero, padded to every element: a flag per flat position (NaN is nonzero: `une`), their
// running sum by a scan (its final state is the count), the flat position of the j-th nonzero
// element by a binary search of the prefix sums (3 steps for 6 elements: lower bound over 7
// outcomes), then its coordinates, 0 from the count on.
// CHECK-LABEL: func.func @nonzero
func.func @nonzero(%x: tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>) {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  func.return %i, %n : tensor<2x6xi64>, tensor<i64>
}
// CHECK:      %[[FLAGS:.*]] = tensor_expr.compute "nonzero_flag" tag "dynamic" -> tensor<6xi64> {
// CHECK:        arith.cmpf une
// CHECK:      %[[COUNT:.*]], %[[PREFIX:.*]] = tensor_expr.scan "nonzero" inits(%{{.*}} : tensor<i64>) sequences(%[[FLAGS]] : tensor<6xi64>) -> (tensor<i64>, tensor<6xi64>) {
// CHECK-NEXT: ^bb0(%[[RUNNING:.*]]: tensor<i64>, %[[FLAG:.*]]: tensor<i64>):
// CHECK-NEXT:   %[[NEXT:.*]] = tensor_expr.compute "nonzero_running" tag "dynamic" -> tensor<i64> {
// CHECK:          arith.addi
// CHECK:        tensor_expr.scan_yield %[[NEXT]], %[[NEXT]] : tensor<i64>, tensor<i64>
// CHECK:      %[[POS:.*]] = tensor_expr.compute "nonzero_position" tag "dynamic" -> tensor<6xi64> {
// CHECK-COUNT-3: tensor_expr.read %[[PREFIX]]
// CHECK-NOT:    tensor_expr.read %[[PREFIX]]
// CHECK:      %[[I:.*]] = tensor_expr.compute "nonzero_indices" tag "dynamic" -> tensor<2x6xi64> {
// CHECK:        tensor_expr.read %[[POS]]
// CHECK:        arith.divsi
// CHECK:        arith.remsi
// CHECK:        tensor_expr.read %[[COUNT]][] : tensor<i64>
// CHECK:      func.return %[[I]], %[[COUNT]] : tensor<2x6xi64>, tensor<i64>

// -----

// NonMaxSuppression: boxes ranked by score per (batch, class), listed by rank, then a scan over
// the ranks carrying the boxes selected so far and their count; each step tests the candidate
// against the selected boxes (IoU, ONNX's reference test), the count against the limit and the
// score against the threshold; the selections are then laid out (batch, class)-major.
// CHECK-LABEL: func.func @non_max_suppression
func.func @non_max_suppression(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>, %thr: tensor<1xf32>) -> (tensor<6x3xi64>, tensor<i64>) {
  %s, %n = graph.non_max_suppression %boxes, %scores, %max, %iou, %thr {bound = 3 : i64} : tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32> -> tensor<6x3xi64>, tensor<i64>
  func.return %s, %n : tensor<6x3xi64>, tensor<i64>
}
// CHECK:      %[[RANK:.*]] = tensor_expr.compute "nms_rank" tag "dynamic" reduce [6] sum init 0 : i64 -> tensor<1x2x6xi64> {
// CHECK:      %[[CANDIDATES:.*]] = tensor_expr.compute "nms_candidates" tag "dynamic" reduce [6] sum init 0 : i64 -> tensor<6x1x2xi64> {
// CHECK:        tensor_expr.read %[[RANK]]
// CHECK:      %[[CHOSEN:.*]], %[[COUNTS:.*]] = tensor_expr.scan "nms" inits(%{{.*}}, %{{.*}} : tensor<1x2x3xi64>, tensor<1x2xi64>) sequences(%[[CANDIDATES]] : tensor<6x1x2xi64>) -> (tensor<1x2x3xi64>, tensor<1x2xi64>) {
// CHECK-NEXT: ^bb0(%[[CHOSEN_T:.*]]: tensor<1x2x3xi64>, %[[COUNTS_T:.*]]: tensor<1x2xi64>, %[[CANDIDATE:.*]]: tensor<1x2xi64>):
// CHECK:        %[[SUPPRESSED:.*]] = tensor_expr.compute "nms_suppressed" tag "dynamic" reduce [3] sum init 0 : i64 -> tensor<1x2xi64> {
// CHECK:          tensor_expr.read %iou
// CHECK:          arith.divf
// CHECK:        %[[ACCEPT:.*]] = tensor_expr.compute "nms_accept" tag "dynamic" -> tensor<1x2xi64> {
// CHECK:          tensor_expr.read %[[SUPPRESSED]]
// CHECK:          tensor_expr.read %max
// CHECK:          tensor_expr.read %thr
// CHECK:        %[[NEXT_CHOSEN:.*]] = tensor_expr.compute "nms_chosen" tag "dynamic" -> tensor<1x2x3xi64> {
// CHECK:        %[[NEXT_COUNTS:.*]] = tensor_expr.compute "nms_counts" tag "dynamic" -> tensor<1x2xi64> {
// CHECK:        tensor_expr.scan_yield %[[NEXT_CHOSEN]], %[[NEXT_COUNTS]]
// CHECK:      %[[OFFSET:.*]] = tensor_expr.compute "nms_offset" tag "dynamic" reduce [2] sum init 0 : i64 -> tensor<1x2xi64> {
// CHECK:      %[[TOTAL:.*]] = tensor_expr.compute "nms_count" tag "dynamic" reduce [2] sum init 0 : i64 -> tensor<i64> {
// CHECK:      %[[SELECTED:.*]] = tensor_expr.compute "nms_selected" tag "dynamic" reduce [2] sum init 0 : i64 -> tensor<6x3xi64> {
// CHECK:        tensor_expr.read %[[OFFSET]]
// CHECK:        tensor_expr.read %[[CHOSEN]]
// CHECK:      func.return %[[SELECTED]], %[[TOTAL]] : tensor<6x3xi64>, tensor<i64>

// -----

// Transposed convolution: only taps landing on an input element (a multiple of the stride, in
// range) contribute; the others select 0.
// CHECK-LABEL: func.func @conv_transpose2d
func.func @conv_transpose2d(%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x1x5x5xf32> {
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x5x5xf32>
  func.return %r : tensor<1x1x5x5xf32>
}
// CHECK:      tensor_expr.compute "conv_transpose2d" tag "conv2d_transpose_nchw" reduce [2, 3, 3] sum init 0.000000e+00 : f32 -> tensor<1x1x5x5xf32> {
// CHECK-NEXT: ^bb0(%[[N:.*]]: index, %[[O:.*]]: index, %[[Y:.*]]: index, %[[X:.*]]: index, %[[RC:.*]]: index, %[[RH:.*]]: index, %[[RW:.*]]: index):
// CHECK-NEXT:   %[[T0:.*]] = arith.subi %[[Y]], %[[RH]] : index
// CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:   %[[TY:.*]] = arith.addi %[[T0]], %[[ONE]] : index
// CHECK-NEXT:   %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:   %[[IN:.*]] = arith.cmpi ult, %[[TY]], %[[SIX]] : index
// CHECK-NEXT:   %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:   %[[REM:.*]] = arith.remui %[[TY]], %[[TWO]] : index
// CHECK:        %[[IY:.*]] = arith.divui %[[TY]], %[[TWO]] : index
// CHECK:        %[[P:.*]] = arith.mulf
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[V:.*]] = arith.select %{{.*}}, %[[P]], %[[ZERO]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[V]] : f32

// -----

// Unsigned tensors become signless (arith computes on signless integers); the computes on them
// use the unsigned ops and combiners, and the public function's unsigned arguments and results
// carry dlc.unsigned for the runtime.
// CHECK-LABEL: func.func @unsigned_becomes_signless
// CHECK-SAME:    (%[[A:.*]]: tensor<4xi8> {dlc.unsigned}, %[[B:.*]]: tensor<4xi8> {dlc.unsigned}) -> (tensor<4xi8> {dlc.unsigned}, tensor<4xi1>, tensor<4xf32>, tensor<i8> {dlc.unsigned})
// CHECK:         %[[Q:.*]] = arith.divui %{{.*}}, %{{.*}} : i8
// CHECK:         %[[M:.*]] = arith.maxui %{{.*}}, %{{.*}} : i8
// CHECK:         %[[LT:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : i8
// CHECK:         %[[F:.*]] = arith.uitofp %{{.*}} : i8 to f32
// CHECK:         tensor_expr.compute "reduce_max" tag "reduce_max" reduce [4] maxui init 0 : i8 -> tensor<i8>
// CHECK-NOT:     ui8
func.func @unsigned_becomes_signless(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<ui8>) {
  %q = graph.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %m = graph.max %q, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %lt = graph.compare %a, %b {predicate = "lt"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %c = graph.cast %a : (tensor<4xui8>) -> tensor<4xf32>
  %r = graph.reduce %a {kind = "max", axes = array<i64: 0>, keepdims = false} : (tensor<4xui8>) -> tensor<ui8>
  func.return %m, %lt, %c, %r : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<ui8>
}

// -----

// A runtime number of rows: each compute over them takes the size of its operand's dynamic
// dim, one `tensor.dim` of the argument shared by every compute over the same rows (a
// compute's own size operand where it reads another compute), so that fusion sees one size.
// CHECK-LABEL: func.func @runtime_rows
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<?x4xf32>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT:    %[[S:.*]] = tensor_expr.compute "add" tag "injective" sizes(%[[N]]) -> tensor<?x4xf32> {
// CHECK:         tensor_expr.compute "relu" tag "injective" sizes(%[[N]]) -> tensor<?x4xf32> {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      tensor_expr.read %[[S]]
// CHECK:         tensor_expr.compute "matmul" tag "matmul" sizes(%[[N]]) reduce [4] sum
func.func @runtime_rows(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %s = graph.add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %r = graph.relu %s : tensor<?x4xf32>
  %w = graph.constant dense<0.5> : tensor<4x4xf32>
  %m = graph.matmul %r, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  func.return %m : tensor<?x4xf32>
}

// -----

// Attention over a runtime sequence: `q @ k^T` takes its rows from q and its columns from k^T;
// the softmax reduces over a runtime axis (`reduce [?]`, its size the last size operand); `p @ v`
// contracts over it; batch dims read from both operands, and the runtime contracting dims, are
// checked equal at run time (`dlc.size_checks`); a mean over a runtime axis divides by the count
// computed from the sizes.
// CHECK-LABEL: func.func @runtime_sequence
// CHECK-SAME:    dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s0, s2)>, kind = "eq", what = "'graph.matmul' op needs equal sizes along batch dim 0 of its operands"}, {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s0, s4)>, kind = "eq", what = "'graph.matmul' op needs equal sizes along batch dim 0 of its operands"}, {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s3, s5)>, kind = "eq", what = "'graph.matmul' op needs equal contracting dims"}]
// CHECK:         %[[N:.*]] = tensor.dim %q, %{{.*}} : tensor<?x?x8xf32>
// CHECK:         %[[S:.*]] = tensor.dim %q, %{{.*}} : tensor<?x?x8xf32>
// CHECK:         tensor.dim %kt, %{{.*}} : tensor<?x8x?xf32>
// CHECK:         %[[T:.*]] = tensor.dim %kt, %{{.*}} : tensor<?x8x?xf32>
// CHECK-NEXT:    tensor_expr.compute "matmul" tag "batch_matmul" sizes(%[[N]], %[[S]], %[[T]]) reduce [8] sum
// CHECK:         tensor_expr.compute "softmax_max" tag "softmax_max" sizes(%[[N]], %[[S]], %[[T]]) reduce [?] max {{.*}} -> tensor<?x?xf32>
// CHECK:         tensor_expr.compute "softmax_sum" tag "softmax_sum" sizes(%[[N]], %[[S]], %[[T]]) reduce [?] sum {{.*}} -> tensor<?x?xf32>
// CHECK:         tensor_expr.compute "matmul" tag "batch_matmul" sizes(%[[N]], %[[S]], %[[T]]) reduce [?] sum {{.*}} -> tensor<?x?x8xf32>
// CHECK:         tensor_expr.compute "reduce_mean_sum" tag "reduce_sum" sizes(%[[N]], %[[S]]) reduce [?, 8] sum {{.*}} -> tensor<?x1x1xf32>
// CHECK:         %[[COUNT:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK-NEXT:    tensor_expr.compute "reduce_mean" tag "injective" sizes(%[[N]]) -> tensor<?x1x1xf32> {
// CHECK:           arith.index_cast %[[COUNT]] : index to i64
func.func @runtime_sequence(%q: tensor<?x?x8xf32>, %kt: tensor<?x8x?xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x1x1xf32> {
  %s = graph.matmul %q, %kt : (tensor<?x?x8xf32>, tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
  %p = graph.softmax %s {axis = -1 : i64} : tensor<?x?x?xf32>
  %o = graph.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %m = graph.reduce %o {axes = array<i64: 1, 2>, kind = "mean"} : (tensor<?x?x8xf32>) -> tensor<?x1x1xf32>
  func.return %m : tensor<?x1x1xf32>
}

// -----

// A runtime image: a window's output size is index arithmetic on its input's (`(H + 2 - 3) / 2
// + 1`), a pad's `H + 2`, a repeat's `H * 2`; a padded read compares with the runtime size.
// The function records what its inputs' sizes must meet (`dlc.size_checks`): each window
// fits its padded input, and the concat's operands agree on their other dims.
// CHECK-LABEL: func.func @runtime_image
// CHECK-SAME:    attributes {dlc.size_checks = [
// CHECK-SAME:    {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (3)"}
// CHECK-SAME:    {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> ((((s1 + -1) floordiv 2) + 1), 3)>, kind = "ge", what = "'graph.max_pool2d' op needs dim 2 of its input padded to at least its window (3)"}
// CHECK-SAME:    {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s3, s0)>, kind = "eq", what = "'graph.concat' op needs equal sizes along dim 0 of its operands (#1 and #0)"}
// CHECK-SAME:    {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s4, ((((((s1 + -1) floordiv 2) + -2) floordiv 2) * 2) + 2))>, kind = "eq", what = "'graph.concat' op needs equal sizes along dim 2 of its operands (#1 and #0)"}
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[H:.*]] = tensor.dim %x, %[[C2]] : tensor<?x3x?x?xf32>
// CHECK-NEXT:    %[[K:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[SPAN:.*]] = arith.subi %[[H]], %[[K]] : index
// CHECK-NEXT:    %[[S2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[SPAN]], %[[S2]] : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[OH:.*]] = arith.addi %[[Q]], %[[ONE]] : index
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[N:.*]] = tensor.dim %x, %[[C0]] : tensor<?x3x?x?xf32>
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[PH:.*]] = arith.addi %[[H]], %[[TWO]] : index
// CHECK:         %[[PAD:.*]] = tensor_expr.compute "pad" tag "pad" sizes(%[[N]], %[[PH]], %{{.*}}) -> tensor<?x3x?x?xf32> {
// CHECK:           arith.cmpi ult, %{{.*}}, %[[H]] : index
// CHECK:         tensor_expr.compute "conv2d" tag "conv2d_nchw" sizes(%[[N]], %[[OH]], %{{.*}}) reduce [3, 3, 3] sum
// CHECK:         %[[P:.*]] = tensor_expr.compute "max_pool2d" tag "pool_max" sizes(%[[N]], %[[PO:.*]], %{{.*}}) reduce [3, 3] max
// CHECK:         %[[UH:.*]] = arith.muli %[[PO]], %{{.*}} : index
// CHECK:         %[[U:.*]] = tensor_expr.compute "resize" tag "injective" sizes(%[[N]], %[[UH]], %{{.*}}) -> tensor<?x8x?x?xf32> {
// CHECK:           arith.divui
// CHECK:         tensor_expr.compute "concat" tag "injective" sizes(%[[N]], %[[UH]], %{{.*}}) -> tensor<?x16x?x?xf32> {
func.func @runtime_image(%x: tensor<?x3x?x?xf32>, %y: tensor<?x8x?x?xf32>) -> tensor<?x16x?x?xf32> {
  %w = graph.constant dense<0.5> : tensor<8x3x3x3xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %p = graph.max_pool2d %c {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %u = graph.resize %p {sizes = array<i64: -1, 8, -1, -1>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %r = graph.concat %u, %y {axis = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x16x?x?xf32>
  func.return %r : tensor<?x16x?x?xf32>
}

// -----

// A detector head's outputs flattened and joined over runtime planes (x.view(n, c, -1) of
// each scale, concatenated along the flattened axis): a flattened index splits by the runtime
// width, the pieces follow each other at runtime offsets (the first piece's size), the
// result's size is their sum.
// CHECK-LABEL: func.func @runtime_detector_head
// CHECK:         %[[N:.*]] = tensor.dim %a, %{{.*}} : tensor<?x8x?x?xf32>
// CHECK:         %[[H:.*]] = tensor.dim %a, %{{.*}} : tensor<?x8x?x?xf32>
// CHECK:         %[[W:.*]] = tensor.dim %a, %{{.*}} : tensor<?x8x?x?xf32>
// CHECK-NEXT:    %[[HW:.*]] = arith.muli %[[H]], %[[W]] : index
// CHECK-NEXT:    %[[RA:.*]] = tensor_expr.compute "reshape" tag "injective" sizes(%[[N]], %[[HW]]) -> tensor<?x8x?xf32> {
// CHECK-NEXT:    ^bb0(%[[I0:.*]]: index, %[[I1:.*]]: index, %[[I2:.*]]: index):
// CHECK-NEXT:      %[[COL:.*]] = arith.remui %[[I2]], %[[W]] : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[I2]], %[[W]] : index
// CHECK-NEXT:      tensor_expr.read %a[%[[I0]], %[[I1]], %[[ROW]], %[[COL]]] : tensor<?x8x?x?xf32>
// CHECK:         %[[HWB:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[RB:.*]] = tensor_expr.compute "reshape"
// CHECK:         %[[SUM:.*]] = arith.addi %[[HW]], %[[HWB]] : index
// CHECK-NEXT:    tensor_expr.compute "concat" tag "injective" sizes(%[[N]], %[[SUM]]) -> tensor<?x8x?xf32> {
// CHECK:           arith.subi %{{.*}}, %[[HW]] : index
// CHECK:           tensor_expr.read %[[RB]]
// CHECK:           tensor_expr.read %[[RA]]
// CHECK:           arith.cmpi ult, %{{.*}}, %[[HW]] : index
func.func @runtime_detector_head(%a: tensor<?x8x?x?xf32>, %b: tensor<?x8x?x?xf32>) -> tensor<?x8x?xf32> {
  %ra = graph.reshape %a {shape = array<i64: -1, 8, -1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?xf32>
  %rb = graph.reshape %b {shape = array<i64: -1, 8, -1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?xf32>
  %r = graph.concat %ra, %rb {axis = 2 : i64} : (tensor<?x8x?xf32>, tensor<?x8x?xf32>) -> tensor<?x8x?xf32>
  func.return %r : tensor<?x8x?xf32>
}

// -----

// A YOLOv5 head's boxes (y.view(n, -1, 8) of n x 3 x H x W x 8): `groups` merges the 3
// anchors with the runtime plane, the index split by W, then H (runtime), the rest the anchor.
// CHECK-LABEL: func.func @runtime_boxes
// CHECK:         %[[N:.*]] = tensor.dim %y, %{{.*}} : tensor<?x3x?x?x8xf32>
// CHECK:         %[[H:.*]] = tensor.dim %y, %{{.*}} : tensor<?x3x?x?x8xf32>
// CHECK:         %[[W:.*]] = tensor.dim %y, %{{.*}} : tensor<?x3x?x?x8xf32>
// CHECK:         %[[H3:.*]] = arith.muli %[[H]], %{{.*}} : index
// CHECK-NEXT:    %[[BOXES:.*]] = arith.muli %[[H3]], %[[W]] : index
// CHECK-NEXT:    tensor_expr.compute "reshape" tag "injective" sizes(%[[N]], %[[BOXES]]) -> tensor<?x?x8xf32> {
// CHECK-NEXT:    ^bb0(%[[I0:.*]]: index, %[[I1:.*]]: index, %[[I2:.*]]: index):
// CHECK-NEXT:      %[[X:.*]] = arith.remui %[[I1]], %[[W]] : index
// CHECK-NEXT:      %[[REST:.*]] = arith.divui %[[I1]], %[[W]] : index
// CHECK-NEXT:      %[[Y:.*]] = arith.remui %[[REST]], %[[H]] : index
// CHECK-NEXT:      %[[ANCHOR:.*]] = arith.divui %[[REST]], %[[H]] : index
// CHECK-NEXT:      tensor_expr.read %y[%[[I0]], %[[ANCHOR]], %[[Y]], %[[X]], %[[I2]]] : tensor<?x3x?x?x8xf32>
func.func @runtime_boxes(%y: tensor<?x3x?x?x8xf32>) -> tensor<?x?x8xf32> {
  %b = graph.reshape %y {shape = array<i64: -1, -1, 8>, groups = array<i64: 0, 1, 1, 4>} : (tensor<?x3x?x?x8xf32>) -> tensor<?x?x8xf32>
  func.return %b : tensor<?x?x8xf32>
}

// -----

// An integer remainder taking the divisor's sign (ONNX Mod, fmod = 0): C's remainder, moved by
// the divisor where it is nonzero and their signs differ; with fmod = 1 C's remainder alone.
// CHECK-LABEL: func.func @mod
// CHECK:         tensor_expr.compute "mod" tag "injective" -> tensor<4xi32> {
// CHECK:           %[[A:.*]] = tensor_expr.read %a
// CHECK-NEXT:      %[[B:.*]] = tensor_expr.read %b
// CHECK-NEXT:      %[[R:.*]] = arith.remsi %[[A]], %[[B]] : i32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[RNEG:.*]] = arith.cmpi slt, %[[R]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[BNEG:.*]] = arith.cmpi slt, %[[B]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[DIFFER:.*]] = arith.xori %[[RNEG]], %[[BNEG]] : i1
// CHECK-NEXT:      %[[NZ:.*]] = arith.cmpi ne, %[[R]], %[[ZERO]] : i32
// CHECK-NEXT:      %[[MOVE:.*]] = arith.andi %[[DIFFER]], %[[NZ]] : i1
// CHECK-NEXT:      %[[SUM:.*]] = arith.addi %[[R]], %[[B]] : i32
// CHECK-NEXT:      arith.select %[[MOVE]], %[[SUM]], %[[R]] : i32
// CHECK:         tensor_expr.compute "mod" tag "injective" -> tensor<4xi8> {
// CHECK:           arith.remui %{{.*}}, %{{.*}} : i8
// CHECK-NEXT:      tensor_expr.yield
// CHECK:         tensor_expr.compute "mod" tag "injective" -> tensor<4xi32> {
// CHECK:           arith.remsi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      tensor_expr.yield
// A float remainder, through f64: the quotient truncated, the remainder by one fma.
// CHECK:         tensor_expr.compute "mod" tag "injective" -> tensor<4xf32> {
// CHECK:           %[[X:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK-NEXT:      %[[Y:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[X]], %[[Y]] : f64
// CHECK-NEXT:      %[[T:.*]] = math.trunc %[[Q]] : f64
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[T]] : f64
// CHECK-NEXT:      math.fma %[[N]], %[[Y]], %[[X]] : f64
// CHECK:           arith.truncf %{{.*}} : f64 to f32
func.func @mod(%a: tensor<4xi32>, %b: tensor<4xi32>, %u: tensor<4xui8>, %x: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi32>, tensor<4xf32>) {
  %r = graph.mod %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %s = graph.mod %u, %u : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %f = graph.mod %a, %b {fmod = 1 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %g = graph.mod %x, %x {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %s, %f, %g : tensor<4xi32>, tensor<4xui8>, tensor<4xi32>, tensor<4xf32>
}

// -----

// A global pool over a runtime plane: a sum over reduction extents of runtime size (their
// sizes after the result's), divided by H * W computed at run time.
// CHECK-LABEL: func.func @runtime_global_pool
// CHECK:         %[[H:.*]] = tensor.dim %x, %{{.*}} : tensor<?x8x?x?xf32>
// CHECK:         %[[W:.*]] = tensor.dim %x, %{{.*}} : tensor<?x8x?x?xf32>
// CHECK:         %[[N:.*]] = tensor.dim %x, %{{.*}} : tensor<?x8x?x?xf32>
// CHECK-NEXT:    %[[SUM:.*]] = tensor_expr.compute "global_avg_pool2d_sum" tag "pool_avg" sizes(%[[N]], %[[H]], %[[W]]) reduce [?, ?] sum
// CHECK:         %[[HW:.*]] = arith.muli %[[H]], %[[W]] : index
// CHECK-NEXT:    tensor_expr.compute "global_avg_pool2d" tag "injective" sizes(%[[N]]) -> tensor<?x8x1x1xf32> {
// CHECK:           arith.index_cast %[[HW]] : index to i64
func.func @runtime_global_pool(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x1x1xf32> {
  %r = graph.global_avg_pool2d %x : (tensor<?x8x?x?xf32>) -> tensor<?x8x1x1xf32>
  func.return %r : tensor<?x8x1x1xf32>
}

// -----

// Winograd over a runtime plane: the output's rows and width by index arithmetic (with the
// size checks of a 3-row window), its F(4, 3) tiles `(OH + 3) / 4`, the input padded by 3
// more rows than the conv's padding (`H + 5`: what a last partial tile reads), the transforms
// and products sized by them.
// CHECK-LABEL: func.func @runtime_winograd
// CHECK-SAME:    what = "'graph.conv2d_winograd' op needs dim 2 of its input padded to at least its window (3)"
// CHECK-SAME:    what = "'graph.conv2d_winograd' op needs dim 3 of its input padded to at least its window (3)"
// CHECK:         %[[N:.*]] = tensor.dim %x, %{{.*}} : tensor<?x16x?x?xf32>
// CHECK:         %[[H:.*]] = tensor.dim %x, %{{.*}} : tensor<?x16x?x?xf32>
// CHECK:         %[[W:.*]] = tensor.dim %x, %{{.*}} : tensor<?x16x?x?xf32>
// CHECK:         %[[OH:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:         %[[OW:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[ROUNDED:.*]] = arith.addi %[[OH]], %[[C3]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[TILES:.*]] = arith.divui %[[ROUNDED]], %[[C4]] : index
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : index
// CHECK-NEXT:    %[[PH:.*]] = arith.addi %[[H]], %[[C5]] : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[PW:.*]] = arith.addi %[[W]], %[[C2]] : index
// CHECK-NEXT:    tensor_expr.compute "pad" tag "pad" sizes(%[[N]], %[[PH]], %[[PW]]) -> tensor<?x16x?x?xf32>
// CHECK:         tensor_expr.compute "winograd_input" tag "winograd_input" sizes(%[[N]], %[[TILES]], %[[PW]]) -> tensor<?x6x16x?x?xf32>
// CHECK:         tensor_expr.compute "conv2d" tag "conv2d_winograd_nchw" sizes(%[[N]], %[[TILES]], %[[OW]]) reduce [16, 3] sum
// CHECK:         tensor_expr.compute "winograd_output" tag "winograd_output" sizes(%[[N]], %[[OH]], %[[OW]]) -> tensor<?x16x?x?xf32>
func.func @runtime_winograd(%x: tensor<?x16x?x?xf32>, %u: tensor<6x16x16x3xf32>) -> tensor<?x16x?x?xf32> {
  %r = graph.conv2d_winograd %x, %u {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<?x16x?x?xf32>, tensor<6x16x16x3xf32>) -> tensor<?x16x?x?xf32>
  func.return %r : tensor<?x16x?x?xf32>
}

// -----

// A transpose over runtime dims: its result's sizes are its operand's, permuted.
// CHECK-LABEL: func.func @runtime_transpose
// CHECK:         %[[N:.*]] = tensor.dim %x, %{{.*}} : tensor<?x3x?x?xf32>
// CHECK:         %[[H:.*]] = tensor.dim %x, %{{.*}} : tensor<?x3x?x?xf32>
// CHECK:         %[[W:.*]] = tensor.dim %x, %{{.*}} : tensor<?x3x?x?xf32>
// CHECK-NEXT:    tensor_expr.compute "transpose" tag "injective" sizes(%[[N]], %[[H]], %[[W]]) -> tensor<?x?x?x3xf32> {
// CHECK-NEXT:    ^bb0(%[[I0:.*]]: index, %[[I1:.*]]: index, %[[I2:.*]]: index, %[[I3:.*]]: index):
// CHECK-NEXT:      tensor_expr.read %x[%[[I0]], %[[I3]], %[[I1]], %[[I2]]] : tensor<?x3x?x?xf32>
func.func @runtime_transpose(%x: tensor<?x3x?x?xf32>) -> tensor<?x?x?x3xf32> {
  %r = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x3x?x?xf32>) -> tensor<?x?x?x3xf32>
  func.return %r : tensor<?x?x?x3xf32>
}

// -----

func.func @negative_runtime_linear_resize(%x: tensor<1x1x?x4xf32>) -> tensor<1x1x?x8xf32> {
  %r = graph.resize %x {sizes = array<i64: 1, 1, -1, 8>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear"} : (tensor<1x1x?x4xf32>) -> tensor<1x1x?x8xf32>
  func.return %r : tensor<1x1x?x8xf32>
}
// CHECK: 'graph.resize' op expected a nearest resize by an integer scale whose taps are o // scale along runtime dim 2 of tensor<1x1x?x4xf32>, found mode 'linear', scale 2.0, coordinate mode 'half_pixel': compile it for static shapes

// -----

func.func @negative_unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  func.return %x : tensor<*xf32>
}
// CHECK: 'func.func' op @negative_unranked expected ranked tensors, found tensor<*xf32>

// -----

func.func @negative_signed_elements(%a: tensor<4xsi8>, %b: tensor<4xsi8>) -> tensor<4xsi8> {
  %r = graph.add %a, %b : (tensor<4xsi8>, tensor<4xsi8>) -> tensor<4xsi8>
  func.return %r : tensor<4xsi8>
}
// CHECK: 'graph.add' op expected a float, signless or unsigned integer element type, found si8

// -----

// A graph op without a compute definition (here one the dialect does not even know).
func.func @negative_no_definition(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "graph.mystery"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
// CHECK: 'graph.mystery' op has no compute definition: expected one of the ops defined in rewrites/topi (graph.abs, graph.add,

// -----

// graph.if: each region becomes a private function of its captures; the choice stays in the
// function as scf.if on tensors around the calls.

// CHECK-LABEL: func.func @if_outlined(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>)
// CHECK-NEXT:    %[[COND:.*]] = tensor.extract %c[] : tensor<i1>
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[COND]] -> (tensor<2xf32>) {
// CHECK-NEXT:      %[[T:.*]] = func.call @if_outlined_then_0(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      scf.yield %[[T]] : tensor<2xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[E:.*]] = func.call @if_outlined_else_0(%y) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      scf.yield %[[E]] : tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<2xf32>
// CHECK:       func.func private @if_outlined_else_0(%y: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    func.return %y : tensor<2xf32>
// CHECK:       func.func private @if_outlined_then_0(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    tensor_expr.compute "relu"
func.func @if_outlined(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
    %t = graph.relu %x : tensor<2xf32>
    graph.yield %t : tensor<2xf32>
  } else {
    graph.yield %y : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// graph.loop: the body becomes a function of (captures, iteration, condition, carried); the loop
// is scf.while over (iteration, condition, carried tensors, scan accumulators), bounded by the
// trip count and the scan length, each scan element inserted at row `iteration`.

// CHECK-LABEL: func.func @loop_outlined
// CHECK-NEXT:    %[[M:.*]] = tensor.extract %m[] : tensor<i64>
// CHECK-NEXT:    %[[LEN:.*]] = arith.constant 3 : i64
// CHECK-NEXT:    %[[TRIP:.*]] = arith.minsi %[[M]], %[[LEN]] : i64
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[GO:.*]] = tensor.extract %c[%[[C0]]] : tensor<1xi1>
// CHECK-NEXT:    %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT:    %[[FIRST:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %{{.*}}, %{{.*}}, %[[R0:.*]], %[[R1:.*]] = scf.while (%[[I:.*]] = %[[FIRST]], %[[G:.*]] = %[[GO]], %[[S0:.*]] = %x, %[[S1:.*]] = %[[ZEROS]])
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi slt, %[[I]], %[[TRIP]] : i64
// CHECK-NEXT:      %[[OK:.*]] = arith.andi %[[MORE]], %[[G]] : i1
// CHECK-NEXT:      scf.condition(%[[OK]]) %[[I]], %[[G]], %[[S0]], %[[S1]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%iteration: i64, %cond: i1, %[[V:.*]]: tensor<2xf32>, %[[ACC:.*]]: tensor<3x2xf32>):
// CHECK-NEXT:      %[[IT:.*]] = tensor.from_elements %iteration : tensor<i64>
// CHECK-NEXT:      %[[CT:.*]] = tensor.from_elements %cond : tensor<i1>
// CHECK-NEXT:      %[[NEXTC:.*]], %[[NEXTV:.*]], %[[ELEM:.*]] = func.call @loop_outlined_body_0(%w, %[[IT]], %[[CT]], %[[V]])
// CHECK-NEXT:      %[[NC:.*]] = tensor.extract %[[NEXTC]][] : tensor<i1>
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[NI:.*]] = arith.addi %iteration, %[[ONE]] : i64
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %iteration : i64 to index
// CHECK-NEXT:      %[[STACKED:.*]] = tensor.insert_slice %[[ELEM]] into %[[ACC]][%[[ROW]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
// CHECK-NEXT:      scf.yield %[[NI]], %[[NC]], %[[NEXTV]], %[[STACKED]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R0]], %[[R1]] : tensor<2xf32>, tensor<3x2xf32>
// CHECK:       func.func private @loop_outlined_body_0(%w: tensor<2xf32>, %i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>) -> (tensor<i1>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    %[[N:.*]] = tensor_expr.compute "mul"
// CHECK:         func.return %ci, %[[N]], %v
func.func @loop_outlined(%m: tensor<i64>, %c: tensor<1xi1>, %x: tensor<2xf32>, %w: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %r:2 = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<1xi1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    %n = graph.mul %v, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    graph.yield %ci, %n, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<3x2xf32>
}

// -----

// Nested control flow: the inner graph.if moves into the outer body's function, and is
// outlined from there (its capture %y, two scopes up, is passed through the outer function).

// CHECK-LABEL: func.func @nested_if_in_loop
// CHECK:         func.call @nested_if_in_loop_body_0(%y, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:       func.func private @nested_if_in_loop_body_0(%y: tensor<2xf32>, %i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>)
// CHECK:         scf.if %{{.*}} -> (tensor<2xf32>) {
// CHECK-NEXT:      func.call @nested_if_in_loop_body_0_then_0(%v, %y)
// CHECK:         } else {
// CHECK-NEXT:      func.call @nested_if_in_loop_body_0_else_0(%v)
// CHECK:       func.func private @nested_if_in_loop_body_0_else_0(%v: tensor<2xf32>)
// CHECK:       func.func private @nested_if_in_loop_body_0_then_0(%v: tensor<2xf32>, %y: tensor<2xf32>)
func.func @nested_if_in_loop(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    %n = graph.if %ci : tensor<i1> -> tensor<2xf32> {
      %a = graph.add %v, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      graph.yield %a : tensor<2xf32>
    } else {
      graph.yield %v : tensor<2xf32>
    }
    graph.yield %ci, %n : tensor<i1>, tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}

// -----

// A recurrent op: the weights transposed (kept by tensor-expr-inline: tag "recurrent"), the
// input projection of every step as one GEMM with the biases added, the initial state of the
// direction, then one scan (reverse here) whose step is the recurrence GEMM and the fused
// activation; y and y_h gathered from the scan's results.
// CHECK-LABEL: func.func @rnn_reverse
// CHECK:         %[[WT:.*]] = tensor_expr.compute "rnn_wt_bw" tag "recurrent" -> tensor<2x4xf32>
// CHECK:         %[[XW:.*]] = tensor_expr.compute "rnn_xw_bw" tag "matmul" reduce [2] sum init 0.000000e+00 : f32 -> tensor<3x1x4xf32>
// CHECK:           tensor_expr.read %[[WT]]
// CHECK:         %[[XWB:.*]] = tensor_expr.compute "rnn_xwb_bw" tag "injective" -> tensor<3x1x4xf32>
// CHECK:         %[[RT:.*]] = tensor_expr.compute "rnn_rt_bw" tag "recurrent" -> tensor<4x4xf32>
// CHECK:         %[[H0:.*]] = tensor_expr.compute "rnn_h0_bw" tag "copy" -> tensor<1x4xf32>
// CHECK:         %[[STATE:.*]], %[[YS:.*]] = tensor_expr.scan "rnn_scan_bw" reverse inits(%[[H0]] : tensor<1x4xf32>) sequences(%[[XWB]] : tensor<3x1x4xf32>) -> (tensor<1x4xf32>, tensor<3x1x4xf32>) {
// CHECK-NEXT:    ^{{.*}}(%[[HPREV:.*]]: tensor<1x4xf32>, %[[XWT:.*]]: tensor<1x4xf32>):
// CHECK-NEXT:      %[[HR:.*]] = tensor_expr.compute "rnn_hr_bw" tag "matmul" reduce [4] sum init 0.000000e+00 : f32 -> tensor<1x4xf32>
// CHECK:             tensor_expr.read %[[HPREV]]
// CHECK:             tensor_expr.read %[[RT]]
// CHECK:           %[[H:.*]] = tensor_expr.compute "rnn_h_bw" tag "injective" -> tensor<1x4xf32>
// CHECK:             tensor_expr.read %[[XWT]]
// CHECK:             tensor_expr.read %[[HR]]
// CHECK:             arith.maximumf
// CHECK:           tensor_expr.scan_yield %[[H]], %[[H]] : tensor<1x4xf32>, tensor<1x4xf32>
// CHECK:         %[[Y:.*]] = tensor_expr.compute "rnn_y" tag "injective" -> tensor<3x1x1x4xf32>
// CHECK:           tensor_expr.read %[[YS]]
// CHECK:         %[[YH:.*]] = tensor_expr.compute "rnn_h_out" tag "injective" -> tensor<1x1x4xf32>
// CHECK:           tensor_expr.read %[[STATE]]
// CHECK:         func.return %[[Y]], %[[YH]]
func.func @rnn_reverse(%x: tensor<3x1x2xf32>, %w: tensor<1x4x2xf32>, %r: tensor<1x4x4xf32>, %b: tensor<1x8xf32>, %h0: tensor<1x1x4xf32>) -> (tensor<3x1x1x4xf32>, tensor<1x1x4xf32>) {
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 {direction = "reverse", hidden_size = 4 : i64, activations = ["relu"], activation_alpha = array<f64: 0.0>, activation_beta = array<f64: 0.0>} : (tensor<3x1x2xf32>, tensor<1x4x2xf32>, tensor<1x4x4xf32>, tensor<1x8xf32>, tensor<1x1x4xf32>) -> (tensor<3x1x1x4xf32>, tensor<1x1x4xf32>)
  func.return %y, %yh : tensor<3x1x1x4xf32>, tensor<1x1x4xf32>
}

// -----

// Positions up to a runtime size: `graph.arange` is a compute over the size of its operand's
// dim, its bound a size check (8 >= S); the gathers at those positions take their sizes from
// the positions; a broadcasting where whose condition has fewer dims sizes each dim from the
// first operand dynamic there, aligned from the right (the scores' batch, then the mask's
// rows and columns), and checks that the others agree.

// CHECK-LABEL: func.func @runtime_positions
// CHECK-SAME:    dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2, s3, s4] -> (8, s1)>, kind = "ge", what = "'graph.arange' op needs at most 8 positions (dim 1 of its operand): they index an axis of that size"}, {sizes = affine_map<()[s0, s1, s2, s3, s4] -> (s3, s1)>, kind = "eq"
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[S:.*]] = tensor.dim %ids, %[[ONE]] : tensor<?x?xi64>
// CHECK:         %p = tensor_expr.compute "arange" tag "injective" sizes(%[[S]]) -> tensor<?xi64>
// CHECK:           arith.index_cast %{{.*}} : index to i64
// CHECK:         tensor_expr.compute "gather" tag "injective" sizes(%[[S]]) -> tensor<?x8xf32>
// CHECK:         tensor_expr.compute "gather" tag "injective" sizes(%[[S]], %[[S]]) -> tensor<?x?xf32>
// CHECK:         tensor_expr.compute "compare" tag "injective" sizes(%[[S]], %[[S]]) -> tensor<?x?xi1>
// CHECK:         %[[N:.*]] = tensor.dim %scores, %{{.*}} : tensor<?x?x?xf32>
// CHECK:         tensor_expr.compute "where" tag "injective" sizes(%[[N]], %[[S]], %[[S]]) -> tensor<?x?x?xf32>
func.func @runtime_positions(%ids: tensor<?x?xi64>, %mask: tensor<8x8xf32>, %scores: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %p = graph.arange %ids {axis = 1 : i64, bound = 8 : i64} : (tensor<?x?xi64>) -> tensor<?xi64>
  %rows = graph.gather %mask, %p {axis = 0 : i64} : (tensor<8x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %m = graph.gather %rows, %p {axis = 1 : i64} : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %c = graph.compare %m, %zero {predicate = "eq"} : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  %w = graph.where %c, %zero, %scores : (tensor<?x?xi1>, tensor<f32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %w : tensor<?x?x?xf32>
}

// -----

// A broadcast to runtime sizes after the leading dim: the compute takes them from the sizing
// operand, and an operand's runtime dim must be the sizing operand's there (a size check).

// CHECK-LABEL: func.func @broadcast_to_runtime_sizes
// CHECK-SAME:    dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s0, s2)>, kind = "eq", what = "'graph.broadcast_to' op needs dim 1 of its operand to be dim 1 of the value sizing its result"}]
// CHECK:         %[[N:.*]] = tensor.dim %ids, %{{.*}} : tensor<?x?xi64>
// CHECK:         %[[S:.*]] = tensor.dim %ids, %{{.*}} : tensor<?x?xi64>
// CHECK:         tensor_expr.compute "broadcast_to" tag "injective" sizes(%[[N]], %[[S]]) -> tensor<?x?xi64>
func.func @broadcast_to_runtime_sizes(%t: tensor<1x?xi64>, %ids: tensor<?x?xi64>) -> tensor<?x?xi64> {
  %r = graph.broadcast_to %t, %ids {shape = array<i64: -1, -1>} : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  func.return %r : tensor<?x?xi64>
}

// -----

// A linear resize to another value's runtime sizes: per resized axis (height, then width),
// tables over the sizing operand's dim there, computed once per call (each output's lower and
// upper tap, clamped into the axis, and the upper one's weight, from its coordinate
// (o + 0.5) * n / m - 0.5 in f32), kept materialised ("resize_taps"); then the axis's pass,
// reading its taps from them and interpolating (the first kept too, "resize_axis").

// CHECK-LABEL: func.func @resize_to_runtime_sizes
// CHECK:         %[[H:.*]] = tensor.dim %image, %{{.*}} : tensor<1x3x?x?xf32>
// CHECK:         %[[W:.*]] = tensor.dim %image, %{{.*}} : tensor<1x3x?x?xf32>
// CHECK:         %[[LOW:.*]] = tensor_expr.compute "resize_taps" tag "resize_taps" sizes(%[[H]]) -> tensor<?xi64>
// CHECK:           arith.divf
// CHECK:           math.floor
// CHECK:           arith.fptosi
// CHECK:           arith.minsi
// CHECK:         %[[HIGH:.*]] = tensor_expr.compute "resize_taps" tag "resize_taps" sizes(%[[H]]) -> tensor<?xi64>
// CHECK:         %[[WEIGHT:.*]] = tensor_expr.compute "resize_taps" tag "resize_taps" sizes(%[[H]]) -> tensor<?xf32>
// CHECK:         %[[ROWS:.*]] = tensor_expr.compute "resize" tag "resize_axis" sizes(%[[H]]) -> tensor<1x2x?x5xf32>
// CHECK:           tensor_expr.read %[[LOW]]
// CHECK:           tensor_expr.read %[[HIGH]]
// CHECK:           tensor_expr.read %[[WEIGHT]]
// CHECK:         tensor_expr.compute "resize" tag "injective" sizes(%[[H]], %[[W]]) -> tensor<1x2x?x?xf32>
// CHECK:           tensor_expr.read %[[ROWS]]
func.func @resize_to_runtime_sizes(%y: tensor<1x2x4x5xf32>, %image: tensor<1x3x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %u = graph.resize %y, %image {sizes = array<i64: 1, 2, -1, -1>, scales = array<f64: 1.0, 1.0, 1.0, 1.0>, mode = "linear"} : (tensor<1x2x4x5xf32>, tensor<1x3x?x?xf32>) -> tensor<1x2x?x?xf32>
  func.return %u : tensor<1x2x?x?xf32>
}

// -----

// A transposed conv over a runtime height and width whose kernel is its stride: its weight laid
// out as a 1x1 conv's to every tap's channels (kept: "conv_transpose_taps"), that 1x1 conv
// over the input's plane, then a depth-to-space to the output's runtime sizes (2H x 2W) and
// the bias. Another kernel takes the gather form, sized (2H + 1) x (2W + 1) for a 3x3 kernel.

// CHECK-LABEL: func.func @conv_transpose2d_runtime_sizes
// CHECK:         %[[TAPS:.*]] = tensor_expr.compute "conv_transpose_taps" tag "conv_transpose_taps" -> tensor<12x4xf32>
// CHECK:         %[[SUB:.*]] = tensor_expr.compute "conv_transpose2d" tag "conv2d_nchw" sizes(%{{.*}}, %{{.*}}, %{{.*}}) reduce [4] sum init 0.000000e+00 : f32 -> tensor<?x12x?x?xf32>
// CHECK:           tensor_expr.read %[[TAPS]]
// CHECK:         tensor_expr.compute "depth_to_space" tag "injective" sizes(%{{.*}}, %{{.*}}, %{{.*}}) -> tensor<?x3x?x?xf32>
// CHECK:           arith.remui
// CHECK:           tensor_expr.read %[[SUB]]
// CHECK:         tensor_expr.compute "conv_transpose2d" tag "conv2d_transpose_nchw" sizes(%{{.*}}, %{{.*}}, %{{.*}}) reduce [4, 3, 3]
// CHECK-SAME:      -> tensor<?x3x?x?xf32>
func.func @conv_transpose2d_runtime_sizes(%x: tensor<?x4x?x?xf32>, %w: tensor<4x3x2x2xf32>, %b: tensor<3xf32>, %v: tensor<4x3x3x3xf32>) -> (tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>) {
  %r = graph.conv_transpose2d %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<?x4x?x?xf32>, tensor<4x3x2x2xf32>, tensor<3xf32>) -> tensor<?x3x?x?xf32>
  %g = graph.conv_transpose2d %x, %v {strides = array<i64: 2, 2>} : (tensor<?x4x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x3x?x?xf32>
  func.return %r, %g : tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>
}
