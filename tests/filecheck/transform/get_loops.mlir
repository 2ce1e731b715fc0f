// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// One handle per loop around the block, outermost first: parallelising the first handle marks
// "i", vectorizing the last marks "j".
// CHECK-LABEL: func.func @outermost_first
// CHECK:       loop.for %{{.*}} axis "i" kind parallel {
// CHECK-NEXT:    loop.for %{{.*}} axis "j" kind vectorized {
// CHECK-NEXT:      loop.block "add"
func.func @outermost_first(%A: memref<4x16xf32>, %B: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "add" reads(%A : memref<4x16xf32>) writes(%B : memref<4x16xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<4x16xf32> -> f32
        %s = arith.addf %a, %a : f32
        loop.store %s, %B[%i, %j] : f32 -> memref<4x16xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %i : !transform.any_op
  transform.loop.vectorize %j : !transform.any_op
  transform.yield
}

// -----

// CHECK: 'transform.loop.get_loops' op expected 3 loops around block "add", found 2
func.func @negative_count(%A: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "add" reads() writes(%A : memref<4x16xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<4x16xf32> -> f32
        loop.store %a, %A[%i, %j] : f32 -> memref<4x16xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// CHECK: 'transform.loop.get_loops' op expected %i to hold a 'loop.block', found 'loop.for'
func.func @negative_not_a_block(%A: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "add" reads() writes(%A : memref<4xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<4xf32> -> f32
      loop.store %a, %A[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op)
  %j = transform.loop.get_loops %i : (!transform.any_op) -> (!transform.any_op)
  transform.yield
}
