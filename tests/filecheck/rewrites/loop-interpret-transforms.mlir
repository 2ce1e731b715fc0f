// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-interpret-transforms{entry-point=other}' --verify-diagnostics | filecheck %s --check-prefix=OTHER
// RUN: dlc-opt %S/../transform/Inputs/payload-scale.mlir -p 'loop-interpret-transforms{library="%S/../transform/Inputs/schedule-library.mlir" entry-point=schedule}' | filecheck %s --check-prefix=LIBRARY

// The sequence runs on the module and is erased with the nested module that held it.
// CHECK-LABEL: func.func @in_nested_module
// CHECK:       loop.for %{{.*}} axis "i" kind parallel {
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  {{^// [-]+$}}
// OTHER-LABEL: func.func @in_nested_module
// OTHER:       loop.for %{{.*}} axis "i" {
func.func @in_nested_module(%X: memref<8xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "scale" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      %y = arith.mulf %x, %x : f32
      loop.store %y, %Y[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
    %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
    transform.loop.parallel %i : !transform.any_op
    transform.yield
  }
  transform.named_sequence @other(%root: !transform.any_op) {
    transform.yield
  }
}

// -----

// Parameters (what the autotuner fills in) feed factors; split_handle/merge_handles (generic
// form: xDSL gives them no custom syntax) work on handles holding several payload ops.
// CHECK-LABEL: func.func @params_and_handles
// CHECK:       loop.for %[[A0:.*]] = %{{.*}} to %{{.*}} step %[[C4:.*]] axis "i.0" kind parallel {
// CHECK-NEXT:    loop.for %[[A1:.*]] = %{{.*}} to %[[C4]] step %{{.*}} axis "i.1" {
// CHECK:       loop.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4]] axis "i.0" kind parallel {
// CHECK-NEXT:    loop.for %{{.*}} = %{{.*}} to %[[C4]] step %{{.*}} axis "i.1" {
func.func @params_and_handles(%X: memref<8xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "scale" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<8xf32>
    }
  }
  loop.for %i2 = %c0 to %c8 step %c1 axis "i" {
    loop.block "scale" reads(%Y : memref<8xf32>) writes(%X : memref<8xf32>) spatial ["i"] {
      %y = loop.load %Y[%i2] : memref<8xf32> -> f32
      loop.store %y, %X[%i2] : f32 -> memref<8xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %factor = transform.param.constant 4 : i64 -> !transform.param<i64>
  %both = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %first, %second = "transform.split_handle"(%both) <{pass_through_empty_handle = false, fail_on_payload_too_small = true}> : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %again = "transform.merge_handles"(%second, %first) : (!transform.any_op, !transform.any_op) -> !transform.any_op
  %b1, %b0 = "transform.split_handle"(%again) <{pass_through_empty_handle = false, fail_on_payload_too_small = true}> : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %i0 = transform.loop.match_loop %b0 axis "i" : (!transform.any_op) -> !transform.any_op
  %i1 = transform.loop.match_loop %b1 axis "i" : (!transform.any_op) -> !transform.any_op
  %o0, %n0 = transform.loop.split %i0 [%factor] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
  %o1, %n1 = transform.loop.split %i1 [%factor] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %o0 : !transform.any_op
  transform.loop.parallel %o1 : !transform.any_op
  transform.yield
}

// -----

// A consumed handle cannot be used again.
// CHECK: 'transform.loop.parallel' op expected a valid handle, found %i already consumed by 'transform.loop.split'
func.func @negative_consumed_handle(%X: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "fill" reads() writes(%X : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      loop.store %x, %X[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %o, %n = transform.loop.split %i [2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %i : !transform.any_op
  transform.yield
}

// -----

// A handle to a payload op that a later transform erased is reported, not followed.
// CHECK: 'transform.loop.parallel' op expected %j to refer to a live payload op, found loop "j" erased by an earlier transform
func.func @negative_erased_payload(%X: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "fill" reads() writes(%X : memref<2x8xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<2x8xf32> -> f32
        loop.store %x, %X[%i, %j] : f32 -> memref<2x8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.unroll %i : !transform.any_op
  transform.loop.parallel %j : !transform.any_op
  transform.yield
}

// -----

// Without the entry point, the pass says what it looked for.
// CHECK: loop-interpret-transforms: expected a transform.named_sequence @__transform_main in the module, found none
// OTHER: loop-interpret-transforms: expected a transform.named_sequence @other in the module, found none
func.func @negative_no_entry_point() {
  func.return
}

// LIBRARY-LABEL: func.func @scale
// LIBRARY:       loop.for %{{.*}} axis "i" kind parallel {
