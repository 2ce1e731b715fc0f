// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=sapphirerapids -num-cores=1"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=skylake-avx512 -num-cores=1"}' | filecheck %s --check-prefix=L1-8WAY
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=sapphirerapids -num-cores=1" max-rows=8}' | filecheck %s --check-prefix=CAPPED

// How many rows a micro-kernel tile takes follows the operands, the reduction and the target's
// L1: a GEMM over a weight packed at compile time (a constant global, the caller's; one
// reduction step per point: nothing unrolled) blocks as many rows of A as the L1 has ways at a
// 4 KiB stride (12 of Sapphire Rapids' 48 KiB L1, 8 of Skylake-X's 32 KiB one), so that each
// row tile's pass over the panels serves more rows while MR rows lying a multiple of 4 KiB
// apart still fit one L1 set; the same GEMM over a B given at run time, and a conv whose 3x3
// window the kernel unrolls, keep 8 rows. A `max-rows` given caps every tile.

// CHECK-LABEL: func.func private @matmul_rows
// CHECK:         loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "i0.o"
// CHECK:           %[[TILE:.*]] = loop.alloc local : memref<12x32xf32>
// CHECK-NOT:     memref<8x32xf32>
// CHECK:         func.return
// L1-8WAY-LABEL: func.func private @matmul_rows
// L1-8WAY:         loop.alloc local : memref<8x32xf32>
// L1-8WAY-NOT:     memref<12x32xf32>
// L1-8WAY:         func.return
// CAPPED-LABEL:  func.func private @matmul_rows
// CAPPED:          loop.alloc local : memref<8x32xf32>
// CAPPED-NOT:      memref<12x32xf32>
// CAPPED:          func.return

"memref.global"() <{sym_name = "b", type = memref<1024x32xf32>, initial_value = dense<1.0> : tensor<1024x32xf32>, constant, sym_visibility = "private"}> : () -> ()

func.func @main(%a: memref<24x1024xf32>, %out: memref<24x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %b = memref.get_global @b : memref<1024x32xf32>
  func.call @matmul_rows(%a, %b, %out) : (memref<24x1024xf32>, memref<1024x32xf32>, memref<24x32xf32>) -> ()
  func.return
}

func.func private @matmul_rows(%a: memref<24x1024xf32>, %b: memref<1024x32xf32>, %out: memref<24x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  loop.for %i0 = %c0 to %c24 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c1024 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<24x1024xf32>, memref<1024x32xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<24x1024xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<1024x32xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %3 = arith.addf %acc_1, %2 : f32
          loop.store %3, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "matmul_write" reads(%acc : memref<1xf32>) writes(%out : memref<24x32xf32>) spatial ["i0", "i1"] {
        %4 = loop.load %acc[%c0] : memref<1xf32> -> f32
        loop.store %4, %out[%i0, %i1] : f32 -> memref<24x32xf32>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @matmul_runtime_b
// CHECK:         loop.alloc local : memref<8x32xf32>
// CHECK-NOT:     memref<12x32xf32>
// CHECK:         func.return

func.func @matmul_runtime_b(%a: memref<24x1024xf32>, %b: memref<1024x32xf32>, %out: memref<24x32xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  loop.for %i0 = %c0 to %c24 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c32 step %c1 axis "i1" {
      %acc = loop.alloc local : memref<1xf32>
      loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
        %init = arith.constant 0.000000e+00 : f32
        loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
      }
      loop.for %r0 = %c0 to %c1024 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %b : memref<24x1024xf32>, memref<1024x32xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<24x1024xf32> -> f32
          %1 = loop.load %b[%r0, %i1] : memref<1024x32xf32> -> f32
          %2 = arith.mulf %0, %1 : f32
          %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %3 = arith.addf %acc_1, %2 : f32
          loop.store %3, %acc[%c0] : f32 -> memref<1xf32>
        }
      }
      loop.block "matmul_write" reads(%acc : memref<1xf32>) writes(%out : memref<24x32xf32>) spatial ["i0", "i1"] {
        %4 = loop.load %acc[%c0] : memref<1xf32> -> f32
        loop.store %4, %out[%i0, %i1] : f32 -> memref<24x32xf32>
      }
      loop.dealloc %acc : memref<1xf32>
    }
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @conv3x3_rows
// CHECK:         loop.alloc local : memref<8x16xf32>
// CHECK-NOT:     memref<12x16xf32>
// CHECK:         func.return
// L1-8WAY-LABEL: func.func @conv3x3_rows
// L1-8WAY:         loop.alloc local : memref<8x16xf32>
// L1-8WAY:         func.return

func.func @conv3x3_rows(%x: memref<1x2x18x18xf32>, %w: memref<24x2x3x3xf32>, %out: memref<1x24x16x16xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c24 step %c1 axis "i1" {
      loop.for %i2 = %c0 to %c16 step %c1 axis "i2" {
        loop.for %i3 = %c0 to %c16 step %c1 axis "i3" {
          %acc = loop.alloc local : memref<1xf32>
          loop.block "conv2d_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %init = arith.constant 0.000000e+00 : f32
            loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
          }
          loop.for %r0 = %c0 to %c2 step %c1 axis "r0" {
            loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
              loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                loop.block "conv2d" reads(%x, %w : memref<1x2x18x18xf32>, memref<24x2x3x3xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                  %0 = arith.addi %i2, %r1 : index
                  %1 = arith.addi %i3, %r2 : index
                  %2 = loop.load %x[%i0, %r0, %0, %1] : memref<1x2x18x18xf32> -> f32
                  %3 = loop.load %w[%i1, %r0, %r1, %r2] : memref<24x2x3x3xf32> -> f32
                  %4 = arith.mulf %2, %3 : f32
                  %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
                  %5 = arith.addf %acc_1, %4 : f32
                  loop.store %5, %acc[%c0] : f32 -> memref<1xf32>
                }
              }
            }
          }
          loop.block "conv2d_write" reads(%acc : memref<1xf32>) writes(%out : memref<1x24x16x16xf32>) spatial ["i0", "i1", "i2", "i3"] {
            %6 = loop.load %acc[%c0] : memref<1xf32> -> f32
            loop.store %6, %out[%i0, %i1, %i2, %i3] : f32 -> memref<1x24x16x16xf32>
          }
          loop.dealloc %acc : memref<1xf32>
        }
      }
    }
  }
  func.return
}
