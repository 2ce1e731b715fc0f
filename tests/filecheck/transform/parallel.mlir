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

// Without axis lists, the accesses decide: every iteration writes the same element.
// CHECK:     'transform.loop.parallel' op failed on loop "k" (%k): cannot parallelize: expected the iterations to access disjoint elements of every buffer stored to inside, found accesses to memref<1xf32> that may overlap
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

// -----

// Iteration "i" writes O[i] .. O[i + 2]: neighbouring iterations overlap.
// CHECK:     'transform.loop.parallel' op failed on loop "i" (%i): cannot parallelize: expected the iterations to access disjoint elements of every buffer stored to inside, found accesses to memref<10xf32> that may overlap
// CHECK:     <{axis = "i", kind = "serial"}>
func.func @negative_overlapping_iterations(%X: memref<8xf32>, %O: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %p = %c0 to %c3 step %c1 axis "p" {
      loop.block "scatter" reads(%X : memref<8xf32>) writes(%O : memref<10xf32>) spatial ["i", "p"] {
        %ip = arith.addi %i, %p : index
        %x = loop.load %X[%i] : memref<8xf32> -> f32
        %o = loop.load %O[%ip] : memref<10xf32> -> f32
        %s = arith.addf %o, %x : f32
        loop.store %s, %O[%ip] : f32 -> memref<10xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scatter" in %root : (!transform.any_op) -> !transform.any_op
  %i, %p = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %i : !transform.any_op
  transform.yield
}

// -----

// After a split at 4, iteration "i.0" touches [i.0, i.0 + 4): disjoint from the next.
// CHECK-LABEL: func.func @tiles_are_disjoint
// CHECK:       loop.for %{{.*}} axis "i.0" kind parallel {
func.func @tiles_are_disjoint(%X: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.block "double" reads() writes(%X : memref<16xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<16xf32> -> f32
      %s = arith.addf %x, %x : f32
      loop.store %s, %X[%i] : f32 -> memref<16xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "double" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %i0, %i1 = transform.loop.split %i [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %i0 : !transform.any_op
  transform.yield
}

// -----

// Tiles fused into one parallel loop (what the autotuner's sketches do): the row and column
// tiles come back by division and remainder, and each iteration owns one 2x8 tile.
// CHECK-LABEL: func.func @fused_tiles
// CHECK:       loop.for %[[F:.*]] = %{{.*}} axis "i.0.j.0.fused" kind parallel {
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[F]], %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = arith.muli %[[Q]], %{{.*}} : index
// CHECK-NEXT:    %[[R:.*]] = arith.remui %[[F]], %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = arith.muli %[[R]], %{{.*}} : index
// CHECK-NEXT:    loop.for %{{.*}} axis "i.1" {
// CHECK-NEXT:      %{{.*}} = arith.addi
// CHECK-NEXT:      loop.for %{{.*}} axis "j.1" {
func.func @fused_tiles(%X: memref<8x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      loop.block "double" reads() writes(%X : memref<8x32xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<8x32xf32> -> f32
        %s = arith.addf %x, %x : f32
        loop.store %s, %X[%i, %j] : f32 -> memref<8x32xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "double" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %i0, %j0, %i1, %j1 = transform.loop.tile %i, %j [2, 8] : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  %f = transform.loop.fuse %i0, %j0 : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.parallel %f : !transform.any_op
  transform.yield
}
