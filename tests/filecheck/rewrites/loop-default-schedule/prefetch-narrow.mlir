// RUN: dlc-opt %s -p 'loop-default-schedule{target="llvm -mcpu=sapphirerapids -num-cores=2"}' | filecheck %s

// A GEMM + bias whose 10 columns are fewer than a vector's 16 lanes (an MLP's last layer on a
// block of 32 rows): its tiles of 8 rows x 10 columns read no whole vector of the weight for
// the prefetch to run ahead of, and the rows' inputs are broadcast per tile row. A kernel
// with a long reduction (512 steps) but nothing to prefetch gets no prefetch block (an empty
// one, reading and writing nothing, would not verify).

// CHECK-LABEL: func.func private @narrow_gemm
// CHECK:         loop.for %{{.*}} axis "r0"
// CHECK-NOT:     loop.prefetch
// CHECK-NOT:     "matmul.prefetch"
// CHECK:         loop.block "matmul" reads(%relu1, %w : memref<32x512xf32>, memref<512x10xf32>) writes(%tile : memref<8x10xf32>)
builtin.module {
  "memref.global"() <{sym_name = "narrow_w", type = memref<512x10xf32>, initial_value = dense<5.000000e-01> : tensor<512x10xf32>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "narrow_bias", type = memref<10xf32>, initial_value = dense<1.000000e-01> : tensor<10xf32>, sym_visibility = "private", constant}> : () -> ()
  func.func @main(%x: memref<32x512xf32>, %y: memref<32x10xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %w = memref.get_global @narrow_w : memref<512x10xf32>
    %bias = memref.get_global @narrow_bias : memref<10xf32>
    func.call @narrow_gemm(%x, %w, %bias, %y) : (memref<32x512xf32>, memref<512x10xf32>, memref<10xf32>, memref<32x10xf32>) -> ()
    func.return
  }
  func.func private @narrow_gemm(%relu1: memref<32x512xf32>, %w: memref<512x10xf32>, %bias: memref<10xf32>, %out: memref<32x10xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c512 = arith.constant 512 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %c32 = arith.constant 32 : index
    loop.for %i0 = %c0 to %c32 step %c1 axis "i0" {
      loop.for %i1 = %c0 to %c10 step %c1 axis "i1" {
        %acc = loop.alloc local : memref<1xf32>
        loop.block "matmul_init" reads() writes(%acc : memref<1xf32>) spatial ["i0", "i1"] {
          %init = arith.constant 0.000000e+00 : f32
          loop.store %init, %acc[%c0] : f32 -> memref<1xf32>
        }
        loop.for %r0 = %c0 to %c512 step %c1 axis "r0" {
          loop.block "matmul" reads(%relu1, %w : memref<32x512xf32>, memref<512x10xf32>) writes(%acc : memref<1xf32>) spatial ["i0", "i1"] reduction ["r0"] {
            %1 = loop.load %relu1[%i0, %r0] : memref<32x512xf32> -> f32
            %2 = loop.load %w[%r0, %i1] : memref<512x10xf32> -> f32
            %3 = arith.mulf %1, %2 : f32
            %acc_1 = loop.load %acc[%c0] : memref<1xf32> -> f32
            %4 = arith.addf %acc_1, %3 : f32
            loop.store %4, %acc[%c0] : f32 -> memref<1xf32>
          }
        }
        loop.block "add" reads(%acc, %bias : memref<1xf32>, memref<10xf32>) writes(%out : memref<32x10xf32>) spatial ["i0", "i1"] {
          %5 = loop.load %acc[%c0] : memref<1xf32> -> f32
          %6 = loop.load %bias[%i1] : memref<10xf32> -> f32
          %7 = arith.addf %5, %6 : f32
          loop.store %7, %out[%i0, %i1] : f32 -> memref<32x10xf32>
        }
        loop.dealloc %acc : memref<1xf32>
      }
    }
    func.return
  }
}
