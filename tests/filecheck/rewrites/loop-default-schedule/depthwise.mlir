// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=cascadelake" threads=1}' | filecheck %s

// A depthwise conv (its input read at the output channel) on a 7x7 plane: a 7-wide row fills
// 7 of 16 lanes, so a 5x5 window takes the channel kernel: the padded input is packed
// channel-last into [1][1][11][11][32] (one panel of NR = 32 channels), the OIHW weight into
// [1][1][5][5][32]; a reduction step loads 32 channels of both at one point (7 rows of the
// output row unrolled, 2 vectors of 16 lanes), and the bias epilogue runs transposed (one
// channel at a time, the 7 outputs of its row vectorized). The pad nest before the conv is
// gone: the pack reads the unpadded input through it (`padded_plane`), zero-filling the
// border of the packed plane (rows 0-1 and 9-10 whole, then columns 0-1 and 9-10 of the rows
// between, a vector of 32 channels per point) and copying the input's 49 points, walked as
// one axis (collapsed views of the input and of the packed buffer), to their places inside
// the border (point k to 24 + (k / 7) * 11 + k % 7): 3 blocks of 16 points, each a vectorized
// loop over the 32 channels around a loop over the block's 16 points (which the vectorizer
// transposes in registers), then the last point, its channels unrolled.

// CHECK-LABEL: func.func @plane_kernel
// CHECK-NOT:     %pad = loop.alloc
// CHECK:         %[[W:.*]] = loop.alloc global : memref<1x1x5x5x32xf32>
// CHECK:         %[[X:.*]] = loop.alloc global : memref<1x1x11x11x32xf32>
// CHECK-NEXT:    %[[PLANE:.*]] = memref.collapse_shape %x {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] : memref<1x32x7x7xf32> into memref<1x32x49xf32>
// CHECK-NEXT:    %[[XV:.*]] = memref.collapse_shape %[[X]] {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64], [4 : i64]] : memref<1x1x11x11x32xf32> into memref<1x1x121x32xf32>
// CHECK:         loop.for %{{.*}} = %c0 to %c2 step %c1 axis "k0" {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c11 step %c1 axis "k1" {
// CHECK:             loop.block "conv2d.pack_plane.fill" reads() writes(%[[XV]] : memref<1x1x121x32xf32>)
// CHECK:         loop.for %[[KO:.*]] = %{{.*}} to %c48 step %c16 axis "k.o" {
// CHECK-NEXT:      loop.for %[[L:.*]] = %{{.*}} to %c32 step %{{.*}} axis "l" kind vectorized {
// CHECK-NEXT:        loop.for %[[KK:.*]] = %{{.*}} to %c16 step %{{.*}} axis "kk" {
// CHECK-NEXT:          %[[K:.*]] = arith.addi %[[KO]], %[[KK]] : index
// CHECK-NEXT:          loop.block "conv2d.pack_plane" reads(%[[PLANE]] : memref<1x32x49xf32>) writes(%[[XV]] : memref<1x1x121x32xf32>)
// CHECK:                 %[[COL:.*]] = arith.remui %[[K]], %c7 : index
// CHECK-NEXT:            %[[SHIFT:.*]] = arith.addi %c24, %[[COL]] : index
// CHECK-NEXT:            %[[ROW:.*]] = arith.divui %[[K]], %c7 : index
// CHECK-NEXT:            %[[ROWS:.*]] = arith.muli %[[ROW]], %c11 : index
// CHECK-NEXT:            %[[AT:.*]] = arith.addi %[[SHIFT]], %[[ROWS]] : index
// CHECK-NEXT:            %[[V:.*]] = loop.load %[[PLANE]][%{{.*}}, %{{.*}}, %[[K]]]
// CHECK-NEXT:            loop.store %[[V]], %[[XV]][%{{.*}}, %{{.*}}, %[[AT]], %[[L]]]
// CHECK:         loop.for %[[K2:.*]] = %c48 to %c49 step %{{.*}} axis "k" {
// CHECK-NEXT:      loop.for %{{.*}} axis "l" kind unrolled {
// CHECK:         %[[TILE:.*]] = loop.alloc local : memref<7x32xf32>
// CHECK:         loop.for %{{.*}} axis "r0" {
// CHECK-NEXT:      loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} axis "i3.i" kind unrolled {
// CHECK-NEXT:          loop.for %{{.*}} axis "i1.v" kind unrolled {
// CHECK:                 loop.for %[[L:.*]] = %{{.*}} axis "i1.l" kind vectorized {
// CHECK:                   loop.block "conv2d" reads(%[[X]], %[[W]] : memref<1x1x11x11x32xf32>, memref<1x1x5x5x32xf32>)
// CHECK:                     loop.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C:.*]]] : memref<1x1x11x11x32xf32> -> f32
// CHECK-NEXT:                loop.load %[[W]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]]] : memref<1x1x5x5x32xf32> -> f32
// CHECK:         loop.for %{{.*}} axis "i1.i" {
// CHECK-NEXT:      loop.for %{{.*}} axis "i3.i" kind vectorized {
// CHECK-NEXT:        loop.block "bias_add" reads(%[[TILE]], %b
// CHECK:         loop.dealloc %[[X]] : memref<1x1x11x11x32xf32>
// CHECK-NOT:     loop.dealloc %pad
func.func @plane_kernel(%x: memref<1x32x7x7xf32>, %w: memref<32x1x5x5xf32>, %b: memref<32xf32>, %out: memref<1x32x7x7xf32>) {
  %c0 = arith.constant 0 : index
  %c11 = arith.constant 11 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %pad = loop.alloc global : memref<1x32x11x11xf32>
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c11 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c11 step %c1 axis "i3" {
          loop.block "pad" reads(%x : memref<1x32x7x7xf32>) writes(%pad : memref<1x32x11x11xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 2 : index
            %1 = arith.subi %i2, %0 : index
            %2 = arith.subi %i3, %0 : index
            %3 = arith.constant 7 : index
            %4 = arith.cmpi ult, %1, %3 : index
            %5 = arith.constant 6 : index
            %6 = arith.minui %1, %5 : index
            %7 = arith.cmpi ult, %2, %3 : index
            %8 = arith.andi %4, %7 : i1
            %9 = arith.minui %2, %5 : index
            %10 = loop.load %x[%i0, %i1, %6, %9] : memref<1x32x7x7xf32> -> f32
            %11 = arith.constant 0.000000e+00 : f32
            %12 = arith.select %8, %10, %11 : f32
            loop.store %12, %pad[%i0, %i1, %i2, %i3] : f32 -> memref<1x32x11x11xf32>
          }
        }
      }
    }
  }
  loop.for %i0_1 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1_1 = %c0 to %c32 step %c1 axis "i1" {
      loop.for %i2_1 = %c0 to %c7 step %c1 axis "i2" {
        loop.for %i3_1 = %c0 to %c7 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c5 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c5 step %c1 axis "r1" {
              loop.block "conv2d" reads(%pad, %w : memref<1x32x11x11xf32>, memref<32x1x5x5xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %13 = arith.constant 0 : index
                %14 = arith.addi %i2_1, %r0 : index
                %15 = arith.addi %i3_1, %r1 : index
                %16 = loop.load %pad[%i0_1, %i1_1, %14, %15] : memref<1x32x11x11xf32> -> f32
                %17 = loop.load %w[%i1_1, %13, %r0, %r1] : memref<32x1x5x5xf32> -> f32
                %18 = arith.mulf %16, %17 : f32
                %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                %19 = arith.addf %acc_1, %18 : f32
                loop.store %19, %acc[%c0] : f32 -> memref<1xf32>
              }
            }
          }
          loop.block "bias_add" reads(%acc, %b : memref<1xf32>, memref<32xf32>) writes(%out : memref<1x32x7x7xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %20 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %21 = loop.load %b[%i1_1] : memref<32xf32> -> f32
            %22 = arith.addf %20, %21 : f32
            loop.store %22, %out[%i0_1, %i1_1, %i2_1, %i3_1] : f32 -> memref<1x32x7x7xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  loop.dealloc %pad : memref<1x32x11x11xf32>
  func.return
}

// -----

// A 3x3 window on a 14x14 plane: 14-wide rows fill 14 of 16 lanes, too few saved for the
// transposed epilogue and the pack (`_plane_kernel_pays`), so the row kernel stays: rows of the
// plane vectorized (14 lanes), the input read in place, no pack of the plane. (On a 7x7 plane
// the same window takes the channel kernel: each row-kernel FMA loads its own input.)

// CHECK-LABEL: func.func @negative_narrow_window
// CHECK-NOT:     pack_plane
// CHECK:         %[[TILE:.*]] = loop.alloc local : memref<{{[0-9]+}}x14xf32>
// CHECK:         loop.for %{{.*}} axis "r1" kind unrolled {
// CHECK-NEXT:      loop.for %{{.*}} axis "i2.i" kind unrolled {
// CHECK-NEXT:        loop.for %{{.*}} axis "i3.i" kind vectorized {
// CHECK-NEXT:          arith.addi
// CHECK-NEXT:          loop.block "conv2d" reads(%pad, %w : memref<1x32x16x16xf32>, memref<32x1x3x3xf32>) writes(%[[TILE]] : memref<{{[0-9]+}}x14xf32>)
func.func @negative_narrow_window(%x: memref<1x32x14x14xf32>, %w: memref<32x1x3x3xf32>, %b: memref<32xf32>, %out: memref<1x32x14x14xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c3 = arith.constant 3 : index
  %c14 = arith.constant 14 : index
  %pad = loop.alloc global : memref<1x32x16x16xf32>
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c16 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c16 step %c1 axis "i3" {
          loop.block "pad" reads(%x : memref<1x32x14x14xf32>) writes(%pad : memref<1x32x16x16xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %0 = arith.constant 1 : index
            %1 = arith.subi %i2, %0 : index
            %2 = arith.subi %i3, %0 : index
            %3 = arith.constant 14 : index
            %4 = arith.cmpi ult, %1, %3 : index
            %5 = arith.constant 13 : index
            %6 = arith.minui %1, %5 : index
            %7 = arith.cmpi ult, %2, %3 : index
            %8 = arith.andi %4, %7 : i1
            %9 = arith.minui %2, %5 : index
            %10 = loop.load %x[%i0, %i1, %6, %9] : memref<1x32x14x14xf32> -> f32
            %11 = arith.constant 0.000000e+00 : f32
            %12 = arith.select %8, %10, %11 : f32
            loop.store %12, %pad[%i0, %i1, %i2, %i3] : f32 -> memref<1x32x16x16xf32>
          }
        }
      }
    }
  }
  loop.for %i0_1 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1_1 = %c0 to %c32 step %c1 axis "i1" {
      loop.for %i2_1 = %c0 to %c14 step %c1 axis "i2" {
        loop.for %i3_1 = %c0 to %c14 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c3 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.block "conv2d" reads(%pad, %w : memref<1x32x16x16xf32>, memref<32x1x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1"] {
                %13 = arith.constant 0 : index
                %14 = arith.addi %i2_1, %r0 : index
                %15 = arith.addi %i3_1, %r1 : index
                %16 = loop.load %pad[%i0_1, %i1_1, %14, %15] : memref<1x32x16x16xf32> -> f32
                %17 = loop.load %w[%i1_1, %13, %r0, %r1] : memref<32x1x3x3xf32> -> f32
                %18 = arith.mulf %16, %17 : f32
                %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                %19 = arith.addf %acc_1, %18 : f32
                loop.store %19, %acc[%c0] : f32 -> memref<1xf32>
              }
            }
          }
          loop.block "bias_add" reads(%acc, %b : memref<1xf32>, memref<32xf32>) writes(%out : memref<1x32x14x14xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %20 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %21 = loop.load %b[%i1_1] : memref<32xf32> -> f32
            %22 = arith.addf %20, %21 : f32
            loop.store %22, %out[%i0_1, %i1_1, %i2_1, %i3_1] : f32 -> memref<1x32x14x14xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  loop.dealloc %pad : memref<1x32x16x16xf32>
  func.return
}
