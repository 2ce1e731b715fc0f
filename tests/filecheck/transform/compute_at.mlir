// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: at "i", the producer computes the row the consumer reads, over the
// consumer's "j" range; the producer's own nest is gone.
// CHECK-LABEL: func.func @row_at_a_time
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[J:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "square" {{.*}} spatial ["i", "j"] {
// CHECK-NEXT:        %[[X:.*]] = loop.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:        loop.store %[[SQ]], %[[T:.*]][%[[I]], %[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[J2:.*]] = %{{.*}} axis "j" {
// CHECK-NEXT:      loop.block "add"
// CHECK-NEXT:        %{{.*}} = loop.load %[[T]][%[[I]], %[[J2]]]
// CHECK-NOT:   loop.block "square"
func.func @row_at_a_time(%X: memref<4x8xf32>, %Y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %T = loop.alloc global : memref<4x8xf32>
  loop.for %a = %c0 to %c4 step %c1 axis "a" {
    loop.for %b = %c0 to %c8 step %c1 axis "b" {
      loop.block "square" reads(%X : memref<4x8xf32>) writes(%T : memref<4x8xf32>) spatial ["a", "b"] {
        %x = loop.load %X[%a, %b] : memref<4x8xf32> -> f32
        %sq = arith.mulf %x, %x : f32
        loop.store %sq, %T[%a, %b] : f32 -> memref<4x8xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "add" reads(%T : memref<4x8xf32>) writes(%Y : memref<4x8xf32>) spatial ["i", "j"] {
        %t = loop.load %T[%i, %j] : memref<4x8xf32> -> f32
        %s = arith.addf %t, %t : f32
        loop.store %s, %Y[%i, %j] : f32 -> memref<4x8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  %c = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %c : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.compute_at %p, %i : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// At the outer loop of a split consumer, the producer computes one tile: its index is the
// consumer's `j.0 + j.1`, rebuilt over a copy of "j.1".
// CHECK-LABEL: func.func @one_tile
// CHECK:       loop.for %[[J0:.*]] = %{{.*}} axis "j.0" {
// CHECK-NEXT:    loop.for %[[T1:.*]] = %{{.*}} axis "j.1" {
// CHECK-NEXT:      %[[TJ:.*]] = arith.addi %[[J0]], %[[T1]] : index
// CHECK-NEXT:      loop.block "square" {{.*}} spatial ["j.0", "j.1"] {
// CHECK-NEXT:        %{{.*}} = loop.load %{{.*}}[%[[TJ]]]
// CHECK:         loop.for %[[J1:.*]] = %{{.*}} axis "j.1" {
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK-NEXT:      loop.block "add"
func.func @one_tile(%X: memref<16xf32>, %Y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %T = loop.alloc global : memref<16xf32>
  loop.for %a = %c0 to %c16 step %c1 axis "a" {
    loop.block "square" reads(%X : memref<16xf32>) writes(%T : memref<16xf32>) spatial ["a"] {
      %x = loop.load %X[%a] : memref<16xf32> -> f32
      %sq = arith.mulf %x, %x : f32
      loop.store %sq, %T[%a] : f32 -> memref<16xf32>
    }
  }
  loop.for %j = %c0 to %c16 step %c1 axis "j" {
    loop.block "add" reads(%T : memref<16xf32>) writes(%Y : memref<16xf32>) spatial ["j"] {
      %t = loop.load %T[%j] : memref<16xf32> -> f32
      %s = arith.addf %t, %t : f32
      loop.store %s, %Y[%j] : f32 -> memref<16xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  %c = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %j = transform.loop.match_loop %c axis "j" : (!transform.any_op) -> !transform.any_op
  %j0, %j1 = transform.loop.split %j [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.compute_at %p, %j0 : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// Another reader outside the loop would see elements the moved producer no longer computes.
// CHECK:     'transform.loop.compute_at' op failed on block "square" (%p): cannot compute_at: expected every use of the buffer to be a load inside loop "i", found a load outside it
// CHECK:     <{axis = "a", kind = "serial"}>
// CHECK:     "square"
// CHECK:     "transform.named_sequence"
func.func @negative_other_reader(%X: memref<4xf32>, %Y: memref<4xf32>, %Z: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %T = loop.alloc global : memref<4xf32>
  loop.for %a = %c0 to %c4 step %c1 axis "a" {
    loop.block "square" reads(%X : memref<4xf32>) writes(%T : memref<4xf32>) spatial ["a"] {
      %x = loop.load %X[%a] : memref<4xf32> -> f32
      %sq = arith.mulf %x, %x : f32
      loop.store %sq, %T[%a] : f32 -> memref<4xf32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "add" reads(%T : memref<4xf32>) writes(%Y : memref<4xf32>) spatial ["i"] {
      %t = loop.load %T[%i] : memref<4xf32> -> f32
      loop.store %t, %Y[%i] : f32 -> memref<4xf32>
    }
  }
  loop.for %k = %c0 to %c4 step %c1 axis "k" {
    loop.block "copy" reads(%T : memref<4xf32>) writes(%Z : memref<4xf32>) spatial ["k"] {
      %t = loop.load %T[%k] : memref<4xf32> -> f32
      loop.store %t, %Z[%k] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  %c = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %c axis "i" : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_at %p, %i : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.compute_at' op failed on block "square" (%p): cannot compute_at: expected the block's nest before the nest of loop "a", found it is not
func.func @negative_consumer_first(%X: memref<4xf32>, %Y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %T = loop.alloc global : memref<4xf32>
  loop.for %a = %c0 to %c4 step %c1 axis "a" {
    loop.block "copy" reads(%X : memref<4xf32>) writes(%Y : memref<4xf32>) spatial ["a"] {
      %x = loop.load %X[%a] : memref<4xf32> -> f32
      loop.store %x, %Y[%a] : f32 -> memref<4xf32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "square" reads(%X : memref<4xf32>) writes(%T : memref<4xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<4xf32> -> f32
      loop.store %x, %T[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  %c = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %a = transform.loop.match_loop %c axis "a" : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_at %p, %a : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// Under a parallel loop, the rows two iterations need overlap (a 3-point stencil): computing
// them in each iteration would race.
// CHECK:     'transform.loop.compute_at' op failed on block "square" (%p): cannot compute_at: expected the iterations of parallel loop "i" to compute disjoint parts of the buffer, found they may overlap
// CHECK:     <{axis = "a", kind = "serial"}>
// CHECK:     "square"
func.func @negative_overlap_under_parallel(%X: memref<10xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %T = loop.alloc global : memref<10xf32>
  loop.for %a = %c0 to %c10 step %c1 axis "a" {
    loop.block "square" reads(%X : memref<10xf32>) writes(%T : memref<10xf32>) spatial ["a"] {
      %x = loop.load %X[%a] : memref<10xf32> -> f32
      %sq = arith.mulf %x, %x : f32
      loop.store %sq, %T[%a] : f32 -> memref<10xf32>
    }
  }
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind parallel {
    loop.for %p = %c0 to %c3 step %c1 axis "p" {
      loop.block "stencil" reads(%T : memref<10xf32>) writes(%Y : memref<8xf32>) spatial ["i"] reduction ["p"] {
        %ip = arith.addi %i, %p : index
        %t = loop.load %T[%ip] : memref<10xf32> -> f32
        %y = loop.load %Y[%i] : memref<8xf32> -> f32
        %s = arith.addf %y, %t : f32
        loop.store %s, %Y[%i] : f32 -> memref<8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %p = transform.loop.match_block "square" in %root : (!transform.any_op) -> !transform.any_op
  %c = transform.loop.match_block "stencil" in %root : (!transform.any_op) -> !transform.any_op
  %i, %q = transform.loop.get_loops %c : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.compute_at %p, %i : !transform.any_op, !transform.any_op
  transform.yield
}
