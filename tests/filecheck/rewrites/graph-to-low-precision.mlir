// RUN: dlc-opt %s --split-input-file -p graph-to-low-precision | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-to-low-precision{type=f16}' | filecheck %s --check-prefix=F16
// RUN: dlc-opt %s --split-input-file -p 'graph-to-low-precision{keep-fp32=matmul,softmax}' | filecheck %s --check-prefix=KEEP
// RUN: not dlc-opt %s -p 'graph-to-low-precision{type=f8}' 2>&1 | filecheck %s --check-prefix=BAD-TYPE
// RUN: not dlc-opt %s -p 'graph-to-low-precision{keep-fp32=softmax,frobnicate}' 2>&1 | filecheck %s --check-prefix=BAD-OP

// BAD-TYPE: graph-to-low-precision: expected type bf16 or f16, found 'f8'
// BAD-OP: graph-to-low-precision: keep-fp32 names unknown ops graph.frobnicate

// The input is cast once; the weights become bf16 constants rounded to nearest even
// (1 + 2^-8 is a tie and goes to 1.0, 1 + 3 * 2^-8 to 1 + 2^-6 = 1.015625, which xDSL prints
// with six digits); relu and flatten follow the
// conv; the matmul runs in bf16; softmax stays f32 behind a cast; the signature is unchanged.

// CHECK-LABEL: @conv_relu_matmul_softmax
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:  %[[XL:.*]] = graph.cast %[[X]] : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xbf16>
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<[1.000000e+00, 1.015620e+00]> : tensor<2xbf16>
// CHECK:       %[[K:.*]] = graph.constant dense<5.000000e-01> : tensor<2x2x1x1xbf16>
// CHECK-NEXT:  %[[C:.*]] = graph.conv2d %[[XL]], %[[K]], %[[W]] {{.*}} -> tensor<1x2x4x4xbf16>
// CHECK-NEXT:  %[[R:.*]] = graph.relu %[[C]] : tensor<1x2x4x4xbf16>
// CHECK-NEXT:  %[[F:.*]] = graph.flatten %[[R]] : (tensor<1x2x4x4xbf16>) -> tensor<1x32xbf16>
// CHECK-NEXT:  %[[M:.*]] = graph.constant dense<2.500000e-01> : tensor<32x3xbf16>
// CHECK-NEXT:  %[[G:.*]] = graph.matmul %[[F]], %[[M]] : (tensor<1x32xbf16>, tensor<32x3xbf16>) -> tensor<1x3xbf16>
// CHECK-NEXT:  %[[G32:.*]] = graph.cast %[[G]] : (tensor<1x3xbf16>) -> tensor<1x3xf32>
// CHECK-NEXT:  %[[S:.*]] = graph.softmax %[[G32]] {axis = 1 : i64} : tensor<1x3xf32>
// CHECK-NEXT:  func.return %[[S]] : tensor<1x3xf32>

// F16-LABEL: @conv_relu_matmul_softmax
// F16:       graph.conv2d {{.*}} -> tensor<1x2x4x4xf16>
// F16:       graph.matmul {{.*}} -> tensor<1x3xf16>
// F16:       graph.cast {{.*}} : (tensor<1x3xf16>) -> tensor<1x3xf32>
// F16-NEXT:  graph.softmax {{.*}} : tensor<1x3xf32>

// With keep-fp32=matmul,softmax the flattened activations go back to f32 for the matmul,
// whose weight stays f32.

// KEEP-LABEL: @conv_relu_matmul_softmax
// KEEP:       %[[F:.*]] = graph.flatten {{.*}} -> tensor<1x32xbf16>
// KEEP-NEXT:  %[[F32:.*]] = graph.cast %[[F]] : (tensor<1x32xbf16>) -> tensor<1x32xf32>
// KEEP-NEXT:  %[[M:.*]] = graph.constant dense<2.500000e-01> : tensor<32x3xf32>
// KEEP-NEXT:  graph.matmul %[[F32]], %[[M]] : (tensor<1x32xf32>, tensor<32x3xf32>) -> tensor<1x3xf32>
func.func @conv_relu_matmul_softmax(%x: tensor<1x2x4x4xf32>) -> tensor<1x3xf32> {
  %w = graph.constant dense<[1.00390625, 1.01171875]> : tensor<2xf32>
  %k = graph.constant dense<0.5> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %k, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %c : tensor<1x2x4x4xf32>
  %f = graph.flatten %r : (tensor<1x2x4x4xf32>) -> tensor<1x32xf32>
  %m = graph.constant dense<0.25> : tensor<32x3xf32>
  %g = graph.matmul %f, %m : (tensor<1x32xf32>, tensor<32x3xf32>) -> tensor<1x3xf32>
  %s = graph.softmax %g {axis = 1 : i64} : tensor<1x3xf32>
  func.return %s : tensor<1x3xf32>
}

// -----

// A residual add of two bf16 values follows them; softmax gets an f32 copy.

// CHECK-LABEL: @residual_add_follows
// CHECK:       %[[A:.*]] = graph.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK:       %[[B:.*]] = graph.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NEXT:  %[[S:.*]] = graph.add %[[A]], %[[B]] : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
// CHECK-NEXT:  %[[S32:.*]] = graph.cast %[[S]] : (tensor<4x4xbf16>) -> tensor<4x4xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.softmax %[[S32]] {axis = 1 : i64} : tensor<4x4xf32>
// CHECK-NEXT:  func.return %[[R]] : tensor<4x4xf32>
func.func @residual_add_follows(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.constant dense<0.5> : tensor<4x4xf32>
  %a = graph.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = graph.matmul %a, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = graph.add %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = graph.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// An output layer (a matmul whose result reaches only the function's results, here through a
// bias add) stays f32: its bf16 result would only be widened again. The hidden layer before
// it runs in bf16; its relu follows; the result is cast back for the classifier.

// CHECK-LABEL: @output_layer_stays_f32
// CHECK:       %[[H:.*]] = graph.matmul {{.*}} -> tensor<2x8xbf16>
// CHECK-NEXT:  %[[R:.*]] = graph.relu %[[H]] : tensor<2x8xbf16>
// CHECK-NEXT:  %[[R32:.*]] = graph.cast %[[R]] : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT:  %[[W2:.*]] = graph.constant {{.*}} : tensor<8x3xf32>
// CHECK-NEXT:  %[[L:.*]] = graph.matmul %[[R32]], %[[W2]] : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  %[[B:.*]] = graph.constant {{.*}} : tensor<3xf32>
// CHECK-NEXT:  %[[Y:.*]] = graph.add %[[L]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<2x3xf32>
func.func @output_layer_stays_f32(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w1 = graph.constant dense<0.5> : tensor<4x8xf32>
  %h = graph.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %r = graph.relu %h : tensor<2x8xf32>
  %w2 = graph.constant dense<0.25> : tensor<8x3xf32>
  %l = graph.matmul %r, %w2 : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = graph.add %l, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// An add of a bf16 value and an f32 value that is not a constant runs in f32.

// CHECK-LABEL: @mixed_add_in_f32
// CHECK-SAME:  (%[[X:.*]]: tensor<4x4xf32>, %[[Y:.*]]: tensor<4x4xf32>)
// CHECK:       %[[A:.*]] = graph.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NEXT:  %[[A32:.*]] = graph.cast %[[A]] : (tensor<4x4xbf16>) -> tensor<4x4xf32>
// CHECK-NEXT:  %[[S:.*]] = graph.add %[[A32]], %[[Y]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:  graph.softmax %[[S]]
func.func @mixed_add_in_f32(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %w = graph.constant dense<0.5> : tensor<4x4xf32>
  %a = graph.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = graph.add %a, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = graph.softmax %s {axis = 1 : i64} : tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}

// -----

// Layer norm's pieces (reduce, sub, pow, sqrt, div) stay f32 by default; the sub of the
// f32 mean from a bf16 value runs in f32.

// CHECK-LABEL: @layer_norm_stays_f32
// CHECK:       %[[A:.*]] = graph.matmul {{.*}} -> tensor<2x8xbf16>
// CHECK-NEXT:  %[[A32:.*]] = graph.cast %[[A]] : (tensor<2x8xbf16>) -> tensor<2x8xf32>
// CHECK-NEXT:  %[[MEAN:.*]] = graph.reduce %[[A32]] {{.*}} -> tensor<2x1xf32>
// CHECK-NEXT:  %[[D:.*]] = graph.sub %[[A32]], %[[MEAN]] : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
// CHECK-NOT:   bf16
// CHECK:       func.return
func.func @layer_norm_stays_f32(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = graph.constant dense<0.5> : tensor<8x8xf32>
  %a = graph.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %mean = graph.reduce %a {axes = array<i64: 1>, keepdims = true, kind = "mean"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %d = graph.sub %a, %mean : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %sq = graph.pow %d, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %var = graph.reduce %sq {axes = array<i64: 1>, keepdims = true, kind = "mean"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %std = graph.sqrt %var : tensor<2x1xf32>
  %n = graph.div %d, %std : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  func.return %n : tensor<2x8xf32>
}

// -----

// f64 and integer tensors are left alone.

// CHECK-LABEL: @negative_f64_and_integers
// CHECK-NOT:   bf16
// CHECK:       graph.matmul {{.*}} -> tensor<2x2xf64>
// CHECK:       graph.matmul {{.*}} -> tensor<2x2xi32>
func.func @negative_f64_and_integers(%x: tensor<2x2xf64>, %i: tensor<2x2xi32>) -> (tensor<2x2xf64>, tensor<2x2xi32>) {
  %a = graph.matmul %x, %x : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %b = graph.matmul %i, %i : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  func.return %a, %b : tensor<2x2xf64>, tensor<2x2xi32>
}
