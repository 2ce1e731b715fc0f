// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: the load of %T becomes the producer's computation at the load's
// indices; the producer's nest and %T are gone, and the consumer now reads %X.
// CHECK-LABEL: func.func @square_then_add
// CHECK-NOT:   loop.alloc
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "add" reads(%[[Z:.*]], %[[X:.*]] : memref<4x8xf32>, memref<4x8xf32>) writes(%[[Y:.*]] : memref<4x8xf32>) spatial ["i", "j"] {
// CHECK-NEXT:        %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[J]]] : memref<4x8xf32> -> f32
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[XV]], %[[XV]] : f32
// CHECK-NEXT:        %[[ZV:.*]] = loop.load %[[Z]][%[[I]], %[[J]]] : memref<4x8xf32> -> f32
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[SQ]], %[[ZV]] : f32
// CHECK-NEXT:        loop.store %[[S]], %[[Y]][%[[I]], %[[J]]]
// CHECK-NOT:   loop.block
func.func @square_then_add(%X: memref<4x8xf32>, %Z: memref<4x8xf32>, %Y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %T = loop.alloc global : memref<4x8xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "square" reads(%X : memref<4x8xf32>) writes(%T : memref<4x8xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<4x8xf32> -> f32
        %sq = arith.mulf %x, %x : f32
        loop.store %sq, %T[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c4 step %c1 axis "i" {
    loop.for %j2 = %c0 to %c8 step %c1 axis "j" {
      loop.block "add" reads(%T, %Z : memref<4x8xf32>, memref<4x8xf32>) writes(%Y : memref<4x8xf32>) spatial ["i", "j"] {
        %t = loop.load %T[%i2, %j2] : memref<4x8xf32> -> f32
        %z = loop.load %Z[%i2, %j2] : memref<4x8xf32> -> f32
        %s = arith.addf %t, %z : f32
        loop.store %s, %Y[%i2, %j2] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.dealloc %T : memref<4x8xf32>
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %p : !transform.any_op
  transform.yield
}

// -----

// Any permutation of the loop variables indexes the producer; the consumer's indices are
// substituted accordingly (a transposed read).
// CHECK-LABEL: func.func @transposed
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "use"
// CHECK-NEXT:        %{{.*}} = loop.load %{{.*}}[%[[J]], %[[I]]] : memref<3x2xf32> -> f32
func.func @transposed(%X: memref<3x2xf32>, %Y: memref<3x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %T = loop.alloc global : memref<2x3xf32>
  loop.for %a = %c0 to %c3 step %c1 axis "a" {
    loop.for %b = %c0 to %c2 step %c1 axis "b" {
      loop.block "transpose" reads(%X : memref<3x2xf32>) writes(%T : memref<2x3xf32>) spatial ["a", "b"] {
        %x = loop.load %X[%a, %b] : memref<3x2xf32> -> f32
        loop.store %x, %T[%b, %a] : f32 -> memref<2x3xf32>
      }
    }
  }
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c3 step %c1 axis "j" {
      loop.block "use" reads(%T : memref<2x3xf32>) writes(%Y : memref<3x2xf32>) spatial ["i", "j"] {
        %t = loop.load %T[%i, %j] : memref<2x3xf32> -> f32
        loop.store %t, %Y[%j, %i] : f32 -> memref<3x2xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "transpose" in %root : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %p : !transform.any_op
  transform.yield
}

// -----

// An output of the function is not an intermediate: inlining would drop the write.
// CHECK:     'transform.loop.compute_inline' op failed on block "square" (%p): cannot inline: expected the written buffer to be an intermediate (a loop.alloc), found a function argument
// CHECK:     "square"
// CHECK:     "transform.named_sequence"
func.func @negative_output(%X: memref<4xf32>, %Y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "square" reads(%X : memref<4xf32>) writes(%Y : memref<4xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<4xf32> -> f32
      %sq = arith.mulf %x, %x : f32
      loop.store %sq, %Y[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %p : !transform.any_op
  transform.yield
}

// -----

// A reduction is not injective: its loops include one its store does not index.
// CHECK:     'transform.loop.compute_inline' op failed on block "sum" (%p): cannot inline: expected the store's indices to be the induction variables of the 2 loop(s) around the block, found other indices
func.func @negative_reduction(%X: memref<4x4xf32>, %Y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %T = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "sum" reads(%X : memref<4x4xf32>) writes(%T : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %x = loop.load %X[%i, %k] : memref<4x4xf32> -> f32
        loop.store %x, %T[%i] : f32 -> memref<4xf32>
      }
    }
  }
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
    loop.block "use" reads(%T : memref<4xf32>) writes(%Y : memref<4xf32>) spatial ["j"] {
      %t = loop.load %T[%j] : memref<4xf32> -> f32
      loop.store %t, %Y[%j] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %p : !transform.any_op
  transform.yield
}

// -----

// The producer reads %A, which is freed before the consumer runs: the inlined copies would
// read it after its dealloc (Winograd's input transform and its padded input). Refused before
// anything changed: the producer's nest, %T and the dealloc are still there.
// CHECK:     'transform.loop.compute_inline' op failed on block "square" (%p): cannot inline: expected the buffers the producer reads to live until its last consumer, found a 'loop.dealloc' of memref<4xf32> before it
// CHECK:     "square"
// CHECK:     "loop.dealloc"
// CHECK:     "use"
// CHECK:     "transform.named_sequence"
func.func @negative_input_freed_before_consumer(%X: memref<4xf32>, %Y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %A = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "copy" reads(%X : memref<4xf32>) writes(%A : memref<4xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<4xf32> -> f32
      loop.store %x, %A[%i] : f32 -> memref<4xf32>
    }
  }
  %T = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "square" reads(%A : memref<4xf32>) writes(%T : memref<4xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<4xf32> -> f32
      %sq = arith.mulf %a, %a : f32
      loop.store %sq, %T[%i] : f32 -> memref<4xf32>
    }
  }
  loop.dealloc %A : memref<4xf32>
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
    loop.block "use" reads(%T : memref<4xf32>) writes(%Y : memref<4xf32>) spatial ["j"] {
      %t = loop.load %T[%j] : memref<4xf32> -> f32
      loop.store %t, %Y[%j] : f32 -> memref<4xf32>
    }
  }
  loop.dealloc %T : memref<4xf32>
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %p : !transform.any_op
  transform.yield
}

// -----

// The same producer with %A freed after its last consumer: inlined (the dealloc stays last).
// CHECK-LABEL: func.func @input_freed_after_consumer
// CHECK-NOT:   "square"
// CHECK:       loop.block "use" reads(%[[A:[A-Za-z0-9_]+]] : memref<4xf32>)
// CHECK:         %[[AV:.*]] = loop.load %[[A]][%{{.*}}] : memref<4xf32> -> f32
// CHECK-NEXT:    %{{.*}} = arith.mulf %[[AV]], %[[AV]] : f32
// CHECK:       loop.dealloc %[[A]] : memref<4xf32>
// CHECK-NEXT:  func.return
func.func @input_freed_after_consumer(%X: memref<4xf32>, %Y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %A = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "copy" reads(%X : memref<4xf32>) writes(%A : memref<4xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<4xf32> -> f32
      loop.store %x, %A[%i] : f32 -> memref<4xf32>
    }
  }
  %T = loop.alloc global : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "square" reads(%A : memref<4xf32>) writes(%T : memref<4xf32>) spatial ["i"] {
      %a = loop.load %A[%i] : memref<4xf32> -> f32
      %sq = arith.mulf %a, %a : f32
      loop.store %sq, %T[%i] : f32 -> memref<4xf32>
    }
  }
  loop.for %j = %c0 to %c4 step %c1 axis "j" {
    loop.block "use" reads(%T : memref<4xf32>) writes(%Y : memref<4xf32>) spatial ["j"] {
      %t = loop.load %T[%j] : memref<4xf32> -> f32
      loop.store %t, %Y[%j] : f32 -> memref<4xf32>
    }
  }
  loop.dealloc %T : memref<4xf32>
  loop.dealloc %A : memref<4xf32>
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_inline %p : !transform.any_op
  transform.yield
}
