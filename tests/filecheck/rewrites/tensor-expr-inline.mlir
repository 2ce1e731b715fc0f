// RUN: dlc-opt %s -p tensor-expr-inline --split-input-file | filecheck %s
// RUN: dlc-opt %s -p 'tensor-expr-inline{keep-tags=""}' --split-input-file | filecheck %s --check-prefix=ALL

// relu(bias_add(matmul)): the two injective computes collapse into one epilogue that reads the
// reduction; the reduction itself is never inlined.
// CHECK-LABEL: func.func @epilogue_chain
// ALL-LABEL:   func.func @epilogue_chain
func.func @epilogue_chain(%A: tensor<4x8xf32>, %B: tensor<8x6xf32>, %bias: tensor<6xf32>) -> tensor<4x6xf32> {
  %mm = tensor_expr.compute "matmul" tag "matmul" reduce [8] sum init 0.0 : f32 -> tensor<4x6xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<4x8xf32>
    %b = tensor_expr.read %B[%k, %j] : tensor<8x6xf32>
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }
  %biased = tensor_expr.compute "bias_add" tag "injective" -> tensor<4x6xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %mm[%i, %j] : tensor<4x6xf32>
    %c = tensor_expr.read %bias[%j] : tensor<6xf32>
    %s = arith.addf %x, %c : f32
    tensor_expr.yield %s : f32
  }
  %relu = tensor_expr.compute "relu" tag "injective" -> tensor<4x6xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %biased[%i, %j] : tensor<4x6xf32>
    %zero = arith.constant 0.0 : f32
    %y = arith.maximumf %x, %zero : f32
    tensor_expr.yield %y : f32
  }
  func.return %relu : tensor<4x6xf32>
}
// CHECK:      %[[MM:.*]] = tensor_expr.compute "matmul" tag "matmul" reduce [8]
// CHECK:      %[[RELU:.*]] = tensor_expr.compute "relu" tag "injective" -> tensor<4x6xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK-NEXT:   %[[X:.*]] = tensor_expr.read %[[MM]][%[[I]], %[[J]]] : tensor<4x6xf32>
// CHECK-NEXT:   %[[C:.*]] = tensor_expr.read %bias[%[[J]]] : tensor<6xf32>
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[X]], %[[C]] : f32
// CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[Y:.*]] = arith.maximumf %[[S]], %[[ZERO]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[Y]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[RELU]]
// CHECK-NOT:  "bias_add"
// ALL-NOT:    "bias_add"

// -----

// A "pad" of a channels-last input that pads no channel, read by a reduction at the
// reduction's own channel (a depthwise conv over NHWC): inlined by default, since the
// in-bounds test depends on no channel (one test and select per vector of channels).
// CHECK-LABEL: func.func @pad_inlined_into_a_channelwise_reduction
// CHECK-NOT:   "pad"
// CHECK:       tensor_expr.compute "depthwise"
// CHECK:         arith.cmpi ult
// CHECK:         tensor_expr.read %X[%{{.*}}, %[[C:.*]]] : tensor<6x4xf32>
// CHECK:         arith.select
func.func @pad_inlined_into_a_channelwise_reduction(%X: tensor<6x4xf32>, %W: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %pad = tensor_expr.compute "pad" tag "pad" -> tensor<8x4xf32> {
  ^bb0(%p: index, %pc: index):
    %one = arith.constant 1 : index
    %q = arith.subi %p, %one : index
    %six = arith.constant 6 : index
    %in = arith.cmpi ult, %q, %six : index
    %five = arith.constant 5 : index
    %c = arith.minui %q, %five : index
    %x = tensor_expr.read %X[%c, %pc] : tensor<6x4xf32>
    %zero = arith.constant 0.0 : f32
    %v = arith.select %in, %x, %zero : f32
    tensor_expr.yield %v : f32
  }
  %conv = tensor_expr.compute "depthwise" tag "depthwise_conv1d" reduce [3] sum init 0.0 : f32 -> tensor<6x4xf32> {
  ^bb0(%h: index, %ch: index, %rh: index):
    %ih = arith.addi %h, %rh : index
    %x = tensor_expr.read %pad[%ih, %ch] : tensor<8x4xf32>
    %w = tensor_expr.read %W[%rh, %ch] : tensor<3x4xf32>
    %p = arith.mulf %x, %w : f32
    tensor_expr.yield %p : f32
  }
  func.return %conv : tensor<6x4xf32>
}

// -----

// The same pad read at a reduction axis (a conv over NHWC summing the input channels): the
// select would sit in every multiply-add, so the pad stays.
// CHECK-LABEL: func.func @pad_kept_for_a_reduction_over_channels
// CHECK:       %[[PAD:.*]] = tensor_expr.compute "pad" tag "pad"
// CHECK:       tensor_expr.compute "conv"
// CHECK:         tensor_expr.read %[[PAD]]
func.func @pad_kept_for_a_reduction_over_channels(%X: tensor<6x4xf32>, %W: tensor<3x4x2xf32>) -> tensor<6x2xf32> {
  %pad = tensor_expr.compute "pad" tag "pad" -> tensor<8x4xf32> {
  ^bb0(%p: index, %pc: index):
    %one = arith.constant 1 : index
    %q = arith.subi %p, %one : index
    %six = arith.constant 6 : index
    %in = arith.cmpi ult, %q, %six : index
    %five = arith.constant 5 : index
    %c = arith.minui %q, %five : index
    %x = tensor_expr.read %X[%c, %pc] : tensor<6x4xf32>
    %zero = arith.constant 0.0 : f32
    %v = arith.select %in, %x, %zero : f32
    tensor_expr.yield %v : f32
  }
  %conv = tensor_expr.compute "conv" tag "conv1d" reduce [3, 4] sum init 0.0 : f32 -> tensor<6x2xf32> {
  ^bb0(%h: index, %o: index, %rh: index, %rc: index):
    %ih = arith.addi %h, %rh : index
    %x = tensor_expr.read %pad[%ih, %rc] : tensor<8x4xf32>
    %w = tensor_expr.read %W[%rh, %rc, %o] : tensor<3x4x2xf32>
    %p = arith.mulf %x, %w : f32
    tensor_expr.yield %p : f32
  }
  func.return %conv : tensor<6x2xf32>
}

// -----

// A "pad" compute stays by default (the conv's loops then need no bounds checks); with
// keep-tags="" it is inlined into the conv, indices substituted (h -> h + rh).
// CHECK-LABEL: func.func @pad_kept_by_default
// ALL-LABEL:   func.func @pad_kept_by_default
func.func @pad_kept_by_default(%X: tensor<6xf32>, %W: tensor<3xf32>) -> tensor<6xf32> {
  %pad = tensor_expr.compute "pad" tag "pad" -> tensor<8xf32> {
  ^bb0(%p: index):
    %one = arith.constant 1 : index
    %q = arith.subi %p, %one : index
    %six = arith.constant 6 : index
    %in = arith.cmpi ult, %q, %six : index
    %five = arith.constant 5 : index
    %c = arith.minui %q, %five : index
    %x = tensor_expr.read %X[%c] : tensor<6xf32>
    %zero = arith.constant 0.0 : f32
    %v = arith.select %in, %x, %zero : f32
    tensor_expr.yield %v : f32
  }
  %conv = tensor_expr.compute "conv1d" tag "conv1d" reduce [3] sum init 0.0 : f32 -> tensor<6xf32> {
  ^bb0(%h: index, %rh: index):
    %ih = arith.addi %h, %rh : index
    %x = tensor_expr.read %pad[%ih] : tensor<8xf32>
    %w = tensor_expr.read %W[%rh] : tensor<3xf32>
    %p = arith.mulf %x, %w : f32
    tensor_expr.yield %p : f32
  }
  func.return %conv : tensor<6xf32>
}
// CHECK:      %[[PAD:.*]] = tensor_expr.compute "pad" tag "pad"
// CHECK:      tensor_expr.compute "conv1d"
// CHECK:        tensor_expr.read %[[PAD]]
// ALL-NOT:    "pad"
// ALL:        tensor_expr.compute "conv1d" tag "conv1d" reduce [3] sum init 0.000000e+00 : f32 -> tensor<6xf32> {
// ALL-NEXT:   ^bb0(%[[H:.*]]: index, %[[RH:.*]]: index):
// ALL-NEXT:     %[[IH:.*]] = arith.addi %[[H]], %[[RH]] : index
// ALL-NEXT:     %[[ONE:.*]] = arith.constant 1 : index
// ALL-NEXT:     %[[Q:.*]] = arith.subi %[[IH]], %[[ONE]] : index
// ALL:          %[[IN:.*]] = arith.cmpi ult, %[[Q]], %{{.*}} : index
// ALL:          %[[CL:.*]] = arith.minui %[[Q]], %{{.*}} : index
// ALL-NEXT:     %[[X:.*]] = tensor_expr.read %X[%[[CL]]] : tensor<6xf32>
// ALL-NEXT:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// ALL-NEXT:     %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[ZERO]] : f32
// ALL-NEXT:     %[[WV:.*]] = tensor_expr.read %W[%[[RH]]] : tensor<3xf32>
// ALL-NEXT:     arith.mulf %[[V]], %[[WV]] : f32

// -----

// A cheap producer read by two computes is copied into both, at each read's own indices.
// CHECK-LABEL: func.func @two_readers
func.func @two_readers(%X: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor_expr.compute "neg" tag "injective" -> tensor<4xf32> {
  ^bb0(%i: index):
    %x = tensor_expr.read %X[%i] : tensor<4xf32>
    %y = arith.negf %x : f32
    tensor_expr.yield %y : f32
  }
  %rev = tensor_expr.compute "reverse" tag "injective" -> tensor<4xf32> {
  ^bb0(%i: index):
    %three = arith.constant 3 : index
    %j = arith.subi %three, %i : index
    %x = tensor_expr.read %e[%j] : tensor<4xf32>
    tensor_expr.yield %x : f32
  }
  %sq = tensor_expr.compute "square" tag "injective" -> tensor<4xf32> {
  ^bb0(%i: index):
    %x = tensor_expr.read %e[%i] : tensor<4xf32>
    %y = arith.mulf %x, %x : f32
    tensor_expr.yield %y : f32
  }
  func.return %rev, %sq : tensor<4xf32>, tensor<4xf32>
}
// CHECK-NOT:  "neg"
// CHECK:      tensor_expr.compute "reverse"
// CHECK:        %[[J:.*]] = arith.subi
// CHECK-NEXT:   %[[X:.*]] = tensor_expr.read %X[%[[J]]] : tensor<4xf32>
// CHECK-NEXT:   %[[Y:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[Y]] : f32
// CHECK:      tensor_expr.compute "square"
// CHECK-NEXT: ^bb0(%[[I:.*]]: index):
// CHECK-NEXT:   %[[X:.*]] = tensor_expr.read %X[%[[I]]] : tensor<4xf32>
// CHECK-NEXT:   %[[Y:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:   arith.mulf %[[Y]], %[[Y]] : f32

// -----

// Not inlined: a returned compute (it must be materialised anyway), a reduction and a constant
// tensor; their readers keep reading them.
// CHECK-LABEL: func.func @negative_returned_reduction_constant
// ALL-LABEL:   func.func @negative_returned_reduction_constant
func.func @negative_returned_reduction_constant(%X: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %neg = tensor_expr.compute "neg" tag "injective" -> tensor<4xf32> {
  ^bb0(%i: index):
    %x = tensor_expr.read %X[%i] : tensor<4xf32>
    %y = arith.negf %x : f32
    tensor_expr.yield %y : f32
  }
  %sum = tensor_expr.compute "sum" tag "reduce_sum" reduce [4] sum init 0.0 : f32 -> tensor<f32> {
  ^bb0(%r: index):
    %x = tensor_expr.read %neg[%r] : tensor<4xf32>
    tensor_expr.yield %x : f32
  }
  %out = tensor_expr.compute "scale" tag "injective" -> tensor<4xf32> {
  ^bb0(%i: index):
    %s = tensor_expr.read %sum[] : tensor<f32>
    %c = tensor_expr.read %k[%i] : tensor<4xf32>
    %y = arith.mulf %s, %c : f32
    tensor_expr.yield %y : f32
  }
  func.return %neg, %out : tensor<4xf32>, tensor<4xf32>
}
// CHECK:      %[[K:.*]] = arith.constant dense<
// CHECK-NEXT: %[[NEG:.*]] = tensor_expr.compute "neg"
// CHECK:      %[[SUM:.*]] = tensor_expr.compute "sum"
// CHECK:        tensor_expr.read %[[NEG]][
// CHECK:      tensor_expr.compute "scale"
// CHECK:        tensor_expr.read %[[SUM]][] : tensor<f32>
// CHECK-NEXT:   tensor_expr.read %[[K]][
// ALL:        tensor_expr.compute "neg"
// ALL:        tensor_expr.compute "sum"
// ALL:        tensor_expr.compute "scale"

// -----

// A Winograd conv's transformed input stays by default too (its products read each element
// once per output channel and kernel column); with keep-tags="" it is inlined like any other.
// CHECK-LABEL: func.func @winograd_input_kept_by_default
// ALL-LABEL:   func.func @winograd_input_kept_by_default
func.func @winograd_input_kept_by_default(%X: tensor<4x6xf32>, %U: tensor<4x3xf32>) -> tensor<4x4xf32> {
  %v = tensor_expr.compute "winograd_input" tag "winograd_input" -> tensor<4x6xf32> {
  ^bb0(%a: index, %x: index):
    %d = tensor_expr.read %X[%a, %x] : tensor<4x6xf32>
    %two = arith.constant 2.0 : f32
    %s = arith.mulf %d, %two : f32
    tensor_expr.yield %s : f32
  }
  %m = tensor_expr.compute "conv2d" tag "conv2d_winograd_nchw" reduce [3] sum init 0.0 : f32 -> tensor<4x4xf32> {
  ^bb0(%a: index, %w: index, %j: index):
    %c = arith.addi %w, %j : index
    %u = tensor_expr.read %U[%a, %j] : tensor<4x3xf32>
    %e = tensor_expr.read %v[%a, %c] : tensor<4x6xf32>
    %p = arith.mulf %u, %e : f32
    tensor_expr.yield %p : f32
  }
  func.return %m : tensor<4x4xf32>
}
// CHECK:      %[[V:.*]] = tensor_expr.compute "winograd_input" tag "winograd_input"
// CHECK:      tensor_expr.compute "conv2d"
// CHECK:        tensor_expr.read %[[V]]
// ALL-NOT:    "winograd_input"
// ALL:        tensor_expr.compute "conv2d"
// ALL-NOT:    "winograd_input"

// -----

// A resize to runtime sizes keeps its taps' table and its first axis's pass: inlined, every
// output would recompute its coordinate and both neighbours of each row; with keep-tags=""
// both are inlined like any other.
// CHECK-LABEL: func.func @resize_tables_kept_by_default
// ALL-LABEL:   func.func @resize_tables_kept_by_default
func.func @resize_tables_kept_by_default(%X: tensor<4x6xf32>, %n: index) -> tensor<?x6xf32> {
  %t = tensor_expr.compute "resize_taps" tag "resize_taps" sizes(%n) -> tensor<?xi64> {
  ^bb0(%o: index):
    %c = arith.index_cast %o : index to i64
    %three = arith.constant 3 : i64
    %m = arith.minsi %c, %three : i64
    tensor_expr.yield %m : i64
  }
  %r = tensor_expr.compute "resize" tag "resize_axis" sizes(%n) -> tensor<?x6xf32> {
  ^bb0(%o: index, %x: index):
    %tap = tensor_expr.read %t[%o] : tensor<?xi64>
    %i = arith.index_cast %tap : i64 to index
    %v = tensor_expr.read %X[%i, %x] : tensor<4x6xf32>
    tensor_expr.yield %v : f32
  }
  %y = tensor_expr.compute "relu" tag "injective" sizes(%n) -> tensor<?x6xf32> {
  ^bb0(%o: index, %x: index):
    %v = tensor_expr.read %r[%o, %x] : tensor<?x6xf32>
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %v, %zero : f32
    tensor_expr.yield %m : f32
  }
  func.return %y : tensor<?x6xf32>
}
// CHECK:      %[[T:.*]] = tensor_expr.compute "resize_taps" tag "resize_taps"
// CHECK:      %[[R:.*]] = tensor_expr.compute "resize" tag "resize_axis"
// CHECK:        tensor_expr.read %[[T]]
// CHECK:      tensor_expr.compute "relu"
// CHECK:        tensor_expr.read %[[R]]
// ALL-NOT:    "resize_taps"
// ALL-NOT:    "resize_axis"
// ALL:        tensor_expr.compute "relu"

// -----

// A one-tap transposed conv's weight laid out as a 1x1 conv's stays (a constant one is then
// laid out at compile time); with keep-tags="" it is inlined.
// CHECK-LABEL: func.func @conv_transpose_taps_kept_by_default
// ALL-LABEL:   func.func @conv_transpose_taps_kept_by_default
func.func @conv_transpose_taps_kept_by_default(%X: tensor<2x5xf32>, %W: tensor<2x4xf32>) -> tensor<4x5xf32> {
  %t = tensor_expr.compute "conv_transpose_taps" tag "conv_transpose_taps" -> tensor<4x2xf32> {
  ^bb0(%k: index, %c: index):
    %w = tensor_expr.read %W[%c, %k] : tensor<2x4xf32>
    tensor_expr.yield %w : f32
  }
  %y = tensor_expr.compute "conv_transpose2d" tag "conv2d_nchw" reduce [2] sum init 0.0 : f32 -> tensor<4x5xf32> {
  ^bb0(%k: index, %j: index, %c: index):
    %x = tensor_expr.read %X[%c, %j] : tensor<2x5xf32>
    %w = tensor_expr.read %t[%k, %c] : tensor<4x2xf32>
    %p = arith.mulf %x, %w : f32
    tensor_expr.yield %p : f32
  }
  func.return %y : tensor<4x5xf32>
}
// CHECK:      %[[T:.*]] = tensor_expr.compute "conv_transpose_taps" tag "conv_transpose_taps"
// CHECK:      tensor_expr.compute "conv_transpose2d"
// CHECK:        tensor_expr.read %[[T]]
// ALL-NOT:    "conv_transpose_taps"
// ALL:        tensor_expr.compute "conv_transpose2d"

// -----

// Softmax's exp(x - max) is read by the sum and by the normalisation: inlined, every element's
// exp would be computed twice, so it stays one stored compute. A cheap producer read by the
// same two computes is still inlined (with keep-tags="" too).
// CHECK-LABEL: func.func @expensive_producer_kept
// ALL-LABEL:   func.func @expensive_producer_kept
func.func @expensive_producer_kept(%X: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %e = tensor_expr.compute "exp" tag "injective" -> tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %X[%i, %j] : tensor<2x4xf32>
    %y = math.exp %x : f32
    tensor_expr.yield %y : f32
  }
  %n = tensor_expr.compute "neg" tag "injective" -> tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %X[%i, %j] : tensor<2x4xf32>
    %y = arith.negf %x : f32
    tensor_expr.yield %y : f32
  }
  %s = tensor_expr.compute "sum" tag "reduce" reduce [4] sum init 0.0 : f32 -> tensor<2xf32> {
  ^bb0(%i: index, %k: index):
    %a = tensor_expr.read %e[%i, %k] : tensor<2x4xf32>
    %b = tensor_expr.read %n[%i, %k] : tensor<2x4xf32>
    %p = arith.addf %a, %b : f32
    tensor_expr.yield %p : f32
  }
  %d = tensor_expr.compute "div" tag "injective" -> tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %e[%i, %j] : tensor<2x4xf32>
    %b = tensor_expr.read %n[%i, %j] : tensor<2x4xf32>
    %t = tensor_expr.read %s[%i] : tensor<2xf32>
    %q = arith.addf %a, %b : f32
    %r = arith.divf %q, %t : f32
    tensor_expr.yield %r : f32
  }
  %u = tensor_expr.compute "exp_once" tag "injective" -> tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %X[%i, %j] : tensor<2x4xf32>
    %y = math.exp %x : f32
    tensor_expr.yield %y : f32
  }
  %v = tensor_expr.compute "square" tag "injective" -> tensor<2x4xf32> {
  ^bb0(%i: index, %j: index):
    %a = tensor_expr.read %u[%i, %j] : tensor<2x4xf32>
    %b = tensor_expr.read %u[%i, %j] : tensor<2x4xf32>
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }
  func.return %d, %v : tensor<2x4xf32>, tensor<2x4xf32>
}
// CHECK:      %[[E:.*]] = tensor_expr.compute "exp" tag "injective"
// CHECK:      tensor_expr.compute "sum"
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:   tensor_expr.read %[[E]][%[[I]], %[[K]]]
// CHECK-NEXT:   tensor_expr.read %X[%[[I]], %[[K]]]
// CHECK-NEXT:   arith.negf
// CHECK:      tensor_expr.compute "div"
// CHECK:        tensor_expr.read %[[E]]
// CHECK-NOT:  "exp_once"
// CHECK:      tensor_expr.compute "square"
// CHECK-COUNT-2: math.exp
// ALL:        tensor_expr.compute "exp" tag "injective"
// ALL-NOT:    "neg"

// -----

// Squeeze-excite: the sigmoid of 4 channels is read by the product over the 4x3x3 plane at
// the channel index alone. Inlined, each channel's exp would be evaluated 9 times (once per
// point of the plane), so the sigmoid stays stored; the bias add it reads is cheap and is
// inlined into it. A cheap producer under the same broadcast is inlined.
// CHECK-LABEL: func.func @expensive_producer_under_broadcast_kept
func.func @expensive_producer_under_broadcast_kept(%X: tensor<4x3x3xf32>, %S: tensor<4xf32>, %B: tensor<4xf32>) -> (tensor<4x3x3xf32>, tensor<4x3x3xf32>) {
  %a = tensor_expr.compute "bias_add" tag "injective" -> tensor<4xf32> {
  ^bb0(%c: index):
    %s = tensor_expr.read %S[%c] : tensor<4xf32>
    %b = tensor_expr.read %B[%c] : tensor<4xf32>
    %y = arith.addf %s, %b : f32
    tensor_expr.yield %y : f32
  }
  %g = tensor_expr.compute "sigmoid" tag "injective" -> tensor<4xf32> {
  ^bb0(%c: index):
    %s = tensor_expr.read %a[%c] : tensor<4xf32>
    %n = arith.negf %s : f32
    %e = math.exp %n : f32
    tensor_expr.yield %e : f32
  }
  %m = tensor_expr.compute "mul" tag "broadcast" -> tensor<4x3x3xf32> {
  ^bb0(%c: index, %h: index, %w: index):
    %x = tensor_expr.read %X[%c, %h, %w] : tensor<4x3x3xf32>
    %s = tensor_expr.read %g[%c] : tensor<4xf32>
    %y = arith.mulf %x, %s : f32
    tensor_expr.yield %y : f32
  }
  %n = tensor_expr.compute "neg" tag "injective" -> tensor<4xf32> {
  ^bb0(%c: index):
    %s = tensor_expr.read %S[%c] : tensor<4xf32>
    %y = arith.negf %s : f32
    tensor_expr.yield %y : f32
  }
  %p = tensor_expr.compute "mul_cheap" tag "broadcast" -> tensor<4x3x3xf32> {
  ^bb0(%c: index, %h: index, %w: index):
    %x = tensor_expr.read %X[%c, %h, %w] : tensor<4x3x3xf32>
    %s = tensor_expr.read %n[%c] : tensor<4xf32>
    %y = arith.mulf %x, %s : f32
    tensor_expr.yield %y : f32
  }
  func.return %m, %p : tensor<4x3x3xf32>, tensor<4x3x3xf32>
}
// CHECK:      %[[G:.*]] = tensor_expr.compute "sigmoid" tag "injective" -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[C:.*]]: index):
// CHECK-NEXT:   tensor_expr.read %S[%[[C]]]
// CHECK-NEXT:   tensor_expr.read %B[%[[C]]]
// CHECK-NEXT:   arith.addf
// CHECK-NEXT:   arith.negf
// CHECK-NEXT:   math.exp
// CHECK:      tensor_expr.compute "mul" tag "broadcast"
// CHECK:        tensor_expr.read %[[G]]
// CHECK-NOT:    math.exp
// CHECK-NOT:  tensor_expr.compute "neg"
// CHECK:      tensor_expr.compute "mul_cheap"
// CHECK:        arith.negf

// -----

// A pad of runtime extent read only by a pool (a reduction reading nothing else: here a
// ceil-mode max pool's overhang) is inlined: its bounds tests become the pool's, which the
// rule of runtime extents partitions out of each row's interior; stored, it would copy the
// whole input on every call.
// CHECK-LABEL: func.func @runtime_pool_pad
// CHECK-NOT:     tag "pad"
// CHECK:         tensor_expr.compute "max_pool2d" tag "pool_max"
// CHECK:           arith.cmpi ult
// CHECK:           tensor_expr.read %x
// CHECK:           arith.select
func.func @runtime_pool_pad(%x: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 3)>, kind = "ge", what = "'graph.max_pool2d' op needs dim 2 of its input padded to at least its window (3)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 3)>, kind = "ge", what = "'graph.max_pool2d' op needs dim 3 of its input padded to at least its window (3)"}]} {
  %0 = arith.constant 0 : index
  %1 = tensor.dim %x, %0 : tensor<?x4x?x?xf32>
  %2 = arith.constant 2 : index
  %3 = tensor.dim %x, %2 : tensor<?x4x?x?xf32>
  %4 = arith.constant 3 : index
  %5 = tensor.dim %x, %4 : tensor<?x4x?x?xf32>
  %6 = arith.constant 2 : index
  %7 = arith.subi %3, %6 : index
  %8 = arith.constant 2 : index
  %9 = arith.divui %7, %8 : index
  %10 = arith.constant 1 : index
  %11 = arith.addi %9, %10 : index
  %12 = arith.constant 2 : index
  %13 = arith.subi %5, %12 : index
  %14 = arith.constant 2 : index
  %15 = arith.divui %13, %14 : index
  %16 = arith.constant 1 : index
  %17 = arith.addi %15, %16 : index
  %18 = arith.constant 1 : index
  %19 = arith.addi %3, %18 : index
  %20 = arith.constant 1 : index
  %21 = arith.addi %5, %20 : index
  %pad = tensor_expr.compute "pad" tag "pad" sizes(%1, %19, %21) -> tensor<?x4x?x?xf32> {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %22 = arith.cmpi ult, %i2, %3 : index
    %23 = arith.constant 1 : index
    %24 = arith.subi %3, %23 : index
    %25 = arith.minui %i2, %24 : index
    %26 = arith.cmpi ult, %i3, %5 : index
    %27 = arith.andi %22, %26 : i1
    %28 = arith.subi %5, %23 : index
    %29 = arith.minui %i3, %28 : index
    %30 = tensor_expr.read %x[%i0, %i1, %25, %29] : tensor<?x4x?x?xf32>
    %31 = arith.constant 0xff800000 : f32
    %32 = arith.select %27, %30, %31 : f32
    tensor_expr.yield %32 : f32
  }
  %r = tensor_expr.compute "max_pool2d" tag "pool_max" sizes(%1, %11, %17) reduce [3, 3] max init 0xff800000 : f32 -> tensor<?x4x?x?xf32> {
  ^bb0(%i0_1: index, %i1_1: index, %i2_1: index, %i3_1: index, %r0: index, %r1: index):
    %33 = arith.constant 2 : index
    %34 = arith.muli %i2_1, %33 : index
    %35 = arith.addi %34, %r0 : index
    %36 = arith.muli %i3_1, %33 : index
    %37 = arith.addi %36, %r1 : index
    %38 = tensor_expr.read %pad[%i0_1, %i1_1, %35, %37] : tensor<?x4x?x?xf32>
    tensor_expr.yield %38 : f32
  }
  func.return %r : tensor<?x4x?x?xf32>
}
