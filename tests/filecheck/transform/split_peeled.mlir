// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: a row of runtime width split into whole tiles of 16 (the inner loop of
// constant bounds, vectorized by the script) and the columns left; the rest split again from its
// runtime lower bound, into tiles of 4 and a last loop of fewer than 4 columns.
// CHECK-LABEL: func.func @row_of_runtime_width
// CHECK:       loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i" {
// CHECK-NEXT:    %[[REST:.*]] = arith.remui %[[W:.*]], %[[C16:.*]] : index
// CHECK-NEXT:    %[[WHOLE:.*]] = arith.subi %[[W]], %[[REST]] : index
// CHECK-NEXT:    loop.for %[[J0:.*]] = %{{.*}} to %[[WHOLE]] step %[[C16]] axis "j.0" {
// CHECK-NEXT:      loop.for %[[J1:.*]] = %{{.*}} to %[[C16]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK-NEXT:        loop.block "scale" {{.*}} spatial ["i", "j.0", "j.1"]
// CHECK-NEXT:          loop.load %{{.*}}[%[[I]], %[[J]]]
// CHECK:         %[[COUNT:.*]] = arith.subi %[[W]], %[[WHOLE]] : index
// CHECK-NEXT:    %[[REST4:.*]] = arith.remui %[[COUNT]], %[[C4:.*]] : index
// CHECK-NEXT:    %[[WHOLE4:.*]] = arith.subi %[[W]], %[[REST4]] : index
// CHECK-NEXT:    loop.for %{{.*}} = %[[WHOLE]] to %[[WHOLE4]] step %[[C4]] axis "j.0" {
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %[[C4]] step %{{.*}} axis "j.1" {
// CHECK:         loop.for %[[JR:.*]] = %[[WHOLE4]] to %[[W]] step %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "scale" {{.*}} spatial ["i", "j"]
// CHECK-NEXT:        loop.load %{{.*}}[%[[I]], %[[JR]]]
func.func @row_of_runtime_width(%X: memref<4x?xf32>, %Y: memref<4x?xf32>, %w: index, %v: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %w step %c1 axis "j" {
      loop.block "scale" reads(%X : memref<4x?xf32>) writes(%Y : memref<4x?xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<4x?xf32> -> f32
        %p = arith.addf %x, %x : f32
        loop.store %p, %Y[%i, %j] : f32 -> memref<4x?xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %outer, %inner, %rest = transform.loop.split_peeled %j [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.vectorize %inner : !transform.any_op
  %o4, %i4, %r4 = transform.loop.split_peeled %rest [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// A loop whose step is not 1 is refused, untouched.
func.func @stepped(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  loop.for %i = %c0 to %n step %c2 axis "i" {
    loop.block "neg" reads(%X : memref<?xf32>) writes(%Y : memref<?xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<?xf32> -> f32
      %y = arith.negf %x : f32
      loop.store %y, %Y[%i] : f32 -> memref<?xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "neg" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  // expected-error @+1 {{cannot peel: expected a loop with step 1}}
  %o, %n, %r = transform.loop.split_peeled %i [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}
