// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: the named loops swap positions, the loop between stays.
// CHECK-LABEL: func.func @swap
// CHECK:       loop.for %[[K:.*]] = %{{.*}} axis "k" {
// CHECK-NEXT:    loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:        loop.block "transpose"
// CHECK-NEXT:          %[[V:.*]] = loop.load %{{.*}}[%[[I]], %[[J]], %[[K]]]
// CHECK-NEXT:          loop.store %[[V]], %{{.*}}[%[[K]], %[[J]], %[[I]]]
func.func @swap(%A: memref<2x3x4xf32>, %B: memref<4x3x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c3 step %c1 axis "j" {
      loop.for %k = %c0 to %c4 step %c1 axis "k" {
        loop.block "transpose" reads(%A : memref<2x3x4xf32>) writes(%B : memref<4x3x2xf32>) spatial ["i", "j", "k"] {
          %v = loop.load %A[%i, %j, %k] : memref<2x3x4xf32> -> f32
          loop.store %v, %B[%k, %j, %i] : f32 -> memref<4x3x2xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "transpose" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.reorder %k, %i : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// Index arithmetic in the band moves to the outermost body where its operands are defined: the
// sum a split left in "i.1"'s body now needs the loop innermost.
// CHECK-LABEL: func.func @moves_index_arithmetic
// CHECK:       loop.for %[[I0:.*]] = %{{.*}} axis "i.0" {
// CHECK-NEXT:    loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.for %[[I1:.*]] = %{{.*}} axis "i.1" {
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK-NEXT:        loop.block "copy"
// CHECK-NEXT:          %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]]
func.func @moves_index_arithmetic(%A: memref<8x8xf32>, %B: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "copy" reads(%A : memref<8x8xf32>) writes(%B : memref<8x8xf32>) spatial ["i", "j"] {
        %v = loop.load %A[%i, %j] : memref<8x8xf32> -> f32
        loop.store %v, %B[%i, %j] : f32 -> memref<8x8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %i0, %i1 = transform.loop.split %i [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.reorder %j, %i1 : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// A reduction's init sits between "j" and "k": not a perfect band (see decompose_reduction).
// CHECK:     'transform.loop.reorder' op failed on loop "j" (%j): expected a perfectly nested band from loop "j" to loop "k", found loop "j" whose body holds loop.block, loop.for
// CHECK:     <{axis = "j", kind = "serial"}>
// CHECK:     <{axis = "k", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_not_a_band(%A: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
    loop.block "sum.init" reads() writes(%S : memref<4xf32>) spatial ["j"] {
      loop.store %zero, %S[%j] : f32 -> memref<4xf32>
    }
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "sum" reads(%A : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["j"] reduction ["k"] {
        %a = loop.load %A[%j, %k] : memref<4x8xf32> -> f32
        %s = loop.load %S[%j] : memref<4xf32> -> f32
        %t = arith.addf %s, %a : f32
        loop.store %t, %S[%j] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.reorder %k, %j : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// The guarded inner loop of a non-divisible split needs its outer loop around it.
// CHECK:     'transform.loop.reorder' op failed on loop "i.1" (%i1): expected the bounds of loop "i.1" not to depend on loop "i.0", which would no longer enclose it, found they do
// CHECK:     <{axis = "i.0", kind = "serial"}>
// CHECK:     "arith.minui"
// CHECK:     <{axis = "i.1", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_bound_depends_on_outer(%A: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  loop.for %i = %c0 to %c10 step %c1 axis "i" {
    loop.block "fill" reads() writes(%A : memref<10xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<10xf32> -> f32
      loop.store %a, %A[%i] : f32 -> memref<10xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %i0, %i1 = transform.loop.split %i [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.reorder %i1, %i0 : !transform.any_op, !transform.any_op
  transform.yield
}
