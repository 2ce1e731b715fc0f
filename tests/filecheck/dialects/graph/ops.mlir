// RUN: dlc-opt %s --custom-ops %S/custom_ops.py --elide-elementsattrs-if-larger=0 | filecheck %s
// RUN: dlc-opt %s --custom-ops %S/custom_ops.py --elide-elementsattrs-if-larger=0 | dlc-opt --custom-ops %S/custom_ops.py --print-op-generic --elide-elementsattrs-if-larger=0 | dlc-opt --custom-ops %S/custom_ops.py --elide-elementsattrs-if-larger=0 | filecheck %s

// One case per op: the `Example:` of its docstring (tests/test_graph_dialect.py checks that each
// example appears here verbatim), printed back in the custom form, directly and after a round trip
// through the generic form.

// CHECK-LABEL: func.func @constant
func.func @constant() -> tensor<2xf32> {
  %w = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK-NEXT: %w = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  func.return %w : tensor<2xf32>
}

// CHECK-LABEL: func.func @constant_large_splat_and_attrs
func.func @constant_large_splat_and_attrs() -> tensor<4x64xi64> {
  %c = graph.constant {origin = "onnx"} dense<7> : tensor<4x64xi64>
  // CHECK-NEXT: %c = graph.constant {origin = "onnx"} dense<7> : tensor<4x64xi64>
  func.return %c : tensor<4x64xi64>
}

// CHECK-LABEL: func.func @constant_large_hex
func.func @constant_large_hex() -> tensor<101xi8> {
  %h = graph.constant dense<"0x0102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465"> : tensor<101xi8>
  // CHECK-NEXT: %h = graph.constant dense<"0x0102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465"> : tensor<101xi8>
  func.return %h : tensor<101xi8>
}

// CHECK-LABEL: func.func @constant_resource
func.func @constant_resource() -> tensor<2xi32> {
  %r = graph.constant dense_resource<graph_blob> : tensor<2xi32>
  // CHECK-NEXT: %r = graph.constant dense_resource<graph_blob> : tensor<2xi32>
  func.return %r : tensor<2xi32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sub
func.func @sub(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = graph.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul_integers
func.func @mul_integers(%a: tensor<4x1xi64>, %b: tensor<1x5xi64>) -> tensor<4x5xi64> {
  %r = graph.mul %a, %b : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  // CHECK-NEXT: %r = graph.mul %a, %b : (tensor<4x1xi64>, tensor<1x5xi64>) -> tensor<4x5xi64>
  func.return %r : tensor<4x5xi64>
}

// CHECK-LABEL: func.func @div_by_scalar
func.func @div_by_scalar(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %r = graph.div %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.div %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @max
func.func @max(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %r = graph.max %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.max %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @min
func.func @min(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  %r = graph.min %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: %r = graph.min %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %r : tensor<3xi32>
}

// CHECK-LABEL: func.func @pow
func.func @pow(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %r = graph.pow %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.pow %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mod
func.func @mod(%a: tensor<2x3xi64>, %b: tensor<3xi64>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<2x3xi64>, tensor<4xf32>) {
  %r = graph.mod %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %f = graph.mod %x, %y {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %r = graph.mod %a, %b : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK-NEXT: %f = graph.mod %x, %y {fmod = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %f : tensor<2x3xi64>, tensor<4xf32>
}

// CHECK-LABEL: func.func @unary_2d
func.func @unary_2d(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = graph.relu %x : tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.relu %x : tensor<2x3xf32>
  %s = graph.sigmoid %r : tensor<2x3xf32>
  // CHECK-NEXT: %s = graph.sigmoid %r : tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sigmoid
func.func @sigmoid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = graph.sigmoid %x : tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.sigmoid %x : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @unary_1d
func.func @unary_1d(%x: tensor<4xf32>) {
  %r = graph.tanh %x : tensor<4xf32>
  // CHECK-NEXT: %r = graph.tanh %x : tensor<4xf32>
  %r1 = graph.exp %x : tensor<4xf32>
  // CHECK-NEXT: %r1 = graph.exp %x : tensor<4xf32>
  %r2 = graph.erf %x : tensor<4xf32>
  // CHECK-NEXT: %r2 = graph.erf %x : tensor<4xf32>
  %r3 = graph.sqrt %x : tensor<4xf32>
  // CHECK-NEXT: %r3 = graph.sqrt %x : tensor<4xf32>
  %r4 = graph.abs %x : tensor<4xf32>
  // CHECK-NEXT: %r4 = graph.abs %x : tensor<4xf32>
  %r5 = graph.log %x : tensor<4xf32>
  // CHECK-NEXT: %r5 = graph.log %x : tensor<4xf32>
  %r6 = graph.reciprocal %x : tensor<4xf32>
  // CHECK-NEXT: %r6 = graph.reciprocal %x : tensor<4xf32>
  %r7 = graph.ceil %x : tensor<4xf32>
  // CHECK-NEXT: %r7 = graph.ceil %x : tensor<4xf32>
  %r8 = graph.floor %x : tensor<4xf32>
  // CHECK-NEXT: %r8 = graph.floor %x : tensor<4xf32>
  %r9 = graph.round %x : tensor<4xf32>
  // CHECK-NEXT: %r9 = graph.round %x : tensor<4xf32>
  func.return
}

// The docstring examples, one op each, all named %r.
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.tanh %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.exp %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.erf %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.sqrt %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @abs(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.abs %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.log %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @reciprocal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.reciprocal %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @ceil(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.ceil %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.floor %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.round %x : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @neg_integers
func.func @neg_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  %r = graph.neg %x : tensor<4xi32>
  // CHECK-NEXT: %r = graph.neg %x : tensor<4xi32>
  func.return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @clip
func.func @clip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = graph.clip %x {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.clip %x {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @matmul_batched_broadcast
func.func @matmul_batched_broadcast(%a: tensor<8x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<8x2x4xf32> {
  %r = graph.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
  // CHECK-NEXT: %r = graph.matmul %a, %b : (tensor<8x2x3xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
  func.return %r : tensor<8x2x4xf32>
}

// Over runtime dims (attention over a runtime sequence): `q @ k^T`'s columns come from the rhs,
// `p @ v` contracts over a runtime dim (checked equal to the rhs's at run time).
// CHECK-LABEL: func.func @matmul_runtime_sequence
func.func @matmul_runtime_sequence(%q: tensor<?x4x?x8xf32>, %kt: tensor<?x4x8x?xf32>, %v: tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %s = graph.matmul %q, %kt : (tensor<?x4x?x8xf32>, tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32>
  // CHECK-NEXT: %s = graph.matmul %q, %kt : (tensor<?x4x?x8xf32>, tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32>
  %r = graph.matmul %s, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
  // CHECK-NEXT: %r = graph.matmul %s, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
  func.return %r : tensor<?x4x?x8xf32>
}

// CHECK-LABEL: func.func @matmul_vectors
func.func @matmul_vectors(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %r = graph.matmul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  // CHECK-NEXT: %r = graph.matmul %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x4x4xf32> {
  %r = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  // CHECK-NEXT: %r = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  func.return %r : tensor<1x16x4x4xf32>
}

// CHECK-LABEL: func.func @conv2d_winograd
func.func @conv2d_winograd(%x: tensor<1x8x7x9xf32>, %u: tensor<6x16x8x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x7x9xf32> {
  %r = graph.conv2d_winograd %x, %u, %b {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64}
      : (tensor<1x8x7x9xf32>, tensor<6x16x8x3xf32>, tensor<16xf32>) -> tensor<1x16x7x9xf32>
  // CHECK-NEXT: %r = graph.conv2d_winograd %x, %u, %b {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<1x8x7x9xf32>, tensor<6x16x8x3xf32>, tensor<16xf32>) -> tensor<1x16x7x9xf32>
  func.return %r : tensor<1x16x7x9xf32>
}

// CHECK-LABEL: func.func @conv2d_winograd_unpadded_1x5
func.func @conv2d_winograd_unpadded_1x5(%x: tensor<2x4x6x8xf32>, %u: tensor<4x3x4x5xf32>) -> tensor<2x3x4x4xf32> {
  %r = graph.conv2d_winograd %x, %u {tile = 2 : i64} : (tensor<2x4x6x8xf32>, tensor<4x3x4x5xf32>) -> tensor<2x3x4x4xf32>
  // CHECK-NEXT: %r = graph.conv2d_winograd %x, %u {tile = 2 : i64} : (tensor<2x4x6x8xf32>, tensor<4x3x4x5xf32>) -> tensor<2x3x4x4xf32>
  func.return %r : tensor<2x3x4x4xf32>
}

// A runtime batch, height and width: the result's are runtime too (its channels are the weight's).
// CHECK-LABEL: func.func @conv2d_winograd_runtime_plane
func.func @conv2d_winograd_runtime_plane(%x: tensor<?x8x?x?xf32>, %u: tensor<6x16x8x3xf32>) -> tensor<?x16x?x?xf32> {
  %r = graph.conv2d_winograd %x, %u {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<?x8x?x?xf32>, tensor<6x16x8x3xf32>) -> tensor<?x16x?x?xf32>
  // CHECK-NEXT: %r = graph.conv2d_winograd %x, %u {padding = array<i64: 1, 1, 1, 1>, tile = 4 : i64} : (tensor<?x8x?x?xf32>, tensor<6x16x8x3xf32>) -> tensor<?x16x?x?xf32>
  func.return %r : tensor<?x16x?x?xf32>
}

// CHECK-LABEL: func.func @conv2d_depthwise_nhwc_no_bias
func.func @conv2d_depthwise_nhwc_no_bias(%x: tensor<1x9x9x8xf32>, %w: tensor<3x3x1x8xf32>) -> tensor<1x7x7x8xf32> {
  %r = graph.conv2d %x, %w {dilation = array<i64: 2, 2>, groups = 8 : i64, kernel_layout = "HWIO", layout = "NHWC", padding = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x8xf32>, tensor<3x3x1x8xf32>) -> tensor<1x7x7x8xf32>
  // CHECK-NEXT: %r = graph.conv2d %x, %w {dilation = array<i64: 2, 2>, groups = 8 : i64, kernel_layout = "HWIO", layout = "NHWC", padding = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x8xf32>, tensor<3x3x1x8xf32>) -> tensor<1x7x7x8xf32>
  func.return %r : tensor<1x7x7x8xf32>
}

// CHECK-LABEL: func.func @max_pool2d
func.func @max_pool2d(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %r = graph.max_pool2d %x
      {ceil_mode = true, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>}
      : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %r = graph.max_pool2d %x {ceil_mode = true, kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  func.return %r : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @max_pool2d_int8
func.func @max_pool2d_int8(%x: tensor<1x4x8x8xi8>, %u: tensor<1x4x8x8xui8>) -> (tensor<1x4x4x4xi8>, tensor<1x4x4x4xui8>) {
  %r = graph.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xi8>) -> tensor<1x4x4x4xi8>
  // CHECK-NEXT: %r = graph.max_pool2d %x {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xi8>) -> tensor<1x4x4x4xi8>
  %s = graph.max_pool2d %u {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xui8>
  // CHECK-NEXT: %s = graph.max_pool2d %u {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xui8>
  func.return %r, %s : tensor<1x4x4x4xi8>, tensor<1x4x4x4xui8>
}

// CHECK-LABEL: func.func @avg_pool2d
func.func @avg_pool2d(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32> {
  %r = graph.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>,
      padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
      : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
  // CHECK-NEXT: %r = graph.avg_pool2d %x {count_include_pad = true, kernel = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x5x5xf32>
  func.return %r : tensor<1x4x5x5xf32>
}

// CHECK-LABEL: func.func @global_avg_pool2d
func.func @global_avg_pool2d(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32> {
  %r = graph.global_avg_pool2d %x : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
  // CHECK-NEXT: %r = graph.global_avg_pool2d %x : (tensor<1x64x7x7xf32>) -> tensor<1x64x1x1xf32>
  func.return %r : tensor<1x64x1x1xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x4x8x8xf32>, %scale: tensor<4xf32>, %bias: tensor<4xf32>, %mean: tensor<4xf32>, %var: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %r = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.000000e-03 : f32}
      : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<1x4x8x8xf32>
  // CHECK-NEXT: %r = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.000000e-03 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %r : tensor<1x4x8x8xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %r = graph.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  // CHECK-NEXT: %r = graph.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  func.return %r : tensor<2x10xf32>
}

// Over a runtime axis (attention's softmax over a runtime sequence).
// CHECK-LABEL: func.func @softmax_runtime_axis
func.func @softmax_runtime_axis(%x: tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32> {
  %r = graph.softmax %x {axis = -1 : i64} : tensor<?x4x?x?xf32>
  // CHECK-NEXT: %r = graph.softmax %x : tensor<?x4x?x?xf32>
  func.return %r : tensor<?x4x?x?xf32>
}

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> {
  %r = graph.reduce %x {axes = array<i64: 1>, keepdims = false, kind = "mean"}
      : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %r = graph.reduce %x {axes = array<i64: 1>, keepdims = false, kind = "mean"} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}

// Over runtime dims: a kept one stays runtime, a reduced one (not the leading dim) goes.
// CHECK-LABEL: func.func @reduce_runtime_axes
func.func @reduce_runtime_axes(%x: tensor<?x?x?x96xf32>) -> tensor<?x1x?x96xf32> {
  %r = graph.reduce %x {axes = array<i64: 1>, kind = "max"} : (tensor<?x?x?x96xf32>) -> tensor<?x1x?x96xf32>
  // CHECK-NEXT: %r = graph.reduce %x {axes = array<i64: 1>, kind = "max"} : (tensor<?x?x?x96xf32>) -> tensor<?x1x?x96xf32>
  func.return %r : tensor<?x1x?x96xf32>
}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x3x4xf32>, %y: tensor<?x3x?x?x8xf32>) -> (tensor<3x8xf32>, tensor<?x?x8xf32>) {
  %r = graph.reshape %x {shape = array<i64: 3, -1>} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
  %b = graph.reshape %y {shape = array<i64: -1, -1, 8>, groups = array<i64: 0, 1, 1, 4>}
      : (tensor<?x3x?x?x8xf32>) -> tensor<?x?x8xf32>
  // CHECK-NEXT: %r = graph.reshape %x {shape = array<i64: 3, -1>} : (tensor<2x3x4xf32>) -> tensor<3x8xf32>
  // CHECK-NEXT: %b = graph.reshape %y {shape = array<i64: -1, -1, 8>, groups = array<i64: 0, 1, 1, 4>} : (tensor<?x3x?x?x8xf32>) -> tensor<?x?x8xf32>
  func.return %r, %b : tensor<3x8xf32>, tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32> {
  %r = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>}
      : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
  // CHECK-NEXT: %r = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
  func.return %r : tensor<1x8x8x3xf32>
}

// Over runtime dims (a model compiled over runtime shapes): the dims move with the permutation,
// the batch too where other dims are runtime.
// CHECK-LABEL: func.func @transpose_runtime_plane
func.func @transpose_runtime_plane(%x: tensor<?x3x?x?xf32>) -> tensor<?x?x3x?xf32> {
  %r = graph.transpose %x {perm = array<i64: 2, 0, 1, 3>} : (tensor<?x3x?x?xf32>) -> tensor<?x?x3x?xf32>
  // CHECK-NEXT: %r = graph.transpose %x {perm = array<i64: 2, 0, 1, 3>} : (tensor<?x3x?x?xf32>) -> tensor<?x?x3x?xf32>
  func.return %r : tensor<?x?x3x?xf32>
}

// CHECK-LABEL: func.func @concat
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<?x8x?xf32>, %d: tensor<?x8x100xf32>) -> (tensor<2x8xf32>, tensor<?x8x?xf32>) {
  %r = graph.concat %a, %b {axis = 1 : i64}
      : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %s = graph.concat %c, %d {axis = 2 : i64}
      : (tensor<?x8x?xf32>, tensor<?x8x100xf32>) -> tensor<?x8x?xf32>
  // CHECK-NEXT: %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %s = graph.concat %c, %d {axis = 2 : i64} : (tensor<?x8x?xf32>, tensor<?x8x100xf32>) -> tensor<?x8x?xf32>
  func.return %r, %s : tensor<2x8xf32>, tensor<?x8x?xf32>
}

// CHECK-LABEL: func.func @flatten
func.func @flatten(%x: tensor<2x3x4x5xf32>) -> tensor<2x60xf32> {
  %r = graph.flatten %x : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
  // CHECK-NEXT: %r = graph.flatten %x : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
  func.return %r : tensor<2x60xf32>
}

// CHECK-LABEL: func.func @if_op
func.func @if_op(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
    %t = graph.relu %x : tensor<2xf32>
    graph.yield %t : tensor<2xf32>
  } else {
    %e = graph.neg %x : tensor<2xf32>
    graph.yield %e : tensor<2xf32>
  }
  // CHECK-NEXT: %r = graph.if %c : tensor<i1> -> tensor<2xf32> {
  // CHECK-NEXT:   %t = graph.relu %x : tensor<2xf32>
  // CHECK-NEXT:   graph.yield %t : tensor<2xf32>
  // CHECK-NEXT: } else {
  // CHECK-NEXT:   %e = graph.neg %x : tensor<2xf32>
  // CHECK-NEXT:   graph.yield %e : tensor<2xf32>
  // CHECK-NEXT: }
  func.return %r : tensor<2xf32>
}

// CHECK-LABEL: func.func @if_two_results_in_loop
func.func @if_two_results_in_loop(%c: tensor<1xi1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %r:2 = graph.if %c {note} : tensor<1xi1> -> (tensor<2xf32>, tensor<2xf32>) {
    graph.yield %x, %x : tensor<2xf32>, tensor<2xf32>
  } else {
    %e = graph.exp %x : tensor<2xf32>
    graph.yield %x, %e : tensor<2xf32>, tensor<2xf32>
  }
  // CHECK-NEXT: %r, %r_1 = graph.if %c {note} : tensor<1xi1> -> (tensor<2xf32>, tensor<2xf32>) {
  // CHECK-NEXT:   graph.yield %x, %x : tensor<2xf32>, tensor<2xf32>
  // CHECK-NEXT: } else {
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @loop_op
func.func @loop_op(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %r:2 = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>)
      -> (tensor<2xf32>, tensor<3x2xf32>) {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    %n = graph.relu %v : tensor<2xf32>
    graph.yield %ci, %n, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }
  // CHECK-NEXT: %r, %r_1 = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  // CHECK-NEXT: ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
  // CHECK-NEXT:   %n = graph.relu %v : tensor<2xf32>
  // CHECK-NEXT:   graph.yield %ci, %n, %v : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  // CHECK-NEXT: }
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @loop_without_carried_values
func.func @loop_without_carried_values(%m: tensor<1xi64>, %c: tensor<1xi1>) {
  graph.loop (%m, %c) : (tensor<1xi64>, tensor<1xi1>) -> () {
  ^bb0(%i: tensor<1xi64>, %ci: tensor<1xi1>):
    graph.yield %ci : tensor<1xi1>
  }
  // CHECK-NEXT: graph.loop (%m, %c) : (tensor<1xi64>, tensor<1xi1>) -> () {
  // CHECK-NEXT: ^bb0(%i: tensor<1xi64>, %ci: tensor<1xi1>):
  // CHECK-NEXT:   graph.yield %ci : tensor<1xi1>
  func.return
}

// CHECK-LABEL: func.func @fused
func.func @fused(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %r = graph.fused (%x, %w) {kind = "out_fusable", name = "fused_matmul_relu"}
      : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>):
    %m = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %y = graph.relu %m : tensor<2x4xf32>
    graph.yield %y : tensor<2x4xf32>
  }
  // CHECK-NEXT: %r = graph.fused (%x, %w) {kind = "out_fusable", name = "fused_matmul_relu"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> {
  // CHECK-NEXT: ^bb0(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>):
  // CHECK-NEXT:   %m = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT:   %y = graph.relu %m : tensor<2x4xf32>
  // CHECK-NEXT:   graph.yield %y : tensor<2x4xf32>
  // CHECK-NEXT: }
  func.return %r : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @fused_two_results_no_attrs
func.func @fused_two_results_no_attrs(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = graph.fused (%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    graph.yield %e, %a : tensor<4xf32>, tensor<4xf32>
  }
  // CHECK-NEXT: %r, %r_1 = graph.fused (%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK:        graph.yield %e, %a : tensor<4xf32>, tensor<4xf32>
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// Data movement, selection and conversion (ops_tensor.py).

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<2x3xf32>) -> tensor<2x3xi32> {
  %r = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %r = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  func.return %r : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @cast_bf16
func.func @cast_bf16(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %b = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  // CHECK-NEXT: %b = graph.cast %x : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %h = graph.cast %b : (tensor<2x3xbf16>) -> tensor<2x3xf16>
  // CHECK-NEXT: %h = graph.cast %b : (tensor<2x3xbf16>) -> tensor<2x3xf16>
  func.return %h : tensor<2x3xf16>
}

// CHECK-LABEL: func.func @compare
func.func @compare(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  %r = graph.compare %a, %b {predicate = "lt"}
      : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %r = graph.compare %a, %b {predicate = "lt"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  func.return %r : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @where
func.func @where(%c: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %r = graph.where %c, %a, %b
      : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%x: tensor<2x5xf32>, %i: tensor<3xi64>) -> tensor<2x3xf32> {
  %r = graph.gather %x, %i {axis = 1 : i64}
      : (tensor<2x5xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.gather %x, %i {axis = 1 : i64} : (tensor<2x5xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @arange
func.func @arange(%tokens: tensor<?x?xi64>) -> tensor<?xi64> {
  %p = graph.arange %tokens {axis = 1 : i64, bound = 256 : i64}
      : (tensor<?x?xi64>) -> tensor<?xi64>
  // CHECK-NEXT: %p = graph.arange %tokens {axis = 1 : i64, bound = 256 : i64} : (tensor<?x?xi64>) -> tensor<?xi64>
  func.return %p : tensor<?xi64>
}

// The ops of a transformer over a runtime sequence: an embedding of its tokens and of their
// positions (`graph.arange`, a unit batch put before it by a reshape), a causal mask's first
// rows and columns at those positions, compared and selected over the runtime dims.

// CHECK-LABEL: func.func @runtime_sequence_ops
func.func @runtime_sequence_ops(%tokens: tensor<?x?xi64>, %table: tensor<16x4xf32>, %mask: tensor<8x8xf32>, %scores: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %e = graph.gather %table, %tokens : (tensor<16x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  // CHECK: graph.gather {{.*}} -> tensor<?x?x4xf32>
  %p = graph.arange %tokens {axis = 1 : i64, bound = 8 : i64} : (tensor<?x?xi64>) -> tensor<?xi64>
  %u = graph.reshape %p {shape = array<i64: 1, -1>} : (tensor<?xi64>) -> tensor<1x?xi64>
  // CHECK: graph.reshape {{.*}} -> tensor<1x?xi64>
  %pe = graph.gather %table, %u : (tensor<16x4xf32>, tensor<1x?xi64>) -> tensor<1x?x4xf32>
  %rows = graph.gather %mask, %p {axis = 0 : i64} : (tensor<8x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  %m = graph.gather %rows, %p {axis = 1 : i64} : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  // CHECK: graph.gather {{.*}} -> tensor<?x?xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %c = graph.compare %m, %zero {predicate = "eq"} : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  // CHECK: graph.compare {{.*}} -> tensor<?x?xi1>
  %w = graph.where %c, %zero, %scores : (tensor<?x?xi1>, tensor<f32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  // CHECK: graph.where {{.*}} -> tensor<?x?x?xf32>
  func.return %w : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %r = graph.slice %x
      {starts = array<i64: 1, 4>, sizes = array<i64: 2, 3>, steps = array<i64: 1, -2>}
      : (tensor<4x5xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.slice %x {starts = array<i64: 1, 4>, sizes = array<i64: 2, 3>, steps = array<i64: 1, -2>} : (tensor<4x5xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %r = graph.pad %x {pads = array<i64: 0, 1, 0, 2>, value = 1.500000e+00 : f64}
      : (tensor<2x3xf32>) -> tensor<2x6xf32>
  // CHECK-NEXT: %r = graph.pad %x {pads = array<i64: 0, 1, 0, 2>, value = 1.500000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return %r : tensor<2x6xf32>
}

// CHECK-LABEL: func.func @pad_reflect
func.func @pad_reflect(%x: tensor<3xi64>) -> tensor<5xi64> {
  %r = graph.pad %x {pads = array<i64: 2, 0>, mode = "reflect"} : (tensor<3xi64>) -> tensor<5xi64>
  // CHECK-NEXT: %r = graph.pad %x {pads = array<i64: 2, 0>, mode = "reflect"} : (tensor<3xi64>) -> tensor<5xi64>
  func.return %r : tensor<5xi64>
}

// CHECK-LABEL: func.func @broadcast_to
func.func @broadcast_to(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %r = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// A broadcast to a dynamic batch: sized by a batched operand, or by the operand's own batch.
// CHECK-LABEL: func.func @broadcast_to_batch
func.func @broadcast_to_batch(%x: tensor<1x3xi64>, %ids: tensor<?x5xi64>, %m: tensor<?x1x3xf32>) -> (tensor<?x3xi64>, tensor<?x4x3xf32>) {
  %r = graph.broadcast_to %x, %ids {shape = array<i64: -1, 3>} : (tensor<1x3xi64>, tensor<?x5xi64>) -> tensor<?x3xi64>
  // CHECK-NEXT: %r = graph.broadcast_to %x, %ids {shape = array<i64: -1, 3>} : (tensor<1x3xi64>, tensor<?x5xi64>) -> tensor<?x3xi64>
  %e = graph.broadcast_to %m {shape = array<i64: -1, 4, 3>} : (tensor<?x1x3xf32>) -> tensor<?x4x3xf32>
  // CHECK-NEXT: %e = graph.broadcast_to %m {shape = array<i64: -1, 4, 3>} : (tensor<?x1x3xf32>) -> tensor<?x4x3xf32>
  func.return %r, %e : tensor<?x3xi64>, tensor<?x4x3xf32>
}

// Runtime sizes after the leading dim: the sizing operand's, of the target's rank (a row of
// token types at runtime positions expanded to the input's N x S).
// CHECK-LABEL: func.func @broadcast_to_runtime_sizes
func.func @broadcast_to_runtime_sizes(%t: tensor<1x?xi64>, %ids: tensor<?x?xi64>, %v: tensor<3xf32>, %x: tensor<2x?x?xf32>) -> (tensor<?x?xi64>, tensor<2x?x3xf32>) {
  %r = graph.broadcast_to %t, %ids {shape = array<i64: -1, -1>} : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  // CHECK-NEXT: %r = graph.broadcast_to %t, %ids {shape = array<i64: -1, -1>} : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %e = graph.broadcast_to %v, %x {shape = array<i64: 2, -1, 3>} : (tensor<3xf32>, tensor<2x?x?xf32>) -> tensor<2x?x3xf32>
  // CHECK-NEXT: %e = graph.broadcast_to %v, %x {shape = array<i64: 2, -1, 3>} : (tensor<3xf32>, tensor<2x?x?xf32>) -> tensor<2x?x3xf32>
  func.return %r, %e : tensor<?x?xi64>, tensor<2x?x3xf32>
}

// A resize to another value's runtime sizes (the logits to the input's height and width).
// CHECK-LABEL: func.func @resize_to_runtime_sizes
func.func @resize_to_runtime_sizes(%y: tensor<?x21x?x?xf32>, %image: tensor<?x3x?x?xf32>) -> tensor<?x21x?x?xf32> {
  %u = graph.resize %y, %image {sizes = array<i64: -1, 21, -1, -1>, scales = array<f64: 1.0, 1.0, 1.0, 1.0>, mode = "linear"} : (tensor<?x21x?x?xf32>, tensor<?x3x?x?xf32>) -> tensor<?x21x?x?xf32>
  // CHECK-NEXT: %u = graph.resize %y, %image {sizes = array<i64: -1, 21, -1, -1>, scales = array<f64: 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00>, mode = "linear"} : (tensor<?x21x?x?xf32>, tensor<?x3x?x?xf32>) -> tensor<?x21x?x?xf32>
  func.return %u : tensor<?x21x?x?xf32>
}

// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %r = graph.resize %x {sizes = array<i64: 1, 1, 4, 6>,
      scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear"}
      : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32>
  // CHECK-NEXT: %r = graph.resize %x {sizes = array<i64: 1, 1, 4, 6>, scales = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, mode = "linear"} : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32>
  func.return %r : tensor<1x1x4x6xf32>
}

// CHECK-LABEL: func.func @argmax
func.func @argmax(%x: tensor<2x5xf32>) -> tensor<2xi64> {
  %r = graph.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<2x5xf32>) -> tensor<2xi64>
  // CHECK-NEXT: %r = graph.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<2x5xf32>) -> tensor<2xi64>
  func.return %r : tensor<2xi64>
}

// Over a runtime plane (a segmentation map's class at each pixel): the axis stays static.
// CHECK-LABEL: func.func @argmax_runtime_plane
func.func @argmax_runtime_plane(%x: tensor<?x5x?x?xf32>) -> tensor<?x?x?xi64> {
  %r = graph.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<?x5x?x?xf32>) -> tensor<?x?x?xi64>
  // CHECK-NEXT: %r = graph.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<?x5x?x?xf32>) -> tensor<?x?x?xi64>
  func.return %r : tensor<?x?x?xi64>
}

// CHECK-LABEL: func.func @topk
func.func @topk(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = graph.topk %x {k = 2 : i64, axis = 1 : i64}
      : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  // CHECK-NEXT: %v, %i = graph.topk %x {k = 2 : i64, axis = 1 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// CHECK-LABEL: func.func @nonzero
func.func @nonzero(%x: tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>) {
  %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  // CHECK-NEXT: %i, %n = graph.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  func.return %i, %n : tensor<2x6xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @non_max_suppression
func.func @non_max_suppression(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x1x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>, %thr: tensor<1xf32>) -> (tensor<2x3xi64>, tensor<i64>) {
  %s, %n = graph.non_max_suppression %boxes, %scores, %max, %iou, %thr
      {bound = 2 : i64}
      : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>,
        tensor<1xf32> -> tensor<2x3xi64>, tensor<i64>
  // CHECK-NEXT: %s, %n = graph.non_max_suppression %boxes, %scores, %max, %iou, %thr {bound = 2 : i64} : tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32> -> tensor<2x3xi64>, tensor<i64>
  func.return %s, %n : tensor<2x3xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @non_max_suppression_without_score_threshold
func.func @non_max_suppression_without_score_threshold(%boxes: tensor<2x5x4xf32>, %scores: tensor<2x3x5xf32>, %max: tensor<i64>, %iou: tensor<f32>) -> (tensor<30x3xi64>, tensor<i64>) {
  %s, %n = graph.non_max_suppression %boxes, %scores, %max, %iou {bound = 5 : i64, center_point_box = 1 : i64} : tensor<2x5x4xf32>, tensor<2x3x5xf32>, tensor<i64>, tensor<f32> -> tensor<30x3xi64>, tensor<i64>
  // CHECK-NEXT: %s, %n = graph.non_max_suppression %boxes, %scores, %max, %iou {bound = 5 : i64, center_point_box = 1 : i64} : tensor<2x5x4xf32>, tensor<2x3x5xf32>, tensor<i64>, tensor<f32> -> tensor<30x3xi64>, tensor<i64>
  func.return %s, %n : tensor<30x3xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @conv_transpose2d
func.func @conv_transpose2d(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32> {
  %r = graph.conv_transpose2d %x, %w
      {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32>
  // CHECK-NEXT: %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x9x9xf32>
  func.return %r : tensor<1x3x9x9xf32>
}

// Over a runtime height and width (a UNet's up-convs over runtime images): its output's too.
// CHECK-LABEL: func.func @conv_transpose2d_runtime_sizes
func.func @conv_transpose2d_runtime_sizes(%x: tensor<?x4x?x?xf32>, %w: tensor<4x3x2x2xf32>) -> tensor<?x3x?x?xf32> {
  %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<?x4x?x?xf32>, tensor<4x3x2x2xf32>) -> tensor<?x3x?x?xf32>
  // CHECK-NEXT: %r = graph.conv_transpose2d %x, %w {strides = array<i64: 2, 2>} : (tensor<?x4x?x?xf32>, tensor<4x3x2x2xf32>) -> tensor<?x3x?x?xf32>
  func.return %r : tensor<?x3x?x?xf32>
}

// CHECK-LABEL: func.func @quantize
func.func @quantize(%x: tensor<1x2x4xf32>, %s: tensor<2xf32>, %z: tensor<2xi8>) -> tensor<1x2x4xi8> {
  %q = graph.quantize %x, %s, %z {axis = 1 : i64}
      : (tensor<1x2x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<1x2x4xi8>
  // CHECK-NEXT: %q = graph.quantize %x, %s, %z : (tensor<1x2x4xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<1x2x4xi8>
  func.return %q : tensor<1x2x4xi8>
}

// CHECK-LABEL: func.func @dequantize
func.func @dequantize(%q: tensor<4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xf32> {
  %x = graph.dequantize %q, %s, %z
      : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  // CHECK-NEXT: %x = graph.dequantize %q, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  func.return %x : tensor<4xf32>
}

// CHECK-LABEL: func.func @conv2d_integer
func.func @conv2d_integer(%x: tensor<1x3x8x8xui8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<ui8>, %wz: tensor<4xi8>) -> tensor<1x4x8x8xi32> {
  %r = graph.conv2d_integer %x, %w, %xz, %wz {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>)
      -> tensor<1x4x8x8xi32>
  // CHECK-NEXT: %r = graph.conv2d_integer %x, %w, %xz, %wz {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<1x4x8x8xi32>
  func.return %r : tensor<1x4x8x8xi32>
}

// CHECK-LABEL: func.func @conv2d_integer_bias
func.func @conv2d_integer_bias(%x: tensor<1x3x8x8xi8>, %w: tensor<4x3x3x3xi8>, %xz: tensor<i8>, %wz: tensor<i8>, %b: tensor<4xi32>) -> tensor<1x4x6x6xi32> {
  %r = graph.conv2d_integer %x, %w, %xz, %wz, %b : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>, tensor<i8>, tensor<i8>, tensor<4xi32>) -> tensor<1x4x6x6xi32>
  // CHECK-NEXT: %r = graph.conv2d_integer %x, %w, %xz, %wz, %b : (tensor<1x3x8x8xi8>, tensor<4x3x3x3xi8>, tensor<i8>, tensor<i8>, tensor<4xi32>) -> tensor<1x4x6x6xi32>
  func.return %r : tensor<1x4x6x6xi32>
}

// CHECK-LABEL: func.func @matmul_integer
func.func @matmul_integer(%a: tensor<2x3xui8>, %b: tensor<3x4xi8>, %az: tensor<ui8>, %bz: tensor<4xi8>) -> tensor<2x4xi32> {
  %r = graph.matmul_integer %a, %b, %az, %bz
      : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<2x4xi32>
  // CHECK-NEXT: %r = graph.matmul_integer %a, %b, %az, %bz : (tensor<2x3xui8>, tensor<3x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<2x4xi32>
  func.return %r : tensor<2x4xi32>
}

// CHECK-LABEL: func.func @lookup
func.func @lookup(%x: tensor<2x3xui8>, %t: tensor<256xi8>) -> tensor<2x3xi8> {
  %y = graph.lookup %x, %t : (tensor<2x3xui8>, tensor<256xi8>) -> tensor<2x3xi8>
  // CHECK-NEXT: %y = graph.lookup %x, %t : (tensor<2x3xui8>, tensor<256xi8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// A user-defined op (registered by custom_ops.py, which dlc-opt runs with --custom-ops).
// CHECK-LABEL: func.func @custom
func.func @custom(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.custom %x {op_type = "com.example::Swish", attrs = {beta = 1.0 : f64}} :
      (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %y = graph.custom %x {op_type = "com.example::Swish", attrs = {beta = 1.000000e+00 : f64}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @lstm
func.func @lstm(%x: tensor<5x2x4xf32>, %w: tensor<1x12x4xf32>, %r: tensor<1x12x3xf32>, %b: tensor<1x24xf32>, %h0: tensor<1x2x3xf32>, %c0: tensor<1x2x3xf32>, %p: tensor<1x9xf32>) -> tensor<5x1x2x3xf32> {
  %y, %yh, %yc = graph.lstm %x, %w, %r, %b, %h0, %c0, %p
      {direction = "forward", hidden_size = 3 : i64, activations = ["sigmoid", "tanh",
       "tanh"], activation_alpha = array<f64: 0.0, 0.0, 0.0>,
       activation_beta = array<f64: 0.0, 0.0, 0.0>, input_forget = false}
      : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>,
         tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x9xf32>)
      -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  // CHECK-NEXT: %y, %yh, %yc = graph.lstm %x, %w, %r, %b, %h0, %c0, %p {direction = "forward", hidden_size = 3 : i64, activations = ["sigmoid", "tanh", "tanh"], activation_alpha = array<f64: 0.000000e+00, 0.000000e+00, 0.000000e+00>, activation_beta = array<f64: 0.000000e+00, 0.000000e+00, 0.000000e+00>} : (tensor<5x2x4xf32>, tensor<1x12x4xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x9xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  func.return %y : tensor<5x1x2x3xf32>
}

// CHECK-LABEL: func.func @gru
func.func @gru(%x: tensor<5x2x4xf32>, %w: tensor<1x9x4xf32>, %r: tensor<1x9x3xf32>, %b: tensor<1x18xf32>, %h0: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %y, %yh = graph.gru %x, %w, %r, %b, %h0
      {direction = "reverse", hidden_size = 3 : i64, activations = ["sigmoid", "tanh"],
       activation_alpha = array<f64: 0.0, 0.0>, activation_beta = array<f64: 0.0, 0.0>,
       linear_before_reset = true}
      : (tensor<5x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>,
         tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  // CHECK-NEXT: %y, %yh = graph.gru %x, %w, %r, %b, %h0 {direction = "reverse", hidden_size = 3 : i64, activations = ["sigmoid", "tanh"], activation_alpha = array<f64: 0.000000e+00, 0.000000e+00>, activation_beta = array<f64: 0.000000e+00, 0.000000e+00>, linear_before_reset = true} : (tensor<5x2x4xf32>, tensor<1x9x4xf32>, tensor<1x9x3xf32>, tensor<1x18xf32>, tensor<1x2x3xf32>) -> (tensor<5x1x2x3xf32>, tensor<1x2x3xf32>)
  func.return %yh : tensor<1x2x3xf32>
}

// CHECK-LABEL: func.func @rnn
func.func @rnn(%x: tensor<5x2x4xf32>, %w: tensor<2x3x4xf32>, %r: tensor<2x3x3xf32>, %b: tensor<2x6xf32>, %h0: tensor<2x2x3xf32>, %lens: tensor<2xi32>) -> tensor<5x2x2x3xf32> {
  %y, %yh = graph.rnn %x, %w, %r, %b, %h0 seq_lens(%lens)
      {direction = "bidirectional", hidden_size = 3 : i64, activations = ["tanh", "relu"],
       activation_alpha = array<f64: 0.0, 0.0>, activation_beta = array<f64: 0.0, 0.0>}
      : (tensor<5x2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>, tensor<2x6xf32>,
         tensor<2x2x3xf32>, tensor<2xi32>) -> (tensor<5x2x2x3xf32>, tensor<2x2x3xf32>)
  // CHECK-NEXT: %y, %yh = graph.rnn %x, %w, %r, %b, %h0 seq_lens(%lens) {direction = "bidirectional", hidden_size = 3 : i64, activations = ["tanh", "relu"], activation_alpha = array<f64: 0.000000e+00, 0.000000e+00>, activation_beta = array<f64: 0.000000e+00, 0.000000e+00>} : (tensor<5x2x4xf32>, tensor<2x3x4xf32>, tensor<2x3x3xf32>, tensor<2x6xf32>, tensor<2x2x3xf32>, tensor<2xi32>) -> (tensor<5x2x2x3xf32>, tensor<2x2x3xf32>)
  func.return %y : tensor<5x2x2x3xf32>
}

// A dynamic leading dim (the batch) through the batch-polymorphic ops: shape inference carries it.

// CHECK-LABEL: func.func @dynamic_batch
func.func @dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %m: tensor<64x10xf32>, %s: tensor<4xf32>) -> tensor<?x10xf32> {
  %c = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x8x8xf32>
  // CHECK: graph.conv2d {{.*}} -> tensor<?x4x8x8xf32>
  %n = graph.batch_norm %c, %s, %s, %s, %s : (tensor<?x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x8x8xf32>
  %r = graph.relu %n : tensor<?x4x8x8xf32>
  // CHECK: graph.relu %{{.*}} : tensor<?x4x8x8xf32>
  %a = graph.add %r, %n : (tensor<?x4x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %p = graph.max_pool2d %a {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x4x8x8xf32>) -> tensor<?x4x4x4xf32>
  // CHECK: graph.max_pool2d {{.*}} -> tensor<?x4x4x4xf32>
  %t = graph.transpose %p {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x4x4x4xf32>) -> tensor<?x4x4x4xf32>
  %f = graph.flatten %t : (tensor<?x4x4x4xf32>) -> tensor<?x64xf32>
  // CHECK: graph.flatten {{.*}} -> tensor<?x64xf32>
  %h = graph.reshape %f {shape = array<i64: -1, 8, 8>} : (tensor<?x64xf32>) -> tensor<?x8x8xf32>
  // CHECK: graph.reshape {{.*}} -> tensor<?x8x8xf32>
  %k = graph.concat %h, %h {axis = 2 : i64} : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x16xf32>
  %g = graph.reshape %k {shape = array<i64: -1, 128>} : (tensor<?x8x16xf32>) -> tensor<?x128xf32>
  %q = graph.global_avg_pool2d %a : (tensor<?x4x8x8xf32>) -> tensor<?x4x1x1xf32>
  %mm = graph.matmul %f, %m : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  // CHECK: graph.matmul {{.*}} -> tensor<?x10xf32>
  %y = graph.softmax %mm {axis = 1 : i64} : tensor<?x10xf32>
  %z = graph.clip %y {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : tensor<?x10xf32>
  func.return %z : tensor<?x10xf32>
}

// The batch-polymorphic selection, conversion and reduction ops: over other axes than the
// batch (a gather of batched data along axis 1, an embedding lookup of batched indices along
// axis 0 of a static table, a reduction and an argmax over axis 1, a pad of axis 1), and a
// transposed conv, whose N is the batch.

// CHECK-LABEL: func.func @dynamic_batch_tensor_ops
func.func @dynamic_batch_tensor_ops(%x: tensor<?x6xf32>, %ids: tensor<?x4xi64>, %table: tensor<20x6xf32>, %i: tensor<2xi64>, %img: tensor<?x2x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<?x8xf32> {
  %g = graph.gather %x, %i {axis = 1 : i64} : (tensor<?x6xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  // CHECK: graph.gather {{.*}} -> tensor<?x2xf32>
  %e = graph.gather %table, %ids {axis = 0 : i64} : (tensor<20x6xf32>, tensor<?x4xi64>) -> tensor<?x4x6xf32>
  // CHECK: graph.gather {{.*}} -> tensor<?x4x6xf32>
  %m = graph.reduce %e {axes = array<i64: 1>, keepdims = false, kind = "mean"} : (tensor<?x4x6xf32>) -> tensor<?x6xf32>
  // CHECK: graph.reduce {{.*}} -> tensor<?x6xf32>
  %c = graph.compare %m, %x {predicate = "gt"} : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xi1>
  %s = graph.where %c, %m, %x : (tensor<?x6xi1>, tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  // CHECK: graph.where {{.*}} -> tensor<?x6xf32>
  %a = graph.argmax %s {axis = 1 : i64} : (tensor<?x6xf32>) -> tensor<?x1xi64>
  %f = graph.cast %a : (tensor<?x1xi64>) -> tensor<?x1xf32>
  // CHECK: graph.cast {{.*}} -> tensor<?x1xf32>
  %p = graph.pad %s {pads = array<i64: 0, 1, 0, 0>} : (tensor<?x6xf32>) -> tensor<?x7xf32>
  // CHECK: graph.pad {{.*}} -> tensor<?x7xf32>
  %y = graph.concat %p, %f {axis = 1 : i64} : (tensor<?x7xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  %t = graph.conv_transpose2d %img, %w {strides = array<i64: 2, 2>} : (tensor<?x2x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<?x3x9x9xf32>
  // CHECK: graph.conv_transpose2d {{.*}} -> tensor<?x3x9x9xf32>
  func.return %y : tensor<?x8xf32>
}

// A slice of other axes takes the dynamic batch whole (start 0, size -1, step 1).

// CHECK-LABEL: func.func @dynamic_batch_slice
func.func @dynamic_batch_slice(%x: tensor<?x4x6xf32>) -> tensor<?x4x2xf32> {
  %s = graph.slice %x {starts = array<i64: 0, 0, 4>, sizes = array<i64: -1, 4, 2>, steps = array<i64: 1, 1, 1>} : (tensor<?x4x6xf32>) -> tensor<?x4x2xf32>
  // CHECK: graph.slice %x {starts = array<i64: 0, 0, 4>, sizes = array<i64: -1, 4, 2>, steps = array<i64: 1, 1, 1>} : (tensor<?x4x6xf32>) -> tensor<?x4x2xf32>
  func.return %s : tensor<?x4x2xf32>
}

// Over runtime heights and widths: a slice of a static axis takes the runtime dims whole (a
// chunk of the channels); a reshape keeps each runtime dim, in order, and regroups the static
// dims between them (a channel shuffle: 8 channels as 2 x 4, transposed, merged back).

// CHECK-LABEL: func.func @runtime_plane_shuffle
func.func @runtime_plane_shuffle(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %s = graph.slice %x {starts = array<i64: 0, 4, 0, 0>, sizes = array<i64: -1, 4, -1, -1>, steps = array<i64: 1, 1, 1, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x4x?x?xf32>
  // CHECK: graph.slice %x {{.*}} : (tensor<?x8x?x?xf32>) -> tensor<?x4x?x?xf32>
  %r = graph.reshape %x {shape = array<i64: -1, 2, 4, -1, -1>} : (tensor<?x8x?x?xf32>) -> tensor<?x2x4x?x?xf32>
  // CHECK-NEXT: graph.reshape %x {shape = array<i64: -1, 2, 4, -1, -1>} : (tensor<?x8x?x?xf32>) -> tensor<?x2x4x?x?xf32>
  %t = graph.transpose %r {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<?x2x4x?x?xf32>) -> tensor<?x4x2x?x?xf32>
  %m = graph.reshape %t {shape = array<i64: -1, 8, -1, -1>} : (tensor<?x4x2x?x?xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: graph.reshape %t {shape = array<i64: -1, 8, -1, -1>} : (tensor<?x4x2x?x?xf32>) -> tensor<?x8x?x?xf32>
  func.return %m : tensor<?x8x?x?xf32>
}

// A reshape merging consecutive runtime dims (a detector head's x.view(n, c, -1): the height
// and width flattened into one dim of their product).

// CHECK-LABEL: func.func @runtime_plane_flattened
func.func @runtime_plane_flattened(%x: tensor<?x144x?x?xf32>) -> tensor<?x144x?xf32> {
  %r = graph.reshape %x {shape = array<i64: -1, 144, -1>} : (tensor<?x144x?x?xf32>) -> tensor<?x144x?xf32>
  // CHECK-NEXT: graph.reshape %x {shape = array<i64: -1, 144, -1>} : (tensor<?x144x?x?xf32>) -> tensor<?x144x?xf32>
  func.return %r : tensor<?x144x?xf32>
}

// Both operands of a matmul batched (attention's q @ k^T): row i is lhs[i] @ rhs[i].

// CHECK-LABEL: func.func @dynamic_batch_attention_matmul
func.func @dynamic_batch_attention_matmul(%q: tensor<?x2x4x8xf32>, %k: tensor<?x2x8x4xf32>) -> tensor<?x2x4x4xf32> {
  %s = graph.matmul %q, %k : (tensor<?x2x4x8xf32>, tensor<?x2x8x4xf32>) -> tensor<?x2x4x4xf32>
  // CHECK: graph.matmul {{.*}} -> tensor<?x2x4x4xf32>
  func.return %s : tensor<?x2x4x4xf32>
}

// Shape-polymorphic ops over runtime heights and widths (`?` wherever a window or a repeat
// sizes a dim from one).
// CHECK-LABEL: func.func @runtime_image
func.func @runtime_image(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x16x?x?xf32> {
  %c = graph.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: graph.conv2d {{.*}} -> tensor<?x8x?x?xf32>
  %s = graph.sigmoid %c : tensor<?x8x?x?xf32>
  %m = graph.mul %c, %s : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: graph.mul {{.*}} -> tensor<?x8x?x?xf32>
  %p = graph.max_pool2d %m {kernel = array<i64: 5, 5>, padding = array<i64: 2, 2, 2, 2>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: graph.max_pool2d {{.*}} -> tensor<?x8x?x?xf32>
  %u = graph.resize %p {sizes = array<i64: -1, 8, -1, -1>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: graph.resize {{.*}} -> tensor<?x8x?x?xf32>
  %r = graph.concat %u, %u {axis = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x16x?x?xf32>
  // CHECK: graph.concat {{.*}} -> tensor<?x16x?x?xf32>
  func.return %r : tensor<?x16x?x?xf32>
}

// The docstring examples of the ops with a sizing operand, as written there.
// CHECK-LABEL: func.func @sizing_operand_examples
// CHECK:       graph.broadcast_to %x {shape = array<i64: 2, 3>}
// CHECK:       graph.broadcast_to %z, %ids {shape = array<i64: -1, -1>}
func.func @sizing_operand_examples(%x: tensor<3xf32>, %z: tensor<1x?xi64>, %ids: tensor<?x?xi64>) {
  %r = graph.broadcast_to %x {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %t = graph.broadcast_to %z, %ids {shape = array<i64: -1, -1>}
      : (tensor<1x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  func.return
}

// CHECK-LABEL: func.func @resize_examples
// CHECK:       graph.resize %x {sizes = array<i64: 1, 1, 4, 6>
// CHECK:       graph.resize %y, %image {sizes = array<i64: -1, 21, -1, -1>
func.func @resize_examples(%x: tensor<1x1x2x3xf32>, %y: tensor<?x21x?x?xf32>, %image: tensor<?x3x?x?xf32>) {
  %r = graph.resize %x {sizes = array<i64: 1, 1, 4, 6>,
      scales = array<f64: 1.0, 1.0, 2.0, 2.0>, mode = "linear"}
      : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x6xf32>
  %u = graph.resize %y, %image {sizes = array<i64: -1, 21, -1, -1>,
      scales = array<f64: 1.0, 1.0, 1.0, 1.0>, mode = "linear"}
      : (tensor<?x21x?x?xf32>, tensor<?x3x?x?xf32>) -> tensor<?x21x?x?xf32>
  func.return
}

// The blob of @constant_resource travels with the module.
// CHECK:      dialect_resources: {
// CHECK-NEXT:   builtin: {
// CHECK-NEXT:     graph_blob: "0x040000000100000002000000"

{-#
  dialect_resources: {
    builtin: {
      graph_blob: "0x040000000100000002000000"
    }
  }
#-}
