// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: the relu of a matmul's row runs right after the row is finished,
// inside "i" and after the reduction over "k".
// CHECK-LABEL: func.func @matmul_relu
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "matmul.init"
// CHECK:           loop.for %{{.*}} axis "k" {
// CHECK-NEXT:        loop.block "matmul"
// CHECK:               loop.store
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.block "relu" {{.*}} spatial ["i", "j"] {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[C:.*]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[V]], %{{.*}} : f32
// CHECK-NEXT:        loop.store %[[R]], %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
func.func @matmul_relu(%A: memref<4x8xf32>, %B: memref<8x4xf32>, %D: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %C = loop.alloc global : memref<4x4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "matmul.init" reads() writes(%C : memref<4x4xf32>) spatial ["i", "j"] {
        loop.store %zero, %C[%i, %j] : f32 -> memref<4x4xf32>
      }
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        loop.block "matmul" reads(%A, %B : memref<4x8xf32>, memref<8x4xf32>) writes(%C : memref<4x4xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<8x4xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<4x4xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<4x4xf32>
        }
      }
    }
  }
  loop.for %x = %c0 to %c4 step %c1 axis "x" {
    loop.for %y = %c0 to %c4 step %c1 axis "y" {
      loop.block "relu" reads(%C : memref<4x4xf32>) writes(%D : memref<4x4xf32>) spatial ["x", "y"] {
        %v = loop.load %C[%x, %y] : memref<4x4xf32> -> f32
        %r = arith.maximumf %v, %zero : f32
        loop.store %r, %D[%x, %y] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %mm = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %relu = transform.loop.match_block "relu" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %mm : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.reverse_compute_at %relu, %j : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// At the outer loop, the consumer iterates over what one iteration produced (a copy of "j").
// CHECK-LABEL: func.func @row
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "square"
// CHECK:         loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "copy" {{.*}} spatial ["i", "j"] {
// CHECK-NEXT:        %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]]
func.func @row(%X: memref<2x4xf32>, %Y: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %T = loop.alloc global : memref<2x4xf32>
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "square" reads(%X : memref<2x4xf32>) writes(%T : memref<2x4xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<2x4xf32> -> f32
        %sq = arith.mulf %x, %x : f32
        loop.store %sq, %T[%i, %j] : f32 -> memref<2x4xf32>
      }
    }
  }
  loop.for %a = %c0 to %c2 step %c1 axis "a" {
    loop.for %b = %c0 to %c4 step %c1 axis "b" {
      loop.block "copy" reads(%T : memref<2x4xf32>) writes(%Y : memref<2x4xf32>) spatial ["a", "b"] {
        %t = loop.load %T[%a, %b] : memref<2x4xf32> -> f32
        loop.store %t, %Y[%a, %b] : f32 -> memref<2x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  %c = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %p axis "i" : (!transform.any_op) -> !transform.any_op
  transform.loop.reverse_compute_at %c, %i : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// Inside the reduction loop the row is not finished yet (and its init is outside).
// CHECK:     'transform.loop.reverse_compute_at' op failed on loop "k" (%k): cannot reverse_compute_at: expected every store into the buffer in the producer's nest inside loop "k", found one outside
// CHECK:     "relu"
// CHECK:     "transform.named_sequence"
func.func @negative_inside_reduction(%A: memref<4x8xf32>, %D: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %S = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "sum.init" reads() writes(%S : memref<4xf32>) spatial ["i"] {
      loop.store %zero, %S[%i] : f32 -> memref<4xf32>
    }
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "sum" reads(%A : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
        %s = loop.load %S[%i] : memref<4xf32> -> f32
        %t = arith.addf %s, %a : f32
        loop.store %t, %S[%i] : f32 -> memref<4xf32>
      }
    }
  }
  loop.for %x = %c0 to %c4 step %c1 axis "x" {
    loop.block "relu" reads(%S : memref<4xf32>) writes(%D : memref<4xf32>) spatial ["x"] {
      %v = loop.load %S[%x] : memref<4xf32> -> f32
      %r = arith.maximumf %v, %zero : f32
      loop.store %r, %D[%x] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %sum = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %relu = transform.loop.match_block "relu" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %sum : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.reverse_compute_at %relu, %k : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// After decompose_reduction and a reorder, "j" runs inside the reduction loop "k": an element of
// %C is final only after all of "k".
// CHECK:     'transform.loop.reverse_compute_at' op failed on loop "j" (%j): cannot reverse_compute_at: expected the reduction into the buffer to finish inside loop "j", found it runs over "k" around it
// CHECK:     "relu"
// CHECK:     "transform.named_sequence"
func.func @negative_reduction_around(%A: memref<4x8xf32>, %B: memref<8x4xf32>, %D: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %C = loop.alloc global : memref<4x4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "matmul.init" reads() writes(%C : memref<4x4xf32>) spatial ["i", "j"] {
        loop.store %zero, %C[%i, %j] : f32 -> memref<4x4xf32>
      }
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        loop.block "matmul" reads(%A, %B : memref<4x8xf32>, memref<8x4xf32>) writes(%C : memref<4x4xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<8x4xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<4x4xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<4x4xf32>
        }
      }
    }
  }
  loop.for %x = %c0 to %c4 step %c1 axis "x" {
    loop.for %y = %c0 to %c4 step %c1 axis "y" {
      loop.block "relu" reads(%C : memref<4x4xf32>) writes(%D : memref<4x4xf32>) spatial ["x", "y"] {
        %v = loop.load %C[%x, %y] : memref<4x4xf32> -> f32
        %r = arith.maximumf %v, %zero : f32
        loop.store %r, %D[%x, %y] : f32 -> memref<4x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %mm = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %relu = transform.loop.match_block "relu" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %mm : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %init = transform.loop.decompose_reduction %mm, %i : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.reorder %k, %j : !transform.any_op, !transform.any_op
  transform.loop.reverse_compute_at %relu, %j : !transform.any_op, !transform.any_op
  transform.yield
}
