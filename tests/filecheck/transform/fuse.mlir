// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: one loop over both ranges; the induction variables come back by
// division and remainder.
// CHECK-LABEL: func.func @two_spatial_loops
// CHECK:       %[[C12:.*]] = arith.constant 12 : index
// CHECK-NEXT:  loop.for %[[F:.*]] = %[[C0:.*]] to %[[C12]] step %[[C1:.*]] axis "i.j.fused" kind parallel {
// CHECK-NEXT:    %[[I:.*]] = arith.divui %[[F]], %[[C4:.*]] : index
// CHECK-NEXT:    %[[J:.*]] = arith.remui %[[F]], %[[C4]] : index
// CHECK-NEXT:    loop.block "add" {{.*}} spatial ["i.j.fused"] {
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]]
func.func @two_spatial_loops(%A: memref<3x4xf32>, %B: memref<3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c3 step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "add" reads(%A : memref<3x4xf32>) writes(%B : memref<3x4xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<3x4xf32> -> f32
        %s = arith.addf %a, %a : f32
        loop.store %s, %B[%i, %j] : f32 -> memref<3x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "add" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %ij = transform.loop.fuse %i, %j : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.parallel %ij : !transform.any_op
  transform.yield
}

// -----

// Bounds and steps other than 0 and 1 are folded into the recovered induction variables.
// CHECK-LABEL: func.func @strided
// CHECK:       loop.for %[[F:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i.j.fused" {
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[F]], %{{.*}} : index
// CHECK-NEXT:    %[[QS:.*]] = arith.muli %[[Q]], %{{.*}} : index
// CHECK-NEXT:    %[[I:.*]] = arith.addi %[[QS]], %{{.*}} : index
// CHECK-NEXT:    %[[R:.*]] = arith.remui %[[F]], %{{.*}} : index
// CHECK-NEXT:    %[[J:.*]] = arith.addi %[[R]], %{{.*}} : index
// CHECK-NEXT:    loop.block "fill"
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]]
func.func @strided(%A: memref<8x8xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c1 to %c8 step %c2 axis "i" {
    loop.for %j = %c3 to %c8 step %c1 axis "j" {
      loop.block "fill" reads() writes(%A : memref<8x8xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<8x8xf32> -> f32
        loop.store %a, %A[%i, %j] : f32 -> memref<8x8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %ij = transform.loop.fuse %i, %j : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// An outer loop of runtime extent (a batch) from 0 by 1 fuses with a static inner one: the
// fused loop's bound is the batch times the inner trip count, computed before the loop.
// CHECK-LABEL: func.func @runtime_outer
// CHECK:       %[[TRIP:.*]] = arith.muli %n, %[[C4:.*]] : index
// CHECK-NEXT:  loop.for %[[F:.*]] = %{{.*}} to %[[TRIP]] step %{{.*}} axis "i.j.fused" kind parallel {
// CHECK-NEXT:    %[[I:.*]] = arith.divui %[[F]], %[[C4]] : index
// CHECK-NEXT:    %[[J:.*]] = arith.remui %[[F]], %[[C4]] : index
// CHECK-NEXT:    loop.block "copy"
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]]
func.func @runtime_outer(%A: memref<?x4xf32>, %B: memref<?x4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "copy" reads(%A : memref<?x4xf32>) writes(%B : memref<?x4xf32>) spatial ["i", "j"] {
        %a = loop.load %A[%i, %j] : memref<?x4xf32> -> f32
        loop.store %a, %B[%i, %j] : f32 -> memref<?x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %ij = transform.loop.fuse %i, %j : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.loop.parallel %ij : !transform.any_op
  transform.yield
}

// -----

// A runtime outer loop that does not start at 0 by steps of 1 does not fuse.
// CHECK:     'transform.loop.fuse' op failed on loop "i" (%i): cannot fuse: expected constant bounds, found bounds that are not 'arith.constant's
func.func @negative_runtime_outer_from_one(%A: memref<?x4xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c1 to %n step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "fill" reads() writes(%A : memref<?x4xf32>) spatial ["i", "j"] {
        %z = arith.constant 0.0 : f32
        loop.store %z, %A[%i, %j] : f32 -> memref<?x4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %ij = transform.loop.fuse %i, %j : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.fuse' op failed on loop "k" (%k): cannot fuse: expected both axes to have the same iteration kind in block "sum", found spatial and reduction
// CHECK:     <{axis = "j", kind = "serial"}>
// CHECK:     <{axis = "k", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_spatial_and_reduction(%A: memref<4x8xf32>, %S: memref<4xf32>) {
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
  %jk = transform.loop.fuse %j, %k : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.fuse' op failed on loop "k" (%k): cannot fuse: expected loop "k" directly inside loop "i", found 1 loop(s) between
func.func @negative_not_adjacent(%A: memref<2x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i = %c0 to %c2 step %c1 axis "i" {
    loop.for %j = %c0 to %c2 step %c1 axis "j" {
      loop.for %k = %c0 to %c2 step %c1 axis "k" {
        loop.block "fill" reads() writes(%A : memref<2x2x2xf32>) spatial ["i", "j", "k"] {
          %a = loop.load %A[%i, %j, %k] : memref<2x2x2xf32> -> f32
          loop.store %a, %A[%i, %j, %k] : f32 -> memref<2x2x2xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %ik = transform.loop.fuse %i, %k : (!transform.any_op, !transform.any_op) -> !transform.any_op
  transform.yield
}
