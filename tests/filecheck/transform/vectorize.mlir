// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: after a split, the inner loop's lanes read and write contiguous
// elements (the lane index `j.0 + j.1` is last); the load of %B[%i] is a broadcast.
// CHECK-LABEL: func.func @inner_of_split
// CHECK:       loop.for %[[J0:.*]] = %{{.*}} axis "j.0" {
// CHECK-NEXT:    loop.for %[[J1:.*]] = %{{.*}} to %[[C16:.*]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
func.func @inner_of_split(%A: memref<4x64xf32>, %B: memref<4xf32>, %C: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c64 step %c1 axis "j" {
      loop.block "bias" reads(%A, %B : memref<4x64xf32>, memref<4xf32>) writes(%C : memref<4x64xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<4x64xf32> -> f32
        %b = loop.load %B[%i] : memref<4xf32> -> f32
        %s = arith.addf %a, %b : f32
        loop.store %s, %C[%i, %j] : f32 -> memref<4x64xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "bias" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %j0, %j1 = transform.loop.split %j [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.vectorize %j1 : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.vectorize' op failed on loop "k" (%k): cannot vectorize: expected a spatial axis, found a reduction axis (a reduction across lanes)
// CHECK:     <{axis = "k", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_reduction(%A: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
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
  transform.loop.vectorize %k : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.vectorize' op failed on loop "i" (%i): cannot vectorize: expected an innermost loop, found loop "j" inside
func.func @negative_not_innermost(%A: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
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
  transform.loop.vectorize %i : !transform.any_op
  transform.yield
}

// -----

// A transpose reads with the lane index first: a gather, not a vector load.
// CHECK:     'transform.loop.vectorize' op failed on loop "j" (%j): cannot vectorize: expected the lane index only as the last index, found a strided load of memref<4x4xf32>
// CHECK:     <{axis = "j", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_strided(%A: memref<4x4xf32>, %B: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "transpose" reads(%A : memref<4x4xf32>) writes(%B : memref<4x4xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%j, %i] : memref<4x4xf32> -> f32
        loop.store %a, %B[%i, %j] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "transpose" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.vectorize %j : !transform.any_op
  transform.yield
}

// -----

// The guarded inner loop of a non-divisible split runs at most 4 times (`minui(4, ...)`): it is
// vectorized, the code generator masking the lanes past its trip count.
// CHECK-LABEL: func.func @guarded
// CHECK:         %[[UB:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    loop.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} axis "i.1" kind vectorized {
func.func @guarded(%A: memref<10xf32>) {
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
  transform.loop.vectorize %i1 : !transform.any_op
  transform.yield
}

// -----

// A loop of runtime extent with no bound on its trip count: no vector width to mask.
// CHECK:     'transform.loop.vectorize' op failed on loop "i" (%i): cannot vectorize: expected constant bounds or an upper bound that is the minimum of a constant and a runtime value, found neither
func.func @negative_runtime(%A: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.block "fill" reads() writes(%A : memref<?xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<?xf32> -> f32
      loop.store %a, %A[%i] : f32 -> memref<?xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  transform.loop.vectorize %i : !transform.any_op
  transform.yield
}
