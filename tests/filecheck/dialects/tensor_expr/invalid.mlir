// RUN: dlc-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @negative_dynamic_shape() {
  %c = tensor_expr.compute "c" -> tensor<?xf32> {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected one size operand per dynamic dim of tensor<?xf32> (1), found 0

// -----

func.func @negative_zero_extent() {
  %c = tensor_expr.compute "c" reduce [0] sum init 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected positive reduction extents (or ? for a runtime one), found [0]

// -----

func.func @negative_runtime_extent_without_size(%n: index) {
  %c = tensor_expr.compute "c" sizes(%n) reduce [?] sum init 0.0 : f32 -> tensor<?xf32> {
  ^bb0(%i: index, %k: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected one size operand per dynamic dim of tensor<?xf32> (1) and per runtime reduction extent (1), found 1

// -----

func.func @negative_block_arg_count() {
  %c = tensor_expr.compute "c" reduce [8] sum init 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected 2 block arguments (1 spatial, 1 reduction), found 1

// -----

func.func @negative_block_arg_type() {
  %c = tensor_expr.compute "c" -> tensor<4xf32> {
  ^bb0(%i: i32):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected index block arguments, found i32

// -----

func.func @negative_no_yield() {
  %c = "tensor_expr.compute"() <{name = "c"}> ({
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    "test.termop"() : () -> ()
  }) : () -> tensor<4xf32>
  func.return
}
// CHECK: 'tensor_expr.compute' op expected the body to end with 'tensor_expr.yield', found 'test.termop'

// -----

func.func @negative_yield_type() {
  %c = tensor_expr.compute "c" -> tensor<4xf32> {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f16
    tensor_expr.yield %z : f16
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected the yielded type to be the element type f32, found f16

// -----

func.func @negative_combiner_without_reduction() {
  %c = "tensor_expr.compute"() <{name = "c", combiner = "sum"}> ({
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }) : () -> tensor<4xf32>
  func.return
}
// CHECK: 'tensor_expr.compute' op expected no combiner and no init without reduction extents, found a combiner

// -----

func.func @negative_reduction_without_init() {
  %c = "tensor_expr.compute"() <{name = "c", reduce_extents = array<i64: 8>, combiner = "sum"}> ({
  ^bb0(%i: index, %k: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }) : () -> tensor<4xf32>
  func.return
}
// CHECK: 'tensor_expr.compute' op expected a combiner and an init with 1 reduction extents, found no init

// -----

func.func @negative_bad_combiner() {
  %c = tensor_expr.compute "c" reduce [8] mean init 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected combiner to be one of sum, max, min, prod, maxui, minui, found 'mean'

// -----

func.func @negative_unsigned_combiner_on_float() {
  %c = tensor_expr.compute "c" reduce [8] maxui init 0.0 : f32 -> tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected an integer element type with combiner 'maxui', found f32

// -----

func.func @negative_init_type() {
  %c = tensor_expr.compute "c" reduce [8] sum init 0 : i32 -> tensor<4xf32> {
  ^bb0(%i: index, %k: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected init to be a scalar of the element type f32, found 0 : i32

// -----

func.func @negative_read_index_count(%A: tensor<4x8xf32>) {
  %c = tensor_expr.compute "c" -> tensor<4xf32> {
  ^bb0(%i: index):
    %a = tensor_expr.read %A[%i] : tensor<4x8xf32>
    tensor_expr.yield %a : f32
  }
  func.return
}
// CHECK: 'tensor_expr.read' op expected 2 indices for tensor<4x8xf32>, found 1

// -----

func.func @negative_read_outside_compute(%A: tensor<4xf32>, %i: index) {
  %a = tensor_expr.read %A[%i] : tensor<4xf32>
  func.return
}
// CHECK: 'tensor_expr.read' expects ancestor op 'tensor_expr.compute'

// -----

func.func @negative_yield_outside_compute(%a: f32) {
  tensor_expr.yield %a : f32
}
// CHECK: 'tensor_expr.yield' expects parent op 'tensor_expr.compute'

// -----

func.func @negative_scan_sequence_extent(%h0: tensor<2xf32>, %xs: tensor<5x2xf32>, %zs: tensor<4x2xf32>) {
  // CHECK: 'tensor_expr.scan' op expected every sequence to have the leading extent 5, found tensor<4x2xf32>
  %h = tensor_expr.scan "s" inits(%h0 : tensor<2xf32>) sequences(%xs, %zs : tensor<5x2xf32>, tensor<4x2xf32>) -> (tensor<2xf32>) {
  ^bb0(%state: tensor<2xf32>, %x: tensor<2xf32>, %z: tensor<2xf32>):
    tensor_expr.scan_yield %state : tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_scan_state_type(%h0: tensor<2xf32>, %xs: tensor<5x3xf32>) {
  // CHECK: 'tensor_expr.scan' op expected the next states to have the states' types, found tensor<3xf32>
  %h = tensor_expr.scan "s" inits(%h0 : tensor<2xf32>) sequences(%xs : tensor<5x3xf32>) -> (tensor<2xf32>) {
  ^bb0(%state: tensor<2xf32>, %x: tensor<3xf32>):
    tensor_expr.scan_yield %x : tensor<3xf32>
  }
  func.return
}

// -----

func.func @negative_scan_block_arguments(%h0: tensor<2xf32>, %xs: tensor<5x3xf32>) {
  // CHECK: 'tensor_expr.scan' op expected block arguments of types tensor<2xf32>, tensor<3xf32>, found tensor<2xf32>, tensor<5x3xf32>
  %h = tensor_expr.scan "s" inits(%h0 : tensor<2xf32>) sequences(%xs : tensor<5x3xf32>) -> (tensor<2xf32>) {
  ^bb0(%state: tensor<2xf32>, %x: tensor<5x3xf32>):
    tensor_expr.scan_yield %state : tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_scan_results(%h0: tensor<2xf32>, %xs: tensor<5x3xf32>) {
  // CHECK: 'tensor_expr.scan' op expected result types tensor<2xf32>, tensor<5x2xf32>, found tensor<2xf32>, tensor<2xf32>
  %h, %y = tensor_expr.scan "s" inits(%h0 : tensor<2xf32>) sequences(%xs : tensor<5x3xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%state: tensor<2xf32>, %x: tensor<3xf32>):
    tensor_expr.scan_yield %state, %state : tensor<2xf32>, tensor<2xf32>
  }
  func.return
}

// -----

func.func @negative_sizes_of_static_shape(%n: index) {
  %c = tensor_expr.compute "c" sizes(%n) -> tensor<4xf32> {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor_expr.yield %z : f32
  }
  func.return
}
// CHECK: 'tensor_expr.compute' op expected one size operand per dynamic dim of tensor<4xf32> (0), found 1
