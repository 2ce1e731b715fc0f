// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example.
// CHECK-LABEL: func.func @rows
// CHECK:       loop.for %{{.*}} axis "i" kind parallel {
// CHECK-NEXT:    loop.for %{{.*}} axis "k" {
func.func @rows(%A: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "sum" reads(%A : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
        %s = loop.load %S[%i] : memref<4xf32> -> f32
        %t = arith.addf %s, %a : f32
        loop.store %t, %S[%i] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %i : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.parallel' op failed on loop "k" (%k): cannot parallelize: expected a spatial axis, found a reduction axis of block "sum"
// CHECK:     <{axis = "k", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_reduction(%A: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "sum" reads(%A : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
        %s = loop.load %S[%i] : memref<4xf32> -> f32
        %t = arith.addf %s, %a : f32
        loop.store %t, %S[%i] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %k : !transform.any_op
  transform.yield
}

// -----

// Without axis lists, the stores decide: every iteration writes the same element.
// CHECK:     'transform.loop.parallel' op failed on loop "k" (%k): cannot parallelize: expected every store inside to depend on the loop's induction variable, found a store into memref<1xf32> that does not
func.func @negative_store_independent_of_loop(%A: memref<8xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %k = %c0 to %c8 step %c1 axis "k" {
    loop.block "sum" reads(%A : memref<8xf32>) writes(%S : memref<1xf32>) {
      %a = loop.load %A[%k] : memref<8xf32> -> f32
      %s = loop.load %S[%c0] : memref<1xf32> -> f32
      %t = arith.addf %s, %a : f32
      loop.store %t, %S[%c0] : f32 -> memref<1xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %k = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  transform.loop.parallel %k : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.parallel' op failed on loop "j" (%j): cannot parallelize: expected no parallel loop around it, found loop "i"
// CHECK:     <{axis = "j", kind = "serial"}>
func.func @negative_nested(%A: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "fill" reads() writes(%A : memref<4x4xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<4x4xf32> -> f32
        loop.store %a, %A[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %j : !transform.any_op
  transform.yield
}
