// RUN: dlc-opt %s -p 'loop-default-schedule{target="llvm -mcpu=skylake-avx512 -num-cores=2 -l2-bytes=65536"}' | filecheck %s
// RUN: dlc-opt %s -p 'loop-default-schedule{target="llvm -mcpu=skylake-avx512 -num-cores=2 -l2-bytes=1048576"}' | filecheck %s --check-prefix=FITS

// A 3x3 conv on 7x7 rows whose packed weight (64 x 64 x 3 x 3 floats, 147 KB) exceeds a 64 KB
// L2: it streams from the L3 or memory at every call, so each step of the channel kernel's
// input-channel loop first prefetches the weight lines that the step 16 ahead reads, at every
// tap of the window and for each of the tile's two vectors (18 lines), and not the input
// (the taps of a row share its lines).
// CHECK-LABEL: func.func @conv3x3
// CHECK:         %w_packed = loop.alloc global : memref<2x64x3x3x32xf32>
// CHECK:         loop.for %[[R0:.*]] = %c0 to %c64 step %c1 axis "r0" {
// CHECK-NEXT:      %[[AHEAD:.*]] = arith.addi %[[R0]], %c16 : index
// CHECK:           loop.block "conv2d.prefetch" reads(%w_packed : memref<2x64x3x3x32xf32>) writes() {
// CHECK-COUNT-18:    loop.prefetch %w_packed[%{{.*}}, %[[AHEAD]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x64x3x3x32xf32>
// CHECK-NEXT:      }
// CHECK-NOT:       loop.prefetch
// A 1 MB L2 holds the weight: no prefetch (an unrolled window's 18 a step only cost issue slots).
// FITS-LABEL: func.func @conv3x3
// FITS-NOT:     loop.prefetch
func.func @conv3x3(%pad: memref<1x64x9x9xf32>, %w: memref<64x64x3x3xf32>, %out: memref<1x64x7x7xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c64 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c7 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c7 step %c1 axis "i3" {
          loop.block "conv2d_init" reads() writes(%out : memref<1x64x7x7xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x64x7x7xf32>
          }
          loop.for %r0 = %c0 to %c64 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%pad, %w : memref<1x64x9x9xf32>, memref<64x64x3x3xf32>) writes(%out : memref<1x64x7x7xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %pad[%i0, %r0, %0, %1] : memref<1x64x9x9xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<64x64x3x3xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x64x7x7xf32> -> f32
                  %5 = arith.addf %acc, %4 : f32
                  loop.store %5, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x64x7x7xf32>
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
