// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: the init gets its own copy of the loops "i" and "j" before the
// reduction's nest, which becomes a perfect band; "k" can then move outward and "j" be
// vectorized.
// CHECK-LABEL: func.func @matmul
// CHECK:       loop.for %[[II:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[JI:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "matmul.init" reads() writes(%[[C:.*]] : memref<4x16xf32>) spatial ["i", "j"] {
// CHECK-NEXT:        loop.store %{{.*}}, %[[C]][%[[II]], %[[JI]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[K:.*]] = %{{.*}} axis "k" {
// CHECK-NEXT:      loop.for %[[J:.*]] = %{{.*}} axis "j" kind vectorized {
// CHECK-NEXT:        loop.block "matmul" {{.*}} spatial ["i", "j"] reduction ["k"] {
// CHECK-NEXT:          %{{.*}} = loop.load %{{.*}}[%[[I]], %[[K]]]
// CHECK-NEXT:          %{{.*}} = loop.load %{{.*}}[%[[K]], %[[J]]]
func.func @matmul(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "matmul.init" reads() writes(%C : memref<4x16xf32>) spatial ["i", "j"] {
        loop.store %zero, %C[%i, %j] : f32 -> memref<4x16xf32>
      }
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        loop.block "matmul" reads(%A, %B : memref<4x8xf32>, memref<8x16xf32>) writes(%C : memref<4x16xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<8x16xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<4x16xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<4x16xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %init = transform.loop.decompose_reduction %b, %i : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.reorder %k, %j : !transform.any_op, !transform.any_op
  transform.loop.vectorize %j : !transform.any_op
  transform.yield
}

// -----

// At an inner loop, only the loops from there down are copied; index arithmetic the init needs
// (here from a split) is copied with them.
// CHECK-LABEL: func.func @at_inner_loop
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[J0:.*]] = %{{.*}} axis "j.0" {
// CHECK-NEXT:      loop.for %[[J1:.*]] = %{{.*}} axis "j.1" {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK-NEXT:        loop.block "sum.init"
// CHECK-NEXT:          loop.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %{{.*}} axis "j.0" {
// CHECK-NEXT:      loop.for %{{.*}} axis "j.1" {
// CHECK-NEXT:        %{{.*}} = arith.addi
// CHECK-NEXT:        loop.for %{{.*}} axis "k" {
// CHECK-NEXT:          loop.block "sum"
func.func @at_inner_loop(%A: memref<2x8x4xf32>, %S: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "sum.init" reads() writes(%S : memref<2x8xf32>) spatial ["i", "j"] {
        loop.store %zero, %S[%i, %j] : f32 -> memref<2x8xf32>
      }
      loop.for %k = %c0 to %c4 step %c1 axis "k" {
        loop.block "sum" reads(%A : memref<2x8x4xf32>) writes(%S : memref<2x8xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %j, %k] : memref<2x8x4xf32> -> f32
          %s = loop.load %S[%i, %j] : memref<2x8xf32> -> f32
          %t = arith.addf %s, %a : f32
          loop.store %t, %S[%i, %j] : f32 -> memref<2x8xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %j0, %j1 = transform.loop.split %j [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %init = transform.loop.decompose_reduction %b, %j0 : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.decompose_reduction' op failed on loop "k" (%k): cannot decompose the reduction: expected a loop outside the reduction loops, found reduction loop "k" around it
// CHECK:     "matmul.init"
// CHECK:     <{axis = "k", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_inside_reduction(%A: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "matmul.init" reads() writes(%S : memref<4xf32>) spatial ["i"] {
      loop.store %zero, %S[%i] : f32 -> memref<4xf32>
    }
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "matmul" reads(%A : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
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
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %init = transform.loop.decompose_reduction %b, %k : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// The init writes one element for all iterations of "t": hoisting it would initialise once.
// CHECK:     'transform.loop.decompose_reduction' op failed on loop "t" (%t): cannot decompose the reduction: expected the init's indices to depend on loop "t", found they do not (it would initialise once instead of every iteration)
func.func @negative_init_every_iteration(%A: memref<8xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %t = %c0 to %c3 step %c1 axis "t" {
    loop.block "sum.init" reads() writes(%S : memref<1xf32>) spatial ["t"] {
      loop.store %zero, %S[%c0] : f32 -> memref<1xf32>
    }
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "sum" reads(%A : memref<8xf32>) writes(%S : memref<1xf32>) spatial ["t"] reduction ["k"] {
        %a = loop.load %A[%k] : memref<8xf32> -> f32
        %s = loop.load %S[%c0] : memref<1xf32> -> f32
        %u = arith.addf %s, %a : f32
        loop.store %u, %S[%c0] : f32 -> memref<1xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %t, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %init = transform.loop.decompose_reduction %b, %t : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}
