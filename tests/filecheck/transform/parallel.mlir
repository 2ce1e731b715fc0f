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

// -----

// Regression: fuse of a matmul's untiled spatial loops, then parallel. Each fused iteration f
// owns one element C[f / 4, f % 4]; the proof pairs the divui/remui of f across dimensions.
// CHECK-LABEL: func.func @fused_matmul
// CHECK:       loop.for %[[F:.*]] = %{{.*}} axis "i.j.fused" kind parallel {
// CHECK-NEXT:    %{{.*}} = arith.divui %[[F]], %{{.*}} : index
// CHECK-NEXT:    %{{.*}} = arith.remui %[[F]], %{{.*}} : index
// CHECK-NEXT:    loop.for %{{.*}} axis "k" {
func.func @fused_matmul(%A: memref<2x3xf32>, %B: memref<3x4xf32>, %C: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.for %k = %c0 to %c3 step %c1 axis "k" {
        loop.block "matmul" reads(%A, %B : memref<2x3xf32>, memref<3x4xf32>) writes(%C : memref<2x4xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<2x3xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<3x4xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<2x4xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<2x4xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %f = transform.loop.fuse %i, %j : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.parallel %f : !transform.any_op
  transform.yield
}

// -----

// Regression: a 3-level split makes the index i.0 + i.1 + i.2 with i.0 step 8, i.1 in
// {0, 2, 4, 6} (step 2) and i.2 in {0, 1}: each i.0 iteration owns [i.0, i.0 + 8).
// CHECK-LABEL: func.func @three_level_split
// CHECK:       loop.for %{{.*}} axis "i.0" kind parallel {
// CHECK-NEXT:    loop.for %{{.*}} axis "i.1" {
// CHECK-NEXT:      loop.for %{{.*}} axis "i.2" {
func.func @three_level_split(%X: memref<16xf32>) {
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
  %i0, %i1, %i2 = transform.loop.split %i [4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.parallel %i0 : !transform.any_op
  transform.yield
}

// -----

// Still unsafe after a 3-level split: the store at i + 1 reaches the next i.0 iteration's first
// element (i.0 + 6 + 1 + 1 = i.0 + 8).
// CHECK:     'transform.loop.parallel' op failed on loop "i.0" (%i0): cannot parallelize: expected the iterations to access disjoint elements of every buffer stored to inside, found accesses to memref<17xf32> that may overlap
// CHECK:     <{axis = "i.0", kind = "serial"}>
func.func @negative_three_level_split_shifted(%X: memref<17xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i" {
    loop.block "shift" reads() writes(%X : memref<17xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<17xf32> -> f32
      %n = arith.addi %i, %c1 : index
      loop.store %x, %X[%n] : f32 -> memref<17xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "shift" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %i0, %i1, %i2 = transform.loop.split %i [4, 2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.parallel %i0 : !transform.any_op
  transform.yield
}

// -----

// A linear row index `6 io + r` (r < 6) delinearized into the output's (h, w) (an implicit
// GEMM's write-back into a conv's output): the digits `(6 io + r) / 7` and `(6 io + r) % 7`
// determine the row, so the iterations of "io" write different elements.
// CHECK-LABEL: func.func @delinearized_rows
// CHECK:       loop.for %{{.*}} axis "io" kind parallel {
func.func @delinearized_rows(%T: memref<42xf32>, %O: memref<6x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  loop.for %io = %c0 to %c7 step %c1 axis "io" {
    loop.for %r = %c0 to %c6 step %c1 axis "r" {
      loop.block "write" reads(%T : memref<42xf32>) writes(%O : memref<6x7xf32>) {
        %s = arith.muli %io, %c6 : index
        %i = arith.addi %s, %r : index
        %w = arith.remui %i, %c7 : index
        %h = arith.divui %i, %c7 : index
        %v = loop.load %T[%i] : memref<42xf32> -> f32
        loop.store %v, %O[%h, %w] : f32 -> memref<6x7xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "write" in %root : (!transform.any_op) -> !transform.any_op
  %io = transform.loop.match_loop %b axis "io" : (!transform.any_op) -> !transform.any_op
  transform.loop.parallel %io : !transform.any_op
  transform.yield
}

// -----

// Only the remainder digit: `(6 io + r) % 7` repeats every 7 rows, so iterations may overlap.
// CHECK:     'transform.loop.parallel' op failed on loop "io" (%io): cannot parallelize: expected the iterations to access disjoint elements of every buffer stored to inside, found accesses to memref<7xf32> that may overlap
func.func @negative_remainder_digit_only(%T: memref<42xf32>, %O: memref<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  loop.for %io = %c0 to %c7 step %c1 axis "io" {
    loop.for %r = %c0 to %c6 step %c1 axis "r" {
      loop.block "write" reads(%T : memref<42xf32>) writes(%O : memref<7xf32>) {
        %s = arith.muli %io, %c6 : index
        %i = arith.addi %s, %r : index
        %w = arith.remui %i, %c7 : index
        %v = loop.load %T[%i] : memref<42xf32> -> f32
        loop.store %v, %O[%w] : f32 -> memref<7xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "write" in %root : (!transform.any_op) -> !transform.any_op
  %io = transform.loop.match_loop %b axis "io" : (!transform.any_op) -> !transform.any_op
  transform.loop.parallel %io : !transform.any_op
  transform.yield
}

// -----

// Digits of a row index whose offsets span a whole block (`7 io + r`, r < 8): rows of two
// iterations overlap.
// CHECK:     'transform.loop.parallel' op failed on loop "io" (%io): cannot parallelize: expected the iterations to access disjoint elements of every buffer stored to inside, found accesses to memref<8x7xf32> that may overlap
func.func @negative_delinearized_overlap(%T: memref<64xf32>, %O: memref<8x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  loop.for %io = %c0 to %c7 step %c1 axis "io" {
    loop.for %r = %c0 to %c8 step %c1 axis "r" {
      loop.block "write" reads(%T : memref<64xf32>) writes(%O : memref<8x7xf32>) {
        %s = arith.muli %io, %c7 : index
        %i = arith.addi %s, %r : index
        %w = arith.remui %i, %c7 : index
        %h = arith.divui %i, %c7 : index
        %v = loop.load %T[%i] : memref<64xf32> -> f32
        loop.store %v, %O[%h, %w] : f32 -> memref<8x7xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "write" in %root : (!transform.any_op) -> !transform.any_op
  %io = transform.loop.match_loop %b axis "io" : (!transform.any_op) -> !transform.any_op
  transform.loop.parallel %io : !transform.any_op
  transform.yield
}
