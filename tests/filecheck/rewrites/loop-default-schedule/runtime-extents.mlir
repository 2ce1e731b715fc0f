// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver4 -num-cores=2"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver4 -num-cores=2" threads=1}' | filecheck %s --check-prefix=SERIAL
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=znver4"}' | filecheck %s --check-prefix=ALLCORES

// An elementwise nest over a plane of runtime height and width (as convert-tensor-expr-to-loop
// makes it): the static outer loop runs in parallel; the contiguous innermost loop is split
// into whole vectors of 16 lanes (AVX-512, f32), then the iterations left (fewer than 16) in
// one more tile of 16 whose loop runs to `minui(16, w - j)` (`split`'s partial tile), which
// the code generator vectorizes with masks: no iteration left.
// CHECK-LABEL: func.func @scale
// CHECK:         %[[C16:.*]] = arith.constant 16 : index
// CHECK:         loop.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "c" kind parallel {
// CHECK-NEXT:      loop.for %[[I:.*]] = %{{.*}} to %[[H:.*]] step %{{.*}} axis "i" {
// CHECK-NEXT:        %[[REST:.*]] = arith.remui %[[W:.*]], %[[C16]] : index
// CHECK-NEXT:        %[[WHOLE:.*]] = arith.subi %[[W]], %[[REST]] : index
// CHECK-NEXT:        loop.for %[[J0:.*]] = %{{.*}} to %[[WHOLE]] step %[[C16]] axis "j.0" {
// CHECK-NEXT:          loop.for %[[J1:.*]] = %{{.*}} to %[[C16]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NEXT:            %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK-NEXT:            loop.block "scale"
// CHECK:             loop.for %[[T:.*]] = %[[WHOLE]] to %[[W]] step %[[C16]] axis "j.0" {
// CHECK-NEXT:          %[[LEFT:.*]] = arith.subi %[[W]], %[[T]] : index
// CHECK-NEXT:          %[[UB:.*]] = arith.minui %[[C16]], %[[LEFT]] : index
// CHECK-NEXT:          loop.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NOT:         axis "j" {
// SERIAL-LABEL: func.func @scale
// SERIAL-NOT:   kind parallel
// SERIAL:       kind vectorized
func.func @scale(%x: memref<4x?x?xf32>, %out: memref<4x?x?xf32>, %x_d1: index, %x_d2: index, %out_d1: index, %out_d2: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c1_1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %c = %c0 to %c4 step %c1 axis "c" {
    loop.for %i = %c0 to %x_d1 step %c1 axis "i" {
      loop.for %j = %c0 to %x_d2 step %c1 axis "j" {
        loop.block "scale" reads(%x : memref<4x?x?xf32>) writes(%out : memref<4x?x?xf32>) spatial ["c", "i", "j"] {
          %v = loop.load %x[%c, %i, %j] : memref<4x?x?xf32> -> f32
          %two = arith.constant 2.000000e+00 : f32
          %s = arith.mulf %v, %two : f32
          loop.store %s, %out[%c, %i, %j] : f32 -> memref<4x?x?xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A 3x3 window over a plane of runtime size: blocks of 4 output rows (no static loop re-reads
// an operand: the rows of runtime count are the tile's other axis), each row in tiles of 4
// vectors of 16 outputs (4 x 4 independent accumulators), the vector loop inside the window's
// loops with the rows' loop unrolled beside it (the init distributed before them, its own
// vector loop), so that each update adds 4 rows of 64 neighbouring outputs at once; the
// window's inner loop unrolled (as the static rules unroll a window of up to 9 taps); the window
// sums into local accumulators (it accumulated into the output: a load and a store of it per
// tap), written into the output after the window's loops; then tiles of 16 outputs over the
// outputs left (fewer than 64), the last partial: each tile's loops run to `minui(16, ow - j)`
// (masked by the code generator), in the same form, its accumulators 4 x 16; the rows left
// after the blocks (up to 3) one at a time, in tiles of 64, then of 16 likewise.
// CHECK-LABEL: func.func @box
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %[[ROWS:.*]] step %[[C4:.*]] axis "i.0" kind parallel {
// CHECK:           loop.for %[[J0:.*]] = %{{.*}} to %[[WHOLE:.*]] step %[[C64:.*]] axis "j.0" {
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc local : memref<4x64xf32>
// CHECK-NEXT:        loop.for %{{.*}} = %{{.*}} to %[[C4]] step %{{.*}} axis "i.1" {
// CHECK-NEXT:          loop.for %{{.*}} = %{{.*}} to %[[C64]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NEXT:            loop.block "box_init" reads() writes(%[[ACC]] : memref<4x64xf32>)
// CHECK:             loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "r" {
// CHECK-NEXT:          loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "s" kind unrolled {
// CHECK-NEXT:            loop.for %{{.*}} = %{{.*}} to %[[C4]] step %{{.*}} axis "i.1" kind unrolled {
// CHECK:                   loop.for %{{.*}} = %{{.*}} to %[[C64]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK:                     loop.block "box" reads(%x : memref<?x?xf32>) writes(%[[ACC]] : memref<4x64xf32>)
// CHECK:             loop.block "box.local_write" reads(%[[ACC]] : memref<4x64xf32>) writes(%out : memref<?x?xf32>)
// CHECK:             loop.dealloc %[[ACC]] : memref<4x64xf32>
// CHECK:           loop.for %[[K0:.*]] = %[[WHOLE]] to %[[OW:.*]] step %[[C16:.*]] axis "j.0" {
// CHECK-NEXT:        %[[LEFT:.*]] = arith.subi %[[OW]], %[[K0]] : index
// CHECK-NEXT:        %[[UB:.*]] = arith.minui %[[C16]], %[[LEFT]] : index
// CHECK-NEXT:        %[[ACC16:.*]] = loop.alloc local : memref<4x16xf32>
// CHECK:               loop.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NEXT:            loop.block "box_init" reads() writes(%[[ACC16]] : memref<4x16xf32>)
// CHECK:               loop.for %{{.*}} = %{{.*}} to %[[C4]] step %{{.*}} axis "i.1" kind unrolled {
// CHECK:                 loop.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK:             loop.block "box.local_write" reads(%[[ACC16]] : memref<4x16xf32>) writes(%out : memref<?x?xf32>)
// CHECK-NOT:       axis "j" {
// CHECK:         loop.for %{{.*}} = %[[ROWS]] to %{{.*}} step %{{.*}} axis "i" {
// CHECK:           loop.for %{{.*}} step %[[C64]] axis "j.0" {
// CHECK-NEXT:        loop.alloc local : memref<64xf32>
func.func @box(%x: memref<?x?xf32>, %out: memref<?x?xf32>, %x_d0: index, %x_d1: index, %out_d0: index, %out_d1: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c0_1 = arith.constant 0 : index
  %c1_1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %oh = arith.subi %x_d0, %c2 : index
  %ow = arith.subi %x_d1, %c2 : index
  loop.for %i = %c0 to %oh step %c1 axis "i" {
    loop.for %j = %c0 to %ow step %c1 axis "j" {
      loop.block "box_init" reads() writes(%out : memref<?x?xf32>) spatial ["i", "j"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %out[%i, %j] : f32 -> memref<?x?xf32>
      }
      loop.for %r = %c0 to %c3 step %c1 axis "r" {
        loop.for %s = %c0 to %c3 step %c1 axis "s" {
          loop.block "box" reads(%x : memref<?x?xf32>) writes(%out : memref<?x?xf32>) spatial ["i", "j"] reduction ["r", "s"] {
            %a = arith.addi %i, %r : index
            %b = arith.addi %j, %s : index
            %v = loop.load %x[%a, %b] : memref<?x?xf32> -> f32
            %acc = loop.load %out[%i, %j] : memref<?x?xf32> -> f32
            %0 = arith.addf %acc, %v : f32
            loop.store %0, %out[%i, %j] : f32 -> memref<?x?xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// A 3x3 conv with bias and ReLU over images of runtime batch, height and width: the output
// channels (each input vector read serves them all) blocked by 4, the block unrolled beside
// the vector loop inside the reduction loops; 4 channels x 4 vectors of 16 outputs make a
// register tile of 16 accumulators (the local accumulator of one output widened to 4x64), the
// window's 3x3 taps unrolled; the blocks of channels run in parallel (not the batch of runtime
// size, often one image).
// CHECK-LABEL: func.func @conv
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "o.0" kind parallel {
// CHECK:               loop.for %{{.*}} = %{{.*}} to %[[WHOLE:.*]] step %[[C64:.*]] axis "q.0" {
// CHECK-NEXT:            %[[ACC:.*]] = loop.alloc local : memref<4x64xf32>
// CHECK:                 loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "c" {
// CHECK-NEXT:              loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "r" kind unrolled {
// CHECK-NEXT:                loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "s" kind unrolled {
// CHECK-NEXT:                  loop.for %[[O1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "o.1" kind unrolled {
// CHECK:                         loop.for %[[Q1:.*]] = %{{.*}} to %[[C64]] step %{{.*}} axis "q.1" kind vectorized {
// CHECK:                           loop.store %{{.*}}, %[[ACC]][%[[O1]], %[[Q1]]] : f32 -> memref<4x64xf32>
// CHECK:                 loop.block "bias_relu"
// CHECK:                 loop.dealloc %[[ACC]] : memref<4x64xf32>
func.func @conv(%x: memref<?x4x?x?xf32>, %k: memref<8x4x3x3xf32>, %b: memref<8xf32>, %out: memref<?x8x?x?xf32>, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c0_1 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3_1 = arith.constant 3 : index
  %oh = arith.subi %x_d2, %c2 : index
  %ow = arith.subi %x_d3, %c2 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %o = %c0 to %c8 step %c1 axis "o" {
      loop.for %p = %c0 to %oh step %c1 axis "p" {
        loop.for %q = %c0 to %ow step %c1 axis "q" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv_init" reads() writes(%acc : memref<1xf32>) spatial ["i", "o", "p", "q"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %c = %c0 to %c4 step %c1 axis "c" {
            loop.for %r = %c0 to %c3 step %c1 axis "r" {
              loop.for %s = %c0 to %c3 step %c1 axis "s" {
                loop.block "conv" reads(%x, %k : memref<?x4x?x?xf32>, memref<8x4x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i", "o", "p", "q"] reduction ["c", "r", "s"] {
                  %a = arith.addi %p, %r : index
                  %e = arith.addi %q, %s : index
                  %v = loop.load %x[%i, %c, %a, %e] : memref<?x4x?x?xf32> -> f32
                  %u = loop.load %k[%o, %c, %r, %s] : memref<8x4x3x3xf32> -> f32
                  %m = arith.mulf %v, %u : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %0 = arith.addf %acc_1, %m : f32
                  loop.store %0, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "bias_relu" reads(%acc, %b : memref<1xf32>, memref<8xf32>) writes(%out : memref<?x8x?x?xf32>) spatial ["i", "o", "p", "q"] {
            %v_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %d = loop.load %b[%o] : memref<8xf32> -> f32
            %s_1 = arith.addf %v_1, %d : f32
            %zero = arith.constant 0.000000e+00 : f32
            %r_1 = arith.maximumf %s_1, %zero : f32
            loop.store %r_1, %out[%i, %o, %p, %q] : f32 -> memref<?x8x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A stride-2 conv over a padded runtime image, without an epilogue. The pad's rows are split
// where its column checks change (before, interior, after): the interior, its column check
// `true` and its clamp gone, reads its source at a lane index and is vectorized in tiles of
// 16, 8, 4, 2, 1. The conv accumulates into a local tile of 4 channels x 64 outputs (it
// accumulated into its output), written out after its reduction loops; its input row, read
// every other element, is a strided vector read.
// CHECK-LABEL: func.func @strided_padded_conv
// CHECK:         %[[PAD:.*]] = loop.alloc global
// CHECK:             %[[LO:.*]] = arith.minsi
// CHECK:             %[[HI:.*]] = arith.maxsi
// CHECK-NEXT:        loop.for %{{.*}} = %{{.*}} to %[[LO]] step %{{.*}} axis "i3" {
// CHECK:             loop.for %[[J0:.*]] = %[[LO]] to %{{.*}} step %[[C16:.*]] axis "i3.0" {
// CHECK-NEXT:          loop.for %{{.*}} = %{{.*}} to %[[C16]] step %{{.*}} axis "i3.1" kind vectorized {
// CHECK-NEXT:            %[[J:.*]] = arith.addi %[[J0]], %{{.*}} : index
// CHECK-NEXT:            %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:            loop.block "pad"
// CHECK:                   %[[COL:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK:                   arith.andi %{{.*}}, %[[TRUE]] : i1
// CHECK:                   loop.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[COL]]]
// CHECK:             loop.for %{{.*}} = %[[HI]] to %{{.*}} step %{{.*}} axis "i3" {
// CHECK:         %[[ACC:.*]] = loop.alloc local : memref<4x64xf32>
// CHECK:               loop.block "conv2d_init" reads() writes(%[[ACC]] : memref<4x64xf32>)
// CHECK:                 loop.for %{{.*}} axis "i1" kind unrolled {
// CHECK-NEXT:              loop.for %{{.*}} axis "i3.1" kind vectorized {
// CHECK-NEXT:                %[[OW:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:                loop.block "conv2d" reads(%[[PAD]], %{{.*}}) writes(%[[ACC]] : memref<4x64xf32>)
// CHECK:                       %[[STRIDED:.*]] = arith.muli %[[OW]], %{{.*}} : index
// CHECK-NEXT:                  %[[IW:.*]] = arith.addi %[[STRIDED]], %{{.*}} : index
// CHECK-NEXT:                  loop.load %[[PAD]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IW]]]
// CHECK:               loop.block "conv2d.local_write" reads(%[[ACC]] : memref<4x64xf32>) writes(%out
"memref.global"() <{sym_name = "strided_padded_conv_cst0", type = memref<4x2x3x3xf32>, initial_value = dense<5.000000e-01> : tensor<4x2x3x3xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @strided_padded_conv(%x: memref<?x2x?x?xf32>, %out: memref<?x4x?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, (((s1 + -1) floordiv 2) + 1), (((s2 + -1) floordiv 2) + 1))>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (3)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 3 of its input padded to at least its window (3)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %w = memref.get_global @strided_padded_conv_cst0 : memref<4x2x3x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %0 = arith.constant 2 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d2, %1 : index
  %3 = arith.constant 2 : index
  %4 = arith.divui %2, %3 : index
  %5 = arith.constant 1 : index
  %6 = arith.addi %4, %5 : index
  %7 = arith.constant 3 : index
  %8 = arith.constant 1 : index
  %9 = arith.subi %x_d3, %8 : index
  %10 = arith.constant 2 : index
  %11 = arith.divui %9, %10 : index
  %12 = arith.constant 1 : index
  %13 = arith.addi %11, %12 : index
  %14 = arith.constant 0 : index
  %15 = arith.constant 2 : index
  %16 = arith.addi %x_d2, %15 : index
  %17 = arith.constant 2 : index
  %18 = arith.addi %x_d3, %17 : index
  %pad = loop.alloc global sizes(%x_d0, %16, %18) : memref<?x2x?x?xf32>
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %16 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %18 step %c1 axis "i3" {
          loop.block "pad" reads(%x : memref<?x2x?x?xf32>) writes(%pad : memref<?x2x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %19 = arith.constant 1 : index
            %20 = arith.subi %i2, %19 : index
            %21 = arith.subi %i3, %19 : index
            %22 = arith.cmpi ult, %20, %x_d2 : index
            %23 = arith.subi %x_d2, %19 : index
            %24 = arith.minui %20, %23 : index
            %25 = arith.cmpi ult, %21, %x_d3 : index
            %26 = arith.andi %22, %25 : i1
            %27 = arith.subi %x_d3, %19 : index
            %28 = arith.minui %21, %27 : index
            %29 = loop.load %x[%i0, %i1, %24, %28] : memref<?x2x?x?xf32> -> f32
            %30 = arith.constant 0.000000e+00 : f32
            %31 = arith.select %26, %29, %30 : f32
            loop.store %31, %pad[%i0, %i1, %i2, %i3] : f32 -> memref<?x2x?x?xf32>
          }
        }
      }
    }
  }
  loop.for %i0_1 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1_1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2_1 = %c0 to %6 step %c1 axis "i2" {
        loop.for %i3_1 = %c0 to %13 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<?x4x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0_1, %i1_1, %i2_1, %i3_1] : f32 -> memref<?x4x?x?xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%pad, %w : memref<?x2x?x?xf32>, memref<4x2x3x3xf32>) writes(%out : memref<?x4x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %32 = arith.constant 2 : index
                  %33 = arith.muli %i2_1, %32 : index
                  %34 = arith.addi %33, %r1 : index
                  %35 = arith.muli %i3_1, %32 : index
                  %36 = arith.addi %35, %r2 : index
                  %37 = loop.load %pad[%i0_1, %r0, %34, %36] : memref<?x2x?x?xf32> -> f32
                  %38 = loop.load %w[%i1_1, %r0, %r1, %r2] : memref<4x2x3x3xf32> -> f32
                  %39 = arith.mulf %37, %38 : f32
                  %acc = loop.load %out[%i0_1, %i1_1, %i2_1, %i3_1] : memref<?x4x?x?xf32> -> f32
                  %40 = arith.addf %acc, %39 : f32
                  loop.store %40, %out[%i0_1, %i1_1, %i2_1, %i3_1] : f32 -> memref<?x4x?x?xf32>
                }
              }
            }
          }
        }
      }
    }
  }
  loop.dealloc %pad : memref<?x2x?x?xf32>
  func.return
}

// -----

// A 1x1 conv with ReLU over a runtime plane whose extents are, at run time, the sizes of its
// buffers' last two dims (the output's through its shape function): the plane is one loop of
// H * W points over `memref.collapse_shape` views (a row of a 7x7 plane would be tiles of 4, 2
// and 1 outputs), in tiles of 4 channels x 64 points.
// CHECK-LABEL: func.func @pointwise_plane
// CHECK:         %[[XP:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<?x8x?x?xf32> into memref<?x8x?xf32>
// CHECK-NEXT:    %[[OP:.*]] = memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<?x4x?x?xf32> into memref<?x4x?xf32>
// CHECK-NEXT:    %[[HW:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:           %{{.*}} = arith.remui %[[HW]], %{{.*}} : index
// CHECK:           loop.for %{{.*}} axis "i2.i3.fused.0" {
// CHECK:                     loop.load %[[XP]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x8x?xf32> -> f32
// CHECK:             loop.block "relu" reads(%{{.*}}) writes(%[[OP]] : memref<?x4x?xf32>)
"memref.global"() <{sym_name = "pointwise_plane_cst0", type = memref<4x8x1x1xf32>, initial_value = dense<5.000000e-01> : tensor<4x8x1x1xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @pointwise_plane(%x: memref<?x8x?x?xf32>, %out: memref<?x4x?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (1)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 3 of its input padded to at least its window (1)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %w = memref.get_global @pointwise_plane_cst0 : memref<4x8x1x1xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %0 = arith.constant 2 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d2, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 3 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d3, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %4 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %9 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x8x?x?xf32>, memref<4x8x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %11 = arith.addi %i2, %r1 : index
                  %12 = arith.addi %i3, %r2 : index
                  %13 = loop.load %x[%i0, %r0, %11, %12] : memref<?x8x?x?xf32> -> f32
                  %14 = loop.load %w[%i1, %r0, %r1, %r2] : memref<4x8x1x1xf32> -> f32
                  %15 = arith.mulf %13, %14 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %16 = arith.addf %acc_1, %15 : f32
                  loop.store %16, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc : memref<1xf32>) writes(%out : memref<?x4x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %17 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %18 = arith.constant 0.000000e+00 : f32
            %19 = arith.maximumf %17, %18 : f32
            loop.store %19, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x4x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A conv whose reduction is long (16 channels x 3x3 taps) and whose 64 output channels are 4 whole
// vectors: vectorized over the output channels rather than its row of runtime width (the
// channel kernel). The weight is packed [64 / 16][16][3][3][16] so that a step's 16 channels are
// one vector; the row runs in tiles of 12 outputs unrolled (12 accumulator vectors), then tiles
// of 8, 4, 2 and 1 over the outputs left; each step broadcasts one input per output of the tile,
// the window's taps unrolled.
// The epilogue runs transposed: serial over the channels, vectorized over the tile's outputs
// (contiguous in the output). The blocks of 16 channels run in parallel.
// CHECK-LABEL: func.func @channel_conv
// CHECK:         %[[PACKED:.*]] = loop.alloc global : memref<4x16x3x3x16xf32>
// CHECK:         loop.block "conv.pack1" reads(%{{.*}} : memref<64x16x3x3xf32>) writes(%[[PACKED]] : memref<4x16x3x3x16xf32>)
// CHECK:           loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "o.0" kind parallel {
// CHECK:               loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "q.0" {
// CHECK-NEXT:            %[[ACC:.*]] = loop.alloc local : memref<12x16xf32>
// CHECK:                 loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "c" {
// CHECK-NEXT:              loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "r" kind unrolled {
// CHECK-NEXT:                loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "s" kind unrolled {
// CHECK-NEXT:                  loop.for %[[Q1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "q.1" kind unrolled {
// CHECK:                         loop.for %[[O1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "o.1" kind vectorized {
// CHECK:                           loop.load %[[PACKED]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[O1]]]
// CHECK:                           loop.store %{{.*}}, %[[ACC]][%[[Q1]], %[[O1]]] : f32 -> memref<12x16xf32>
// CHECK:                 loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "o.1" {
// CHECK-NEXT:              loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "q.1" kind vectorized {
// CHECK:                     loop.block "bias_relu"
// CHECK:                 loop.dealloc %[[ACC]] : memref<12x16xf32>
// CHECK:               loop.alloc local : memref<8x16xf32>
// CHECK:               loop.alloc local : memref<4x16xf32>
// CHECK:               loop.alloc local : memref<2x16xf32>
// CHECK:               loop.alloc local : memref<1x16xf32>
func.func @channel_conv(%x: memref<?x16x?x?xf32>, %k: memref<64x16x3x3xf32>, %b: memref<64xf32>, %out: memref<?x64x?x?xf32>, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 64 : index
  %oh = arith.subi %x_d2, %c2 : index
  %ow = arith.subi %x_d3, %c2 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %o = %c0 to %c32 step %c1 axis "o" {
      loop.for %p = %c0 to %oh step %c1 axis "p" {
        loop.for %q = %c0 to %ow step %c1 axis "q" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv_init" reads() writes(%acc : memref<1xf32>) spatial ["i", "o", "p", "q"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %c = %c0 to %c16 step %c1 axis "c" {
            loop.for %r = %c0 to %c3 step %c1 axis "r" {
              loop.for %s = %c0 to %c3 step %c1 axis "s" {
                loop.block "conv" reads(%x, %k : memref<?x16x?x?xf32>, memref<64x16x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i", "o", "p", "q"] reduction ["c", "r", "s"] {
                  %a = arith.addi %p, %r : index
                  %e = arith.addi %q, %s : index
                  %v = loop.load %x[%i, %c, %a, %e] : memref<?x16x?x?xf32> -> f32
                  %u = loop.load %k[%o, %c, %r, %s] : memref<64x16x3x3xf32> -> f32
                  %m = arith.mulf %v, %u : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %0 = arith.addf %acc_1, %m : f32
                  loop.store %0, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "bias_relu" reads(%acc, %b : memref<1xf32>, memref<64xf32>) writes(%out : memref<?x64x?x?xf32>) spatial ["i", "o", "p", "q"] {
            %v_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %d = loop.load %b[%o] : memref<64xf32> -> f32
            %s_1 = arith.addf %v_1, %d : f32
            %zero = arith.constant 0.000000e+00 : f32
            %r_1 = arith.maximumf %s_1, %zero : f32
            loop.store %r_1, %out[%i, %o, %p, %q] : f32 -> memref<?x64x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A 1x1 conv over a merged plane with a long reduction (256 steps) and 4 vectors of output
// channels: the channel kernel (packed weight, tiles of 12 points).
// CHECK-LABEL: func.func @pointwise_plane_channels
// CHECK:         loop.alloc global : memref<4x256x1x1x16xf32>
// CHECK:         loop.alloc local : memref<12x16xf32>
"memref.global"() <{sym_name = "pointwise_plane_channels_cst0", type = memref<64x256x1x1xf32>, initial_value = dense<5.000000e-01> : tensor<64x256x1x1xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @pointwise_plane_channels(%x: memref<?x256x?x?xf32>, %out: memref<?x64x?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (1)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 3 of its input padded to at least its window (1)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %w = memref.get_global @pointwise_plane_channels_cst0 : memref<64x256x1x1xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 256 : index
  %c4 = arith.constant 64 : index
  %0 = arith.constant 2 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d2, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 3 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d3, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %4 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %9 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x256x?x?xf32>, memref<64x256x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %11 = arith.addi %i2, %r1 : index
                  %12 = arith.addi %i3, %r2 : index
                  %13 = loop.load %x[%i0, %r0, %11, %12] : memref<?x256x?x?xf32> -> f32
                  %14 = loop.load %w[%i1, %r0, %r1, %r2] : memref<64x256x1x1xf32> -> f32
                  %15 = arith.mulf %13, %14 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %16 = arith.addf %acc_1, %15 : f32
                  loop.store %16, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc : memref<1xf32>) writes(%out : memref<?x64x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %17 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %18 = arith.constant 0.000000e+00 : f32
            %19 = arith.maximumf %17, %18 : f32
            loop.store %19, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x64x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// Over a merged plane with a shorter reduction and one vector of channels, the row kernel:
// each input vector read once for a block of 4 channels, the plane in tiles of 4 vectors.
// CHECK-LABEL: func.func @pointwise_plane_few_channels
// CHECK-NOT:     loop.alloc global
// CHECK:         loop.alloc local : memref<4x64xf32>
"memref.global"() <{sym_name = "pointwise_plane_few_channels_cst0", type = memref<16x128x1x1xf32>, initial_value = dense<5.000000e-01> : tensor<16x128x1x1xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @pointwise_plane_few_channels(%x: memref<?x128x?x?xf32>, %out: memref<?x16x?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (1)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 3 of its input padded to at least its window (1)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %w = memref.get_global @pointwise_plane_few_channels_cst0 : memref<16x128x1x1xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 128 : index
  %c4 = arith.constant 16 : index
  %0 = arith.constant 2 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d2, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 3 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d3, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %4 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %9 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x128x?x?xf32>, memref<16x128x1x1xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %11 = arith.addi %i2, %r1 : index
                  %12 = arith.addi %i3, %r2 : index
                  %13 = loop.load %x[%i0, %r0, %11, %12] : memref<?x128x?x?xf32> -> f32
                  %14 = loop.load %w[%i1, %r0, %r1, %r2] : memref<16x128x1x1xf32> -> f32
                  %15 = arith.mulf %13, %14 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %16 = arith.addf %acc_1, %15 : f32
                  loop.store %16, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "relu" reads(%acc : memref<1xf32>) writes(%out : memref<?x16x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %17 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %18 = arith.constant 0.000000e+00 : f32
            %19 = arith.maximumf %17, %18 : f32
            loop.store %19, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x16x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A window over one channel: no static loop of two iterations, so the image's rows (in blocks
// of 4, the register tile's other axis) run in parallel rather than its leading batch (often
// of one image); the rows left after the blocks follow.
// CHECK-LABEL: func.func @one_channel_window
// CHECK:         loop.for %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %{{.*}} axis "c" {
// CHECK:             loop.for %{{.*}} axis "p.0" kind parallel {
// CHECK:             loop.for %{{.*}} axis "p" {
func.func @one_channel_window(%x: memref<?x1x?x?xf32>, %out: memref<?x1x?x?xf32>, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %oh = arith.subi %x_d2, %c2 : index
  %ow = arith.subi %x_d3, %c2 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %c = %c0 to %c1 step %c1 axis "c" {
      loop.for %p = %c0 to %oh step %c1 axis "p" {
        loop.for %q = %c0 to %ow step %c1 axis "q" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "pool_init" reads() writes(%acc : memref<1xf32>) spatial ["i", "c", "p", "q"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r = %c0 to %c3 step %c1 axis "r" {
            loop.for %s = %c0 to %c3 step %c1 axis "s" {
              loop.block "pool" reads(%x : memref<?x1x?x?xf32>) writes(%acc : memref<1xf32>) spatial ["i", "c", "p", "q"] reduction ["r", "s"] {
                %a = arith.addi %p, %r : index
                %e = arith.addi %q, %s : index
                %v = loop.load %x[%i, %c, %a, %e] : memref<?x1x?x?xf32> -> f32
                %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                %0 = arith.addf %acc_1, %v : f32
                loop.store %0, %acc[%c0] : f32 -> memref<1xf32>
              }
            }
          }
          loop.block "pool_write" reads(%acc : memref<1xf32>) writes(%out : memref<?x1x?x?xf32>) spatial ["i", "c", "p", "q"] {
            %v_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
            loop.store %v_1, %out[%i, %c, %p, %q] : f32 -> memref<?x1x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A channels-last depthwise conv over a runtime plane (a MobileNet block in NHWC): the
// channels, static and contiguous in every access, in chunks of one vector; the input moves
// with both the channels and the row (one vector per output), so each tile of the row (12
// outputs unrolled, then 8, 4, 2, 1) runs over every chunk while its input rows are in L1;
// the row's bounds checks of the window's padded columns partitioned out of its interior
// (`maxsi` / `minsi` of the first and last columns whose taps all read inside), the first
// and last columns kept with their checks, in tiles of up to 4 (`EDGE_TILE_ROWS`); the tiles' inits and epilogues
// unrolled over their outputs (accumulators in registers); the image rows run in parallel.
// CHECK-LABEL: func.func @channels_last_window
// CHECK:         loop.for %{{.*}} axis "i1" kind parallel {
// CHECK:           %[[FIRST:.*]] = arith.minsi %{{.*}}, %[[OW:.*]] : index
// CHECK:           %[[LAST:.*]] = arith.minsi %[[OW]], %{{.*}} : index
// CHECK:           %[[END:.*]] = arith.maxsi %[[LAST]], %[[FIRST]] : index
// CHECK:           loop.for %{{.*}} axis "i2.0" {
// CHECK-NEXT:        loop.for %{{.*}} step %[[C16:.*]] axis "i3.0" {
// CHECK-NEXT:          loop.alloc local : memref<4x16xf32>
// CHECK:               arith.cmpi ult, %{{.*}}, %x_d2 : index
// CHECK:           loop.for %{{.*}} = %[[FIRST]] to %{{.*}} step %[[C12:.*]] axis "i2.0" {
// CHECK:             loop.for %{{.*}} step %[[C16]] axis "i3.0" {
// CHECK-NEXT:          %[[ACC:.*]] = loop.alloc local : memref<12x16xf32>
// CHECK-NEXT:          loop.for %{{.*}} axis "i2.1" kind unrolled {
// CHECK:               loop.for %{{.*}} axis "i2.1" kind unrolled {
// CHECK:                 loop.for %{{.*}} = %{{.*}} to %[[C16]] step %{{.*}} axis "i3.1" kind vectorized {
// CHECK-NOT:               arith.cmpi ult, %{{.*}}, %x_d2
// CHECK:                   loop.store %{{.*}}, %[[ACC]]
// CHECK:               loop.for %{{.*}} axis "i2.1" kind unrolled {
// CHECK:             memref<8x16xf32>
// CHECK:             memref<4x16xf32>
// CHECK:             memref<2x16xf32>
// CHECK:           loop.for %{{.*}} = %[[END]] to %{{.*}} step %{{.*}} axis "i2.0" {
// CHECK:             loop.for %{{.*}} axis "i3.0" {
// CHECK-NEXT:          loop.alloc local : memref<4x16xf32>
// CHECK:               arith.cmpi ult, %{{.*}}, %x_d2 : index
func.func @channels_last_window(%x: memref<?x?x?x32xf32>, %w: memref<3x3x1x32xf32>, %out: memref<?x?x?x32xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d1: index, %x_d2: index, %out_d0: index, %out_d1: index, %out_d2: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 1 of its input padded to at least its window (3)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (3)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %0 = arith.constant 1 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d1, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 2 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d2, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %9 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<?x?x?x32xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x32xf32>
          }
          loop.for %r0 = %c0 to %c3 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.block "conv2d" reads(%x, %w : memref<?x?x?x32xf32>, memref<3x3x1x32xf32>) writes(%out : memref<?x?x?x32xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %11 = arith.constant 0 : index
                %12 = arith.addi %i1, %r0 : index
                %13 = arith.addi %i2, %r1 : index
                %14 = arith.constant 1 : index
                %15 = arith.subi %12, %14 : index
                %16 = arith.subi %13, %14 : index
                %17 = arith.cmpi ult, %15, %x_d1 : index
                %18 = arith.subi %x_d1, %14 : index
                %19 = arith.minui %15, %18 : index
                %20 = arith.cmpi ult, %16, %x_d2 : index
                %21 = arith.andi %17, %20 : i1
                %22 = arith.subi %x_d2, %14 : index
                %23 = arith.minui %16, %22 : index
                %24 = loop.load %x[%i0, %19, %23, %i3] : memref<?x?x?x32xf32> -> f32
                %25 = arith.constant 0.000000e+00 : f32
                %26 = arith.select %21, %24, %25 : f32
                %27 = loop.load %w[%r0, %r1, %11, %i3] : memref<3x3x1x32xf32> -> f32
                %28 = arith.mulf %26, %27 : f32
                %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<?x?x?x32xf32> -> f32
                %29 = arith.addf %acc, %28 : f32
                loop.store %29, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x32xf32>
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

// A channels-last 1x1 conv over a runtime plane: the plane (dims 1 and 2 of the input and
// output, before the channels) merged into one runtime loop of H * W points through
// `memref.collapse_shape`, its points in unrolled tiles x all 64 output channels as one
// vector loop (the input broadcast, each step's weight vectors shared by the tile's
// points: a GEMM's register tile), the bias added as whole vectors; the merged points run in
// parallel.
// CHECK-LABEL: func.func @channels_last_pointwise
// CHECK:         %[[X:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64]] : memref<?x?x?x32xf32> into memref<?x?x32xf32>
// CHECK:         %[[OUT:.*]] = memref.collapse_shape %out {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64]] : memref<?x?x?x64xf32> into memref<?x?x64xf32>
// CHECK:         loop.for %{{.*}} axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc local : memref<[[ROWS:[0-9]+]]x64xf32>
// CHECK:           loop.for %{{.*}} axis "r0" {
// CHECK:             loop.for %{{.*}} axis "i1.i2.fused.1" kind unrolled {
// CHECK:               loop.for %{{.*}} axis "i3" kind vectorized {
// CHECK:                 loop.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x32xf32> -> f32
// CHECK:           loop.for %{{.*}} axis "i3" kind vectorized {
// CHECK:             loop.block "bias_add"
// CHECK:               loop.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}] : f32 -> memref<?x?x64xf32>
func.func @channels_last_pointwise(%x: memref<?x?x?x32xf32>, %w: memref<1x1x32x64xf32>, %b: memref<64xf32>, %out: memref<?x?x?x64xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d1: index, %x_d2: index, %out_d0: index, %out_d1: index, %out_d2: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 1 of its input padded to at least its window (1)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (1)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %0 = arith.constant 1 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d1, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 2 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d2, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %9 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c64 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x?x?x32xf32>, memref<1x1x32x64xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %11 = arith.addi %i1, %r1 : index
                  %12 = arith.addi %i2, %r2 : index
                  %13 = loop.load %x[%i0, %11, %12, %r0] : memref<?x?x?x32xf32> -> f32
                  %14 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x32x64xf32> -> f32
                  %15 = arith.mulf %13, %14 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %16 = arith.addf %acc_1, %15 : f32
                  loop.store %16, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "bias_add" reads(%acc, %b : memref<1xf32>, memref<64xf32>) writes(%out : memref<?x?x?x64xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %17 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %18 = loop.load %b[%i3] : memref<64xf32> -> f32
            %19 = arith.addf %17, %18 : f32
            loop.store %19, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x64xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A transpose into channels-last over a runtime plane (a channels-last region's input
// edge): its plane merged (dims 2-3 of the input, 1-2 of the output), then tiled 8 x 8 (its
// 8 channels: half a vector) on the merged points and the channels, each tile a transpose in
// registers (the channels' tile vectorized outside the points'), the whole tiles in
// parallel (not the 8 channels: a team for each pixel), the points left copied one by one.
// CHECK-LABEL: func.func @channels_last_transpose
// CHECK:         %[[REST:.*]] = arith.remui %[[POINTS:.*]], %[[C8:.*]] : index
// CHECK:         %[[WHOLE:.*]] = arith.subi %[[POINTS]], %[[REST]] : index
// CHECK:         loop.for %{{.*}} = %{{.*}} to %[[WHOLE]] step %[[C8]] axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:      loop.for %{{.*}} step %[[C8]] axis "i3.0" {
// CHECK-NEXT:        loop.for %{{.*}} to %[[C8]] step %{{.*}} axis "i3.1" kind vectorized {
// CHECK-NEXT:          loop.for %{{.*}} to %[[C8]] step %{{.*}} axis "i1.i2.fused.1" {
// CHECK:         loop.for %{{.*}} = %[[WHOLE]] to %[[POINTS]] step %{{.*}} axis "i1.i2.fused" {
// CHECK-NEXT:      loop.for %{{.*}} axis "i3" {
func.func @channels_last_transpose(%x: memref<?x8x?x?xf32>, %out: memref<?x?x?x8xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d1: index, %out_d2: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %0 = arith.constant 0 : index
  %1 = arith.constant 2 : index
  %2 = arith.constant 3 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %x_d2 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %x_d3 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c8 step %c1 axis "i3" {
          loop.block "transpose" reads(%x : memref<?x8x?x?xf32>) writes(%out : memref<?x?x?x8xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %3 = loop.load %x[%i0, %i3, %i1, %i2] : memref<?x8x?x?xf32> -> f32
            loop.store %3, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x8xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// A global average pool over a runtime plane, channels-last: its reduction loops have
// runtime extents; its 64 channels run as one chunk of four vectors of accumulators, the
// plane's points reduced into them, the mean stored as whole vectors; the batch in
// parallel (one chunk: nothing to share).
// CHECK-LABEL: func.func @channels_last_global_pool
// CHECK:         loop.for %{{.*}} axis "i0" kind parallel {
// CHECK:           %[[ACC:.*]] = loop.alloc local : memref<1x64xf32>
// CHECK:           loop.for %{{.*}} = %{{.*}} to %x_d1 step %{{.*}} axis "r0" {
// CHECK-NEXT:        loop.for %{{.*}} = %{{.*}} to %x_d2 step %{{.*}} axis "r1" {
// CHECK-NEXT:          loop.for %{{.*}} axis "i2" kind unrolled {
// CHECK-NEXT:            loop.for %{{.*}} axis "i3" kind vectorized {
// CHECK:                   loop.store %{{.*}}, %[[ACC]]
// CHECK:           loop.for %{{.*}} axis "i3" kind vectorized {
// CHECK:             arith.divf
func.func @channels_last_global_pool(%x: memref<?x?x?x64xf32>, %out: memref<?x1x1x64xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0)>}, %x_d0: index, %x_d1: index, %x_d2: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %0 = arith.constant 1 : index
  %1 = arith.constant 2 : index
  %2 = arith.constant 0 : index
  %3 = arith.muli %x_d1, %x_d2 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c1 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c1 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c64 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "global_avg_pool2d_sum_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %x_d1 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %x_d2 step %c1 axis "r1" {
              loop.block "global_avg_pool2d_sum" reads(%x : memref<?x?x?x64xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %4 = loop.load %x[%i0, %r0, %r1, %i3] : memref<?x?x?x64xf32> -> f32
                %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                %5 = arith.addf %acc_1, %4 : f32
                loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
              }
            }
          }
          loop.block "global_avg_pool2d" reads(%acc : memref<1xf32>) writes(%out : memref<?x1x1x64xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %7 = arith.index_cast %3 : index to i64
            %8 = arith.sitofp %7 : i64 to f32
            %9 = arith.divf %6, %8 : f32
            loop.store %9, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x1x1x64xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A channels-last 1x1 conv of 192 output channels: three chunks of four vectors, the chunk
// loop outside the merged plane; the HWIO weight packed into a panel per chunk
// (`[3][1][1][32][64]`: a chunk's steps read consecutive vectors, not 256 bytes of each
// 768-byte row), which loop-fold-constant-nests folds for a constant weight; the three
// chunks do not share evenly between two threads, so the plane's tiles run in parallel.
// CHECK-LABEL: func.func @channels_last_weight_panels
// CHECK:         %[[PANELS:.*]] = loop.alloc global : memref<3x1x1x32x64xf32>
// CHECK:         loop.block "conv2d.pack1" reads(%w : memref<1x1x32x192xf32>) writes(%[[PANELS]]
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C64:.*]] axis "i3.0" {
// CHECK:           loop.for %{{.*}} step %[[C6:.*]] axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:        loop.alloc local : memref<6x64xf32>
// CHECK:             loop.load %[[PANELS]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<3x1x1x32x64xf32> -> f32
func.func @channels_last_weight_panels(%x: memref<?x?x?x32xf32>, %w: memref<1x1x32x192xf32>, %out: memref<?x?x?x192xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d1: index, %x_d2: index, %out_d0: index, %out_d1: index, %out_d2: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 1 of its input padded to at least its window (1)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (1)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c192 = arith.constant 192 : index
  %0 = arith.constant 1 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d1, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 2 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d2, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %9 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c192 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<?x?x?x192xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x192xf32>
          }
          loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x?x?x32xf32>, memref<1x1x32x192xf32>) writes(%out : memref<?x?x?x192xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %11 = arith.addi %i1, %r1 : index
                  %12 = arith.addi %i2, %r2 : index
                  %13 = loop.load %x[%i0, %11, %12, %r0] : memref<?x?x?x32xf32> -> f32
                  %14 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x32x192xf32> -> f32
                  %15 = arith.mulf %13, %14 : f32
                  %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<?x?x?x192xf32> -> f32
                  %16 = arith.addf %acc, %15 : f32
                  loop.store %16, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x192xf32>
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

// A squeeze-excite block's gate, `sigmoid(g[n, c])`, fused into its product with the feature
// map over a runtime plane: computed once per channel (its `exp`), before the plane's loop,
// into a local buffer of 32 elements that the product reads; the plane in parallel, the
// channels vectorized.
// CHECK-LABEL: func.func @per_channel_gate
// CHECK:         loop.for %[[N:.*]] = %{{.*}} axis "i0" {
// CHECK-NEXT:      %[[GATE:.*]] = loop.alloc local : memref<32xf32>
// CHECK-NEXT:      loop.for %[[C:.*]] = %{{.*}} axis "i3" kind vectorized {
// CHECK-NEXT:        loop.block "mul.per_channel" reads(%g : memref<?x1x1x32xf32>) writes(%[[GATE]] : memref<32xf32>)
// CHECK:               math.exp
// CHECK:               loop.store %{{.*}}, %[[GATE]][%[[C]]]
// CHECK:           loop.for %{{.*}} axis "i1.i2.fused" kind parallel {
// CHECK-NEXT:        loop.for %[[C2:.*]] = %{{.*}} axis "i3" kind vectorized {
// CHECK-NEXT:          loop.block "mul" reads(%x_plane, %[[GATE]] : memref<?x?x32xf32>, memref<32xf32>)
// CHECK-NOT:             math.exp
// CHECK:                 loop.load %[[GATE]][%[[C2]]] : memref<32xf32> -> f32
// CHECK:           loop.dealloc %[[GATE]] : memref<32xf32>
func.func @per_channel_gate(%g: memref<?x1x1x32xf32>, %x: memref<?x?x?x32xf32>, %out: memref<?x?x?x32xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2, s3] -> (s1, s2, s3)>}, %g_d0: index, %x_d0: index, %x_d1: index, %x_d2: index, %out_d0: index, %out_d1: index, %out_d2: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2, s3] -> (s0, s1)>, kind = "eq", what = "'graph.mul' op needs equal sizes along dim 0 of its operands (#1 and #0)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 7 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c1 = arith.constant 1 : index
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %2 = arith.constant 2 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %x_d1 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %x_d2 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
          loop.block "mul" reads(%x, %g : memref<?x?x?x32xf32>, memref<?x1x1x32xf32>) writes(%out : memref<?x?x?x32xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %3 = loop.load %x[%i0, %i1, %i2, %i3] : memref<?x?x?x32xf32> -> f32
            %4 = arith.constant 0 : index
            %5 = loop.load %g[%i0, %4, %4, %i3] : memref<?x1x1x32xf32> -> f32
            %6 = arith.negf %5 : f32
            %7 = math.exp %6 : f32
            %8 = arith.constant 1.000000e+00 : f32
            %9 = arith.addf %8, %7 : f32
            %10 = arith.divf %8, %9 : f32
            %11 = arith.mulf %3, %10 : f32
            loop.store %11, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x32xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// A grouped 3x3 conv over a runtime plane, 8 channels a group (RegNet's): the input is read at
// the output channel's group, `x[i, (o // 8) * 8 + c, ...]`, the same for the 8 channels of a
// group. The channel kernel takes it with vectors of a group's 8 channels (half of AVX-512's
// 16 lanes): the weight packed [48 / 8][8][3][3][8], the group taken at the vector's first
// channel (`o.0 // 8`: one input broadcast to the 8 lanes), the row in tiles of 12 outputs.
// CHECK-LABEL: func.func @grouped_conv
// CHECK:         %[[PACKED:.*]] = loop.alloc global : memref<6x8x3x3x8xf32>
// CHECK:           loop.for %[[O0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "o.0" kind parallel {
// CHECK:               loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "q.0" {
// CHECK-NEXT:            %[[ACC:.*]] = loop.alloc local : memref<12x8xf32>
// CHECK:                 loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "c" {
// CHECK-NEXT:              loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "r" kind unrolled {
// CHECK-NEXT:                loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "s" kind unrolled {
// CHECK-NEXT:                  loop.for %[[Q1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "q.1" kind unrolled {
// CHECK:                         loop.for %[[O1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "o.1" kind vectorized {
// CHECK:                           %[[G:.*]] = arith.divui %[[O0]], %{{.*}} : index
// CHECK-NEXT:                      %[[BASE:.*]] = arith.muli %[[G]], %{{.*}} : index
// CHECK-NEXT:                      %[[IC:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK:                           loop.load %{{.*}}[%{{.*}}, %[[IC]], %{{.*}}, %{{.*}}] : memref<?x48x?x?xf32> -> f32
// CHECK:                           loop.load %[[PACKED]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[O1]]]
// CHECK:                           loop.store %{{.*}}, %[[ACC]][%[[Q1]], %[[O1]]] : f32 -> memref<12x8xf32>
// CHECK:                 loop.dealloc %[[ACC]] : memref<12x8xf32>
// CHECK:               loop.alloc local : memref<8x8xf32>
func.func @grouped_conv(%x: memref<?x48x?x?xf32>, %k: memref<48x8x3x3xf32>, %out: memref<?x48x?x?xf32>, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  %oh = arith.subi %x_d2, %c2 : index
  %ow = arith.subi %x_d3, %c2 : index
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %o = %c0 to %c48 step %c1 axis "o" {
      loop.for %p = %c0 to %oh step %c1 axis "p" {
        loop.for %q = %c0 to %ow step %c1 axis "q" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv_init" reads() writes(%acc : memref<1xf32>) spatial ["i", "o", "p", "q"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %c = %c0 to %c8 step %c1 axis "c" {
            loop.for %r = %c0 to %c3 step %c1 axis "r" {
              loop.for %s = %c0 to %c3 step %c1 axis "s" {
                loop.block "conv" reads(%x, %k : memref<?x48x?x?xf32>, memref<48x8x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i", "o", "p", "q"] reduction ["c", "r", "s"] {
                  %eight = arith.constant 8 : index
                  %g = arith.divui %o, %eight : index
                  %base = arith.muli %g, %eight : index
                  %ic = arith.addi %base, %c : index
                  %a = arith.addi %p, %r : index
                  %e = arith.addi %q, %s : index
                  %v = loop.load %x[%i, %ic, %a, %e] : memref<?x48x?x?xf32> -> f32
                  %u = loop.load %k[%o, %c, %r, %s] : memref<48x8x3x3xf32> -> f32
                  %m = arith.mulf %v, %u : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %0 = arith.addf %acc_1, %m : f32
                  loop.store %0, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "store" reads(%acc : memref<1xf32>) writes(%out : memref<?x48x?x?xf32>) spatial ["i", "o", "p", "q"] {
            %v_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
            loop.store %v_1, %out[%i, %o, %p, %q] : f32 -> memref<?x48x?x?xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A channels-last 1x1 conv whose 116 output channels (ShuffleNet's) are no multiple of a
// vector: split in nests where whole chunks end, each a copy over the channels left with its
// channel loop from 0 and each access at the channel plus the split point: 0-63 (a chunk of 4
// vectors, 6 points a tile), 64-111 (3 vectors, 8 points), 112-115 (4 lanes, 12 points).
// CHECK-LABEL: func.func @channels_last_peeled
// CHECK:         loop.for %{{.*}} axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:      %{{.*}} = loop.alloc local : memref<6x64xf32>
// CHECK:         loop.for %{{.*}} axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:      %{{.*}} = loop.alloc local : memref<8x48xf32>
// CHECK:             axis "r0"
// CHECK:             loop.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i3" kind vectorized {
// CHECK-NEXT:          %[[SHIFTED:.*]] = arith.addi %[[C]], %[[C64:.*]] : index
// CHECK:                 loop.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[SHIFTED]]] : memref<1x1x32x116xf32> -> f32
// CHECK:         loop.for %{{.*}} axis "i1.i2.fused.0" kind parallel {
// CHECK-NEXT:      %{{.*}} = loop.alloc local : memref<12x4xf32>
// CHECK:             axis "r0"
// CHECK:             loop.for %[[D:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i3" kind vectorized {
// CHECK-NEXT:          %[[SHIFTED2:.*]] = arith.addi %[[D]], %[[C112:.*]] : index
func.func @channels_last_peeled(%x: memref<?x?x?x32xf32>, %w: memref<1x1x32x116xf32>, %b: memref<116xf32>, %out: memref<?x?x?x116xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, s1, s2)>}, %x_d0: index, %x_d1: index, %x_d2: index, %out_d0: index, %out_d1: index, %out_d2: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 1 of its input padded to at least its window (1)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 1)>, kind = "ge", what = "'graph.conv2d' op needs dim 2 of its input padded to at least its window (1)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 116 : index
  %0 = arith.constant 1 : index
  %1 = arith.constant 1 : index
  %2 = arith.subi %x_d1, %1 : index
  %3 = arith.constant 1 : index
  %4 = arith.addi %2, %3 : index
  %5 = arith.constant 2 : index
  %6 = arith.constant 1 : index
  %7 = arith.subi %x_d2, %6 : index
  %8 = arith.constant 1 : index
  %9 = arith.addi %7, %8 : index
  %10 = arith.constant 0 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %9 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c64 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<?x?x?x32xf32>, memref<1x1x32x116xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %11 = arith.addi %i1, %r1 : index
                  %12 = arith.addi %i2, %r2 : index
                  %13 = loop.load %x[%i0, %11, %12, %r0] : memref<?x?x?x32xf32> -> f32
                  %14 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x32x116xf32> -> f32
                  %15 = arith.mulf %13, %14 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %16 = arith.addf %acc_1, %15 : f32
                  loop.store %16, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "bias_add" reads(%acc, %b : memref<1xf32>, memref<116xf32>) writes(%out : memref<?x?x?x116xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %17 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %18 = loop.load %b[%i3] : memref<116xf32> -> f32
            %19 = arith.addf %17, %18 : f32
            loop.store %19, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x?x?x116xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A ceil-mode max pool over a runtime plane reading its padding inlined (bounds checks on the
// row and the column, `tensor-expr-inline`'s pools over runtime extents): its rows split where
// the row checks change; in every part the columns split where their checks change: in the
// first and last rows (reading padding rows) the interior columns in vectors with the row's
// check only (the same for every lane), in the rows between the first columns with the column
// checks only, the interior in vectors of 64, then of 16, the last masked (stride-2 reads),
// with no check at all (the row read at `2 * i + r0`, the column at `2 * i + r1`, unclamped),
// the last columns with the column checks. Every part's max is `nsz` (a max's order and the
// sign of a zero it returns are free, as in the static rules), its accumulator second (the
// lowering's NaN test then falls on the value read, off the accumulator's chain).
// CHECK-LABEL: func.func @guarded_pool
// CHECK:         loop.for %{{.*}} axis "i2" {
// CHECK:           loop.for %{{.*}} axis "i3" {
// CHECK:             arith.cmpi ult, %{{.*}}, %x_d2 : index
// CHECK:             arith.cmpi ult, %{{.*}}, %x_d3 : index
// CHECK:           loop.for %{{.*}} step %c64 axis "i3.0" {
// CHECK:               loop.for %{{.*}} axis "i3.1" kind vectorized {
// CHECK-NOT:             arith.cmpi ult, %{{.*}}, %x_d3 : index
// CHECK:                 arith.cmpi ult, %{{.*}}, %x_d2 : index
// CHECK:         loop.for %{{.*}} axis "i2" {
// CHECK:           loop.for %{{.*}} axis "i3" {
// CHECK-NOT:         arith.cmpi ult, %{{.*}}, %x_d2 : index
// CHECK:             arith.cmpi ult, %{{.*}}, %x_d3 : index
// CHECK:           loop.for %[[TILE:.*]] = %{{.*}} to %{{.*}} step %c64 axis "i3.0" {
// CHECK:             loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:          loop.for %[[LANE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} axis "i3.1" kind vectorized {
// CHECK-NEXT:            %[[COL:.*]] = arith.addi %[[TILE]], %[[LANE]] : index
// CHECK-NOT:             arith.cmpi
// CHECK-NOT:             arith.minui
// CHECK:                 %[[X2:.*]] = arith.muli %[[COL]], %{{.*}} : index
// CHECK-NEXT:            %[[READ:.*]] = arith.addi %[[X2]], %{{.*}} : index
// CHECK-NOT:             arith.cmpi
// CHECK:                 loop.load %x[%{{.*}}, %{{.*}}, %{{.*}}, %[[READ]]] : memref<?x4x?x?xf32> -> f32
// CHECK:                 %[[ACC:.*]] = loop.load %{{.*}}[%[[LANE]]] : memref<64xf32> -> f32
// CHECK-NEXT:            arith.maximumf %{{.*}}, %[[ACC]] fastmath<nsz> : f32
// CHECK:           loop.for %{{.*}} axis "i3" {
// CHECK:             arith.cmpi ult, %{{.*}}, %x_d3 : index
// CHECK:         loop.for %{{.*}} axis "i2" {
// CHECK:           loop.for %{{.*}} axis "i3" {
// CHECK:             arith.cmpi ult, %{{.*}}, %x_d2 : index
func.func @guarded_pool(%x: memref<?x4x?x?xf32>, %out: memref<?x4x?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0, (((s1 + -2) floordiv 2) + 1), (((s2 + -2) floordiv 2) + 1))>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2] -> (s1, 3)>, kind = "ge", what = "'graph.max_pool2d' op needs dim 2 of its input padded to at least its window (3)"}, {sizes = affine_map<()[s0, s1, s2] -> (s2, 3)>, kind = "ge", what = "'graph.max_pool2d' op needs dim 3 of its input padded to at least its window (3)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 6 : i64} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %0 = arith.constant 0 : index
  %1 = arith.constant 2 : index
  %2 = arith.constant 3 : index
  %3 = arith.constant 2 : index
  %4 = arith.subi %x_d2, %3 : index
  %5 = arith.constant 2 : index
  %6 = arith.divui %4, %5 : index
  %7 = arith.constant 1 : index
  %8 = arith.addi %6, %7 : index
  %9 = arith.constant 2 : index
  %10 = arith.subi %x_d3, %9 : index
  %11 = arith.constant 2 : index
  %12 = arith.divui %10, %11 : index
  %13 = arith.constant 1 : index
  %14 = arith.addi %12, %13 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %8 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %14 step %c1 axis "i3" {
          loop.block "max_pool2d_init" reads() writes(%out : memref<?x4x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0xff800000 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x4x?x?xf32>
          }
          loop.for %r0 = %c0 to %c3 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.block "max_pool2d" reads(%x : memref<?x4x?x?xf32>) writes(%out : memref<?x4x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %15 = arith.constant 2 : index
                %16 = arith.muli %i2, %15 : index
                %17 = arith.addi %16, %r0 : index
                %18 = arith.muli %i3, %15 : index
                %19 = arith.addi %18, %r1 : index
                %20 = arith.cmpi ult, %17, %x_d2 : index
                %21 = arith.constant 1 : index
                %22 = arith.subi %x_d2, %21 : index
                %23 = arith.minui %17, %22 : index
                %24 = arith.cmpi ult, %19, %x_d3 : index
                %25 = arith.andi %20, %24 : i1
                %26 = arith.subi %x_d3, %21 : index
                %27 = arith.minui %19, %26 : index
                %28 = loop.load %x[%i0, %i1, %23, %27] : memref<?x4x?x?xf32> -> f32
                %29 = arith.constant 0xff800000 : f32
                %30 = arith.select %25, %28, %29 : f32
                %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<?x4x?x?xf32> -> f32
                %31 = arith.maximumf %acc, %30 : f32
                loop.store %31, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x4x?x?xf32>
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

// A concat along the channels over runtime planes (as TOPI's concat lowers: each element picks
// its piece with a `select` on `i1 < 64`, every piece read at a clamped channel): split at 64
// into one nest per piece, each reading its piece alone, unclamped; with threads, the pieces as
// slices of their channels inside one parallel loop (8 slices: 8 and 4 channels each). The
// second piece's plane, whose sizes are other arguments than the loops' bounds but equal to
// them by the `eq` size checks, merges into one run of points like the first's, vectorized.
// CHECK-LABEL: func.func @runtime_concat
// CHECK:         loop.for %[[S:.*]] = %c0 to %c8 step %c1 axis "i1.s" kind parallel {
// CHECK:           %[[A:.*]] = memref.collapse_shape %a {{.*}} into memref<?x64x?xf32>
// CHECK:           loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i1.c" {
// CHECK:             loop.for %{{.*}} axis "i2.i3.fused.1" kind vectorized {
// CHECK-NOT:           arith.select
// CHECK:               loop.load %[[A]]
// CHECK:           %[[B:.*]] = memref.collapse_shape %b {{.*}} into memref<?x32x?xf32>
// CHECK:           loop.for %{{.*}} = %c0 to %c4 step %c1 axis "i1.c" {
// CHECK:             loop.for %{{.*}} axis "i2.i3.fused.1" kind vectorized {
// CHECK-NOT:           arith.select
// CHECK:               loop.load %[[B]]
// SERIAL-LABEL: func.func @runtime_concat
// SERIAL-NOT:     parallel
// SERIAL:         loop.for %{{.*}} = %c0 to %c64 step %c1 axis "i1" {
// SERIAL:           loop.for %{{.*}} axis "i2.i3.fused.1" kind vectorized {
// SERIAL:         loop.for %{{.*}} = %c0 to %c32 step %c1 axis "i1" {
// SERIAL:           loop.for %{{.*}} axis "i2.i3.fused.1" kind vectorized {
func.func @runtime_concat(%a: memref<?x64x?x?xf32>, %b: memref<?x32x?x?xf32>, %out: memref<?x96x?x?xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s0, s1, s2)>}, %a_d0: index, %a_d2: index, %a_d3: index, %b_d0: index, %b_d2: index, %b_d3: index, %out_d0: index, %out_d2: index, %out_d3: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s3, s0)>, kind = "eq", what = "'graph.concat' op needs equal sizes along dim 0 of its operands (#1 and #0)"}, {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s4, s1)>, kind = "eq", what = "'graph.concat' op needs equal sizes along dim 2 of its operands (#1 and #0)"}, {sizes = affine_map<()[s0, s1, s2, s3, s4, s5] -> (s5, s2)>, kind = "eq", what = "'graph.concat' op needs equal sizes along dim 3 of its operands (#1 and #0)"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 9 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c96 = arith.constant 96 : index
  loop.for %i0 = %c0 to %a_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c96 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %a_d2 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %a_d3 step %c1 axis "i3" {
          loop.block "concat" reads(%b, %a : memref<?x32x?x?xf32>, memref<?x64x?x?xf32>) writes(%out : memref<?x96x?x?xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 64 : index
            %1 = arith.subi %i1, %0 : index
            %2 = arith.constant 31 : index
            %3 = arith.minui %1, %2 : index
            %4 = loop.load %b[%i0, %3, %i2, %i3] : memref<?x32x?x?xf32> -> f32
            %5 = arith.constant 63 : index
            %6 = arith.minui %i1, %5 : index
            %7 = loop.load %a[%i0, %6, %i2, %i3] : memref<?x64x?x?xf32> -> f32
            %8 = arith.cmpi ult, %i1, %0 : index
            %9 = arith.select %8, %7, %4 : f32
            loop.store %9, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x96x?x?xf32>
          }
        }
      }
    }
  }
  func.return
}

// -----

// A global average pool of an NCHW image over a runtime plane (as convert-tensor-expr-to-loop
// makes it: a sum over the rows and columns into a local accumulator, then the division): the
// two reduction loops merge into one over the plane's points (the input collapsed), summed in
// 8 x 16 partials from 0 (there may be no whole block): blocks of 128 points, then whole
// vectors into the first row of partials, then single points into its first lane, the
// partials folded and added to the accumulator; the channels in parallel.
// CHECK-LABEL: func.func @nchw_global_pool
// CHECK:         loop.for %{{.*}} axis "i1" kind parallel {
// CHECK:           %[[PLANE:.*]] = memref.collapse_shape %x {{.*}} into memref<?x8x?xf32>
// CHECK:           %[[PART:.*]] = loop.alloc local : memref<8x16xf32>
// CHECK:           loop.block "global_avg_pool2d_sum.partials" reads() writes(%[[PART]] : memref<8x16xf32>)
// CHECK:           loop.for %{{.*}} = %c0 to %[[BLOCKS:.*]] step %c128 axis "r0.r1.fused.o" {
// CHECK:               loop.for %{{.*}} kind vectorized {
// CHECK:                 loop.load %[[PLANE]]
// CHECK:           loop.for %{{.*}} = %[[BLOCKS]] to %[[VECTORS:.*]] step %c16 axis "r0.r1.fused.t" {
// CHECK:               loop.for %{{.*}} kind vectorized {
// CHECK:                 loop.load %[[PLANE]]
// CHECK:           loop.for %{{.*}} = %[[VECTORS]] to %{{.*}} step %c1 axis "r0.r1.fused.s" {
// CHECK:               loop.for %{{.*}} = %c0 to %c1 step %c1 axis "r0.r1.fused.l" kind vectorized {
// CHECK:                 loop.load %[[PLANE]]
// CHECK:           loop.block "global_avg_pool2d_sum.combine" reads(%[[PART]], %acc
// CHECK:           loop.block "global_avg_pool2d" reads(%acc
func.func @nchw_global_pool(%x: memref<?x8x?x?xf32>, %out: memref<?x8x1x1xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2] -> (s0)>}, %x_d0: index, %x_d2: index, %x_d3: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %0 = arith.constant 2 : index
  %1 = arith.constant 3 : index
  %2 = arith.constant 0 : index
  %3 = arith.muli %x_d2, %x_d3 : index
  loop.for %i0 = %c0 to %x_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c1 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c1 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "global_avg_pool2d_sum_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %x_d2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %x_d3 step %c1 axis "r1" {
              loop.block "global_avg_pool2d_sum" reads(%x : memref<?x8x?x?xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %4 = loop.load %x[%i0, %i1, %r0, %r1] : memref<?x8x?x?xf32> -> f32
                %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                %5 = arith.addf %acc_1, %4 : f32
                loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
              }
            }
          }
          loop.block "global_avg_pool2d" reads(%acc : memref<1xf32>) writes(%out : memref<?x8x1x1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %7 = arith.index_cast %3 : index to i64
            %8 = arith.sitofp %7 : i64 to f32
            %9 = arith.divf %6, %8 : f32
            loop.store %9, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x8x1x1xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A nearest 2x upsampling over a plane of runtime size: its input row is read one element per
// two outputs (`j / 2`, a repeated load): the row is vectorized like any other, whole vectors
// then a masked one, the vectorizer reading half a vector and repeating each lane.
// CHECK-LABEL: func.func @upsample
// CHECK:         loop.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] axis "j.0" {
// CHECK-NEXT:      loop.for %[[J1:.*]] = %{{.*}} to %[[C16]] step %{{.*}} axis "j.1" kind vectorized {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[J0]], %[[J1]] : index
// CHECK:               %[[HALF:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK-NEXT:          loop.load %x[%{{.*}}, %{{.*}}, %[[HALF]]]
// CHECK:           loop.for %{{.*}} axis "j.0" {
// CHECK:             arith.minui
// CHECK-NEXT:        loop.for %{{.*}} axis "j.1" kind vectorized {
// CHECK-NOT:     axis "j" {
func.func @upsample(%x: memref<4x?x?xf32>, %out: memref<4x?x?xf32>, %x_d1: index, %x_d2: index, %out_d1: index, %out_d2: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %c = %c0 to %c4 step %c1 axis "c" {
    loop.for %i = %c0 to %out_d1 step %c1 axis "i" {
      loop.for %j = %c0 to %out_d2 step %c1 axis "j" {
        loop.block "upsample" reads(%x : memref<4x?x?xf32>) writes(%out : memref<4x?x?xf32>) spatial ["c", "i", "j"] {
          %two = arith.constant 2 : index
          %h = arith.divui %i, %two : index
          %w = arith.divui %j, %two : index
          %v = loop.load %x[%c, %h, %w] : memref<4x?x?xf32> -> f32
          loop.store %v, %out[%c, %i, %j] : f32 -> memref<4x?x?xf32>
        }
      }
    }
  }
  func.return
}

// -----

// A window over a runtime row scaled by a 0-d buffer's one element (a quantization scale, a
// hard-swish's constant kept as a tensor): that read does not move with the row, which is
// vectorized as any other.
// CHECK-LABEL: func.func @scalar_operand
// CHECK:         loop.for %{{.*}} axis "j.1" kind vectorized {
// CHECK:           loop.load %s[] : memref<f32> -> f32
func.func @scalar_operand(%x: memref<?xf32>, %s: memref<f32>, %out: memref<?xf32>, %x_d0: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  loop.for %j = %c0 to %out_d0 step %c1 axis "j" {
    loop.block "init" reads() writes(%out : memref<?xf32>) spatial ["j"] {
      %zero = arith.constant 0.0 : f32
      loop.store %zero, %out[%j] : f32 -> memref<?xf32>
    }
    loop.for %r = %c0 to %c3 step %c1 axis "r" {
      loop.block "sum" reads(%x, %s, %out : memref<?xf32>, memref<f32>, memref<?xf32>) writes(%out : memref<?xf32>) spatial ["j"] reduction ["r"] {
        %i = arith.addi %j, %r : index
        %v = loop.load %x[%i] : memref<?xf32> -> f32
        %k = loop.load %s[] : memref<f32> -> f32
        %p = arith.mulf %v, %k : f32
        %a = loop.load %out[%j] : memref<?xf32> -> f32
        %b = arith.addf %a, %p : f32
        loop.store %b, %out[%j] : f32 -> memref<?xf32>
      }
    }
  }
  func.return
}

// -----

// Attention's `p @ v` over a runtime sequence, accumulating into its output: it takes the
// channels-last kernel once its accumulator is a local (`_accumulate_locally`): tiles of 6
// of the sequence's rows x the head's 64 channels in registers (4 vectors each), the
// reduction over the runtime sequence inside, the tiles in parallel (serially on one thread).

// CHECK-LABEL: func.func @attention_context
// CHECK:         loop.for %i2.0 = %c0 to %i2.whole step %c6 axis "i2.0" kind parallel {
// CHECK-NEXT:      %acc = loop.alloc local : memref<6x64xf32>
// CHECK:           loop.for %r0 = %c0 to %p_d3 step %c1 axis "r0" {
// CHECK:             loop.for %i2.1_1 = %c0 to %c6 step %c1 axis "i2.1" kind unrolled {
// CHECK:               loop.for %i3_1 = %c0 to %c64 step %c1 axis "i3" kind vectorized {
// CHECK:                 loop.block "matmul" reads(%p, %v : memref<?x4x?x?xf32>, memref<?x4x?x64xf32>) writes(%acc : memref<6x64xf32>)
// CHECK:           loop.block "matmul.local_write" reads(%acc : memref<6x64xf32>) writes(%out : memref<?x4x?x64xf32>)
// ALLCORES-LABEL: func.func @attention_context
// ALLCORES:         kind parallel
// SERIAL-LABEL: func.func @attention_context
// SERIAL-NOT:     kind parallel
// SERIAL:         %acc = loop.alloc local : memref<6x64xf32>
func.func @attention_context(%p: memref<?x4x?x?xf32>, %v: memref<?x4x?x64xf32>, %out: memref<?x4x?x64xf32> {dlc.dim_sizes = affine_map<()[s0, s1, s2, s3, s4] -> (s0, s1)>}, %p_d0: index, %p_d2: index, %p_d3: index, %v_d0: index, %v_d2: index, %out_d0: index, %out_d2: index) attributes {dlc.size_checks = [{sizes = affine_map<()[s0, s1, s2, s3, s4] -> (s0, s3)>, kind = "eq", what = "'graph.matmul' op (node '/blocks/blocks.0/attention/MatMul_1') needs equal sizes along batch dim 0 of its operands"}, {sizes = affine_map<()[s0, s1, s2, s3, s4] -> (s2, s4)>, kind = "eq", what = "'graph.matmul' op (node '/blocks/blocks.0/attention/MatMul_1') needs equal contracting dims"}], dlc.num_outputs = 1 : i64, dlc.dim_args = 7 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c4 = arith.constant 4 : index
  %0 = arith.constant 0 : index
  %1 = arith.constant 2 : index
  %2 = arith.constant 3 : index
  loop.for %i0 = %c0 to %p_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %p_d2 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c64 step %c1 axis "i3" {
          loop.block "matmul_init" reads() writes(%out : memref<?x4x?x64xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x4x?x64xf32>
          }
          loop.for %r0 = %c0 to %p_d3 step %c1 axis "r0" {
            loop.block "matmul" reads(%p, %v : memref<?x4x?x?xf32>, memref<?x4x?x64xf32>) writes(%out : memref<?x4x?x64xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0"] {
              %3 = loop.load %p[%i0, %i1, %i2, %r0] : memref<?x4x?x?xf32> -> f32
              %4 = loop.load %v[%i0, %i1, %r0, %i3] : memref<?x4x?x64xf32> -> f32
              %5 = arith.mulf %3, %4 : f32
              %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<?x4x?x64xf32> -> f32
              %6 = arith.addf %acc, %5 : f32
              loop.store %6, %out[%i0, %i1, %i2, %i3] : f32 -> memref<?x4x?x64xf32>
            }
          }
        }
      }
    }
  }
  func.return
}

// -----

// A concat along a runtime axis (a detector's heads joined along their flattened planes):
// every output reads all three pieces at clamped indices and picks one by its runtime
// offsets. The nest is split at the offsets (the loop's bound is their chain of sums), each
// part from 0 to its piece's size, reading that piece alone, its index unclamped, the row
// vectorized.
// CHECK-LABEL: func.func @runtime_axis_concat
// CHECK:         %[[AB:.*]] = arith.addi %a_d2, %b_d2 : index
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i1" kind parallel {
// CHECK:           %[[WHOLE:.*]] = arith.subi %a_d2, %{{.*}} : index
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %[[WHOLE]] step %c16 axis "i2.0" {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c16 step %c1 axis "i2.1" kind vectorized {
// CHECK-NEXT:          %[[I:.*]] = arith.addi
// CHECK-NEXT:          loop.block "concat" reads(%a : memref<?x8x?xf32>) writes(%out : memref<?x8x?xf32>)
// CHECK-NEXT:            %[[VA:.*]] = loop.load %a[%{{.*}}, %{{.*}}, %[[I]]] : memref<?x8x?xf32> -> f32
// CHECK-NEXT:            loop.store %[[VA]], %out[%{{.*}}, %{{.*}}, %[[I]]] : f32 -> memref<?x8x?xf32>
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i1" kind parallel {
// CHECK:           %[[WHOLE_B:.*]] = arith.subi %b_d2, %{{.*}} : index
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %[[WHOLE_B]] step %c16 axis "i2.0" {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c16 step %c1 axis "i2.1" kind vectorized {
// CHECK-NEXT:          %[[J:.*]] = arith.addi
// CHECK-NEXT:          loop.block "concat" reads(%b : memref<?x8x?xf32>) writes(%out : memref<?x8x?xf32>)
// CHECK-NEXT:            %[[AT:.*]] = arith.addi %[[J]], %a_d2 : index
// CHECK-NEXT:            %[[VB:.*]] = loop.load %b[%{{.*}}, %{{.*}}, %[[J]]] : memref<?x8x?xf32> -> f32
// CHECK-NEXT:            loop.store %[[VB]], %out[%{{.*}}, %{{.*}}, %[[AT]]] : f32 -> memref<?x8x?xf32>
// CHECK:         loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i1" kind parallel {
// CHECK:           %[[WHOLE_C:.*]] = arith.subi %c_d2, %{{.*}} : index
// CHECK:               loop.block "concat" reads(%c : memref<?x8x?xf32>) writes(%out : memref<?x8x?xf32>)
// CHECK-NEXT:            arith.addi %{{.*}}, %[[AB]] : index
// CHECK-NOT:     arith.select
func.func @runtime_axis_concat(%a: memref<?x8x?xf32>, %b: memref<?x8x?xf32>, %c: memref<?x8x?xf32>, %out: memref<?x8x?xf32>, %a_d0: index, %a_d2: index, %b_d0: index, %b_d2: index, %c_d0: index, %c_d2: index, %out_d0: index, %out_d2: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 8 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ab = arith.addi %a_d2, %b_d2 : index
  %abc = arith.addi %ab, %c_d2 : index
  loop.for %i0 = %c0 to %a_d0 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c8 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %abc step %c1 axis "i2" {
        loop.block "concat" reads(%c, %b, %a : memref<?x8x?xf32>, memref<?x8x?xf32>, memref<?x8x?xf32>) writes(%out : memref<?x8x?xf32>) spatial ["i0", "i1", "i2"] {
          %one = arith.constant 1 : index
          %in_c = arith.subi %i2, %ab : index
          %c_last = arith.subi %c_d2, %one : index
          %at_c = arith.minui %in_c, %c_last : index
          %vc = loop.load %c[%i0, %i1, %at_c] : memref<?x8x?xf32> -> f32
          %in_b = arith.subi %i2, %a_d2 : index
          %b_last = arith.subi %b_d2, %one : index
          %at_b = arith.minui %in_b, %b_last : index
          %vb = loop.load %b[%i0, %i1, %at_b] : memref<?x8x?xf32> -> f32
          %before_c = arith.cmpi ult, %i2, %ab : index
          %bc = arith.select %before_c, %vb, %vc : f32
          %a_last = arith.subi %a_d2, %one : index
          %at_a = arith.minui %i2, %a_last : index
          %va = loop.load %a[%i0, %i1, %at_a] : memref<?x8x?xf32> -> f32
          %before_b = arith.cmpi ult, %i2, %a_d2 : index
          %v = arith.select %before_b, %va, %bc : f32
          loop.store %v, %out[%i0, %i1, %i2] : f32 -> memref<?x8x?xf32>
        }
      }
    }
  }
  func.return
}
