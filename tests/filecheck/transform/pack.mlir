// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: GEMM's B panel [K][N] -> [N/16][K][16]. The packing nest runs over B;
// the matmul reads the packed buffer, and since "j" was split at 16 the division and remainder
// fold to the split's loops.
// CHECK-LABEL: func.func @gemm_b_panel
// CHECK:       %[[BP:.*]] = loop.alloc global : memref<2x8x16xf32>
// CHECK-NEXT:  loop.for %[[K:.*]] = %{{.*}} axis "ax0" {
// CHECK-NEXT:    loop.for %[[N:.*]] = %{{.*}} axis "ax1" {
// CHECK-NEXT:      loop.block "matmul.pack1" reads(%[[B:.*]] : memref<8x32xf32>) writes(%[[BP]] : memref<2x8x16xf32>) spatial ["ax0", "ax1"] {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[B]][%[[K]], %[[N]]] : memref<8x32xf32> -> f32
// CHECK-NEXT:        %[[PANEL:.*]] = arith.divui %[[N]], %[[C16:.*]] : index
// CHECK-NEXT:        %[[LANE:.*]] = arith.remui %[[N]], %[[C16]] : index
// CHECK-NEXT:        loop.store %[[V]], %[[BP]][%[[PANEL]], %[[K]], %[[LANE]]] : f32 -> memref<2x8x16xf32>
// CHECK:       loop.for %[[J0:.*]] = %{{.*}} axis "j.0" {
// CHECK-NEXT:    loop.for %[[J1:.*]] = %{{.*}} axis "j.1" {
// CHECK:           loop.for %[[KK:.*]] = %{{.*}} axis "k" {
// CHECK-NEXT:        loop.block "matmul" reads(%{{.*}}, %[[BP]] : memref<4x8xf32>, memref<2x8x16xf32>)
// CHECK-NEXT:          %{{.*}} = loop.load
// CHECK-NEXT:          %[[P:.*]] = arith.divui %[[J0]], %[[C16]] : index
// CHECK-NEXT:          %{{.*}} = loop.load %[[BP]][%[[P]], %[[KK]], %[[J1]]] : memref<2x8x16xf32> -> f32
func.func @gemm_b_panel(%A: memref<4x8xf32>, %B: memref<8x32xf32>, %C: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      loop.block "matmul.init" reads() writes(%C : memref<4x32xf32>) spatial ["i", "j"] {
        loop.store %zero, %C[%i, %j] : f32 -> memref<4x32xf32>
      }
      loop.for %k = %c0 to %c8 step %c1 axis "k" {
        loop.block "matmul" reads(%A, %B : memref<4x8xf32>, memref<8x32xf32>) writes(%C : memref<4x32xf32>) spatial ["i", "j"] reduction ["k"] {
          %a = loop.load %A[%i, %k] : memref<4x8xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<8x32xf32> -> f32
          %c = loop.load %C[%i, %j] : memref<4x32xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<4x32xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  %j0, %j1 = transform.loop.split %j [16] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %packing = transform.loop.pack %b, 1, [0, 16] outer_perm [1, 0] : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// Without the split, the consumer divides its own index.
// CHECK-LABEL: func.func @blocked_rows
// CHECK:       loop.block "copy" reads(%[[XP:.*]] : memref<2x3x4xf32>)
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[I:.*]], %[[C4:.*]] : index
// CHECK-NEXT:    %[[R:.*]] = arith.remui %[[I]], %[[C4]] : index
// CHECK-NEXT:    %{{.*}} = loop.load %[[XP]][%[[Q]], %{{.*}}, %[[R]]] : memref<2x3x4xf32> -> f32
func.func @blocked_rows(%X: memref<8x3xf32>, %Y: memref<8x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c3 step %c1 axis "j" {
      loop.block "copy" reads(%X : memref<8x3xf32>) writes(%Y : memref<8x3xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<8x3xf32> -> f32
        loop.store %x, %Y[%i, %j] : f32 -> memref<8x3xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %packing = transform.loop.pack %b, 0, [4, 0] : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.pack' op failed on block "copy" (%b): cannot pack: expected tile sizes that divide the dimensions of memref<8x3xf32> (0: not tiled), found 2 for 3
// CHECK-NOT: loop.alloc
// CHECK:     "transform.named_sequence"
func.func @negative_not_dividing(%X: memref<8x3xf32>, %Y: memref<8x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %j = %c0 to %c3 step %c1 axis "j" {
      loop.block "copy" reads(%X : memref<8x3xf32>) writes(%Y : memref<8x3xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<8x3xf32> -> f32
        loop.store %x, %Y[%i, %j] : f32 -> memref<8x3xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %packing = transform.loop.pack %b, 0, [4, 2] : (!transform.any_op) -> !transform.any_op
  transform.yield
}
