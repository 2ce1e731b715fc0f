// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The loop around the block with the axis name (after a split, by the new names).
// CHECK-LABEL: func.func @by_axis
// CHECK:       loop.for %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %{{.*}} axis "j.0" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} axis "j.1" {
func.func @by_axis(%A: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "scale" reads() writes(%A : memref<4x16xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<4x16xf32> -> f32
        %s = arith.addf %a, %a : f32
        loop.store %s, %A[%i, %j] : f32 -> memref<4x16xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %b axis "j" : (!transform.any_op) -> !transform.any_op
  %j0, %j1 = transform.loop.split %j [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %outer = transform.loop.match_loop %b axis "j.0" : (!transform.any_op) -> !transform.any_op
  transform.loop.parallel %outer : !transform.any_op
  transform.yield
}

// -----

// CHECK: 'transform.loop.match_loop' op failed on block "scale" (%b): expected a loop with axis "k" around block "scale", found axes "i"
func.func @negative_no_such_axis(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "scale" reads() writes(%A : memref<4xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<4xf32> -> f32
      loop.store %a, %A[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %k = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  transform.yield
}
