// RUN: dlc-opt %s | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @matmul_relu
func.func @matmul_relu(%A: tensor<16x64xf32>, %B: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %c = tensor_expr.compute "matmul" reduce [64] sum init 0.0 : f32 -> tensor<16x32xf32> {
  ^bb0(%i: index, %j: index, %k: index):
    %a = tensor_expr.read %A[%i, %k] : tensor<16x64xf32>
    %b = tensor_expr.read %B[%k, %j] : tensor<64x32xf32>
    %p = arith.mulf %a, %b : f32
    tensor_expr.yield %p : f32
  }
  %r = tensor_expr.compute "relu" tag "injective" -> tensor<16x32xf32> {
  ^bb0(%i: index, %j: index):
    %x = tensor_expr.read %c[%i, %j] : tensor<16x32xf32>
    %zero = arith.constant 0.0 : f32
    %y = arith.maximumf %x, %zero : f32
    tensor_expr.yield %y : f32
  }
  func.return %r : tensor<16x32xf32>
}
// CHECK:      %[[MM:.*]] = tensor_expr.compute "matmul" reduce [64] sum init 0.000000e+00 : f32 -> tensor<16x32xf32> {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT:   %[[A:.*]] = tensor_expr.read %{{.*}}[%[[I]], %[[K]]] : tensor<16x64xf32>
// CHECK-NEXT:   %[[B:.*]] = tensor_expr.read %{{.*}}[%[[K]], %[[J]]] : tensor<64x32xf32>
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   tensor_expr.yield %[[P]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = tensor_expr.compute "relu" tag "injective" -> tensor<16x32xf32> {
// CHECK-NEXT: ^bb0(%[[I2:.*]]: index, %[[J2:.*]]: index):
// CHECK-NEXT:   %{{.*}} = tensor_expr.read %[[MM]][%[[I2]], %[[J2]]] : tensor<16x32xf32>
// CHECK:        tensor_expr.yield %{{.*}} : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[R]] : tensor<16x32xf32>

// A max-pool: two reductions, -inf init, clamped reads with a select for the padding.
// CHECK-LABEL: func.func @max_pool
func.func @max_pool(%X: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %y = tensor_expr.compute "max_pool" tag "pool" reduce [3, 3] max init 0xFF800000 : f32 -> tensor<1x4x4x4xf32> attributes {note = "kept"} {
  ^bb0(%n: index, %c: index, %h: index, %w: index, %rh: index, %rw: index):
    %c2 = arith.constant 2 : index
    %h2 = arith.muli %h, %c2 : index
    %ih = arith.addi %h2, %rh : index
    %w2 = arith.muli %w, %c2 : index
    %iw = arith.addi %w2, %rw : index
    %c7 = arith.constant 7 : index
    %inh = arith.cmpi ule, %ih, %c7 : index
    %inw = arith.cmpi ule, %iw, %c7 : index
    %in = arith.andi %inh, %inw : i1
    %ch = arith.minui %ih, %c7 : index
    %cw = arith.minui %iw, %c7 : index
    %x = tensor_expr.read %X[%n, %c, %ch, %cw] : tensor<1x4x8x8xf32>
    %ninf = arith.constant 0xFF800000 : f32
    %v = arith.select %in, %x, %ninf : f32
    tensor_expr.yield %v : f32
  }
  func.return %y : tensor<1x4x4x4xf32>
}
// CHECK: tensor_expr.compute "max_pool" tag "pool" reduce [3, 3] max init 0xff800000 : f32 -> tensor<1x4x4x4xf32> attributes {note = "kept"} {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):

// Integer reductions and rank-0 results.
// CHECK-LABEL: func.func @sum_all
func.func @sum_all(%X: tensor<8xi32>) -> tensor<i32> {
  %s = tensor_expr.compute "sum_all" reduce [8] sum init 0 : i32 -> tensor<i32> {
  ^bb0(%r: index):
    %x = tensor_expr.read %X[%r] : tensor<8xi32>
    tensor_expr.yield %x : i32
  }
  func.return %s : tensor<i32>
}
// CHECK:      tensor_expr.compute "sum_all" reduce [8] sum init 0 : i32 -> tensor<i32> {
// CHECK-NEXT: ^bb0(%{{.*}}: index):

// Unsigned max over integers that were unsigned in the graph (the init is 0, the least).
// CHECK-LABEL: func.func @max_unsigned
func.func @max_unsigned(%X: tensor<4x8xi8>) -> tensor<4xi8> {
  %m = tensor_expr.compute "max_unsigned" reduce [8] maxui init 0 : i8 -> tensor<4xi8> {
  ^bb0(%i: index, %r: index):
    %x = tensor_expr.read %X[%i, %r] : tensor<4x8xi8>
    tensor_expr.yield %x : i8
  }
  func.return %m : tensor<4xi8>
}
// CHECK:      tensor_expr.compute "max_unsigned" reduce [8] maxui init 0 : i8 -> tensor<4xi8> {

// CHECK-LABEL: func.func @fill
func.func @fill() -> tensor<f32> {
  %f = tensor_expr.compute "fill" -> tensor<f32> {
    %one = arith.constant 1.0 : f32
    tensor_expr.yield %one : f32
  }
  func.return %f : tensor<f32>
}
// CHECK:      tensor_expr.compute "fill" -> tensor<f32> {
// CHECK-NEXT:   %{{.*}} = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   tensor_expr.yield %{{.*}} : f32
// CHECK-NEXT: }

// CHECK-LABEL: func.func @scan
func.func @scan(%h0: tensor<2x3xf32>, %xs: tensor<5x2x3xf32>) -> tensor<5x2x3xf32> {
  %h, %ys = tensor_expr.scan "rnn" reverse inits(%h0 : tensor<2x3xf32>)
      sequences(%xs : tensor<5x2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) {
  ^bb0(%state: tensor<2x3xf32>, %x: tensor<2x3xf32>):
    %next = tensor_expr.compute "step" -> tensor<2x3xf32> {
    ^bb1(%i: index, %j: index):
      %a = tensor_expr.read %state[%i, %j] : tensor<2x3xf32>
      %b = tensor_expr.read %x[%i, %j] : tensor<2x3xf32>
      %s = arith.addf %a, %b : f32
      tensor_expr.yield %s : f32
    }
    tensor_expr.scan_yield %next, %next : tensor<2x3xf32>, tensor<2x3xf32>
  }
  // CHECK: %h, %ys = tensor_expr.scan "rnn" reverse inits(%h0 : tensor<2x3xf32>) sequences(%xs : tensor<5x2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>) {
  // CHECK-NEXT: ^bb0(%state: tensor<2x3xf32>, %x: tensor<2x3xf32>):
  // CHECK: tensor_expr.scan_yield %next, %next : tensor<2x3xf32>, tensor<2x3xf32>
  func.return %ys : tensor<5x2x3xf32>
}

// A compute over a runtime number of rows: the size of its dynamic dim is an operand.
// CHECK-LABEL: func.func @runtime_rows
func.func @runtime_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %y = tensor_expr.compute "neg" tag "injective" sizes(%n) -> tensor<?x8xf32> {
  ^bb0(%i: index, %j: index):
    %v = tensor_expr.read %x[%i, %j] : tensor<?x8xf32>
    %w = arith.negf %v : f32
    tensor_expr.yield %w : f32
  }
  func.return %y : tensor<?x8xf32>
}
// CHECK:      %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x8xf32>
// CHECK-NEXT: %{{.*}} = tensor_expr.compute "neg" tag "injective" sizes(%[[N]]) -> tensor<?x8xf32> {

// A sum over a runtime height and width (a global pool): each runtime reduction extent (`?`)
// has its size among `sizes`, after the result's.
// CHECK-LABEL: func.func @runtime_reduction
func.func @runtime_reduction(%x: tensor<?x8x?x?xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %s = tensor_expr.compute "sum" sizes(%n, %h, %w) reduce [?, ?] sum init 0.0 : f32 -> tensor<?x8xf32> {
  ^bb0(%i: index, %c: index, %y: index, %z: index):
    %v = tensor_expr.read %x[%i, %c, %y, %z] : tensor<?x8x?x?xf32>
    tensor_expr.yield %v : f32
  }
  func.return %s : tensor<?x8xf32>
}
// CHECK: tensor_expr.compute "sum" sizes(%n, %h, %w) reduce [?, ?] sum init 0.000000e+00 : f32 -> tensor<?x8xf32> {
