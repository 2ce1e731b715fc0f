// RUN: dlc-opt %s --split-input-file -p graph-fold-qdq | filecheck %s

// quantize(conv2d(dequantize(x), dequantize(w), dequantize(b))): x scale 0.5, w scales [0.25,
// 0.125] per output channel, y scale 2.0. Accumulator scales [0.125, 0.0625]; multipliers
// [0.0625, 0.03125]; the bias [1.0, -0.5] becomes [8, -8] accumulator steps.

// CHECK-LABEL: @conv_per_channel
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x4x4xui8>)
// CHECK-DAG:   %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<2x1x1x1xi8>
// CHECK-DAG:   %[[WZ:.*]] = graph.constant dense<0> : tensor<2xi8>
// CHECK-DAG:   %[[B:.*]] = graph.constant dense<[8, -8]> : tensor<2xi32>
// CHECK-DAG:   %[[M:.*]] = graph.constant dense<{{\[\[\[\[}}6.250000e-02]], {{\[\[}}3.125000e-02]]]]> : tensor<1x2x1x1xf32>
// CHECK-DAG:   %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK:       %[[ACC:.*]] = graph.conv2d_integer %[[X]], %[[W]], %{{.*}}, %[[WZ]], %[[B]] {padding = array<i64: 1, 1, 1, 1>}
// CHECK-SAME:  -> tensor<1x2x6x6xi32>
// CHECK-NEXT:  %[[F:.*]] = graph.cast %[[ACC]] : (tensor<1x2x6x6xi32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT:  %[[S:.*]] = graph.mul %[[F]], %[[M]]
// CHECK-NEXT:  %[[Q:.*]] = graph.quantize %[[S]], %[[ONE]], %{{.*}} :
// CHECK-NOT:   graph.dequantize
// CHECK-NOT:   graph.conv2d %
// CHECK:       func.return %[[Q]]
func.func @conv_per_channel(%x: tensor<1x1x4x4xui8>) -> tensor<1x2x6x6xi8> {
  %xs = graph.constant dense<0.5> : tensor<f32>
  %xz = graph.constant dense<128> : tensor<ui8>
  %w = graph.constant dense<[[[[3]]], [[[-5]]]]> : tensor<2x1x1x1xi8>
  %ws = graph.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %wz = graph.constant dense<0> : tensor<2xi8>
  %b = graph.constant dense<[1.0, -0.5]> : tensor<2xf32>
  %ys = graph.constant dense<2.0> : tensor<f32>
  %yz = graph.constant dense<0> : tensor<i8>
  %xd = graph.dequantize %x, %xs, %xz : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x4x4xf32>
  %wd = graph.dequantize %w, %ws, %wz {axis = 0 : i64} : (tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x1x1x1xf32>
  %c = graph.conv2d %xd, %wd, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
  %q = graph.quantize %c, %ys, %yz : (tensor<1x2x6x6xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x6x6xi8>
  func.return %q : tensor<1x2x6x6xi8>
}

// -----

// matmul with Gemm's transposed weight, a relu, and a bias added to the int32 accumulator.

// CHECK-LABEL: @matmul_transposed_relu_bias
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xi8>)
// CHECK-DAG:   %[[W:.*]] = graph.constant dense<{{\[\[}}1, 4], [2, 5], [3, 6]]> : tensor<3x2xi8>
// CHECK-DAG:   %[[B:.*]] = graph.constant dense<[4, -4]> : tensor<2xi32>
// CHECK:       %[[ACC:.*]] = graph.matmul_integer %[[X]], %[[W]], %{{.*}}, %{{.*}} : (tensor<2x3xi8>, tensor<3x2xi8>, tensor<i8>, tensor<i8>) -> tensor<2x2xi32>
// CHECK-NEXT:  %[[SUM:.*]] = graph.add %[[ACC]], %[[B]]
// CHECK-NEXT:  %[[F:.*]] = graph.cast %[[SUM]]
// CHECK-NEXT:  %[[S:.*]] = graph.mul %[[F]], %{{.*}}
// CHECK-NEXT:  %[[R:.*]] = graph.relu %[[S]]
// CHECK-NEXT:  %[[Q:.*]] = graph.quantize %[[R]]
// CHECK-NOT:   graph.transpose
// CHECK:       func.return %[[Q]]
func.func @matmul_transposed_relu_bias(%x: tensor<2x3xi8>) -> tensor<2x2xui8> {
  %s = graph.constant dense<0.25> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %w = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi8>
  %b = graph.constant dense<[0.25, -0.25]> : tensor<2xf32>
  %ys = graph.constant dense<0.5> : tensor<f32>
  %yz = graph.constant dense<0> : tensor<ui8>
  %xd = graph.dequantize %x, %s, %z : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %wd = graph.dequantize %w, %s, %z : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %wt = graph.transpose %wd {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %m = graph.matmul %xd, %wt : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %a = graph.add %m, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %r = graph.relu %a : tensor<2x2xf32>
  %q = graph.quantize %r, %ys, %yz : (tensor<2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8>
  func.return %q : tensor<2x2xui8>
}

// -----

// The float input comes from no dequantize: nothing folds.

// CHECK-LABEL: @negative_float_input
// CHECK:       graph.conv2d
// CHECK:       graph.quantize
// CHECK-NOT:   graph.conv2d_integer
func.func @negative_float_input(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xi8> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %w = graph.constant dense<[[[[3]]]]> : tensor<1x1x1x1xi8>
  %wd = graph.dequantize %w, %s, %z : (tensor<1x1x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x1x1xf32>
  %c = graph.conv2d %x, %wd : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %q = graph.quantize %c, %s, %z : (tensor<1x1x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xi8>
  func.return %q : tensor<1x1x4x4xi8>
}

// -----

// The float conv result has a second user: the float value is still needed, nothing folds.

// CHECK-LABEL: @negative_two_users
// CHECK:       graph.conv2d %
// CHECK-NOT:   graph.conv2d_integer
func.func @negative_two_users(%x: tensor<1x1x4x4xi8>) -> (tensor<1x1x4x4xi8>, tensor<1x1x4x4xf32>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %w = graph.constant dense<[[[[3]]]]> : tensor<1x1x1x1xi8>
  %xd = graph.dequantize %x, %s, %z : (tensor<1x1x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xf32>
  %wd = graph.dequantize %w, %s, %z : (tensor<1x1x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x1x1xf32>
  %c = graph.conv2d %xd, %wd : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %q = graph.quantize %c, %s, %z : (tensor<1x1x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x4x4xi8>
  func.return %q, %c : tensor<1x1x4x4xi8>, tensor<1x1x4x4xf32>
}

// -----

// quantize(mul(dequantize(a), dequantize(b))) is ONNX Runtime's QLinearMul: the product of
// the integer levels, one float32 multiplier 0.5 * 0.25 / 4 = 0.03125, the output zero point
// added in float, then quantize with scale 1 and zero point 0.

// CHECK-LABEL: @mul
// CHECK-SAME:  (%[[A:.*]]: tensor<2x3xui8>, %[[B:.*]]: tensor<2x3xui8>)
// CHECK-DAG:   %[[AZ:.*]] = graph.constant dense<128> : tensor<ui8>
// CHECK-DAG:   %[[BZ:.*]] = graph.constant dense<3> : tensor<ui8>
// CHECK:       %[[LA:.*]] = graph.dequantize %[[A]], %{{.*}}, %[[AZ]]
// CHECK:       %[[LB:.*]] = graph.dequantize %[[B]], %{{.*}}, %[[BZ]]
// CHECK:       %[[P:.*]] = graph.mul %[[LA]], %[[LB]]
// CHECK:       %[[M:.*]] = graph.constant dense<3.125000e-02> : tensor<f32>
// CHECK-NEXT:  %[[S:.*]] = graph.mul %[[P]], %[[M]]
// CHECK-NEXT:  %[[CZ:.*]] = graph.constant dense<7.000000e+00> : tensor<f32>
// CHECK-NEXT:  %[[SH:.*]] = graph.add %[[S]], %[[CZ]]
// CHECK-NEXT:  %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:  %[[ZERO:.*]] = graph.constant dense<0> : tensor<ui8>
// CHECK-NEXT:  %[[Q:.*]] = graph.quantize %[[SH]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT:  func.return %[[Q]]
func.func @mul(%a: tensor<2x3xui8>, %b: tensor<2x3xui8>) -> tensor<2x3xui8> {
  %as = graph.constant dense<0.5> : tensor<f32>
  %az = graph.constant dense<128> : tensor<ui8>
  %bs = graph.constant dense<0.25> : tensor<f32>
  %bz = graph.constant dense<3> : tensor<ui8>
  %cs = graph.constant dense<4.0> : tensor<f32>
  %cz = graph.constant dense<7> : tensor<ui8>
  %ad = graph.dequantize %a, %as, %az : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %bd = graph.dequantize %b, %bs, %bz : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %m = graph.mul %ad, %bd : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = graph.quantize %m, %cs, %cz : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  func.return %q : tensor<2x3xui8>
}

// -----

// A mul whose operands have different element types is ORT's float QDQ, not QLinearMul: kept.

// CHECK-LABEL: @mul_mixed_types
// CHECK:       %[[M:.*]] = graph.mul
// CHECK-NEXT:  graph.quantize %[[M]]
func.func @mul_mixed_types(%a: tensor<3xui8>, %b: tensor<3xi8>) -> tensor<3xui8> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %uz = graph.constant dense<0> : tensor<ui8>
  %iz = graph.constant dense<0> : tensor<i8>
  %ad = graph.dequantize %a, %s, %uz : (tensor<3xui8>, tensor<f32>, tensor<ui8>) -> tensor<3xf32>
  %bd = graph.dequantize %b, %s, %iz : (tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<3xf32>
  %m = graph.mul %ad, %bd : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %q = graph.quantize %m, %s, %uz : (tensor<3xf32>, tensor<f32>, tensor<ui8>) -> tensor<3xui8>
  func.return %q : tensor<3xui8>
}

// -----

// quantize(softmax(dequantize(x))) is ONNX Runtime's QLinearSoftmax: exp from a 256-entry table
// indexed by x - max(x) + 255, times floor(1 / y_scale) (254 for the float32 1/255), divided by
// the row's sum, quantized with scale 1 and the output's zero point.

// CHECK-LABEL: @softmax
// CHECK-SAME:  (%[[X:.*]]: tensor<2x4xui8>)
// CHECK:       %[[L:.*]] = graph.dequantize %[[X]], %{{.*}}, %{{.*}} : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xf32>
// CHECK-NEXT:  %[[MAX:.*]] = graph.reduce %[[L]] {kind = "max", axes = array<i64: 1>}
// CHECK-NEXT:  %[[D:.*]] = graph.sub %[[L]], %[[MAX]]
// CHECK-NEXT:  %[[C255:.*]] = graph.constant dense<2.550000e+02> : tensor<f32>
// CHECK-NEXT:  %[[IF:.*]] = graph.add %[[D]], %[[C255]]
// CHECK-NEXT:  %[[I:.*]] = graph.cast %[[IF]] : (tensor<2x4xf32>) -> tensor<2x4xi32>
// CHECK-NEXT:  %[[T:.*]] = graph.constant dense{{.*}} : tensor<256xf32>
// CHECK-NEXT:  %[[E:.*]] = graph.gather %[[T]], %[[I]]
// CHECK-NEXT:  %[[SUM:.*]] = graph.reduce %[[E]] {kind = "sum", axes = array<i64: 1>}
// CHECK-NEXT:  %[[INV:.*]] = graph.constant dense<2.540000e+02> : tensor<f32>
// CHECK-NEXT:  %[[S:.*]] = graph.mul %[[E]], %[[INV]]
// CHECK-NEXT:  %[[P:.*]] = graph.div %[[S]], %[[SUM]]
// CHECK-NEXT:  %[[Q:.*]] = graph.quantize %[[P]], %{{.*}}, %{{.*}} :
// CHECK-NOT:   graph.softmax
// CHECK:       func.return %[[Q]]
func.func @softmax(%x: tensor<2x4xui8>) -> tensor<2x4xui8> {
  %xs = graph.constant dense<0.125> : tensor<f32>
  %xz = graph.constant dense<100> : tensor<ui8>
  %ys = graph.constant dense<0.00392156886> : tensor<f32>
  %yz = graph.constant dense<0> : tensor<ui8>
  %xd = graph.dequantize %x, %xs, %xz : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xf32>
  %p = graph.softmax %xd {axis = 1 : i64} : tensor<2x4xf32>
  %q = graph.quantize %p, %ys, %yz : (tensor<2x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4xui8>
  func.return %q : tensor<2x4xui8>
}

// -----

// quantize(add(dequantize(a), dequantize(b))) is ONNX Runtime's QLinearAdd: ratios 0.5 and
// 0.25, fixed part 3 - (0.5 * 10 + 0.25 * 4) = -3, each fused multiply-add exact in f64 and
// rounded once to f32, then quantize with scale 1 and zero point 0.

// CHECK-LABEL: @add
// CHECK-SAME:  (%[[A:.*]]: tensor<4xui8>, %[[B:.*]]: tensor<4xui8>)
// CHECK:       %[[LB:.*]] = graph.dequantize %[[B]], %{{.*}}, %{{.*}} : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
// CHECK-NEXT:  %[[WB:.*]] = graph.cast %[[LB]] : (tensor<4xf32>) -> tensor<4xf64>
// CHECK-NEXT:  %[[K:.*]] = graph.constant dense<-3.000000e+00> : tensor<f64>
// CHECK-NEXT:  %[[RB:.*]] = graph.constant dense<2.500000e-01> : tensor<f64>
// CHECK-NEXT:  %[[PB:.*]] = graph.mul %[[WB]], %[[RB]]
// CHECK-NEXT:  %[[SB:.*]] = graph.add %[[PB]], %[[K]]
// CHECK-NEXT:  %[[T:.*]] = graph.cast %[[SB]] : (tensor<4xf64>) -> tensor<4xf32>
// CHECK-NEXT:  %[[TW:.*]] = graph.cast %[[T]] : (tensor<4xf32>) -> tensor<4xf64>
// CHECK:       %[[LA:.*]] = graph.dequantize %[[A]]
// CHECK-NEXT:  %[[WA:.*]] = graph.cast %[[LA]]
// CHECK-NEXT:  %[[RA:.*]] = graph.constant dense<5.000000e-01> : tensor<f64>
// CHECK-NEXT:  %[[PA:.*]] = graph.mul %[[WA]], %[[RA]]
// CHECK-NEXT:  %[[SA:.*]] = graph.add %[[PA]], %[[TW]]
// CHECK-NEXT:  %[[C:.*]] = graph.cast %[[SA]] : (tensor<4xf64>) -> tensor<4xf32>
// CHECK:       %[[Q:.*]] = graph.quantize %[[C]], %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
// CHECK-NEXT:  func.return %[[Q]]
func.func @add(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %as = graph.constant dense<0.5> : tensor<f32>
  %az = graph.constant dense<10> : tensor<ui8>
  %bs = graph.constant dense<0.25> : tensor<f32>
  %bz = graph.constant dense<4> : tensor<ui8>
  %cs = graph.constant dense<1.0> : tensor<f32>
  %cz = graph.constant dense<3> : tensor<ui8>
  %ad = graph.dequantize %a, %as, %az : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  %bd = graph.dequantize %b, %bs, %bz : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  %s = graph.add %ad, %bd : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %q = graph.quantize %s, %cs, %cz : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %q : tensor<4xui8>
}

// -----

// quantize(max_pool2d(dequantize(x))) with one scale and zero point on both sides: the pool
// runs on the int8 tensor (its padding then holds -128, which never wins).

// CHECK-LABEL: @max_pool_same_scale
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x6x6xi8>)
// CHECK-NEXT:  %[[P:.*]] = graph.max_pool2d %[[X]] {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xi8>) -> tensor<1x2x3x3xi8>
// CHECK-NEXT:  func.return %[[P]]
func.func @max_pool_same_scale(%x: tensor<1x2x6x6xi8>) -> tensor<1x2x3x3xi8> {
  %s = graph.constant dense<0.125> : tensor<f32>
  %z = graph.constant dense<-3> : tensor<i8>
  %s2 = graph.constant dense<0.125> : tensor<f32>
  %z2 = graph.constant dense<-3> : tensor<i8>
  %xd = graph.dequantize %x, %s, %z : (tensor<1x2x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x6x6xf32>
  %p = graph.max_pool2d %xd {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %q = graph.quantize %p, %s2, %z2 : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %q : tensor<1x2x3x3xi8>
}

// -----

// uint8 with ceil mode and dilation: the attributes carry over.

// CHECK-LABEL: @max_pool_uint8_ceil
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x5x5xui8>)
// CHECK-NEXT:  %[[P:.*]] = graph.max_pool2d %[[X]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilation = array<i64: 2, 2>, ceil_mode = true} : (tensor<1x1x5x5xui8>) -> tensor<1x1x2x2xui8>
// CHECK-NEXT:  func.return %[[P]]
func.func @max_pool_uint8_ceil(%x: tensor<1x1x5x5xui8>) -> tensor<1x1x2x2xui8> {
  %s = graph.constant dense<0.02> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %xd = graph.dequantize %x, %s, %z : (tensor<1x1x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x5x5xf32>
  %p = graph.max_pool2d %xd {ceil_mode = true, dilation = array<i64: 2, 2>, kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  %q = graph.quantize %p, %s, %z : (tensor<1x1x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x1x2x2xui8>
  func.return %q : tensor<1x1x2x2xui8>
}

// -----

// Different scales (or zero points) on the two sides requantize: nothing folds.

// CHECK-LABEL: @max_pool_other_scale
// CHECK:       graph.dequantize
// CHECK-NEXT:  graph.max_pool2d %{{.*}} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:  graph.quantize
// CHECK-LABEL: @max_pool_other_zero_point
// CHECK:       graph.dequantize
// CHECK-NEXT:  graph.max_pool2d %{{.*}} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:  graph.quantize
func.func @max_pool_other_scale(%x: tensor<1x2x6x6xi8>) -> tensor<1x2x3x3xi8> {
  %s = graph.constant dense<0.125> : tensor<f32>
  %s2 = graph.constant dense<0.25> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %xd = graph.dequantize %x, %s, %z : (tensor<1x2x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x6x6xf32>
  %p = graph.max_pool2d %xd {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %q = graph.quantize %p, %s2, %z : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %q : tensor<1x2x3x3xi8>
}

func.func @max_pool_other_zero_point(%x: tensor<1x2x6x6xi8>) -> tensor<1x2x3x3xi8> {
  %s = graph.constant dense<0.125> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %z2 = graph.constant dense<1> : tensor<i8>
  %xd = graph.dequantize %x, %s, %z : (tensor<1x2x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x6x6xf32>
  %p = graph.max_pool2d %xd {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  %q = graph.quantize %p, %s, %z2 : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x3xi8>
  func.return %q : tensor<1x2x3x3xi8>
}

// -----

// A conv whose float output joins a residual sum before it is quantized (`dlc quantize`'s
// ResNet block): the integer conv, its accumulator dequantized (times sx * sw = [0.125,
// 0.0625]); the sum, relu and quantize stay as they are.

// CHECK-LABEL: @conv_float_output_residual
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x4x4xui8>, %[[R:.*]]: tensor<1x2x4x4xf32>)
// CHECK-DAG:   %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<2x1x1x1xi8>
// CHECK-DAG:   %[[B:.*]] = graph.constant dense<[8, -8]> : tensor<2xi32>
// CHECK-DAG:   %[[S:.*]] = graph.constant dense<{{\[\[\[\[}}1.250000e-01]], {{\[\[}}6.250000e-02]]]]> : tensor<1x2x1x1xf32>
// CHECK:       %[[ACC:.*]] = graph.conv2d_integer %[[X]], %[[W]], %{{.*}}, %{{.*}}, %[[B]]
// CHECK-SAME:  -> tensor<1x2x4x4xi32>
// CHECK-NEXT:  %[[F:.*]] = graph.cast %[[ACC]] : (tensor<1x2x4x4xi32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:  %[[D:.*]] = graph.mul %[[F]], %[[S]]
// CHECK-NEXT:  %[[SUM:.*]] = graph.add %[[D]], %[[R]]
// CHECK-NEXT:  %[[RELU:.*]] = graph.relu %[[SUM]]
// CHECK-NEXT:  %[[Q:.*]] = graph.quantize %[[RELU]]
// CHECK-NOT:   graph.conv2d %
// CHECK:       func.return %[[Q]]
func.func @conv_float_output_residual(%x: tensor<1x1x4x4xui8>, %r: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xui8> {
  %xs = graph.constant dense<0.5> : tensor<f32>
  %xz = graph.constant dense<128> : tensor<ui8>
  %w = graph.constant dense<[[[[3]]], [[[-5]]]]> : tensor<2x1x1x1xi8>
  %ws = graph.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %wz = graph.constant dense<0> : tensor<2xi8>
  %b = graph.constant dense<[1.0, -0.5]> : tensor<2xf32>
  %ys = graph.constant dense<0.25> : tensor<f32>
  %yz = graph.constant dense<0> : tensor<ui8>
  %xd = graph.dequantize %x, %xs, %xz : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x4x4xf32>
  %wd = graph.dequantize %w, %ws, %wz {axis = 0 : i64} : (tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x1x1x1xf32>
  %c = graph.conv2d %xd, %wd, %b : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %c, %r : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.relu %s : tensor<1x2x4x4xf32>
  %q = graph.quantize %a, %ys, %yz : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  func.return %q : tensor<1x2x4x4xui8>
}
