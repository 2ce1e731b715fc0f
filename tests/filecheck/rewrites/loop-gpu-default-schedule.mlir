// RUN: dlc-opt %s --split-input-file -p loop-gpu-default-schedule | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-gpu-default-schedule{pipeline_depth=1}' | filecheck %s --check-prefix=SYNC
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-gpu-default-schedule,convert-loop-to-target-gpu,target-gpu-compact-private-buffers,target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,target-gpu-vectorize | filecheck %s --check-prefix=KERNEL
// RUN: not dlc-opt %s --split-input-file -p 'loop-gpu-default-schedule{target="llvm -mcpu=znver3"}' 2>&1 | filecheck %s --check-prefix=NOT-GPU
// RUN: not dlc-opt %s --split-input-file --dlc-target='cuda -arch=sm_70' -p loop-gpu-default-schedule 2>&1 | filecheck %s --check-prefix=BAD-ARCH
// RUN: not dlc-opt %s --split-input-file -p 'loop-gpu-default-schedule{pipeline_depth=4}' 2>&1 | filecheck %s --check-prefix=BAD-DEPTH

// NOT-GPU: dlc-opt: error: loop-gpu-default-schedule: invalid target option: expected a GPU target (cuda ..., opencl), found 'llvm -mcpu=znver3'
// BAD-DEPTH: 'loop-gpu-default-schedule' expected a pipeline_depth of 1, 2 or 3, found 4
// BAD-ARCH: dlc-opt: error: invalid target 'cuda -arch=sm_70': expected a CUDA architecture for -arch (sm_80, sm_90), found 'sm_70'

// The inputs are convert-tensor-expr-to-loop's nests. Every scheduled nest must then convert to
// a kernel: no loop bound to a GPU axis is left, and only the function the schedule skipped
// (marked dlc.scheduled, without bindings) is refused.
// KERNEL-NOT: kind bound
// KERNEL:     'loop.for' op expected a loop bound to a GPU block or thread axis in the nest of loop "i" in @marked

// Elementwise: the spatial band fused and split into a grid-stride loop of blockIdx.x x
// threadIdx.x (256 threads); the partial last block is bounded by minui.
// CHECK-LABEL: func.func @elementwise
// CHECK:         loop.for %[[O:.*]] = %{{.*}} to %[[N:.*]] step %[[STRIDE:.*]] axis "i0.i1.fused.0" {
// CHECK:           %[[BUB:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:      loop.for %[[B:.*]] = %{{.*}} to %[[BUB]] step %{{.*}} axis "i0.i1.fused.1" kind bound thread "blockIdx.x" {
// CHECK:             %[[TUB:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        loop.for %{{.*}} = %{{.*}} to %[[TUB]] step %{{.*}} axis "i0.i1.fused.2" kind bound thread "threadIdx.x" {
// CHECK:               %{{.*}} = arith.divui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:          %{{.*}} = arith.remui %{{.*}}, %{{.*}} : index
// CHECK-NEXT:          loop.block "add"
func.func @elementwise(%0: memref<4x300xf32>, %1: memref<4x300xf32>, %out: memref<4x300xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c300 = arith.constant 300 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c300 step %c1 axis "i1" {
      loop.block "add" reads(%0, %1 : memref<4x300xf32>, memref<4x300xf32>) writes(%out : memref<4x300xf32>) spatial ["i0", "i1"] {
        %2 = loop.load %0[%i0, %i1] : memref<4x300xf32> -> f32
        %3 = loop.load %1[%i0, %i1] : memref<4x300xf32> -> f32
        %4 = arith.addf %2, %3 : f32
        loop.store %4, %out[%i0, %i1] : f32 -> memref<4x300xf32>
      }
    }
  }
  func.return
}

// -----

// A reduction with few iterations per output: one thread per output, the reduction loop
// serial inside it.
// CHECK-LABEL: func.func @thread_per_output
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i0" kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.block "reduce_sum_init"
// CHECK:           loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.block "reduce_sum"
func.func @thread_per_output(%0: memref<4x8xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.block "reduce_sum_init" reads() writes(%out : memref<4xf32>) spatial ["i0"] {
      %init = arith.constant 0.000000e+00 : f32
      loop.store %init, %out[%i0] : f32 -> memref<4xf32>
    }
    loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
      loop.block "reduce_sum" reads(%0 : memref<4x8xf32>) writes(%out : memref<4xf32>) spatial ["i0"] reduction ["r0"] {
        %1 = loop.load %0[%i0, %r0] : memref<4x8xf32> -> f32
        %acc = loop.load %out[%i0] : memref<4xf32> -> f32
        %2 = arith.addf %acc, %1 : f32
        loop.store %2, %out[%i0] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}

// -----

// A long reduction: one block per output; 256 threads reduce strided slices into registers,
// then a tree in shared memory (128, 64, ..., 1 threads); thread 0 runs the init and the
// update with the total.
// CHECK-LABEL: func.func @tree_reduction
// CHECK:         loop.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i0" kind bound thread "blockIdx.x" {
// CHECK-NEXT:      %[[RED:.*]] = loop.alloc shared : memref<256xf32>
// CHECK-NEXT:      loop.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "reduce_max.tx" kind bound thread "threadIdx.x" {
// CHECK-NEXT:        %[[P:.*]] = loop.alloc local : memref<1xf32>
// CHECK-NEXT:        loop.block "reduce_max.rf_init" reads() writes(%[[P]] : memref<1xf32>) {
// CHECK-NEXT:          %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// CHECK:           loop.for %[[R:.*]] = %[[T]] to %{{.*}} step %{{.*}} axis "reduce_max.rf" {
// CHECK-NEXT:        loop.block "reduce_max.rf"
// CHECK-NEXT:          %[[X:.*]] = loop.load %{{.*}}[%[[ROW]], %[[R]]]
// CHECK-NEXT:          %[[ACC:.*]] = loop.load %[[P]]
// CHECK-NEXT:          %{{.*}} = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK:           loop.block "reduce_max.rf_store"
// CHECK:             loop.store %{{.*}}, %[[RED]][%[[T]]]
// CHECK:         loop.for %[[T128:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "reduce_max.tree128" kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.block "reduce_max.tree"
// CHECK-NEXT:        %[[MINE:.*]] = loop.load %[[RED]][%[[T128]]]
// CHECK:             %{{.*}} = arith.maximumf %[[MINE]], %{{.*}} : f32
// CHECK:         axis "reduce_max.tree1" kind bound thread "threadIdx.x"
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "reduce_max.final" kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.block "reduce_max_init"
// CHECK:           loop.block "reduce_max" reads(%[[RED]] : memref<256xf32>) writes(%{{.*}} : memref<2xf32>) spatial ["i0"] {
// CHECK-NEXT:        %[[OLD:.*]] = loop.load %{{.*}}[%{{.*}}] : memref<2xf32> -> f32
// CHECK-NEXT:        %[[TOTAL:.*]] = loop.load %[[RED]][%{{.*}}] : memref<256xf32> -> f32
// CHECK-NEXT:        %{{.*}} = arith.maximumf %[[OLD]], %[[TOTAL]] : f32
func.func @tree_reduction(%0: memref<2x1000xf32>, %out: memref<2xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1000 = arith.constant 1000 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i0 = %c0 to %c2 step %c1 axis "i0" {
    loop.block "reduce_max_init" reads() writes(%out : memref<2xf32>) spatial ["i0"] {
      %init = arith.constant 0xff800000 : f32
      loop.store %init, %out[%i0] : f32 -> memref<2xf32>
    }
    loop.for %r0 = %c0 to %c1000 step %c1 axis "r0" {
      loop.block "reduce_max" reads(%0 : memref<2x1000xf32>) writes(%out : memref<2xf32>) spatial ["i0"] reduction ["r0"] {
        %1 = loop.load %0[%i0, %r0] : memref<2x1000xf32> -> f32
        %acc = loop.load %out[%i0] : memref<2xf32> -> f32
        %2 = arith.maximumf %acc, %1 : f32
        loop.store %2, %out[%i0] : f32 -> memref<2xf32>
      }
    }
  }
  func.return
}

// -----

// GEMM: 16x16-thread blocks over tiles of the output; A and B tiles staged in shared memory
// per BK=8 slice, each thread accumulating a 2x4 register tile with fma (its row of B read as
// a vector), then the init and the update with the accumulated value per output element.
// 512x1024 outputs: 8x8 thread tiles would make 32 blocks of 128x128; the tiles halve until
// the grid has two blocks per multiprocessor (sm_80: 108), here 16x16 blocks of 32x64.
// CHECK-LABEL: func.func @gemm
// CHECK:         loop.for %{{.*}} axis "matmul.by" kind bound thread "blockIdx.y" {
// CHECK-NEXT:      loop.for %{{.*}} axis "matmul.bx" kind bound thread "blockIdx.x" {
// CHECK:             %[[ATILE:.*]] = loop.alloc shared : memref<8x32xf32>
// CHECK-NEXT:        %[[BTILE:.*]] = loop.alloc shared : memref<8x64xf32>
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc local : memref<16x16x2x4xf32>
// CHECK:             loop.block "matmul.acc_init"
// CHECK:             loop.for %{{.*}} axis "matmul.ko" {
// CHECK:               loop.block "matmul.load_a" reads(%{{.*}} : memref<512x32xf32>) writes(%[[ATILE]] : memref<8x32xf32>)
// CHECK:                 arith.select
// CHECK:               loop.block "matmul.load_b" reads(%{{.*}} : memref<32x1024xf32>) writes(%[[BTILE]] : memref<8x64xf32>)
// CHECK:               loop.for %{{.*}} axis "matmul.ki" {
// CHECK-NEXT:            loop.for %{{.*}} axis "matmul.mi" kind unrolled {
// CHECK-NEXT:              loop.for %{{.*}} axis "matmul.ni" kind vectorized {
// CHECK-NEXT:                loop.block "matmul.mma"
// CHECK:                       %{{.*}} = math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:             loop.for %{{.*}} axis "matmul.si" kind unrolled {
// CHECK:               loop.block "matmul_init"
// CHECK:               loop.block "matmul" reads(%[[ACC]] : memref<16x16x2x4xf32>)
// CHECK-NOT:             loop.load %{{.*}} : memref<512x32xf32>
// CHECK:                 %{{.*}} = arith.addf
func.func @gemm(%0: memref<512x32xf32>, %1: memref<32x1024xf32>, %out: memref<512x1024xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  loop.for %i0 = %c0 to %c512 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c1024 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%out : memref<512x1024xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %out[%i0, %i1] : f32 -> memref<512x1024xf32>
      }
      loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
        loop.block "matmul" reads(%0, %1 : memref<512x32xf32>, memref<32x1024xf32>) writes(%out : memref<512x1024xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %2 = loop.load %0[%i0, %r0] : memref<512x32xf32> -> f32
          %3 = loop.load %1[%r0, %i1] : memref<32x1024xf32> -> f32
          %4 = arith.mulf %2, %3 : f32
          %acc = loop.load %out[%i0, %i1] : memref<512x1024xf32> -> f32
          %5 = arith.addf %acc, %4 : f32
          loop.store %5, %out[%i0, %i1] : f32 -> memref<512x1024xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A small GEMM (32x64 outputs) gets 1x1 thread tiles: 8 blocks of 16x16 outputs instead of
// one of 32x64, since the grid is far below two blocks per multiprocessor either way.
// CHECK-LABEL: func.func @gemm_small
// CHECK:         %{{.*}} = loop.alloc shared : memref<16x16xf32>
// CHECK-NEXT:    %{{.*}} = loop.alloc shared : memref<16x16xf32>
// CHECK-NEXT:    %{{.*}} = loop.alloc local : memref<16x16x1x1xf32>
func.func @gemm_small(%0: memref<32x32xf32>, %1: memref<32x64xf32>, %out: memref<32x64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c32 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c64 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%out : memref<32x64xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %out[%i0, %i1] : f32 -> memref<32x64xf32>
      }
      loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
        loop.block "matmul" reads(%0, %1 : memref<32x32xf32>, memref<32x64xf32>) writes(%out : memref<32x64xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %2 = loop.load %0[%i0, %r0] : memref<32x32xf32> -> f32
          %3 = loop.load %1[%r0, %i1] : memref<32x64xf32> -> f32
          %4 = arith.mulf %2, %3 : f32
          %acc = loop.load %out[%i0, %i1] : memref<32x64xf32> -> f32
          %5 = arith.addf %acc, %4 : f32
          loop.store %5, %out[%i0, %i1] : f32 -> memref<32x64xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A reduction to one value: the init (a statement outside loops) runs on one thread; the
// reduction is a tree in a single block of at least one warp (32 threads on sm_80).
// CHECK-LABEL: func.func @reduce_all
// CHECK:         loop.for %{{.*}} axis "single" kind bound thread "threadIdx.x" {
// CHECK-NEXT:      loop.block "reduce_sum_init"
// CHECK:         loop.for %{{.*}} axis "single_block" kind bound thread "blockIdx.x" {
// CHECK-NEXT:      loop.alloc shared : memref<32xf32>
// CHECK:           axis "reduce_sum.tree16" kind bound thread "threadIdx.x"
func.func @reduce_all(%0: memref<2x8xf32>, %out: memref<f32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.block "reduce_sum_init" reads() writes(%out : memref<f32>) {
    %init = arith.constant 0.000000e+00 : f32
    loop.store %init, %out[] : f32 -> memref<f32>
  }
  loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
    loop.for %r1 = %c0 to %c8 step %c1 axis "r1" {
      loop.block "reduce_sum" reads(%0 : memref<2x8xf32>) writes(%out : memref<f32>) reduction ["r0", "r1"] {
        %1 = loop.load %0[%r0, %r1] : memref<2x8xf32> -> f32
        %acc = loop.load %out[] : memref<f32> -> f32
        %2 = arith.addf %acc, %1 : f32
        loop.store %2, %out[] : f32 -> memref<f32>
      }
    }
  }
  func.return
}

// -----

// Nests that already have a binding, and functions marked dlc.scheduled, are left alone.
// CHECK-LABEL: func.func @already_bound
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    loop.for %{{.*}} = %[[C0]] to %[[C8]] step %[[C1]] axis "i" kind bound thread "threadIdx.x" {
// CHECK-LABEL: func.func @marked
// CHECK:         loop.for %{{.*}} axis "i" {
func.func @already_bound(%a: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind bound thread "threadIdx.x" {
    loop.block "zero" reads() writes(%a : memref<8xf32>) spatial ["i"] {
      %z = arith.constant 0.0 : f32
      loop.store %z, %a[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}
func.func @marked(%a: memref<8xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.scheduled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "zero" reads() writes(%a : memref<8xf32>) spatial ["i"] {
      %z = arith.constant 0.0 : f32
      loop.store %z, %a[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}

// -----

// An f16 GEMM accumulating in f32 on sm_80 (the default target) runs on tensor cores
// (`mma-gemm`; here without a pipeline, pipeline_depth=1: the factors are copied through
// registers): 2 x 3 blocks of 4 warps (threadIdx.y) of 32 lanes (threadIdx.x). Each lane's
// accumulator fragments live in a local buffer indexed [warp][lane][fm][fn][element]
// (registers once compacted), zeroed first; per 32-wide slice of K, A (32 x 32) and B
// transposed (16 x 32) are staged in shared memory (rows padded to 40 elements, 80 bytes: the
// 8 rows an ldmatrix reads fall on distinct banks), then each warp's 16 x 8 x 16 nests are
// tensorized into mma.sync (two k steps) reading and writing the lane's fragments, the factors'
// fragments loaded per k step by ldmatrix into local buffers (x4 for A: lanes 8q..8q+7 give
// rows 8 (q % 2) + lane % 8 at column 8 (q / 2); x2 for B), once per fragment; the lanes
// then write their fragments into the output tile in shared memory (c0..c3 at rows
// group, group + 8 and columns 2 thread, + 1), and the init, update (from the tile) and rounding
// run per output element.
// SYNC-LABEL: func.func @gemm_f16
// SYNC:       loop.for %{{.*}} = %c0 to %c2 step %c1 axis "matmul.by" kind bound thread "blockIdx.y" {
// SYNC-NEXT:    loop.for %{{.*}} = %c0 to %c3 step %c1 axis "matmul.bx" kind bound thread "blockIdx.x" {
// SYNC:           %[[A:.*]] = loop.alloc shared : memref<32x40xf16>
// SYNC-NEXT:      %[[B:.*]] = loop.alloc shared : memref<16x40xf16>
// SYNC-NEXT:      %[[C:.*]] = loop.alloc shared : memref<32x16xf32>
// SYNC-NEXT:      %[[F:.*]] = loop.alloc local : memref<4x32x1x1x4xf32>
// SYNC:           loop.block "matmul.acc_init" reads() writes(%[[F]] : memref<4x32x1x1x4xf32>)
// SYNC:           loop.for %{{.*}} axis "matmul.ko" {
// SYNC:             loop.block "matmul.load_a" reads(%{{.*}} : memref<64x32xf16>) writes(%[[A]] : memref<32x40xf16>)
// SYNC:             loop.block "matmul.load_b" reads(%{{.*}} : memref<32x48xf16>) writes(%[[B]] : memref<16x40xf16>)
// SYNC:             loop.for %[[W:.*]] = %c0 to %c4 step %c1 axis "matmul.mma.warp" kind bound thread "threadIdx.y" {
// SYNC:               loop.for %{{.*}} = %c0 to %c2 step %c1 axis "matmul.ks" kind unrolled {
// SYNC:                 loop.for %{{.*}} axis "matmul.a_fragment.f" kind unrolled {
// SYNC-NEXT:               loop.for %[[AL:.*]] = %c0 to %c32 step %c1 axis "matmul.a_fragment.lane" kind bound thread "threadIdx.x" {
// SYNC-NEXT:                 loop.block "matmul.a_fragment" reads(%[[A]] : memref<32x40xf16>) writes(%[[AF:.*]] : memref<4x32x1x8xf16>) {
// SYNC:                        %[[Q:.*]] = arith.divui %{{.*}}, %c8 : index
// SYNC-NEXT:                   %[[A_ROW:.*]] = arith.remui %[[AL]], %c8 : index
// SYNC:                        %[[AV:.*]] = loop.matrix_load "ptx.ldmatrix.x4" %[[A]][%{{.*}}, %{{.*}}] : memref<32x40xf16> -> vector<8xf16>
// SYNC-NEXT:                   loop.store %[[AV]], %[[AF]][%[[W]], %[[AL]], %{{.*}}, %c0] : vector<8xf16> -> memref<4x32x1x8xf16>
// SYNC:                    loop.block "matmul.b_fragment" reads(%[[B]] : memref<16x40xf16>) writes(%[[BF:.*]] : memref<4x32x1x4xf16>) {
// SYNC:                        loop.matrix_load "ptx.ldmatrix.x2" %[[B]][%{{.*}}, %{{.*}}] : memref<16x40xf16> -> vector<4xf16>
// SYNC:                  loop.for %[[FM:.*]] = %c0 to %c1 step %c1 axis "matmul.fm" kind unrolled {
// SYNC:                    loop.for %[[FN:.*]] = %c0 to %c1 step %c1 axis "matmul.fn" kind unrolled {
// SYNC:                      loop.for %[[L:.*]] = %c0 to %c32 step %c1 axis "matmul.mma.lane" kind bound thread "threadIdx.x" {
// SYNC:                        loop.block "matmul.mma" reads(%[[AF]], %[[BF]] : memref<4x32x1x8xf16>, memref<4x32x1x4xf16>) writes(%[[F]] : memref<4x32x1x1x4xf32>) {
// SYNC:                          loop.load %[[F]][%[[W]], %[[L]], %[[FM]], %[[FN]], %c0]
// SYNC:                          %[[AFV:.*]] = loop.load %[[AF]][%[[W]], %[[L]], %[[FM]], %c0] : memref<4x32x1x8xf16> -> vector<8xf16>
// SYNC-NEXT:                     %[[BFV:.*]] = loop.load %[[BF]][%[[W]], %[[L]], %[[FN]], %c0] : memref<4x32x1x4xf16> -> vector<4xf16>
// SYNC-NEXT:                     loop.intrinsic "ptx.mma.m16n8k16.f16" %{{.*}}, %[[AFV]], %[[BFV]] : (vector<4xf32>, vector<8xf16>, vector<4xf16>) -> vector<4xf32>
// SYNC:                          loop.store %{{.*}}, %[[F]][%[[W]], %[[L]], %[[FM]], %[[FN]], %c3]
// SYNC:           loop.block "matmul.acc_out" reads(%[[F]] : memref<4x32x1x1x4xf32>) writes(%[[C]] : memref<32x16xf32>)
// SYNC:           loop.for %{{.*}} axis "matmul.store.warp" kind bound thread "threadIdx.y" {
// SYNC:             loop.block "matmul_init"
// SYNC:             loop.block "matmul" reads(%[[C]] : memref<32x16xf32>)
// SYNC:             loop.block "round"
// KERNEL-LABEL: target_gpu.kernel @gemm_f16_round
// KERNEL:         loop.alloc local : memref<1x1x4xf32>
// KERNEL:         target_gpu.barrier
// KERNEL:         loop.intrinsic "ptx.mma.m16n8k16.f16"
// KERNEL:         loop.intrinsic "ptx.mma.m16n8k16.f16"
// KERNEL:         target_gpu.barrier
func.func @gemm_f16(%0: memref<64x32xf16>, %1: memref<32x48xf16>, %out: memref<64x48xf16>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c64 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c48 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
        loop.block "matmul" reads(%0, %1 : memref<64x32xf16>, memref<32x48xf16>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %2 = loop.load %0[%i0, %r0] : memref<64x32xf16> -> f16
          %3 = loop.load %1[%r0, %i1] : memref<32x48xf16> -> f16
          %4 = arith.extf %2 : f16 to f32
          %5 = arith.extf %3 : f16 to f32
          %6 = arith.mulf %4, %5 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %7 = arith.addf %acc_1, %6 : f32
          loop.store %7, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "round" reads(%acc : memref<1xf32>) writes(%out : memref<64x48xf16>) spatial ["i0", "i1"] {
        %8 = loop.load %acc[%c0] : memref<1xf32> -> f32
        %9 = arith.truncf %8 : f32 to f16
        loop.store %9, %out[%i0, %i1] : f16 -> memref<64x48xf16>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}

// -----

// A GEMM large enough for full 64 x 64 blocks (2048 x 64 by 64 x 1024) whose factors are rows
// of global buffers is software-pipelined over its K tiles (pipeline_depth 2): the A and B tiles
// have two stages, A [stage][m][k] (k contiguous in A), B [stage][k][n] (n contiguous in B;
// rows padded to 40 and 72 elements); the first tile's 16-byte copies (loop.async_copy, zeros
// past M, N, K) start before the loop and form one group; each iteration starts the copies of
// tile k + 1 into stage (k + 1) % 2, commits them, waits until one group is left pending (tile
// k has landed) and runs the warps' ldmatrix (B: .trans) + mma.sync on stage k % 2; all copies
// are finished after the loop. In the kernel, a barrier precedes each iteration's copies (the
// stage they overwrite was read) and follows the wait (before the warps read the tile).
// CHECK-LABEL: func.func @gemm_f16_pipelined
// CHECK:           %[[A:.*]] = loop.alloc shared : memref<2x64x40xf16>
// CHECK-NEXT:      %[[B:.*]] = loop.alloc shared : memref<2x32x72xf16>
// CHECK:           loop.block "matmul.copy_a" reads(%{{.*}} : memref<2048x64xf16>) writes(%[[A]] : memref<2x64x40xf16>)
// CHECK:             loop.async_copy %{{.*}}[%{{.*}}, %{{.*}}], %[[A]][%c0, %{{.*}}, %{{.*}}], %{{.*}} : memref<2048x64xf16>, memref<2x64x40xf16>
// CHECK:           loop.block "matmul.copy_b" reads(%{{.*}} : memref<64x1024xf16>) writes(%[[B]] : memref<2x32x72xf16>)
// CHECK:             loop.async_copy %{{.*}}[%{{.*}}, %{{.*}}], %[[B]][%c0, %{{.*}}, %{{.*}}], %{{.*}} : memref<64x1024xf16>, memref<2x32x72xf16>
// CHECK:           loop.async_commit
// CHECK-NEXT:      loop.for %[[KO:.*]] = %c0 to %c2 step %c1 axis "matmul.ko" {
// CHECK-NEXT:        %[[NEXT:.*]] = arith.addi %[[KO]], %c1 : index
// CHECK-NEXT:        %[[WSTAGE:.*]] = arith.remui %[[NEXT]], %c2 : index
// CHECK:               loop.async_copy %{{.*}}, %[[A]][%[[WSTAGE]], %{{.*}}, %{{.*}}], %{{.*}}
// CHECK:               loop.async_copy %{{.*}}, %[[B]][%[[WSTAGE]], %{{.*}}, %{{.*}}], %{{.*}}
// CHECK:             loop.async_commit
// CHECK-NEXT:        loop.async_wait 1
// CHECK-NEXT:        %[[RSTAGE:.*]] = arith.remui %[[KO]], %c2 : index
// CHECK:             loop.for %{{.*}} axis "matmul.mma.warp" kind bound thread "threadIdx.y" {
// CHECK:                 loop.matrix_load "ptx.ldmatrix.x4" %[[A]][%[[RSTAGE]], %{{.*}}, %{{.*}}] : memref<2x64x40xf16> -> vector<8xf16>
// CHECK:                 loop.matrix_load "ptx.ldmatrix.x2.trans" %[[B]][%[[RSTAGE]], %{{.*}}, %{{.*}}] : memref<2x32x72xf16> -> vector<4xf16>
// CHECK:                 loop.intrinsic "ptx.mma.m16n8k16.f16"
// CHECK:           loop.async_wait 0
// CHECK-NEXT:      loop.for %{{.*}} axis "matmul.acc_out.warp"
// KERNEL-LABEL: target_gpu.kernel @gemm_f16_pipelined_round
// KERNEL:         loop.async_commit
// KERNEL-NEXT:    loop.for %{{.*}} axis "matmul.ko" {
// KERNEL:           target_gpu.barrier
// KERNEL-NEXT:      loop.for %{{.*}} axis "matmul.copy_a" {
// KERNEL:           loop.async_commit
// KERNEL-NEXT:      loop.async_wait 1
// KERNEL:           target_gpu.barrier
// KERNEL:           loop.matrix_load "ptx.ldmatrix.x4"
func.func @gemm_f16_pipelined(%0: memref<2048x64xf16>, %1: memref<64x1024xf16>, %out: memref<2048x1024xf16>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 1024 : index
  %c64 = arith.constant 2048 : index
  loop.for %i0 = %c0 to %c64 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c48 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
        loop.block "matmul" reads(%0, %1 : memref<2048x64xf16>, memref<64x1024xf16>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %2 = loop.load %0[%i0, %r0] : memref<2048x64xf16> -> f16
          %3 = loop.load %1[%r0, %i1] : memref<64x1024xf16> -> f16
          %4 = arith.extf %2 : f16 to f32
          %5 = arith.extf %3 : f16 to f32
          %6 = arith.mulf %4, %5 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %7 = arith.addf %acc_1, %6 : f32
          loop.store %7, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "round" reads(%acc : memref<1xf32>) writes(%out : memref<2048x1024xf16>) spatial ["i0", "i1"] {
        %8 = loop.load %acc[%c0] : memref<1xf32> -> f32
        %9 = arith.truncf %8 : f32 to f16
        loop.store %9, %out[%i0, %i1] : f16 -> memref<2048x1024xf16>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}
