// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: split both loops, then the tile loops outside the point loops.
// CHECK-LABEL: func.func @two_by_two
// CHECK:       loop.for %[[I0:.*]] = %{{.*}} to %{{.*}} step %[[C4:.*]] axis "i.0" {
// CHECK-NEXT:    loop.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %[[C8:.*]] axis "j.0" {
// CHECK-NEXT:      loop.for %[[I1:.*]] = %{{.*}} to %[[C4]] step %{{.*}} axis "i.1" {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK-NEXT:        loop.for %[[J1:.*]] = %{{.*}} to %[[C8]] step %{{.*}} axis "j.1" {
// CHECK-NEXT:          %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK-NEXT:          loop.block "add" {{.*}} spatial ["i.0", "i.1", "j.0", "j.1"] {
// CHECK-NEXT:            %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]]
func.func @two_by_two(%A: memref<16x32xf32>, %B: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      loop.block "add" reads(%A : memref<16x32xf32>) writes(%B : memref<16x32xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<16x32xf32> -> f32
        %s = arith.addf %a, %a : f32
        loop.store %s, %B[%i, %j] : f32 -> memref<16x32xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %i0, %j0, %i1, %j1 = transform.loop.tile %i, %j [4, 8] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// Tile sizes may be parameters; the loops need not be adjacent (the loop between stays between).
// CHECK-LABEL: func.func @with_loop_between
// CHECK:       loop.for %{{.*}} axis "i.0" {
// CHECK-NEXT:    loop.for %{{.*}} axis "k.0" {
// CHECK-NEXT:      loop.for %{{.*}} axis "j" {
// CHECK-NEXT:        loop.for %{{.*}} axis "i.1" {
// CHECK:               loop.for %{{.*}} axis "k.1" {
func.func @with_loop_between(%A: memref<4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.for %k = %c0 to %c4 step %c1 axis "k" {
        loop.block "scale" reads() writes(%A : memref<4x4x4xf32>) spatial ["i", "j", "k"] {
          %a = loop.load %A[%i, %j, %k] : memref<4x4x4xf32> -> f32
          loop.store %a, %A[%i, %j, %k] : f32 -> memref<4x4x4xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %two = transform.param.constant 2 : i64 -> !transform.param<i64>
  %i0, %k0, %i1, %k1 = transform.loop.tile %i, %k [%two, %two] : (!transform.any_op, !transform.any_op, !transform.param<i64>, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// Loops of two different nests are not a band; nothing is split.
// CHECK:     'transform.loop.tile' op failed on loop "j" (%j): expected loop "j" to be nested in loop "i", found it is not
// CHECK:     <{axis = "i", kind = "serial"}>
// CHECK-NOT: "i.0"
// CHECK:     <{axis = "j", kind = "serial"}>
// CHECK-NOT: "j.0"
// CHECK:     "transform.named_sequence"
func.func @negative_two_nests(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "first" reads() writes(%A : memref<4xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<4xf32> -> f32
      loop.store %a, %A[%i] : f32 -> memref<4xf32>
    }
  }
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
    loop.block "second" reads() writes(%A : memref<4xf32>) spatial ["j"] {
      %a = loop.load %A[%j] : memref<4xf32> -> f32
      loop.store %a, %A[%j] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %first = transform.loop.match_block "first" in %root : (!transform.any_op) -> !transform.any_op
  %second = transform.loop.match_block "second" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %first axis "i" : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %second axis "j" : (!transform.any_op) -> !transform.any_op
  %i0, %j0, %i1, %j1 = transform.loop.tile %i, %j [2, 2] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}
