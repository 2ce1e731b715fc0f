// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=skylake-avx512 -num-cores=2"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver3"}' | filecheck %s --check-prefix=ZNVER3
// RUN: dlc-opt %s --split-input-file --dlc-target='llvm -mcpu=znver3' -p loop-default-schedule | filecheck %s --check-prefix=ZNVER3
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=skylake-avx512"}' | filecheck %s --check-prefix=AVX512
// RUN: not dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=foo"}' 2>&1 | filecheck %s --check-prefix=BAD

// Default CPU schedules of the nests convert-tensor-expr-to-loop makes, for the target named (an
// AVX-512 CPU with 2 cores), so that the schedule does not depend on the host. The ZNVER3 and
// AVX512 runs check that the vector width follows the target (the option, or the module's
// dlc.target): 8 f32 lanes with AVX2, 16 with AVX-512.

// BAD: dlc-opt: error: loop-default-schedule: invalid target option: expected a known CPU for -mcpu ({{.*}}), found 'foo'

// GEMM: B is packed into [ceil(40/32)][8][32] panels, one per 32-column tile (row by row, the
// rows split between the threads; the last panel zero-padded by a guarded copy); a 7x32
// register tile of unrolled rows and 16-lane vectorized columns accumulates over the reduction
// loop r0 (innermost but one), reading A by broadcast and B's panel as vectors; the relu
// epilogue writes the tile out. The 20 rows take three tiles of at most 8 rows, as even as
// they can be (7, 7 and 6: `balanced_rows`); row and column tails get their own kernels.

// CHECK-LABEL: func.func @matmul
// CHECK:         %[[BP:.*]] = loop.alloc global : memref<2x8x32xf32>
// CHECK:         loop.for %{{.*}} axis "k" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} axis "p" {
// CHECK-NEXT:        loop.for %[[L:.*]] = %{{.*}} axis "l" kind vectorized {
// CHECK-NEXT:          loop.block "matmul.pack" reads(%b : memref<8x40xf32>) writes(%[[BP]] : memref<2x8x32xf32>)
// CHECK:         loop.block "matmul.pack"
// CHECK:           arith.select
// CHECK:         loop.for %[[IO:.*]] = %{{.*}} step %c7 axis "i0.o" kind parallel {
// CHECK-NEXT:      %[[TILE:.*]] = loop.alloc local : memref<7x32xf32>
// CHECK-NEXT:      loop.for %{{.*}} axis "i0.i" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} axis "i1.i" kind vectorized {
// CHECK:               loop.block "matmul_init" reads() writes(%[[TILE]] : memref<7x32xf32>)
// CHECK:           loop.for %[[K:.*]] = %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.for %[[RI:.*]] = %{{.*}} axis "i0.i" kind unrolled {
// CHECK-NEXT:          loop.for %[[CV:.*]] = %{{.*}} axis "i1.v" kind unrolled {
// CHECK:                 loop.for %[[CL:.*]] = %{{.*}} axis "i1.l" kind vectorized {
// CHECK-NEXT:              %[[CI:.*]] = arith.addi %{{.*}}, %[[CL]] : index
// CHECK:                     loop.block "matmul" reads(%a, %[[BP]] : memref<20x8xf32>, memref<2x8x32xf32>) writes(%[[TILE]] : memref<7x32xf32>)
// CHECK-NEXT:                %{{.*}} = loop.load %a[%{{.*}}, %[[K]]] : memref<20x8xf32> -> f32
// CHECK-NEXT:                %{{.*}} = loop.load %[[BP]][%{{.*}}, %[[K]], %[[CI]]] : memref<2x8x32xf32> -> f32
// CHECK:                     loop.load %[[TILE]][%[[RI]], %{{.*}}] : memref<7x32xf32> -> f32
// CHECK:                     loop.store %{{.*}}, %[[TILE]][%[[RI]], %{{.*}}] : f32 -> memref<7x32xf32>
// CHECK:           loop.for %{{.*}} axis "i0.i" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} axis "i1.i" kind vectorized {
// CHECK:               loop.block "relu" reads(%[[TILE]] : memref<7x32xf32>) writes(%out : memref<20x40xf32>)
// CHECK:           loop.dealloc %[[TILE]] : memref<7x32xf32>
// CHECK:           loop.alloc local : memref<7x16xf32>
// CHECK:         loop.alloc local : memref<6x32xf32>
// CHECK:         loop.alloc local : memref<6x16xf32>
// CHECK:         loop.dealloc %[[BP]] : memref<2x8x32xf32>
func.func @matmul(%a: memref<20x8xf32>, %b: memref<8x40xf32>, %out: memref<20x40xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %c20 = arith.constant 20 : index
  loop.for %i0 = %c0 to %c20 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c40 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<20x8xf32>, memref<8x40xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<20x8xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<8x40xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %3 = arith.addf %acc_1, %2 : f32
          loop.store %3, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "relu" reads(%acc : memref<1xf32>) writes(%out : memref<20x40xf32>) spatial ["i0", "i1"] {
        %4 = loop.load %acc[%c0] : memref<1xf32> -> f32
        %5 = arith.constant 0.000000e+00 : f32
        %6 = arith.maximumf %4, %5 : f32
        loop.store %6, %out[%i0, %i1] : f32 -> memref<20x40xf32>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}

// -----

// conv2d (NCHW): the pad nest becomes, per channel (in parallel), fills of the border (the
// row above and the row below the interior, whole and vectorized; then the column left and the
// column right of it, over the interior rows, both loops unrolled: too narrow to vectorize, and
// left to LLVM they would become scatters down the column) and a vectorized interior copy; the conv
// blocks 4 output channels (rows: the input does not depend on them, so each input vector is
// reused 4 times) by a whole 6-wide output row (vectorized columns), with the 3x3 window
// unrolled inside the loop over input channels; the bias epilogue writes the tile; output rows run in parallel.

// CHECK-LABEL: func.func @conv
// CHECK:         loop.for %{{.*}} axis "i1" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c1 step %c1 axis "i2" {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i3" kind vectorized {
// CHECK-NEXT:          loop.block "pad.fill" reads() writes(%pad : memref<1x2x8x8xf32>)
// CHECK:                 loop.store %{{.*}}, %pad[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]
// CHECK:           loop.for %[[BELOW:.*]] = %c0 to %c1 step %c1 axis "i2" {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i3" kind vectorized {
// CHECK-NEXT:          loop.block "pad.fill"
// CHECK:                 %[[ROW7:.*]] = arith.addi %[[BELOW]], %c7 : index
// CHECK-NEXT:            loop.store %{{.*}}, %pad[%{{.*}}, %{{.*}}, %[[ROW7]], %{{.*}}]
// CHECK:           loop.for %[[LEFT:.*]] = %c0 to %c6 step %c1 axis "i2" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c1 step %c1 axis "i3" kind unrolled {
// CHECK-NEXT:          loop.block "pad.fill"
// CHECK:                 %[[ROW:.*]] = arith.addi %[[LEFT]], %c1 : index
// CHECK-NEXT:            loop.store %{{.*}}, %pad[%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}]
// CHECK:           loop.for %{{.*}} = %c0 to %c6 step %c1 axis "i2" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c1 step %c1 axis "i3" kind unrolled {
// CHECK-NEXT:          loop.block "pad.fill"
// CHECK-NOT:       loop.block "pad.fill"
// CHECK:           loop.for %{{.*}} = %c0 to %c6 step %c1 axis "i2" {
// CHECK-NEXT:        loop.for %[[W:.*]] = %c0 to %c6 step %c1 axis "i3" kind vectorized {
// CHECK-NEXT:          loop.block "pad" reads(%x : memref<1x2x6x6xf32>) writes(%pad : memref<1x2x8x8xf32>)
// CHECK:               %[[SHIFTED:.*]] = arith.addi %[[W]], %c1 : index
// CHECK-NEXT:          loop.store %{{.*}}, %pad[%{{.*}}, %{{.*}}, %{{.*}}, %[[SHIFTED]]] : f32 -> memref<1x2x8x8xf32>
// CHECK:         loop.for %[[OH:.*]] = %{{.*}} axis "i2" kind parallel {
// CHECK-NEXT:      %[[TILE:.*]] = loop.alloc local : memref<4x6xf32>
// CHECK:           loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:          loop.for %{{.*}} axis "r2" kind unrolled {
// CHECK-NEXT:            loop.for %[[OC:.*]] = %{{.*}} axis "i1.i" kind unrolled {
// CHECK-NEXT:              loop.for %[[OW:.*]] = %{{.*}} axis "i3.i" kind vectorized {
// CHECK-NEXT:                loop.block "conv2d" reads(%pad, %w : memref<1x2x8x8xf32>, memref<4x2x3x3xf32>) writes(%[[TILE]] : memref<4x6xf32>)
// CHECK:                       loop.load %w[%[[OC]], %{{.*}}] : memref<4x2x3x3xf32> -> f32
// CHECK:                       loop.store %{{.*}}, %[[TILE]][%[[OC]], %[[OW]]] : f32 -> memref<4x6xf32>
// CHECK:                 loop.block "bias_add" reads(%[[TILE]], %b : memref<4x6xf32>, memref<4xf32>) writes(%out : memref<1x4x6x6xf32>)
func.func @conv(%x: memref<1x2x6x6xf32>, %w: memref<4x2x3x3xf32>, %b: memref<4xf32>, %out: memref<1x4x6x6xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c4 = arith.constant 4 : index
  %pad = loop.alloc global : memref<1x2x8x8xf32>
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c8 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c8 step %c1 axis "i3" {
          loop.block "pad" reads(%x : memref<1x2x6x6xf32>) writes(%pad : memref<1x2x8x8xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 1 : index
            %1 = arith.subi %i2, %0 : index
            %2 = arith.subi %i3, %0 : index
            %3 = arith.constant 6 : index
            %4 = arith.cmpi ult, %1, %3 : index
            %5 = arith.constant 5 : index
            %6 = arith.minui %1, %5 : index
            %7 = arith.cmpi ult, %2, %3 : index
            %8 = arith.andi %4, %7 : i1
            %9 = arith.minui %2, %5 : index
            %10 = loop.load %x[%i0, %i1, %6, %9] : memref<1x2x6x6xf32> -> f32
            %11 = arith.constant 0.000000e+00 : f32
            %12 = arith.select %8, %10, %11 : f32
            loop.store %12, %pad[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x8x8xf32>
          }
        }
      }
    }
  }
  loop.for %i0_1 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1_1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2_1 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3_1 = %c0 to %c6 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%pad, %w : memref<1x2x8x8xf32>, memref<4x2x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %13 = arith.addi %i2_1, %r1 : index
                  %14 = arith.addi %i3_1, %r2 : index
                  %15 = loop.load %pad[%i0_1, %r0, %13, %14] : memref<1x2x8x8xf32> -> f32
                  %16 = loop.load %w[%i1_1, %r0, %r1, %r2] : memref<4x2x3x3xf32> -> f32
                  %17 = arith.mulf %15, %16 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %18 = arith.addf %acc_1, %17 : f32
                  loop.store %18, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "bias_add" reads(%acc, %b : memref<1xf32>, memref<4xf32>) writes(%out : memref<1x4x6x6xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %19 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %20 = loop.load %b[%i1_1] : memref<4xf32> -> f32
            %21 = arith.addf %19, %20 : f32
            loop.store %21, %out[%i0_1, %i1_1, %i2_1, %i3_1] : f32 -> memref<1x4x6x6xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  loop.dealloc %pad : memref<1x2x8x8xf32>
  func.return
}

// -----

// A stride-2 conv2d: vectorizing ow would gather its input (x[.., 2 * ow + kw]), so it is
// vectorized over output channels instead: the OIHW weight is packed into [ceil(20/32)][2][3][3][32]
// zero-padded panels (a guarded copy), and a 4 (ow, unrolled) x 32 (oc: two 16-lane vectors) register
// tile reads the packed weights as vectors and the input as scalars; the relu epilogue runs
// channel by channel over the 20 real channels (a serial loop: each reads a column of the tile),
// each storing the 4 contiguous ow of its row (a vector, not a scatter); output rows run in parallel.

// CHECK-LABEL: func.func @strided_conv
// CHECK:         %[[WP:.*]] = loop.alloc global : memref<1x2x3x3x32xf32>
// CHECK:           loop.block "conv2d.pack" reads(%w : memref<20x2x3x3xf32>) writes(%[[WP]] : memref<1x2x3x3x32xf32>)
// CHECK:             arith.select
// CHECK:         loop.for %[[OH:.*]] = %{{.*}} axis "i2" kind parallel {
// CHECK-NEXT:      %[[TILE:.*]] = loop.alloc local : memref<4x32xf32>
// CHECK:           loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:          loop.for %{{.*}} axis "r2" kind unrolled {
// CHECK-NEXT:            loop.for %[[RI:.*]] = %{{.*}} axis "i3.i" kind unrolled {
// CHECK-NEXT:              loop.for %{{.*}} axis "i1.v" kind unrolled {
// CHECK:                     loop.for %[[CL:.*]] = %{{.*}} axis "i1.l" kind vectorized {
// CHECK-NEXT:                  %[[CI:.*]] = arith.addi %{{.*}}, %[[CL]] : index
// CHECK-NEXT:                  loop.block "conv2d" reads(%x, %[[WP]] : memref<1x2x9x9xf32>, memref<1x2x3x3x32xf32>) writes(%[[TILE]] : memref<4x32xf32>)
// CHECK:                         loop.load %x[%{{.*}}] : memref<1x2x9x9xf32> -> f32
// CHECK-NEXT:                    loop.load %[[WP]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CI]]] : memref<1x2x3x3x32xf32> -> f32
// CHECK:                         loop.store %{{.*}}, %[[TILE]][%[[RI]], %[[CI]]] : f32 -> memref<4x32xf32>
// CHECK:           loop.for %[[OC:.*]] = %c0 to %c20 step %c1 axis "i1.i" {
// CHECK-NEXT:        loop.for %[[RO:.*]] = %{{.*}} axis "i3.i" kind vectorized {
// CHECK-NEXT:          loop.block "relu" reads(%[[TILE]], %b : memref<4x32xf32>, memref<20xf32>) writes(%out : memref<1x20x4x4xf32>)
// CHECK:               loop.store %{{.*}}, %out[%{{.*}}, %[[OC]], %[[OH]], %[[RO]]] : f32 -> memref<1x20x4x4xf32>
// CHECK:         loop.dealloc %[[WP]] : memref<1x2x3x3x32xf32>
func.func @strided_conv(%x: memref<1x2x9x9xf32>, %w: memref<20x2x3x3xf32>, %b: memref<20xf32>, %out: memref<1x20x4x4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c20 = arith.constant 20 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c20 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c4 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c4 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x2x9x9xf32>, memref<20x2x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.constant 2 : index
                  %1 = arith.muli %i2, %0 : index
                  %2 = arith.addi %1, %r1 : index
                  %3 = arith.muli %i3, %0 : index
                  %4 = arith.addi %3, %r2 : index
                  %5 = loop.load %x[%i0, %r0, %2, %4] : memref<1x2x9x9xf32> -> f32
                  %6 = loop.load %w[%i1, %r0, %r1, %r2] : memref<20x2x3x3xf32> -> f32
                  %7 = arith.mulf %5, %6 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %8 = arith.addf %acc_1, %7 : f32
                  loop.store %8, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc, %b : memref<1xf32>, memref<20xf32>) writes(%out : memref<1x20x4x4xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %9 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %10 = loop.load %b[%i1] : memref<20xf32> -> f32
            %11 = arith.addf %9, %10 : f32
            %12 = arith.constant 0.000000e+00 : f32
            %13 = arith.maximumf %11, %12 : f32
            loop.store %13, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x20x4x4xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}


// -----

// An elementwise nest: the innermost (contiguous) axis is vectorized, the outer one parallel.

// CHECK-LABEL: func.func @elementwise
// CHECK:         loop.for %{{.*}} axis "i0" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} axis "i1" kind vectorized {
// CHECK-NEXT:        loop.block "add"
func.func @elementwise(%a: memref<6x40xf32>, %b: memref<40xf32>, %out: memref<6x40xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c40 = arith.constant 40 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  loop.for %i0 = %c0 to %c6 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c40 step %c1 axis "i1" {
      loop.block "add" reads(%a, %b : memref<6x40xf32>, memref<40xf32>) writes(%out : memref<6x40xf32>) spatial ["i0", "i1"] {
        %0 = loop.load %a[%i0, %i1] : memref<6x40xf32> -> f32
        %1 = loop.load %b[%i1] : memref<40xf32> -> f32
        %2 = arith.addf %0, %1 : f32
        loop.store %2, %out[%i0, %i1] : f32 -> memref<6x40xf32>
      }
    }
  }
  func.return
}

// -----

// A reduction over a middle axis: the reduction accumulates into a 4x32 register tile (rows
// unrolled, the contiguous last axis vectorized) and the tile is written out by a new block.

// CHECK-LABEL: func.func @reduction
// CHECK:         %[[TILE:.*]] = loop.alloc local : memref<4x32xf32>
// CHECK:         loop.block "reduce_sum_init" reads() writes(%[[TILE]] : memref<4x32xf32>)
// CHECK:         loop.for %[[R:.*]] = %{{.*}} axis "r0" {
// CHECK-NEXT:      loop.for %[[RI:.*]] = %{{.*}} axis "i0.i" kind unrolled {
// CHECK-NEXT:        loop.for %[[CI:.*]] = %{{.*}} axis "i1.i" kind vectorized {
// CHECK-NEXT:          loop.block "reduce_sum" reads(%x : memref<4x5x32xf32>) writes(%[[TILE]] : memref<4x32xf32>)
// CHECK-NEXT:            loop.load %x[%[[RI]], %[[R]], %[[CI]]] : memref<4x5x32xf32> -> f32
// CHECK:         loop.block "reduce_sum.write" reads(%[[TILE]] : memref<4x32xf32>) writes(%out : memref<4x32xf32>)
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[TILE]][%{{.*}}, %{{.*}}] : memref<4x32xf32> -> f32
// CHECK-NEXT:      loop.store %[[V]], %out[%{{.*}}, %{{.*}}] : f32 -> memref<4x32xf32>
// CHECK:         loop.dealloc %[[TILE]] : memref<4x32xf32>
func.func @reduction(%x: memref<4x5x32xf32>, %out: memref<4x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c4 = arith.constant 4 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      loop.block "reduce_sum_init" reads() writes(%out : memref<4x32xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %out[%i0, %i1] : f32 -> memref<4x32xf32>
      }
      loop.for %r0 = %c0 to %c5 step %c1 axis "r0" {
        loop.block "reduce_sum" reads(%x : memref<4x5x32xf32>) writes(%out : memref<4x32xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %x[%i0, %r0, %i1] : memref<4x5x32xf32> -> f32
          %acc = loop.load %out[%i0, %i1] : memref<4x32xf32> -> f32
          %1 = arith.addf %acc, %0 : f32
          loop.store %1, %out[%i0, %i1] : f32 -> memref<4x32xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A nest that is already scheduled (a loop that is not serial) is left as it is.

// CHECK-LABEL: func.func @negative_already_scheduled
// CHECK:         loop.for %{{.*}} axis "i" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} axis "j" {
// CHECK-NEXT:        loop.block "copy"
func.func @negative_already_scheduled(%a: memref<8x32xf32>, %out: memref<8x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c32 step %c1 axis "j" {
      loop.block "copy" reads(%a : memref<8x32xf32>) writes(%out : memref<8x32xf32>) spatial ["i", "j"] {
        %v = loop.load %a[%i, %j] : memref<8x32xf32> -> f32
        loop.store %v, %out[%i, %j] : f32 -> memref<8x32xf32>
      }
    }
  }
  func.return
}

// -----

// conv2d with a residual add in its epilogue: the residual depends on the output channel, but
// only the update's operands decide the rows, so rows are still output channels (each input
// vector reused by all of them) and the epilogue reads the residual per tile row.
// CHECK-LABEL: func.func @conv_residual
// CHECK:           loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:          loop.for %{{.*}} axis "r2" kind unrolled {
// CHECK-NEXT:            loop.for %[[OC:.*]] = %{{.*}} axis "i1.i" kind unrolled {
// CHECK-NEXT:              loop.for %{{.*}} axis "i3.i" kind vectorized {
// CHECK-NEXT:                loop.block "conv2d"
// CHECK:                 loop.block "residual" reads(%{{.*}}, %res : memref<4x6xf32>, memref<1x4x6x6xf32>) writes(%out : memref<1x4x6x6xf32>)
func.func @conv_residual(%x: memref<1x2x8x8xf32>, %w: memref<4x2x3x3xf32>, %res: memref<1x4x6x6xf32>, %out: memref<1x4x6x6xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c6 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x2x8x8xf32>, memref<4x2x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %x[%i0, %r0, %0, %1] : memref<1x2x8x8xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<4x2x3x3xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %5 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %6 = arith.addf %5, %4 : f32
                  loop.store %6, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "residual" reads(%acc, %res : memref<1xf32>, memref<1x4x6x6xf32>) writes(%out : memref<1x4x6x6xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %7 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %8 = loop.load %res[%i0, %i1, %i2, %i3] : memref<1x4x6x6xf32> -> f32
            %9 = arith.addf %7, %8 : f32
            loop.store %9, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x4x6x6xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A 3x3/2 max pool: its window reads the input two columns apart per output column, which the
// vectorizer reads as contiguous vectors and shuffles, so the nest gets a reduction's register
// tile (4 rows unrolled x 4 columns vectorized) like a contiguous one; channels run in parallel.
// Its `maximumf` is marked `nsz` (a reduction: the sign of a zero maximum is free) with the
// accumulator second, so that it lowers to a NaN test of the new value and `maxps`.

// CHECK-LABEL: func.func @max_pool_stride2
// CHECK:         loop.for %[[C:.*]] = %{{.*}} axis "i1" kind parallel {
// CHECK-NEXT:      %[[TILE:.*]] = loop.alloc local : memref<4x4xf32>
// CHECK:           loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:          loop.for %[[RI:.*]] = %{{.*}} axis "i2.i" kind unrolled {
// CHECK-NEXT:            loop.for %[[CI:.*]] = %{{.*}} axis "i3.i" kind vectorized {
// CHECK:                   arith.muli %[[CI]], %{{.*}} : index
// CHECK:                   %[[V:.*]] = loop.load %x[%{{.*}}, %[[C]], %{{.*}}, %{{.*}}] : memref<1x2x9x9xf32> -> f32
// CHECK-NEXT:              %[[ACC:.*]] = loop.load %[[TILE]]
// CHECK-NEXT:              %[[M:.*]] = arith.maximumf %[[V]], %[[ACC]] fastmath<nsz> : f32
// CHECK-NEXT:              loop.store %[[M]], %[[TILE]][%[[RI]], %[[CI]]] : f32 -> memref<4x4xf32>
// CHECK:           loop.block "max_pool2d.write" reads(%[[TILE]] : memref<4x4xf32>) writes(%out : memref<1x2x4x4xf32>)
func.func @max_pool_stride2(%x: memref<1x2x9x9xf32>, %out: memref<1x2x4x4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c4 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c4 step %c1 axis "i3" {
          loop.block "max_pool2d_init" reads() writes(%out : memref<1x2x4x4xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0xff800000 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x4x4xf32>
          }
          loop.for %r0 = %c0 to %c3 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.block "max_pool2d" reads(%x : memref<1x2x9x9xf32>) writes(%out : memref<1x2x4x4xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %0 = arith.constant 2 : index
                %1 = arith.muli %i2, %0 : index
                %2 = arith.addi %1, %r0 : index
                %3 = arith.muli %i3, %0 : index
                %4 = arith.addi %3, %r1 : index
                %5 = loop.load %x[%i0, %i1, %2, %4] : memref<1x2x9x9xf32> -> f32
                %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x2x4x4xf32> -> f32
                %6 = arith.maximumf %acc, %5 : f32
                loop.store %6, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x2x4x4xf32>
              }
            }
          }
        }
      }
    }
  }
  func.return
}

// -----

// A concat of three inputs along the innermost axis (TOPI's select chain over clamped loads,
// fused with a relu): split into one part per input at 16 and 48, all inside one parallel loop
// over the rows; in each, the select and the clamps fold away, only that input is loaded (at the
// induction variable, shifted back for the store), and the part is vectorized.
// CHECK-LABEL: func.func @concat_three
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "i0" kind parallel {
// CHECK:           loop.for %[[J0:.*]] = %c0 to %c16 step %c1 axis "i1" kind vectorized {
// CHECK-NEXT:        loop.block "relu" reads(%a : memref<4x16xf32>) writes(%out : memref<4x64xf32>)
// CHECK-NEXT:          loop.load %a[%{{.*}}, %[[J0]]] : memref<4x16xf32> -> f32
// CHECK-NOT:           arith.select
// CHECK:               loop.store %{{.*}}, %out[%{{.*}}, %[[J0]]] : f32 -> memref<4x64xf32>
// CHECK:           loop.for %[[J1:.*]] = %c0{{.*}} to %c32 step %c1{{.*}} axis "i1" kind vectorized {
// CHECK-NEXT:        loop.block "relu" reads(%b : memref<4x32xf32>) writes(%out : memref<4x64xf32>)
// CHECK-NEXT:          %[[OFFSET1:.*]] = arith.constant 16 : index
// CHECK-NEXT:          %[[AT1:.*]] = arith.addi %[[J1]], %[[OFFSET1]] : index
// CHECK-NEXT:          loop.load %b[%{{.*}}, %[[J1]]] : memref<4x32xf32> -> f32
// CHECK-NOT:           arith.select
// CHECK:               loop.store %{{.*}}, %out[%{{.*}}, %[[AT1]]] : f32 -> memref<4x64xf32>
// CHECK:           loop.for %[[J2:.*]] = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} axis "i1" kind vectorized {
// CHECK-NEXT:        loop.block "relu" reads(%c : memref<4x16xf32>) writes(%out : memref<4x64xf32>)
// CHECK-NEXT:          %[[OFFSET2:.*]] = arith.constant 48 : index
// CHECK-NEXT:          %[[AT2:.*]] = arith.addi %[[J2]], %[[OFFSET2]] : index
// CHECK-NEXT:          loop.load %c[%{{.*}}, %[[J2]]] : memref<4x16xf32> -> f32
// CHECK-NOT:           arith.select
// CHECK:               loop.store %{{.*}}, %out[%{{.*}}, %[[AT2]]] : f32 -> memref<4x64xf32>
// CHECK-NOT:     loop.for {{.*}} kind parallel
// CHECK:         func.return
func.func @concat_three(%a: memref<4x16xf32>, %b: memref<4x32xf32>, %c: memref<4x16xf32>, %out: memref<4x64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c64 step %c1 axis "i1" {
      loop.block "relu" reads(%c, %b, %a : memref<4x16xf32>, memref<4x32xf32>, memref<4x16xf32>) writes(%out : memref<4x64xf32>) spatial ["i0", "i1"] {
        %0 = arith.constant 48 : index
        %1 = arith.subi %i1, %0 : index
        %2 = arith.constant 15 : index
        %3 = arith.minui %1, %2 : index
        %4 = loop.load %c[%i0, %3] : memref<4x16xf32> -> f32
        %5 = arith.constant 16 : index
        %6 = arith.subi %i1, %5 : index
        %7 = arith.constant 31 : index
        %8 = arith.minui %6, %7 : index
        %9 = loop.load %b[%i0, %8] : memref<4x32xf32> -> f32
        %10 = arith.cmpi ult, %i1, %0 : index
        %11 = arith.select %10, %9, %4 : f32
        %12 = arith.minui %i1, %2 : index
        %13 = loop.load %a[%i0, %12] : memref<4x16xf32> -> f32
        %14 = arith.cmpi ult, %i1, %5 : index
        %15 = arith.select %14, %13, %11 : f32
        %16 = arith.constant 0.000000e+00 : f32
        %17 = arith.maximumf %15, %16 : f32
        loop.store %17, %out[%i0, %i1] : f32 -> memref<4x64xf32>
      }
    }
  }
  func.return
}

// -----

// A concat along the channels of NCHW inputs (DenseNet's), batch 1: the parts (4 and 2
// channels, common divisor 2) run inside one parallel loop over 2 slices of the channels; slice
// %s of a part copies its channels s * size + c (size: the part's channels / 2), each a whole
// 2x3 plane as one contiguous run of 6 (the plane's rows merged); the second part's clamp and
// its `- 4` fold away, its store adds the offset 4.
// CHECK-LABEL: func.func @concat_channels
// CHECK:         loop.for %[[S:.*]] = %c0 to %c2 step %c1 axis "i1.s" kind parallel {
// CHECK:           %[[X0:.*]] = memref.collapse_shape %x0 {{.*}} into memref<1x4x6xf32>
// CHECK:           %[[OUT0:.*]] = memref.collapse_shape %out {{.*}} into memref<1x6x6xf32>
// CHECK:             loop.for %[[C0:.*]] = %c0 to %c2 step %c1 axis "i1.c" {
// CHECK-NEXT:          loop.for %[[P0:.*]] = %c0 to %c6 step %c1 axis "i2.i3.fused" kind vectorized {
// CHECK:                 %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:            %[[START:.*]] = arith.muli %[[S]], %[[TWO]] : index
// CHECK-NEXT:            %[[AT0:.*]] = arith.addi %[[C0]], %[[START]] : index
// CHECK-NEXT:            loop.load %[[X0]][%{{.*}}, %[[AT0]], %[[P0]]]
// CHECK-NOT:             arith.select
// CHECK:                 loop.store %{{.*}}, %[[OUT0]][%{{.*}}, %[[AT0]], %[[P0]]]
// CHECK:           %[[X1:.*]] = memref.collapse_shape %x1 {{.*}} into memref<1x2x6xf32>
// CHECK:           %[[OUT1:.*]] = memref.collapse_shape %out {{.*}} into memref<1x6x6xf32>
// CHECK:             loop.for %[[C1:.*]] = %c0 to %c1 step %c1 axis "i1.c" {
// CHECK-NEXT:          loop.for %[[P1:.*]] = %c0 to %c6 step %c1 axis "i2.i3.fused" kind vectorized {
// CHECK:                 %[[AT1:.*]] = arith.addi %[[C1]], %[[S]] : index
// CHECK-NEXT:            %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:            %[[OUTAT1:.*]] = arith.addi %[[AT1]], %[[FOUR]] : index
// CHECK-NEXT:            loop.load %[[X1]][%{{.*}}, %[[AT1]], %[[P1]]]
// CHECK-NOT:             arith.minui
// CHECK:                 loop.store %{{.*}}, %[[OUT1]][%{{.*}}, %[[OUTAT1]], %[[P1]]]
// CHECK-NOT:     loop.for {{.*}} kind parallel
// CHECK:         func.return
func.func @concat_channels(%x0: memref<1x4x2x3xf32>, %x1: memref<1x2x2x3xf32>, %out: memref<1x6x2x3xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c6 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c2 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c3 step %c1 axis "i3" {
          loop.block "relu" reads(%x1, %x0 : memref<1x2x2x3xf32>, memref<1x4x2x3xf32>) writes(%out : memref<1x6x2x3xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 4 : index
            %1 = arith.subi %i1, %0 : index
            %2 = arith.constant 1 : index
            %3 = arith.minui %1, %2 : index
            %4 = loop.load %x1[%i0, %3, %i2, %i3] : memref<1x2x2x3xf32> -> f32
            %5 = arith.constant 3 : index
            %6 = arith.minui %i1, %5 : index
            %7 = loop.load %x0[%i0, %6, %i2, %i3] : memref<1x4x2x3xf32> -> f32
            %8 = arith.cmpi ult, %i1, %0 : index
            %9 = arith.select %8, %7, %4 : f32
            %10 = arith.constant 0.000000e+00 : f32
            %11 = arith.maximumf %9, %10 : f32
            loop.store %11, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x6x2x3xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// A row reduction (a sum over the contiguous last axis, as softmax's and layer norm's) shorter
// than two vectors (24 of 16 lanes): no register tile and no partial sums apply, so the rows run
// in parallel and the update's add may reassociate (`fastmath<reassoc>`); the init and the rest
// of the update are unchanged.
// CHECK-LABEL: func.func @row_sum
// CHECK:         loop.for %{{.*}} axis "i" kind parallel {
// CHECK:           loop.block "sum_init"
// CHECK:           loop.for %{{.*}} axis "r" {
// CHECK:             loop.block "sum"
// CHECK:               %[[E:.*]] = math.exp %{{.*}} : f32
// CHECK-NEXT:          %[[ACC:.*]] = loop.load %out[%{{.*}}] : memref<64xf32> -> f32
// CHECK-NEXT:          %{{.*}} = arith.addf %[[ACC]], %[[E]] fastmath<reassoc> : f32
func.func @row_sum(%x: memref<64x24xf32>, %out: memref<64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 24 : index
  loop.for %i = %c0 to %c64 step %c1 axis "i" {
    loop.block "sum_init" reads() writes(%out : memref<64xf32>) spatial ["i"] {
      %zero = arith.constant 0.000000e+00 : f32
      loop.store %zero, %out[%i] : f32 -> memref<64xf32>
    }
    loop.for %r = %c0 to %c128 step %c1 axis "r" {
      loop.block "sum" reads(%x : memref<64x24xf32>) writes(%out : memref<64xf32>) spatial ["i"] reduction ["r"] {
        %v = loop.load %x[%i, %r] : memref<64x24xf32> -> f32
        %e = math.exp %v : f32
        %acc = loop.load %out[%i] : memref<64xf32> -> f32
        %s = arith.addf %acc, %e : f32
        loop.store %s, %out[%i] : f32 -> memref<64xf32>
      }
    }
  }
  func.return
}

// -----

// The same sum over 128-wide rows: 8 whole vectors, fewer than the 2 x 4 x ... accumulators that
// would keep the adders busy for a long row, so the partial sums take one accumulator per
// vector (8 x 16); the one block's values are the partials (no loop over blocks, no adds of
// zeros: the exps are stored, not added), and the partials combine pairwise.
// CHECK-LABEL: func.func @row_sum_of_eight_vectors
// CHECK:         loop.for %{{.*}} axis "i" kind parallel {
// CHECK:           %[[PART:.*]] = loop.alloc local : memref<8x16xf32>
// CHECK-NEXT:      loop.for %[[V:.*]] = %c0 to %c8 step %c1 axis "r.v" kind unrolled {
// CHECK-NEXT:        loop.for %[[L:.*]] = %c0 to %c16 step %c1 axis "r.l" kind vectorized {
// CHECK:               loop.block "sum.partials" reads(%x : memref<64x128xf32>) writes(%[[PART]] : memref<8x16xf32>)
// CHECK-NEXT:            %[[X:.*]] = loop.load %x
// CHECK-NEXT:            %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:            loop.store %[[E]], %[[PART]][%[[V]], %[[L]]]
// CHECK-NOT:       axis "r.o"
// CHECK:           loop.block "sum.combine"
func.func @row_sum_of_eight_vectors(%x: memref<64x128xf32>, %out: memref<64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  loop.for %i = %c0 to %c64 step %c1 axis "i" {
    loop.block "sum_init" reads() writes(%out : memref<64xf32>) spatial ["i"] {
      %zero = arith.constant 0.000000e+00 : f32
      loop.store %zero, %out[%i] : f32 -> memref<64xf32>
    }
    loop.for %r = %c0 to %c128 step %c1 axis "r" {
      loop.block "sum" reads(%x : memref<64x128xf32>) writes(%out : memref<64xf32>) spatial ["i"] reduction ["r"] {
        %v = loop.load %x[%i, %r] : memref<64x128xf32> -> f32
        %e = math.exp %v : f32
        %acc = loop.load %out[%i] : memref<64xf32> -> f32
        %s = arith.addf %acc, %e : f32
        loop.store %s, %out[%i] : f32 -> memref<64xf32>
      }
    }
  }
  func.return
}

// -----

// A GEMM's vector width is the target's: the innermost column loop of the register tile runs 8
// f32 lanes with AVX2 (znver3) and 16 with AVX-512, and the B panels are two vectors wide.

// ZNVER3-LABEL: func.func @lanes_follow_the_target
// ZNVER3:         loop.alloc global : memref<4x8x16xf32>
// ZNVER3:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i1.l" kind vectorized {
// AVX512-LABEL: func.func @lanes_follow_the_target
// AVX512:         loop.alloc global : memref<2x8x32xf32>
// AVX512:         loop.for %{{.*}} = %c0 to %c16 step %c1 axis "i1.l" kind vectorized {
func.func @lanes_follow_the_target(%a: memref<4x8xf32>, %b: memref<8x64xf32>, %out: memref<4x64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c64 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<4x8xf32>, memref<8x64xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<4x8xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<8x64xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %3 = arith.addf %acc_1, %2 : f32
          loop.store %3, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "store" reads(%acc : memref<1xf32>) writes(%out : memref<4x64xf32>) spatial ["i0", "i1"] {
        %4 = loop.load %acc[%c0] : memref<1xf32> -> f32
        loop.store %4, %out[%i0, %i1] : f32 -> memref<4x64xf32>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}

// -----

// A pad of a slice (ONNX Pad [0,1,1, 0,0,-1], the slice inlined): the pad nest reads the
// unsliced 1x2x3 buffer, but its condition lets only the slice's 2 columns through, so the
// interior copy runs over 2 columns (not 3, which wrote past the interior into the padding).
// The border is the row above the interior and the column left of it (nothing after either).
// Every part is too narrow to vectorize: each runs unrolled, its loop over rows too.

// CHECK-LABEL: func.func @pad_of_slice_interior_extent
// CHECK:         loop.for %{{.*}} = %c0 to %c1 step %c1 axis "i1" kind unrolled {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c3 step %c1 axis "i2" kind unrolled
// CHECK-NEXT:        loop.block "pad.fill"
// CHECK:         loop.for %{{.*}} = %c0 to %c2 step %c1 axis "i1" kind unrolled {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c1 step %c1 axis "i2" kind unrolled
// CHECK-NEXT:        loop.block "pad.fill"
// CHECK-NOT:     loop.block "pad.fill"
// CHECK:         loop.for %[[ROW:.*]] = %c0 to %c2 step %c1 axis "i1" kind unrolled {
// CHECK-NEXT:      loop.for %[[COL:.*]] = %c0 to %c2 step %c1 axis "i2" kind unrolled {
// CHECK-NEXT:        loop.block "pad" reads(%x : memref<1x2x3xf32>) writes(%out : memref<1x3x3xf32>)
// CHECK-NEXT:          loop.load %x[%{{.*}}, %[[ROW]], %[[COL]]] : memref<1x2x3xf32> -> f32
func.func @pad_of_slice_interior_extent(%x: memref<1x2x3xf32>, %out: memref<1x3x3xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c3 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c3 step %c1 axis "i2" {
        loop.block "pad" reads(%x : memref<1x2x3xf32>) writes(%out : memref<1x3x3xf32>) spatial ["i0", "i1", "i2"] {
          %0 = arith.constant 1 : index
          %1 = arith.subi %i1, %0 : index
          %2 = arith.subi %i2, %0 : index
          %3 = arith.constant 2 : index
          %4 = arith.cmpi ult, %1, %3 : index
          %5 = arith.minui %1, %0 : index
          %6 = arith.cmpi ult, %2, %3 : index
          %7 = arith.andi %4, %6 : i1
          %8 = arith.minui %2, %0 : index
          %9 = loop.load %x[%i0, %5, %8] : memref<1x2x3xf32> -> f32
          %10 = arith.constant 0.000000e+00 : f32
          %11 = arith.select %7, %9, %10 : f32
          loop.store %11, %out[%i0, %i1, %i2] : f32 -> memref<1x3x3xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A whole-tensor sum of 1000 floats (no spatial loop: it ran scalar, one accumulator) longer
// than a block of 16 lanes x 8 accumulators (AVX-512, fma_units 2 x fma_latency 4): an 8x16
// tile of partial sums starts as the first block's values and accumulates the next blocks of
// 128 (vectors unrolled, lanes vectorized), is folded
// pairwise (vectors, then lanes: the lane halvings of 8, 4 and 2 as vectorized loops, narrower
// vectors, where scalar folds went through a lane extract each) and added to the output once;
// the 1000 mod 128 tail's whole
// vectors (896 to 992) accumulate into the first row of partials, the last 8 values as one
// vector of 8 lanes into its first lanes (no scalar loop is left).
// CHECK-LABEL: func.func @long_sum
// CHECK:         %[[P:.*]] = loop.alloc local : memref<8x16xf32>
// CHECK:         loop.block "sum.partials" reads(%x : memref<1000xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK-NEXT:      %[[X0:.*]] = loop.load %x
// CHECK-NEXT:      loop.store %[[X0]], %[[P]]
// CHECK:         loop.for %[[RO:.*]] = %c128 to %c896 step %c128 axis "r.o" {
// CHECK-NEXT:      loop.for %[[V:.*]] = %c0 to %c8 step %c1 axis "r.v" kind unrolled {
// CHECK-NEXT:        loop.for %[[L:.*]] = %c0 to %c16 step %c1 axis "r.l" kind vectorized {
// CHECK:               loop.block "sum" reads(%x : memref<1000xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK:                 loop.load %[[P]][%[[V]], %[[L]]]
// CHECK:         loop.for %[[RT:.*]] = %c896 to %c992 step %c16 axis "r.t" {
// CHECK-NEXT:      loop.for %[[V1:.*]] = %c0 to %c1 step %c1 axis "r.v" kind unrolled {
// CHECK-NEXT:        loop.for %[[L1:.*]] = %c0 to %c16 step %c1 axis "r.l" kind vectorized {
// CHECK:               loop.block "sum" reads(%x : memref<1000xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK:                 loop.load %[[P]][%[[V1]], %[[L1]]]
// CHECK:         loop.for %[[V2:.*]] = %c0 to %c1 step %c1 axis "r.v" kind unrolled {
// CHECK-NEXT:      loop.for %[[L2:.*]] = %c0 to %c8 step %c1 axis "r.l" kind vectorized {
// CHECK:             %[[R2:.*]] = arith.addi %{{.*}}, %[[L2]] : index
// CHECK:             loop.block "sum" reads(%x : memref<1000xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK-NEXT:          loop.load %x[%[[R2]]]
// CHECK-NEXT:          loop.load %[[P]][%[[V2]], %[[L2]]]
// CHECK:         loop.block "sum.combine" reads(%[[P]] : memref<8x16xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "r.l" kind vectorized {
// CHECK:         loop.for %{{.*}} = %c0 to %c4 step %c1 axis "r.l" kind vectorized {
// CHECK:         loop.for %{{.*}} = %c0 to %c2 step %c1 axis "r.l" kind vectorized {
// CHECK:         loop.for %{{.*}} = %c0 to %c1 step %c1 axis "r.l" kind unrolled {
// CHECK:         loop.block "sum.combine" reads(%[[P]], %out : memref<8x16xf32>, memref<f32>) writes(%out : memref<f32>)
// CHECK:         loop.dealloc %[[P]] : memref<8x16xf32>
// CHECK-NOT:     axis "r" {
func.func @long_sum(%x: memref<1000xf32>, %out: memref<f32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  loop.block "sum_init" reads() writes(%out : memref<f32>) {
    %zero = arith.constant 0.000000e+00 : f32
    loop.store %zero, %out[] : f32 -> memref<f32>
  }
  loop.for %r = %c0 to %c1000 step %c1 axis "r" {
    loop.block "sum" reads(%x : memref<1000xf32>) writes(%out : memref<f32>) reduction ["r"] {
      %v = loop.load %x[%r] : memref<1000xf32> -> f32
      %acc = loop.load %out[] : memref<f32> -> f32
      %s = arith.addf %acc, %v : f32
      loop.store %s, %out[] : f32 -> memref<f32>
    }
  }
  func.return
}

// -----

// A whole-tensor max of 1000 floats: the same tile, its partials starting as the first block's
// values (not combined with -inf), folded and combined with `arith.maximumf` marked `nsz` (the sign of a zero
// maximum is as free as the reduction's order), the partial its second operand (the lowering's
// NaN test then falls on the loaded value, off the chain through the partial).
// CHECK-LABEL: func.func @long_max
// CHECK:         %[[P:.*]] = loop.alloc local : memref<8x16xf32>
// CHECK:         loop.block "max.partials" reads(%x : memref<1000xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK-NEXT:      %[[X0:.*]] = loop.load %x
// CHECK-NEXT:      loop.store %[[X0]], %[[P]]
// CHECK:         loop.for %{{.*}} = %c128 to %c896 step %c128 axis "r.o" {
// CHECK:               loop.block "max" reads(%x : memref<1000xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK-NEXT:              %[[XV:.*]] = loop.load %x
// CHECK-NEXT:              %[[ACC:.*]] = loop.load %[[P]]
// CHECK-NEXT:              arith.maximumf %[[XV]], %[[ACC]] fastmath<nsz> : f32
// CHECK:         loop.block "max.combine" reads(%[[P]] : memref<8x16xf32>) writes(%[[P]] : memref<8x16xf32>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK:         loop.block "max.combine" reads(%[[P]], %out : memref<8x16xf32>, memref<f32>) writes(%out : memref<f32>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK-NOT:     axis "r" {
func.func @long_max(%x: memref<1000xf32>, %out: memref<f32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  loop.block "max_init" reads() writes(%out : memref<f32>) {
    %lowest = arith.constant 0xFF800000 : f32
    loop.store %lowest, %out[] : f32 -> memref<f32>
  }
  loop.for %r = %c0 to %c1000 step %c1 axis "r" {
    loop.block "max" reads(%x : memref<1000xf32>) writes(%out : memref<f32>) reduction ["r"] {
      %v = loop.load %x[%r] : memref<1000xf32> -> f32
      %acc = loop.load %out[] : memref<f32> -> f32
      %s = arith.maximumf %acc, %v : f32
      loop.store %s, %out[] : f32 -> memref<f32>
    }
  }
  func.return
}

// -----

// A row sum shorter than two vectors (31 values, 16 lanes) keeps the reassociating fallback:
// no tile of partials.
// CHECK-LABEL: func.func @negative_short_row_sum
// CHECK-NOT:     loop.alloc
// CHECK:         arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @negative_short_row_sum(%x: memref<4x31xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c128 = arith.constant 31 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "sum_init" reads() writes(%out : memref<4xf32>) spatial ["i"] {
      %zero = arith.constant 0.000000e+00 : f32
      loop.store %zero, %out[%i] : f32 -> memref<4xf32>
    }
    loop.for %r = %c0 to %c128 step %c1 axis "r" {
      loop.block "sum" reads(%x : memref<4x31xf32>) writes(%out : memref<4xf32>) spatial ["i"] reduction ["r"] {
        %v = loop.load %x[%i, %r] : memref<4x31xf32> -> f32
        %acc = loop.load %out[%i] : memref<4xf32> -> f32
        %s = arith.addf %acc, %v : f32
        loop.store %s, %out[%i] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}


// -----

// The nests inside a scan's time loop (annotated dlc.scan) are scheduled like a function's; the
// pack of the GEMM's B, which the loop never writes, is allocated and filled once before the
// time loop and freed after it; the time loop stays serial.
// CHECK-LABEL: func.func @scan_loop_pack_hoisted
// CHECK:         %[[PACKED:.*]] = loop.alloc global : memref<1x16x64xf32>
// CHECK-NEXT:    loop.for %{{.*}} axis "k"
// CHECK:           loop.block "hr.pack"
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "rnn_t" annotations {dlc.scan} {
// CHECK-NOT:       hr.pack
// CHECK:           loop.block "hr" reads(%{{.*}}, %[[PACKED]] : memref<2x16xf32>, memref<1x16x64xf32>)
// CHECK:           loop.block "h"
// CHECK:           loop.block "rnn_state0"
// CHECK:         loop.dealloc %[[PACKED]] : memref<1x16x64xf32>
func.func @scan_loop_pack_hoisted(%h0: memref<2x16xf32>, %w: memref<16x64xf32>, %xs: memref<4x2x16xf32>, %out: memref<2x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c4 = arith.constant 4 : index
  loop.for %i0 = %c0 to %c2 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.block "rnn_init0" reads(%h0 : memref<2x16xf32>) writes(%out : memref<2x16xf32>) spatial ["i0", "i1"] {
        %0 = loop.load %h0[%i0, %i1] : memref<2x16xf32> -> f32
        loop.store %0, %out[%i0, %i1] : f32 -> memref<2x16xf32>
      }
    }
  }
  %hr = loop.alloc global : memref<2x64xf32>
  %next = loop.alloc global : memref<2x16xf32>
  loop.for %t = %c0 to %c4 step %c1 axis "rnn_t" annotations {dlc.scan} {
    loop.for %i = %c0 to %c2 step %c1 axis "i" {
      loop.for %j = %c0 to %c64 step %c1 axis "j" {
        loop.block "hr_init" reads() writes(%hr : memref<2x64xf32>) spatial ["i", "j"] {
          %init = arith.constant 0.000000e+00 : f32
          loop.store %init, %hr[%i, %j] : f32 -> memref<2x64xf32>
        }
        loop.for %k = %c0 to %c16 step %c1 axis "k" {
          loop.block "hr" reads(%out, %w : memref<2x16xf32>, memref<16x64xf32>) writes(%hr : memref<2x64xf32>) spatial ["i", "j"] reduction ["k"] {
            %a = loop.load %out[%i, %k] : memref<2x16xf32> -> f32
            %b = loop.load %w[%k, %j] : memref<16x64xf32> -> f32
            %p = arith.mulf %a, %b : f32
            %acc = loop.load %hr[%i, %j] : memref<2x64xf32> -> f32
            %1 = arith.addf %acc, %p : f32
            loop.store %1, %hr[%i, %j] : f32 -> memref<2x64xf32>
          }
        }
      }
    }
    loop.for %i_1 = %c0 to %c2 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c16 step %c1 axis "j" {
        loop.block "h" reads(%hr, %xs : memref<2x64xf32>, memref<4x2x16xf32>) writes(%next : memref<2x16xf32>) spatial ["i", "j"] {
          %a_1 = loop.load %hr[%i_1, %j_1] : memref<2x64xf32> -> f32
          %b_1 = loop.load %xs[%t, %i_1, %j_1] : memref<4x2x16xf32> -> f32
          %s = arith.addf %a_1, %b_1 : f32
          loop.store %s, %next[%i_1, %j_1] : f32 -> memref<2x16xf32>
        }
      }
    }
    loop.for %i0_1 = %c0 to %c2 step %c1 axis "i0" {
      loop.for %i1_1 = %c0 to %c16 step %c1 axis "i1" {
        loop.block "rnn_state0" reads(%next : memref<2x16xf32>) writes(%out : memref<2x16xf32>) spatial ["i0", "i1"] {
          %2 = loop.load %next[%i0_1, %i1_1] : memref<2x16xf32> -> f32
          loop.store %2, %out[%i0_1, %i1_1] : f32 -> memref<2x16xf32>
        }
      }
    }
  }
  loop.dealloc %hr : memref<2x64xf32>
  loop.dealloc %next : memref<2x16xf32>
  func.return
}

// A nest in a scan's time loop that runs at least 2^20 block iterations per step (a batch-16
// recurrence GEMM: 16x1024 outputs, 256 terms each) gets a parallel loop; the step's small
// nests stay on one thread, and the time loop stays serial.
// CHECK-LABEL: func.func @scan_loop_large_step_parallel
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "rnn_t" annotations {dlc.scan} {
// CHECK:           kind parallel
// CHECK:           loop.block "hr" reads
// CHECK-NOT:       kind parallel
// CHECK:           loop.block "h" reads
// CHECK-NOT:       kind parallel
// CHECK:           loop.block "rnn_state0"
func.func @scan_loop_large_step_parallel(%h0: memref<16x256xf32>, %w: memref<256x1024xf32>, %xs: memref<4x16x256xf32>, %out: memref<16x256xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 256 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 16 : index
  %c64 = arith.constant 1024 : index
  %c4 = arith.constant 4 : index
  loop.for %i0 = %c0 to %c2 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.block "rnn_init0" reads(%h0 : memref<16x256xf32>) writes(%out : memref<16x256xf32>) spatial ["i0", "i1"] {
        %0 = loop.load %h0[%i0, %i1] : memref<16x256xf32> -> f32
        loop.store %0, %out[%i0, %i1] : f32 -> memref<16x256xf32>
      }
    }
  }
  %hr = loop.alloc global : memref<16x1024xf32>
  %next = loop.alloc global : memref<16x256xf32>
  loop.for %t = %c0 to %c4 step %c1 axis "rnn_t" annotations {dlc.scan} {
    loop.for %i = %c0 to %c2 step %c1 axis "i" {
      loop.for %j = %c0 to %c64 step %c1 axis "j" {
        loop.block "hr_init" reads() writes(%hr : memref<16x1024xf32>) spatial ["i", "j"] {
          %init = arith.constant 0.000000e+00 : f32
          loop.store %init, %hr[%i, %j] : f32 -> memref<16x1024xf32>
        }
        loop.for %k = %c0 to %c16 step %c1 axis "k" {
          loop.block "hr" reads(%out, %w : memref<16x256xf32>, memref<256x1024xf32>) writes(%hr : memref<16x1024xf32>) spatial ["i", "j"] reduction ["k"] {
            %a = loop.load %out[%i, %k] : memref<16x256xf32> -> f32
            %b = loop.load %w[%k, %j] : memref<256x1024xf32> -> f32
            %p = arith.mulf %a, %b : f32
            %acc = loop.load %hr[%i, %j] : memref<16x1024xf32> -> f32
            %1 = arith.addf %acc, %p : f32
            loop.store %1, %hr[%i, %j] : f32 -> memref<16x1024xf32>
          }
        }
      }
    }
    loop.for %i_1 = %c0 to %c2 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c16 step %c1 axis "j" {
        loop.block "h" reads(%hr, %xs : memref<16x1024xf32>, memref<4x16x256xf32>) writes(%next : memref<16x256xf32>) spatial ["i", "j"] {
          %a_1 = loop.load %hr[%i_1, %j_1] : memref<16x1024xf32> -> f32
          %b_1 = loop.load %xs[%t, %i_1, %j_1] : memref<4x16x256xf32> -> f32
          %s = arith.addf %a_1, %b_1 : f32
          loop.store %s, %next[%i_1, %j_1] : f32 -> memref<16x256xf32>
        }
      }
    }
    loop.for %i0_1 = %c0 to %c2 step %c1 axis "i0" {
      loop.for %i1_1 = %c0 to %c16 step %c1 axis "i1" {
        loop.block "rnn_state0" reads(%next : memref<16x256xf32>) writes(%out : memref<16x256xf32>) spatial ["i0", "i1"] {
          %2 = loop.load %next[%i0_1, %i1_1] : memref<16x256xf32> -> f32
          loop.store %2, %out[%i0_1, %i1_1] : f32 -> memref<16x256xf32>
        }
      }
    }
  }
  loop.dealloc %hr : memref<16x1024xf32>
  loop.dealloc %next : memref<16x256xf32>
  func.return
}

// -----

// The same time loop writing its state through a `memref.collapse_shape` view (as the
// elementwise rule's merged rows do): the nests that fill %tile read the state, which the loop
// writes through the view, so they stay in the loop (once, the view hid the write and the
// fill ran once before the loop: LSTM/GRU/RNN results were wrong from the second step).
// CHECK-LABEL: func.func @scan_loop_fill_reading_a_view_target_stays
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "rnn_t" annotations {dlc.scan} {
// CHECK:           loop.alloc local : memref<2x16xf32>
// CHECK:           loop.block "fill"
// CHECK:           loop.block "rnn_state0"
// CHECK:           loop.dealloc
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @scan_loop_fill_reading_a_view_target_stays(%out: memref<2x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %flat = memref.collapse_shape %out [[0, 1]] : memref<2x16xf32> into memref<32xf32>
  loop.for %t = %c0 to %c4 step %c1 axis "rnn_t" annotations {dlc.scan} {
    %tile = loop.alloc local : memref<2x16xf32>
    loop.for %i = %c0 to %c2 step %c1 axis "i" {
      loop.for %j = %c0 to %c16 step %c1 axis "j" {
        loop.block "fill" reads(%out : memref<2x16xf32>) writes(%tile : memref<2x16xf32>) spatial ["i", "j"] {
          %a = loop.load %out[%i, %j] : memref<2x16xf32> -> f32
          %s = arith.addf %a, %a : f32
          loop.store %s, %tile[%i, %j] : f32 -> memref<2x16xf32>
        }
      }
    }
    loop.for %k = %c0 to %c32 step %c1 axis "k" {
      loop.block "rnn_state0" reads(%tile : memref<2x16xf32>) writes(%flat : memref<32xf32>) spatial ["k"] {
        %q = arith.divui %k, %c16 : index
        %r = arith.remui %k, %c16 : index
        %v = loop.load %tile[%q, %r] : memref<2x16xf32> -> f32
        loop.store %v, %flat[%k] : f32 -> memref<32xf32>
      }
    }
    loop.dealloc %tile : memref<2x16xf32>
  }
  func.return
}

// -----

// The same scan with its state written through a collapsed view of %out (as merged rows write
// it): a write of the view is a write of %out, so the GEMM that reads %out, and the register
// tile it fills, stay inside the time loop (the 8-column %w is not packed).
// CHECK-LABEL: func.func @scan_state_written_through_view
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "rnn_t" annotations {dlc.scan} {
// CHECK-NEXT:      %[[TILE:.*]] = loop.alloc local
// CHECK:           loop.block "hr" reads(%out, %w : memref<2x16xf32>, memref<16x8xf32>) writes(%[[TILE]]
// CHECK:           loop.block "rnn_state0"
func.func @scan_state_written_through_view(%h0: memref<2x16xf32>, %w: memref<16x8xf32>, %xs: memref<4x2x16xf32>, %out: memref<2x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  loop.for %i0 = %c0 to %c2 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.block "rnn_init0" reads(%h0 : memref<2x16xf32>) writes(%out : memref<2x16xf32>) spatial ["i0", "i1"] {
        %0 = loop.load %h0[%i0, %i1] : memref<2x16xf32> -> f32
        loop.store %0, %out[%i0, %i1] : f32 -> memref<2x16xf32>
      }
    }
  }
  %hr = loop.alloc global : memref<2x8xf32>
  %next = loop.alloc global : memref<2x16xf32>
  loop.for %t = %c0 to %c4 step %c1 axis "rnn_t" annotations {dlc.scan} {
    loop.for %i = %c0 to %c2 step %c1 axis "i" {
      loop.for %j = %c0 to %c8 step %c1 axis "j" {
        loop.block "hr_init" reads() writes(%hr : memref<2x8xf32>) spatial ["i", "j"] {
          %init = arith.constant 0.000000e+00 : f32
          loop.store %init, %hr[%i, %j] : f32 -> memref<2x8xf32>
        }
        loop.for %k = %c0 to %c16 step %c1 axis "k" {
          loop.block "hr" reads(%out, %w : memref<2x16xf32>, memref<16x8xf32>) writes(%hr : memref<2x8xf32>) spatial ["i", "j"] reduction ["k"] {
            %a = loop.load %out[%i, %k] : memref<2x16xf32> -> f32
            %b = loop.load %w[%k, %j] : memref<16x8xf32> -> f32
            %p = arith.mulf %a, %b : f32
            %acc = loop.load %hr[%i, %j] : memref<2x8xf32> -> f32
            %1 = arith.addf %acc, %p : f32
            loop.store %1, %hr[%i, %j] : f32 -> memref<2x8xf32>
          }
        }
      }
    }
    loop.for %i_1 = %c0 to %c2 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c16 step %c1 axis "j" {
        loop.block "h" reads(%hr, %xs : memref<2x8xf32>, memref<4x2x16xf32>) writes(%next : memref<2x16xf32>) spatial ["i", "j"] {
          %a_1 = loop.load %hr[%i_1, %j_1] : memref<2x8xf32> -> f32
          %b_1 = loop.load %xs[%t, %i_1, %j_1] : memref<4x2x16xf32> -> f32
          %s = arith.addf %a_1, %b_1 : f32
          loop.store %s, %next[%i_1, %j_1] : f32 -> memref<2x16xf32>
        }
      }
    }
    %nv = memref.collapse_shape %next [[0 : i64, 1 : i64]] : memref<2x16xf32> into memref<32xf32>
    %ov = memref.collapse_shape %out [[0 : i64, 1 : i64]] : memref<2x16xf32> into memref<32xf32>
    loop.for %f = %c0 to %c32 step %c1 axis "f" {
      loop.block "rnn_state0" reads(%nv : memref<32xf32>) writes(%ov : memref<32xf32>) spatial ["f"] {
        %2 = loop.load %nv[%f] : memref<32xf32> -> f32
        loop.store %2, %ov[%f] : f32 -> memref<32xf32>
      }
    }
  }
  loop.dealloc %hr : memref<2x8xf32>
  loop.dealloc %next : memref<2x16xf32>
  func.return
}

// -----

// A global average pool's sum over 12x12 windows (rows of 12: too short for partial sums): the
// two reduction loops read whole rows of %x, so they merge into one loop over the 144
// contiguous elements of a collapsed view (made before the nest), long enough for 8x16 vector
// partial sums; the channels run in parallel.
// CHECK-LABEL: func.func @window_rows_merge
// CHECK:         %[[VIEW:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64, 2 : i64]] : memref<3x12x12xf32> into memref<3x144xf32>
// CHECK:         loop.for %[[C:.*]] = %c0 to %c3 step %c1 axis "i0" kind parallel {
// CHECK:           %[[P:.*]] = loop.alloc local : memref<8x16xf32>
// CHECK:           loop.for %{{.*}} = %c0 to %c8 step %c1 axis "r0.r1.fused.v" kind unrolled {
// CHECK:             loop.block "pool_sum.partials" reads(%[[VIEW]] : memref<3x144xf32>) writes(%[[P]] : memref<8x16xf32>) spatial ["i0"] reduction ["r0.r1.fused"]
// CHECK-NEXT:          loop.load %[[VIEW]][%[[C]], %{{.*}}] : memref<3x144xf32> -> f32
// CHECK:           loop.block "pool_sum.combine"

// A window that is not whole rows (10 of each row of 12) keeps its two loops.
// CHECK-LABEL: func.func @negative_partial_rows
// CHECK-NOT:     memref.collapse_shape
// CHECK:         loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:      loop.for %{{.*}} axis "r1" {
func.func @window_rows_merge(%x: memref<3x12x12xf32>, %out: memref<3xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c12 = arith.constant 12 : index
  loop.for %i0 = %c0 to %c3 step %c1 axis "i0" {
    %acc = loop.alloc local : memref<1xf32>
    loop.block "pool_sum_init" reads() writes(%acc : memref<1xf32>) spatial ["i0"] {
      %init = arith.constant 0.000000e+00 : f32
      loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
    }
    loop.for %r0 = %c0 to %c12 step %c1 axis "r0" {
      loop.for %r1 = %c0 to %c12 step %c1 axis "r1" {
        loop.block "pool_sum" reads(%x : memref<3x12x12xf32>) writes(%acc : memref<1xf32>) spatial ["i0"] reduction ["r0", "r1"] {
          %0 = loop.load %x[%i0, %r0, %r1] : memref<3x12x12xf32> -> f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %1 = arith.addf %acc_1, %0 : f32
          loop.store %1, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
    }
    loop.block "pool" reads(%acc : memref<1xf32>) writes(%out : memref<3xf32>) spatial ["i0"] {
      %2 = loop.load %acc[%c0] : memref<1xf32> -> f32
      loop.store %2, %out[%i0] : f32 -> memref<3xf32>
    }
    loop.dealloc %acc : memref<1xf32>
  }
  func.return
}

func.func @negative_partial_rows(%x: memref<3x12x12xf32>, %out: memref<3xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : index
  loop.for %i0 = %c0 to %c3 step %c1 axis "i0" {
    %acc = loop.alloc local : memref<1xf32>
    loop.block "pool_sum_init" reads() writes(%acc : memref<1xf32>) spatial ["i0"] {
      %init = arith.constant 0.000000e+00 : f32
      loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
    }
    loop.for %r0 = %c0 to %c10 step %c1 axis "r0" {
      loop.for %r1 = %c0 to %c10 step %c1 axis "r1" {
        loop.block "pool_sum" reads(%x : memref<3x12x12xf32>) writes(%acc : memref<1xf32>) spatial ["i0"] reduction ["r0", "r1"] {
          %0 = loop.load %x[%i0, %r0, %r1] : memref<3x12x12xf32> -> f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %1 = arith.addf %acc_1, %0 : f32
          loop.store %1, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
    }
    loop.block "pool" reads(%acc : memref<1xf32>) writes(%out : memref<3xf32>) spatial ["i0"] {
      %2 = loop.load %acc[%c0] : memref<1xf32> -> f32
      loop.store %2, %out[%i0] : f32 -> memref<3xf32>
    }
    loop.dealloc %acc : memref<1xf32>
  }
  func.return
}

// -----

// A 1x1 conv on a 1x1 image (a squeeze-excite block's GEMV): the kernel-window loops of one
// iteration inside the loop over 160 input channels go (their axes leave the block), and the
// unit axes after the channel axis fold into it through collapsed views, so that the channel
// loop is innermost and contiguous in every load: vector partial sums, 8x16.
// CHECK-LABEL: func.func @gemv_conv1x1
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] : memref<1x160x1x1xf32> into memref<1x160xf32>
// CHECK-DAG:     %[[W:.*]] = memref.collapse_shape %w {{\[}}[0 : i64], [1 : i64, 2 : i64, 3 : i64]] : memref<4x160x1x1xf32> into memref<4x160xf32>
// CHECK:         %[[P:.*]] = loop.alloc local : memref<8x16xf32>
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "r0.v" kind unrolled {
// CHECK:           loop.block "conv2d.partials" reads({{.*}} : memref<1x160xf32>, memref<4x160xf32>) writes(%[[P]] : memref<8x16xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0"]
// CHECK-NOT:     axis "r1"
// CHECK:         loop.block "conv2d.combine"
func.func @gemv_conv1x1(%x: memref<1x160x1x1xf32>, %w: memref<4x160x1x1xf32>, %out: memref<1x4x1x1xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c160 = arith.constant 160 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c1 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c1 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c160 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x160x1x1xf32>, memref<4x160x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %h = arith.addi %i2, %r1 : index
                  %v = arith.addi %i3, %r2 : index
                  %0 = loop.load %x[%i0, %r0, %h, %v] : memref<1x160x1x1xf32> -> f32
                  %1 = loop.load %w[%i1, %r0, %r1, %r2] : memref<4x160x1x1xf32> -> f32
                  %2 = arith.mulf %0, %1 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %3 = arith.addf %acc_1, %2 : f32
                  loop.store %3, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "store" reads(%acc : memref<1xf32>) writes(%out : memref<1x4x1x1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %4 = loop.load %acc[%c0] : memref<1xf32> -> f32
            loop.store %4, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x4x1x1xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A squeeze-excite scale (x * s, s broadcast over a 7x7 plane): rows of 7 would each be one
// 7-lane vector; the two innermost loops walk whole rows of %x and %out, so they merge into one
// vectorized loop over the 49 elements of collapsed views; %s, read per channel, is unchanged.
// CHECK-LABEL: func.func @plane_rows_merge
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64, 2 : i64]] : memref<4x7x7xf32> into memref<4x49xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64, 2 : i64]] : memref<4x7x7xf32> into memref<4x49xf32>
// CHECK:         loop.for %[[C:.*]] = %c0 to %c4 step %c1 axis "i0" kind parallel {
// CHECK-NEXT:      loop.for %[[P:.*]] = %c0 to %c49 step %c1 axis "i1.i2.fused" kind vectorized {
// CHECK-NEXT:        loop.block "scale" reads(%[[X]], %s : memref<4x49xf32>, memref<4xf32>) writes(%[[OUT]] : memref<4x49xf32>) spatial ["i0", "i1.i2.fused"]
// CHECK-NEXT:          loop.load %[[X]][%[[C]], %[[P]]]
// CHECK-NEXT:          loop.load %s[%[[C]]]
// CHECK:               loop.store %{{.*}}, %[[OUT]][%[[C]], %[[P]]]

// Rows of 16 are whole vectors already, and a row read transposed is not a row: both keep
// their loops.
// CHECK-LABEL: func.func @negative_rows_stay
// CHECK-NOT:     memref.collapse_shape
// CHECK:         loop.for %{{.*}} = %c0 to %c16 step %c1 axis "i2" kind vectorized
// CHECK:         loop.for %{{.*}} = %c0 to %c10 step %c1 axis "i1"
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c10 step %c1 axis "i2"
func.func @plane_rows_merge(%x: memref<4x7x7xf32>, %s: memref<4xf32>, %out: memref<4x7x7xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c7 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c7 step %c1 axis "i2" {
        loop.block "scale" reads(%x, %s : memref<4x7x7xf32>, memref<4xf32>) writes(%out : memref<4x7x7xf32>) spatial ["i0", "i1", "i2"] {
          %0 = loop.load %x[%i0, %i1, %i2] : memref<4x7x7xf32> -> f32
          %1 = loop.load %s[%i0] : memref<4xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          loop.store %2, %out[%i0, %i1, %i2] : f32 -> memref<4x7x7xf32>
        }
      }
    }
  }
  func.return
}

func.func @negative_rows_stay(%x: memref<4x16x16xf32>, %y: memref<4x10x10xf32>, %out: memref<4x16x16xf32>, %t: memref<4x10x10xf32>) attributes {dlc.num_outputs = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c10 = arith.constant 10 : index
  %c16 = arith.constant 16 : index
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c16 step %c1 axis "i2" {
        loop.block "neg" reads(%x : memref<4x16x16xf32>) writes(%out : memref<4x16x16xf32>) spatial ["i0", "i1", "i2"] {
          %0 = loop.load %x[%i0, %i1, %i2] : memref<4x16x16xf32> -> f32
          %1 = arith.negf %0 : f32
          loop.store %1, %out[%i0, %i1, %i2] : f32 -> memref<4x16x16xf32>
        }
      }
    }
  }
  loop.for %i0 = %c0 to %c4 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c10 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c10 step %c1 axis "i2" {
        loop.block "add_transposed" reads(%y : memref<4x10x10xf32>) writes(%t : memref<4x10x10xf32>) spatial ["i0", "i1", "i2"] {
          %0 = loop.load %y[%i0, %i1, %i2] : memref<4x10x10xf32> -> f32
          %1 = loop.load %y[%i0, %i2, %i1] : memref<4x10x10xf32> -> f32
          %2 = arith.addf %0, %1 : f32
          loop.store %2, %t[%i0, %i1, %i2] : f32 -> memref<4x10x10xf32>
        }
      }
    }
  }
  func.return
}

// -----

// An int8 conv's pad (graph.conv2d_integer pads its u8 input with the input's zero point, a
// load at constant indices): a fill with that value and an interior copy, both vectorized.

// CHECK-LABEL: func.func @pad_zero_point
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i3" kind vectorized {
// CHECK-NEXT:      loop.block "pad.fill" reads(%xz : memref<i8>) writes(%pad : memref<1x3x8x8xi8>)
// CHECK-NEXT:        %[[Z:.*]] = loop.load %xz[] : memref<i8> -> i8
// CHECK-NEXT:        loop.store %[[Z]], %pad[
// CHECK:         loop.for %{{.*}} = %c0 to %c6 step %c1 axis "i3" kind vectorized {
// CHECK-NEXT:      loop.block "pad" reads(%x : memref<1x3x6x6xi8>) writes(%pad : memref<1x3x8x8xi8>)
func.func @pad_zero_point(%x: memref<1x3x6x6xi8>, %xz: memref<i8>, %pad: memref<1x3x8x8xi8>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c3 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c8 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c8 step %c1 axis "i3" {
          loop.block "pad" reads(%xz, %x : memref<i8>, memref<1x3x6x6xi8>) writes(%pad : memref<1x3x8x8xi8>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 1 : index
            %1 = arith.subi %i2, %0 : index
            %2 = arith.subi %i3, %0 : index
            %3 = loop.load %xz[] : memref<i8> -> i8
            %4 = arith.constant 6 : index
            %5 = arith.cmpi ult, %1, %4 : index
            %6 = arith.constant 5 : index
            %7 = arith.minui %1, %6 : index
            %8 = arith.cmpi ult, %2, %4 : index
            %9 = arith.andi %5, %8 : i1
            %10 = arith.minui %2, %6 : index
            %11 = loop.load %x[%i0, %i1, %7, %10] : memref<1x3x6x6xi8> -> i8
            %12 = arith.select %9, %11, %3 : i8
            loop.store %12, %pad[%i0, %i1, %i2, %i3] : i8 -> memref<1x3x8x8xi8>
          }
        }
      }
    }
  }
  func.return
}

// -----

// The same pad in NHWC with batch 1 (an int8 conv's input): no leading axis of two or more
// iterations to split, so the interior copy's rows are the parallel loop and the border's thin
// slabs stay serial.

// CHECK-LABEL: func.func @pad_nhwc_batch_one
// CHECK-NOT:     kind parallel
// CHECK-COUNT-4: loop.block "pad.fill"
// CHECK:         loop.for %{{.*}} = %c0 to %c6 step %c1 axis "i1" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c6 step %c1 axis "i2" {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c32 step %c1 axis "i3" kind vectorized {
// CHECK-NEXT:          loop.block "pad" reads(%x : memref<1x6x6x32xi8>) writes(%pad : memref<1x8x8x32xi8>)
// CHECK-NOT:     kind parallel
// CHECK:         func.return
func.func @pad_nhwc_batch_one(%x: memref<1x6x6x32xi8>, %xz: memref<i8>, %pad: memref<1x8x8x32xi8>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c8 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
          loop.block "pad" reads(%xz, %x : memref<i8>, memref<1x6x6x32xi8>) writes(%pad : memref<1x8x8x32xi8>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 1 : index
            %1 = arith.subi %i1, %0 : index
            %2 = arith.subi %i2, %0 : index
            %3 = loop.load %xz[] : memref<i8> -> i8
            %4 = arith.constant 6 : index
            %5 = arith.cmpi ult, %1, %4 : index
            %6 = arith.constant 5 : index
            %7 = arith.minui %1, %6 : index
            %8 = arith.cmpi ult, %2, %4 : index
            %9 = arith.andi %5, %8 : i1
            %10 = arith.minui %2, %6 : index
            %11 = loop.load %x[%i0, %7, %10, %i3] : memref<1x6x6x32xi8> -> i8
            %12 = arith.select %9, %11, %3 : i8
            loop.store %12, %pad[%i0, %i1, %i2, %i3] : i8 -> memref<1x8x8x32xi8>
          }
        }
      }
    }
  }
  func.return
}

// -----

// The same pad of an empty batch (an ONNX input of batch 0) stores nothing: the nest goes.
// (The batch-1 split stored its interior and border at batch index 0, past the empty buffer,
// and corrupted the heap.)

// CHECK-LABEL: func.func @pad_nhwc_empty_batch
// CHECK-NOT:     loop.
// CHECK:         func.return
func.func @pad_nhwc_empty_batch(%x: memref<0x6x6x32xi8>, %xz: memref<i8>, %pad: memref<0x8x8x32xi8>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  loop.for %i0 = %c0 to %c0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c8 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
          loop.block "pad" reads(%xz, %x : memref<i8>, memref<0x6x6x32xi8>) writes(%pad : memref<0x8x8x32xi8>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 1 : index
            %1 = arith.subi %i1, %0 : index
            %2 = arith.subi %i2, %0 : index
            %3 = loop.load %xz[] : memref<i8> -> i8
            %4 = arith.constant 6 : index
            %5 = arith.cmpi ult, %1, %4 : index
            %6 = arith.constant 5 : index
            %7 = arith.minui %1, %6 : index
            %8 = arith.cmpi ult, %2, %4 : index
            %9 = arith.andi %5, %8 : i1
            %10 = arith.minui %2, %6 : index
            %11 = loop.load %x[%i0, %7, %10, %i3] : memref<0x6x6x32xi8> -> i8
            %12 = arith.select %9, %11, %3 : i8
            loop.store %12, %pad[%i0, %i1, %i2, %i3] : i8 -> memref<0x8x8x32xi8>
          }
        }
      }
    }
  }
  func.return
}

// -----

// A channels-last 1x1 conv (HWIO weight): its rows `oh` and `ow` merge into one axis of
// output pixels (`merge_axes`: x, out seen as 1x16x16 and 1x16x48), so that its row blocks
// span the plane, and its weight's unit leading axes collapse (`drop_unit_heads`) into the
// 2-D B a GEMM packs into panels: 8 pixels x 32 channels a tile, like a matmul.

// CHECK-LABEL: func.func @conv1x1_nhwc
// CHECK-DAG:     %[[W:.*]] = memref.collapse_shape %w {{\[}}[0 : i64, 1 : i64, 2 : i64], [3 : i64]] : memref<1x1x16x48xf32> into memref<16x48xf32>
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64]] : memref<1x4x4x16xf32> into memref<1x16x16xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64]] : memref<1x4x4x48xf32> into memref<1x16x48xf32>
// CHECK:         %[[B:.*]] = loop.alloc global : memref<2x16x32xf32>
// CHECK:         loop.block "conv2d.pack" reads(%[[W]] : memref<16x48xf32>) writes(%[[B]] : memref<2x16x32xf32>)
// CHECK:         loop.for %[[P:.*]] = %c0 to %c16 step %c8 axis "i1.i2.fused.o" kind parallel {
// CHECK:           %{{.*}} = loop.alloc local : memref<8x32xf32>
// CHECK:           loop.block "conv2d" reads(%[[X]], %[[B]] : memref<1x16x16xf32>, memref<2x16x32xf32>)
// CHECK:           loop.block "conv2d.write" reads(%{{.*}} : memref<8x32xf32>) writes(%[[OUT]] : memref<1x16x48xf32>)
func.func @conv1x1_nhwc(%x: memref<1x4x4x16xf32>, %w: memref<1x1x16x48xf32>, %out: memref<1x4x4x48xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c48 = arith.constant 48 : index
  %c4 = arith.constant 4 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c4 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c48 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<1x4x4x48xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x4x4x48xf32>
          }
          loop.for %r0 = %c0 to %c16 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x4x4x16xf32>, memref<1x1x16x48xf32>) writes(%out : memref<1x4x4x48xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i1, %r1 : index
                  %1 = arith.addi %i2, %r2 : index
                  %2 = loop.load %x[%i0, %0, %1, %r0] : memref<1x4x4x16xf32> -> f32
                  %3 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x16x48xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x4x4x48xf32> -> f32
                  %5 = arith.addf %acc, %4 : f32
                  loop.store %5, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x4x4x48xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  func.return
}

// -----

// A 1x1 conv with 16 input channels and 8 output channels over 5x5 planes: rows of 5 would fill
// 5 of 16 lanes, and the channel kernel, 8 of 16, would save nothing for its transposed
// epilogue, so the plane's rows merge (the window loops of one iteration add 0 to
// `oh` and `ow`) into one run of 25: a GEMM over (output channels x plane x input channels), its
// input and output read and written through collapsed views, the output stored as row vectors.
// CHECK-LABEL: func.func @conv1x1_rows_merge
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x16x5x5xf32> into memref<1x16x25xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x8x5x5xf32> into memref<1x8x25xf32>
// CHECK:         %[[TILE:.*]] = loop.alloc local : memref<8x25xf32>
// CHECK:         loop.for %[[R:.*]] = %c0 to %c16 step %c1 axis "r0" {
// CHECK:           loop.for %[[P:.*]] = %c0 to %c25 step %c1 axis "i2.i3.fused.i" kind vectorized {
// CHECK-NEXT:        loop.block "conv2d" reads(%[[X]], %w : memref<1x16x25xf32>, memref<8x16x1x1xf32>) writes(%[[TILE]] : memref<8x25xf32>) spatial ["i0", "i1", "i2.i3.fused"]
// CHECK-NEXT:          loop.load %[[X]][%{{.*}}, %[[R]], %[[P]]]
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i1.i" kind unrolled {
// CHECK-NEXT:      loop.for %[[Q:.*]] = %c0 to %c25 step %c1 axis "i2.i3.fused.i" kind vectorized {
// CHECK-NEXT:        loop.block "relu" reads(%[[TILE]], %b : memref<8x25xf32>, memref<8xf32>) writes(%[[OUT]] : memref<1x8x25xf32>)
// CHECK:               loop.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %[[Q]]]
func.func @conv1x1_rows_merge(%x: memref<1x16x5x5xf32>, %w: memref<8x16x1x1xf32>, %b: memref<8xf32>, %out: memref<1x8x5x5xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c5 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c5 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c16 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x16x5x5xf32>, memref<8x16x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %x[%i0, %r0, %0, %1] : memref<1x16x5x5xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<8x16x1x1xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %5 = arith.addf %acc_1, %4 : f32
                  loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc, %b : memref<1xf32>, memref<8xf32>) writes(%out : memref<1x8x5x5xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %7 = loop.load %b[%i1] : memref<8xf32> -> f32
            %8 = arith.addf %6, %7 : f32
            %9 = arith.constant 0.000000e+00 : f32
            %10 = arith.maximumf %8, %9 : f32
            loop.store %10, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x8x5x5xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A 1x1 conv over 16x16 planes: with AVX-512 a row is one whole vector, a tile of 8 such rows
// would have 8 accumulators, too few to hide the FMA latency, so the plane's rows merge into
// one run of 256 and the tile is two vectors wide (8x32, 16 accumulators). With AVX2 a row is
// already two vectors: the rows stay. The input (64 x 256 floats) is larger than the weight
// (16 x 64): the two threads split the plane's column blocks, outermost (the loop over the
// output channels' row blocks inside), so that each thread reads half the input, not all of it.
// CHECK-LABEL: func.func @conv1x1_one_vector_rows_merge
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x64x16x16xf32> into memref<1x64x256xf32>
// CHECK-DAG:     memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x16x16x16xf32> into memref<1x16x256xf32>
// Each reduction step prefetches the step 16 ahead (PREFETCH_STEPS): the two input vectors'
// lines and the first row's weight.
// CHECK:         loop.for %[[P:.*]] = %c0 to %c256 step %c32 axis "i2.i3.fused.o" kind parallel
// CHECK:           loop.for %[[OC:.*]] = %c0 to %c16 step %c8 axis "i1.o" {
// CHECK-NEXT:        loop.alloc local : memref<8x32xf32>
// CHECK:             loop.for %[[K:.*]] = %c0 to %c64 step %c1 axis "r0" {
// CHECK-NEXT:          %[[AHEAD:.*]] = arith.addi %[[K]], %c16 : index
// CHECK-NEXT:          loop.block "conv2d.prefetch" reads(%[[X]], %w : memref<1x64x256xf32>, memref<16x64x1x1xf32>) writes() {
// CHECK-NEXT:            loop.prefetch %[[X]][%{{.*}}, %[[AHEAD]], %[[P]]] : memref<1x64x256xf32>
// CHECK-NEXT:            loop.prefetch %w[%[[OC]], %[[AHEAD]], %c0, %c0] : memref<16x64x1x1xf32>
// CHECK-NEXT:            %[[SECOND:.*]] = arith.addi %[[P]], %c16 : index
// CHECK-NEXT:            loop.prefetch %[[X]][%{{.*}}, %[[AHEAD]], %[[SECOND]]] : memref<1x64x256xf32>
// CHECK-NEXT:          }
// CHECK:           loop.block "conv2d" reads(%[[X]], %w : memref<1x64x256xf32>, memref<16x64x1x1xf32>)
// ZNVER3-LABEL: func.func @conv1x1_one_vector_rows_merge
// ZNVER3-NOT:     memref.collapse_shape
// ZNVER3:         loop.alloc local : memref<6x16xf32>
func.func @conv1x1_one_vector_rows_merge(%x: memref<1x64x16x16xf32>, %w: memref<16x64x1x1xf32>, %b: memref<16xf32>, %out: memref<1x16x16x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c16 = arith.constant 16 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c16 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c16 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c16 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c64 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x64x16x16xf32>, memref<16x64x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %x[%i0, %r0, %0, %1] : memref<1x64x16x16xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<16x64x1x1xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %5 = arith.addf %acc_1, %4 : f32
                  loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc, %b : memref<1xf32>, memref<16xf32>) writes(%out : memref<1x16x16x16xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %7 = loop.load %b[%i1] : memref<16xf32> -> f32
            %8 = arith.addf %6, %7 : f32
            %9 = arith.constant 0.000000e+00 : f32
            %10 = arith.maximumf %8, %9 : f32
            loop.store %10, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x16x16x16xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// The same over 7x7 planes with 512 input channels: the channel kernel's full lanes save far
// more than its epilogue costs, so it vectorizes over the 32 output channels; its rows are the
// plane's 49 points, merged into one run (7 per tile), so that its loop over the weight panels
// is outside all of them (each panel read once, not once per output row).
// CHECK-LABEL: func.func @conv1x1_channel_kernel_merged_rows
// CHECK:         memref.collapse_shape %x {{.*}} : memref<1x512x7x7xf32> into memref<1x512x49xf32>
// CHECK:         memref.collapse_shape %out {{.*}} : memref<1x32x7x7xf32> into memref<1x32x49xf32>
// CHECK:         loop.for %{{.*}} = %c0 to %c49 step %c7 axis "i2.i3.fused.o" kind parallel {
// CHECK-NEXT:      loop.alloc local : memref<7x32xf32>
// CHECK:           loop.for %{{.*}} axis "i1.l" kind vectorized {
func.func @conv1x1_channel_kernel_merged_rows(%x: memref<1x512x7x7xf32>, %w: memref<32x512x1x1xf32>, %b: memref<32xf32>, %out: memref<1x32x7x7xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c7 = arith.constant 7 : index
  %c32 = arith.constant 32 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c7 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c7 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c512 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x512x7x7xf32>, memref<32x512x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %x[%i0, %r0, %0, %1] : memref<1x512x7x7xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<32x512x1x1xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %5 = arith.addf %acc_1, %4 : f32
                  loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc, %b : memref<1xf32>, memref<32xf32>) writes(%out : memref<1x32x7x7xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %7 = loop.load %b[%i1] : memref<32xf32> -> f32
            %8 = arith.addf %6, %7 : f32
            %9 = arith.constant 0.000000e+00 : f32
            %10 = arith.maximumf %8, %9 : f32
            loop.store %10, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x32x7x7xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A 1x1 conv whose input (512 x 169 merged pixels) is larger than its weight (512 x 64
// channels): the channel kernel's loop over pixel tiles is outside its loop over the weight
// panels, and it is the parallel one (each thread reads the whole small weight and its part of
// the plane). Its 169 pixels run as 21 tiles of 8 and one of 1 (CHANNEL_STEP_OVERHEAD: 33 tiles
// of 5 and one of 4 issue as many FMA cycles, with more steps).
// CHECK-LABEL: func.func @conv1x1_channel_kernel_rows_first
// CHECK:         memref.collapse_shape %x {{.*}} : memref<1x512x13x13xf32> into memref<1x512x169xf32>
// Each reduction step first prefetches what the step 16 ahead reads (PREFETCH_STEPS): the
// input at the tile's first pixel and the two weight lines of the packed panel.
// CHECK:         loop.for %{{.*}} = %c0 to %c168 step %c8 axis "i2.i3.fused.o" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c64 step %c32 axis "i1.o" {
// CHECK-NEXT:        loop.alloc local : memref<8x32xf32>
// CHECK:             loop.for %[[K:.*]] = %c0 to %c512 step %c1 axis "r0" {
// CHECK-NEXT:          %[[AHEAD:.*]] = arith.addi %[[K]], %c16 : index
// CHECK-NEXT:          %[[PANEL:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK-NEXT:          loop.block "conv2d.prefetch" reads(%{{.*}}, %w_packed : memref<1x512x169xf32>, memref<2x512x1x1x32xf32>) writes() {
// CHECK-NEXT:            loop.prefetch %{{.*}}[%{{.*}}, %[[AHEAD]], %{{.*}}] : memref<1x512x169xf32>
// CHECK-NEXT:            loop.prefetch %w_packed[%[[PANEL]], %[[AHEAD]], %c0, %c0, %c0] : memref<2x512x1x1x32xf32>
// CHECK-NEXT:            loop.prefetch %w_packed[%[[PANEL]], %[[AHEAD]], %c0, %c0, %c16] : memref<2x512x1x1x32xf32>
// CHECK-NEXT:          }
// CHECK-NEXT:          loop.for %{{.*}} axis "r1" kind unrolled {
func.func @conv1x1_channel_kernel_rows_first(%x: memref<1x512x13x13xf32>, %w: memref<64x512x1x1xf32>, %b: memref<64xf32>, %out: memref<1x64x13x13xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c13 = arith.constant 13 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c64 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c13 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c13 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c512 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x512x13x13xf32>, memref<64x512x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %x[%i0, %r0, %0, %1] : memref<1x512x13x13xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<64x512x1x1xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %5 = arith.addf %acc_1, %4 : f32
                  loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc, %b : memref<1xf32>, memref<64xf32>) writes(%out : memref<1x64x13x13xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %7 = loop.load %b[%i1] : memref<64xf32> -> f32
            %8 = arith.addf %6, %7 : f32
            %9 = arith.constant 0.000000e+00 : f32
            %10 = arith.maximumf %8, %9 : f32
            loop.store %10, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x64x13x13xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A grouped conv (2 groups of 2 input and 16 output channels; 6-wide rows fill 6 of 16 lanes)
// takes the channel kernel: the input is read at the output channel's group, `oc // 16`, which
// the kernel takes at the tile's first channel (16 channels per tile, one group), so the input
// value is one scalar for every lane, not a per-lane gather.
// CHECK-LABEL: func.func @grouped_conv
// CHECK:         loop.block "conv2d.pack"
// CHECK:         loop.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i1.o" {
// CHECK:           %tile = loop.alloc local : memref<6x16xf32>
// CHECK:           loop.for %{{.*}} axis "i1.l" kind vectorized {
// CHECK:             loop.block "conv2d" reads(%x, %w_packed
// CHECK:               %[[G:.*]] = arith.divui %[[C]], %{{.*}} : index
// CHECK:               %[[S:.*]] = arith.muli %[[G]], %{{.*}} : index
// CHECK:               %[[IC:.*]] = arith.addi %[[S]], %r0 : index
// CHECK:               loop.load %x[%{{.*}}, %[[IC]], %{{.*}}, %{{.*}}]
func.func @grouped_conv(%x: memref<1x4x8x8xf32>, %w: memref<32x2x3x3xf32>, %out: memref<1x32x6x6xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c6 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c6 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<1x32x6x6xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x32x6x6xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x4x8x8xf32>, memref<32x2x3x3xf32>) writes(%out : memref<1x32x6x6xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.constant 16 : index
                  %1 = arith.divui %i1, %0 : index
                  %2 = arith.constant 2 : index
                  %3 = arith.muli %1, %2 : index
                  %4 = arith.addi %3, %r0 : index
                  %5 = arith.addi %i2, %r1 : index
                  %6 = arith.addi %i3, %r2 : index
                  %7 = loop.load %x[%i0, %4, %5, %6] : memref<1x4x8x8xf32> -> f32
                  %8 = loop.load %w[%i1, %r0, %r1, %r2] : memref<32x2x3x3xf32> -> f32
                  %9 = arith.mulf %7, %8 : f32
                  %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x32x6x6xf32> -> f32
                  %10 = arith.addf %acc, %9 : f32
                  loop.store %10, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x32x6x6xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  func.return
}

// -----

// A transposing copy (NCHW -> NHWC: the write's innermost axis, channels, is not the read's,
// the plane's w): the 8 x 8 plane (8 not a multiple of 16 lanes) merges into one axis of 64
// over collapsed views of both buffers, which is split by 16 as the channels are; the channels'
// inner loop is vectorized around the plane's inner loop of 16 (a 16 x 16 block the vectorizer
// transposes in registers); the plane's outer loop is parallel.
// CHECK-LABEL: func.func @transposed_copy
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %x {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x32x8x8xf32> into memref<1x32x64xf32>
// CHECK-DAG:     %[[OUT:.*]] = memref.collapse_shape %out {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64]] : memref<1x8x8x32xf32> into memref<1x64x32xf32>
// CHECK:         loop.for %[[PO:.*]] = %c0 to %c64 step %c16 axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:      loop.for %[[CO:.*]] = %c0 to %c32 step %c16 axis "i3.0" {
// CHECK-NEXT:        loop.for %[[CI:.*]] = %c0 to %c16 step %c1 axis "i3.1" kind vectorized {
// CHECK-NEXT:          loop.for %[[PI:.*]] = %c0 to %c16 step %c1 axis "i1.i2.fused.1" {
// CHECK-NEXT:            %[[P:.*]] = arith.addi %[[PO]], %[[PI]] : index
// CHECK-NEXT:            %[[C:.*]] = arith.addi %[[CO]], %[[CI]] : index
// CHECK-NEXT:            loop.block "transpose" reads(%[[X]] : memref<1x32x64xf32>) writes(%[[OUT]] : memref<1x64x32xf32>)
// CHECK-NEXT:              %[[V:.*]] = loop.load %[[X]][%{{.*}}, %[[C]], %[[P]]]
// CHECK-NEXT:              loop.store %[[V]], %[[OUT]][%{{.*}}, %[[P]], %[[C]]]
func.func @transposed_copy(%x: memref<1x32x8x8xf32>, %out: memref<1x8x8x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c8 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
          loop.block "transpose" reads(%x : memref<1x32x8x8xf32>) writes(%out : memref<1x8x8x32xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = loop.load %x[%i0, %i3, %i1, %i2] : memref<1x32x8x8xf32> -> f32
            loop.store %0, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x8x8x32xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// negative: a copy whose innermost write axis is also the read's (a channel shuffle's
// transpose of outer axes) is no transposing copy: it stays elementwise, its rows vectorized.
// CHECK-LABEL: func.func @negative_copy_along_rows
// CHECK-NOT:     memref.collapse_shape
// CHECK:         loop.for %{{.*}} = %c0 to %c16 step %c1 axis "i2" kind vectorized {
func.func @negative_copy_along_rows(%x: memref<4x8x16xf32>, %out: memref<8x4x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  loop.for %i0 = %c0 to %c8 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c16 step %c1 axis "i2" {
        loop.block "transpose" reads(%x : memref<4x8x16xf32>) writes(%out : memref<8x4x16xf32>) spatial ["i0", "i1", "i2"] {
          %0 = loop.load %x[%i1, %i0, %i2] : memref<4x8x16xf32> -> f32
          loop.store %0, %out[%i0, %i1, %i2] : f32 -> memref<8x4x16xf32>
        }
      }
    }
  }
  func.return
}
