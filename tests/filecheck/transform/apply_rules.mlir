// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'loop-interpret-transforms{target="llvm -mcpu=skylake-avx512"}' | filecheck %s

// A GEMM nest scheduled by the default reduction rule with a knob from a param (4-row tiles,
// 2 threads): B packed into 32-wide panels, a 4x32 register tile (rows unrolled, columns two
// 16-lane vectors) over the whole reduction, row blocks in parallel.
// CHECK-LABEL: func.func @matmul
// CHECK:         %[[BP:.*]] = loop.alloc global : memref<2x8x32xf32>
// CHECK:         loop.block "matmul.pack" reads(%B : memref<8x64xf32>) writes(%[[BP]] : memref<2x8x32xf32>)
// CHECK:         loop.for %{{.*}} = %c0 to %c16 step %c4 axis "i0.o" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c64 step %c32 axis "i1.o" {
// CHECK-NEXT:        %[[TILE:.*]] = loop.alloc local : memref<4x32xf32>
// CHECK:             loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:          loop.for %{{.*}} = %c0 to %c4 step %c1 axis "i0.i" kind unrolled {
// CHECK-NEXT:            loop.for %{{.*}} = %c0 to %c2 step %c1 axis "i1.v" kind unrolled {
// CHECK:                   loop.for %{{.*}} = %c0 to %c16 step %c1 axis "i1.l" kind vectorized {
// CHECK:                     loop.block "matmul" reads(%A, %[[BP]] : memref<16x8xf32>, memref<2x8x32xf32>) writes(%[[TILE]] : memref<4x32xf32>)
// CHECK:         loop.dealloc %[[BP]]
func.func @matmul(%A: memref<16x8xf32>, %B: memref<8x64xf32>, %C: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i0" {
    loop.for %j = %c0 to %c64 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%C : memref<16x64xf32>) spatial ["i0", "i1"] {
        %z = arith.constant 0.000000e+00 : f32
        loop.store %z, %C[%i, %j] : f32 -> memref<16x64xf32>
      }
      loop.for %k = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%A, %B : memref<16x8xf32>, memref<8x64xf32>) writes(%C : memref<16x64xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %a = loop.load %A[%i, %k] : memref<16x8xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<8x64xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %c = loop.load %C[%i, %j] : memref<16x64xf32> -> f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<16x64xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %rows = transform.param.constant 4 : i64 -> !transform.param<i64>
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.apply_rules %i [2, %rows, 24, 0, 0] : !transform.any_op, !transform.param<i64>
  transform.yield
}

// -----

// Rows 0: the target's (8 on Skylake-X, whose 32 KiB L1 has 8 ways; 12 on Sapphire Rapids: see
// rewrites/loop-default-schedule/rows.mlir).
// CHECK-LABEL: func.func @matmul_target_rows
// CHECK:         loop.alloc local : memref<8x32xf32>
func.func @matmul_target_rows(%A: memref<16x8xf32>, %B: memref<8x32xf32>, %C: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  loop.for %i = %c0 to %c16 step %c1 axis "i0" {
    loop.for %j = %c0 to %c32 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%C : memref<16x32xf32>) spatial ["i0", "i1"] {
        %z = arith.constant 0.000000e+00 : f32
        loop.store %z, %C[%i, %j] : f32 -> memref<16x32xf32>
      }
      loop.for %k = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%A, %B : memref<16x8xf32>, memref<8x32xf32>) writes(%C : memref<16x32xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %a = loop.load %A[%i, %k] : memref<16x8xf32> -> f32
          %b = loop.load %B[%k, %j] : memref<8x32xf32> -> f32
          %p = arith.mulf %a, %b : f32
          %c = loop.load %C[%i, %j] : memref<16x32xf32> -> f32
          %s = arith.addf %c, %p : f32
          loop.store %s, %C[%i, %j] : f32 -> memref<16x32xf32>
        }
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "matmul" in %root : (!transform.any_op) -> !transform.any_op
  %i, %j, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.loop.apply_rules %i [1, 0, 24, 0, 0] : !transform.any_op
  transform.yield
}

// -----

// No rule applies (a row sum on one thread: its only spatial axis is not contiguous and there is
// nothing to run in parallel): a diagnostic, and the payload is untouched.
// CHECK:     'transform.loop.apply_rules' op no default rule applies to the nest of loop "i" (%i)
// CHECK:     <{axis = "i", kind = "serial"}>
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
  transform.loop.apply_rules %i [1, 8, 24, 0, 0] : !transform.any_op
  transform.yield
}

// -----

// Negative knobs are rejected by name (0 rows, accumulators, threads or L2 means the target's).
// CHECK: 'transform.loop.apply_rules' op expected non-negative rows, accumulators, threads and l2_kib (0: the target's), found rows 8, accumulators -1, threads 1, l2_kib 0
func.func @negative_knob(%A: memref<4x8xf32>, %S: memref<4xf32>) {
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
  transform.loop.apply_rules %i [1, 8, -1, 0, 0] : !transform.any_op
  transform.yield
}
