// RUN: dlc-opt %s --split-input-file -p graph-fold-batch-norm | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-fold-batch-norm{decompose=false}' | filecheck %s --check-prefix=KEEP
// RUN: dlc-opt %s --split-input-file -p graph-fold-batch-norm --print-debuginfo | filecheck %s --check-prefix=LOC

// s = scale / sqrt(var + eps) = [1, 1]; t = bias - mean * s = [1, -2].

// CHECK-LABEL: @batch_norm_into_conv
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x3x3xf32>)
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:  %[[B:.*]] = graph.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  %[[C:.*]] = graph.conv2d %[[X]], %[[W]], %[[B]]
// CHECK-NOT:   graph.batch_norm
// CHECK:       func.return %[[C]]
func.func @batch_norm_into_conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %bias = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 16.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %n : tensor<1x2x3x3xf32>
}

// -----

// bn, then * [2, 3] per channel, then + [1, 1]: the conv keeps one bias, weights [2, 6].

// CHECK-LABEL: @batch_norm_scale_shift_into_conv
// CHECK-SAME:  (%[[X:.*]]: tensor<1x1x3x3xf32>)
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:  %[[B:.*]] = graph.constant dense<[3.000000e+00, -5.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:  %[[C:.*]] = graph.conv2d %[[X]], %[[W]], %[[B]]
// CHECK-NEXT:  %[[R:.*]] = graph.relu %[[C]]
// CHECK-NEXT:  func.return %[[R]]
func.func @batch_norm_scale_shift_into_conv(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %bias = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 16.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %k = graph.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %m = graph.mul %k, %n : (tensor<2x1x1xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %a = graph.add %m, %one : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<1x2x3x3xf32>
  %r = graph.relu %a : tensor<1x2x3x3xf32>
  func.return %r : tensor<1x2x3x3xf32>
}

// -----

// An existing bias is rescaled too: (b - mean) * s + bias = ([1, 1] - 0) * [2, 0.5] + 0.

// CHECK-LABEL: @conv_bias_is_rescaled
// CHECK:       %[[B:.*]] = graph.constant dense<[2.000000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK:       graph.conv2d %{{.*}}, %{{.*}}, %[[B]] {layout = "NHWC", kernel_layout = "HWIO"}
func.func @conv_bias_is_rescaled(%x: tensor<1x3x3x1xf32>) -> tensor<1x3x3x2xf32> {
  %w = graph.constant dense<1.0> : tensor<1x1x1x2xf32>
  %b = graph.constant dense<1.0> : tensor<2xf32>
  %c = graph.conv2d %x, %w, %b {layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x3x3x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %k = graph.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %m = graph.mul %c, %k : (tensor<1x3x3x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  func.return %m : tensor<1x3x3x2xf32>
}

// -----

// CHECK-LABEL: @batch_norm_into_matmul
// CHECK-SAME:  (%[[X:.*]]: tensor<4x3xf32>)
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<2.000000e+00> : tensor<3x2xf32>
// CHECK-NEXT:  %[[M:.*]] = graph.matmul %[[X]], %[[W]]
// CHECK-NEXT:  %[[T:.*]] = graph.constant dense<[-2.000000e+00, 0.000000e+00]>
// CHECK-NEXT:  %[[A:.*]] = graph.add %[[M]], %[[T]]
// CHECK-NEXT:  func.return %[[A]]
func.func @batch_norm_into_matmul(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = graph.constant dense<1.0> : tensor<3x2xf32>
  %scale = graph.constant dense<2.0> : tensor<2xf32>
  %bias = graph.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %mean = graph.constant dense<1.0> : tensor<2xf32>
  %var = graph.constant dense<1.0> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %n = graph.batch_norm %m, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %n : tensor<4x2xf32>
}

// -----

// A batch norm with no conv before it becomes x * s + t (s, t of shape C x 1 x 1): s = [1, 2], t = [1, -4].

// CHECK-LABEL: @lone_batch_norm_decomposes
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x3x3xf32>)
// CHECK-NEXT:  %[[S:.*]] = graph.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:  %[[M:.*]] = graph.mul %[[X]], %[[S]]
// CHECK-NEXT:  %[[T:.*]] = graph.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}-4.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:  %[[A:.*]] = graph.add %[[M]], %[[T]]
// CHECK-NEXT:  func.return %[[A]]
// KEEP-LABEL:  @lone_batch_norm_decomposes
// KEEP:        graph.batch_norm
func.func @lone_batch_norm_decomposes(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %scale = graph.constant dense<[2.0, 8.0]> : tensor<2xf32>
  %bias = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 16.0]> : tensor<2xf32>
  %n = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %n : tensor<1x2x3x3xf32>
}

// -----

// The conv's result has a second user: folding would need two convs.

// CHECK-LABEL: @negative_conv_has_other_users
// CHECK:       %[[C:.*]] = graph.conv2d
// CHECK-NOT:   graph.conv2d
// CHECK:       graph.mul %[[C]]
// KEEP-LABEL:  @negative_conv_has_other_users
// KEEP:        graph.batch_norm
func.func @negative_conv_has_other_users(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %p = graph.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %n = graph.batch_norm %c, %p, %p, %p, %p : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %n, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// CHECK-LABEL: @negative_non_constant_weight
// CHECK:       graph.conv2d
// CHECK:       graph.mul
func.func @negative_non_constant_weight(%x: tensor<1x1x3x3xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %k = graph.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %m = graph.mul %c, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %m : tensor<1x2x3x3xf32>
}

// -----

// Varying along W, not per channel.

// CHECK-LABEL: @negative_not_per_channel
// CHECK:       graph.conv2d
// CHECK:       graph.mul
func.func @negative_not_per_channel(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %k = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %m = graph.mul %c, %k : (tensor<1x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  func.return %m : tensor<1x2x3x3xf32>
}

// -----

// c - conv and c / conv are not affine in the conv's weights per channel in the same way.

// CHECK-LABEL: @negative_constant_on_the_left_of_sub
// CHECK:       graph.conv2d
// CHECK:       graph.sub
func.func @negative_constant_on_the_left_of_sub(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %k = graph.constant dense<1.0> : tensor<f32>
  %m = graph.sub %k, %c : (tensor<f32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %m : tensor<1x2x3x3xf32>
}

// -----

// The folded conv keeps the conv's location (its ONNX node name: profiles show it).

// LOC-LABEL: @folded_conv_keeps_its_name
// LOC:       graph.conv2d {{.*}} loc("conv1")
// LOC-NOT:   loc("bn1")
func.func @folded_conv_keeps_its_name(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %bias = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %mean = graph.constant dense<[0.0, 2.0]> : tensor<2xf32>
  %var = graph.constant dense<[4.0, 16.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32> loc("conv1")
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc("bn1")
  func.return %n : tensor<1x2x3x3xf32>
}
