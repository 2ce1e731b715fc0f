// RUN: dlc-opt %s --split-input-file -p graph-fold-lookup-tables | filecheck %s

// A requantized GELU over uint8 (what ONNX Runtime's quantizer writes after an int8 matmul):
// every op depends on %x alone and on scalar constants, and together they cost more than a
// lookup, so the quantized result is a table of its 256 values; the chain is erased.

// CHECK-LABEL: @gelu
// CHECK-SAME:  (%[[X:.*]]: tensor<2x64xui8>)
// CHECK-NEXT:  %[[T:.*]] = graph.constant {{.*}} : tensor<256xui8>
// CHECK-NEXT:  %q = graph.lookup %[[X]], %[[T]] : (tensor<2x64xui8>, tensor<256xui8>) -> tensor<2x64xui8>
// CHECK-NEXT:  func.return %q
func.func @gelu(%x: tensor<2x64xui8>) -> tensor<2x64xui8> {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %so = graph.constant dense<0.02> : tensor<f32>
  %zo = graph.constant dense<10> : tensor<ui8>
  %d = graph.dequantize %x, %s, %z : (tensor<2x64xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x64xf32>
  %v = graph.div %d, %sqrt2 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %e = graph.erf %v : tensor<2x64xf32>
  %a = graph.add %e, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %m = graph.mul %d, %a : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %g = graph.mul %m, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %q = graph.quantize %g, %so, %zo : (tensor<2x64xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x64xui8>
  func.return %q : tensor<2x64xui8>
}

// -----

// Over int8 the table starts at -128; its entries have the result's type (here f32: the
// chain ends in a float, used by something that is not elementwise).

// CHECK-LABEL: @signed_to_float
// CHECK:       %[[T:.*]] = graph.constant {{.*}} : tensor<256xf32>
// CHECK-NEXT:  %[[Y:.*]] = graph.lookup %{{.*}}, %[[T]] : (tensor<4x8xi8>, tensor<256xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:  %{{.*}} = graph.reduce %[[Y]]
// CHECK-NOT:   graph.tanh
func.func @signed_to_float(%x: tensor<4x8xi8>) -> tensor<4x1xf32> {
  %s = graph.constant dense<0.1> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %d = graph.dequantize %x, %s, %z : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  %t = graph.tanh %d : tensor<4x8xf32>
  %e = graph.exp %t : tensor<4x8xf32>
  %r = graph.reduce %e {kind = "sum", axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

// A requantization (dequantize, then quantize at another scale) costs less than a lookup:
// it stays.

// CHECK-LABEL: @requantize
// CHECK-NOT:   graph.lookup
// CHECK:       graph.dequantize
// CHECK-NEXT:  graph.quantize
func.func @requantize(%x: tensor<16xui8>) -> tensor<16xi8> {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %so = graph.constant dense<0.1> : tensor<f32>
  %zo = graph.constant dense<0> : tensor<i8>
  %d = graph.dequantize %x, %s, %z : (tensor<16xui8>, tensor<f32>, tensor<ui8>) -> tensor<16xf32>
  %q = graph.quantize %d, %so, %zo : (tensor<16xf32>, tensor<f32>, tensor<i8>) -> tensor<16xi8>
  func.return %q : tensor<16xi8>
}

// -----

// A constant of more than one element (per-channel scales) makes the function depend on the
// position, not on the value alone: the chain stops before it, and what is left is cheap.

// CHECK-LABEL: @per_channel
// CHECK-NOT:   graph.lookup
// CHECK:       graph.erf
func.func @per_channel(%x: tensor<2x4xui8>) -> tensor<2x4xf32> {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %d = graph.dequantize %x, %s, %z : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xf32>
  %m = graph.mul %d, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %e = graph.erf %m : tensor<2x4xf32>
  func.return %e : tensor<2x4xf32>
}

// -----

// A value of the chain used outside it gets its own table where its ops cost more than a
// lookup: the erf (dequantize, erf: 20) stays for its other user, the quantized result (26)
// is looked up; the dequantize that only the erf reads stays with it.

// CHECK-LABEL: @used_midway
// CHECK-SAME:  (%[[X:.*]]: tensor<8xui8>)
// CHECK:       %[[D:.*]] = graph.dequantize %[[X]]
// CHECK-NEXT:  %[[E:.*]] = graph.erf %[[D]]
// CHECK-NEXT:  %[[T:.*]] = graph.constant {{.*}} : tensor<256xi8>
// CHECK-NEXT:  %[[Y:.*]] = graph.lookup %[[X]], %[[T]]
// CHECK-NEXT:  func.return %[[E]], %[[Y]]
func.func @used_midway(%x: tensor<8xui8>) -> (tensor<8xf32>, tensor<8xi8>) {
  %s = graph.constant dense<0.05> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %so = graph.constant dense<0.01> : tensor<f32>
  %zo = graph.constant dense<0> : tensor<i8>
  %d = graph.dequantize %x, %s, %z : (tensor<8xui8>, tensor<f32>, tensor<ui8>) -> tensor<8xf32>
  %e = graph.erf %d : tensor<8xf32>
  %q = graph.quantize %e, %so, %zo : (tensor<8xf32>, tensor<f32>, tensor<i8>) -> tensor<8xi8>
  func.return %e, %q : tensor<8xf32>, tensor<8xi8>
}
