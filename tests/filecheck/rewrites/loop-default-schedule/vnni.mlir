// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=cascadelake -num-cores=1"}' | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'loop-default-schedule{target="llvm -mcpu=skylake-avx512 -num-cores=1"}' | filecheck %s --check-prefix=NOVNNI

// The rule vnni-int8-gemm on int8 convs (implicit GEMMs): graph.conv2d_integer 3 -> 4 channels,
// 3x3, stride 2, padding 1, as convert-tensor-expr-to-loop writes it (the input padded in u8
// with its zero point). K = 3*3*3 = 27 (7 quads, the last zero padded), 9 output pixels.

// With the weight an argument, B (the panels) is the operand moving with the output's innermost
// axis, the input: its bytes are packed through the conv's own load (im2col fused into the
// packing; the packed position divides the column index), A is the weight, in rows.
// CHECK-LABEL: func.func private @fused_conv2d_integer_0
// CHECK:         %[[B:.*]] = loop.alloc global : memref<1x7x1x64xi8>
// CHECK:         loop.block "conv2d.pack_b_zero" reads() writes(%[[B]] : memref<1x7x1x64xi8>)
// CHECK:         loop.block "conv2d.pack_b" reads(%pad : memref<1x3x8x8xi8>) writes(%[[B]] : memref<1x7x1x64xi8>)
// CHECK:           loop.load %pad[%c0, %b0, %{{.*}}, %{{.*}}] : memref<1x3x8x8xi8> -> i8
// CHECK:           arith.xori
// CHECK:           arith.divui
// CHECK:         %[[A:.*]] = loop.alloc global : memref<4x28xi8>
// CHECK:         loop.block "conv2d.pack_a" reads(%w : memref<4x3x3x3xi8>) writes(%[[A]] : memref<4x28xi8>)
// CHECK:         loop.block "conv2d" reads(%[[A]], %[[B]] : memref<4x28xi8>, memref<1x7x1x64xi8>)
// CHECK:           loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK:         loop.block "conv2d.write"
// CHECK:           loop.store %{{.*}}, %out[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : i32 -> memref<1x4x3x3xi32>
// CHECK-NOT:     loop.block "conv2d" reads(%pad, %w
// NOVNNI-NOT:    loop.intrinsic
// NOVNNI:        loop.block "conv2d" reads(%pad, %xz, %w_packed, %wz


  func.func @c(%x: memref<1x3x6x6xi8> {dlc.unsigned}, %w: memref<4x3x3x3xi8>, %xz: memref<i8> {dlc.unsigned}, %wz: memref<i8>, %out: memref<1x4x3x3xi32>) attributes {dlc.num_outputs = 1 : i64} {
    func.call @fused_conv2d_integer_0(%x, %w, %xz, %wz, %out) : (memref<1x3x6x6xi8>, memref<4x3x3x3xi8>, memref<i8>, memref<i8>, memref<1x4x3x3xi32>) -> ()
    func.return
  }
  func.func private @fused_conv2d_integer_0(%x: memref<1x3x6x6xi8>, %w: memref<4x3x3x3xi8>, %xz: memref<i8>, %wz: memref<i8>, %out: memref<1x4x3x3xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %pad = loop.alloc global : memref<1x3x8x8xi8>
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
    loop.for %i0_1 = %c0 to %c1 step %c1 axis "i0" {
      loop.for %i1_1 = %c0 to %c4 step %c1 axis "i1" {
        loop.for %i2_1 = %c0 to %c3 step %c1 axis "i2" {
          loop.for %i3_1 = %c0 to %c3 step %c1 axis "i3" {
            loop.block "conv2d_init" reads() writes(%out : memref<1x4x3x3xi32>) spatial ["i0", "i1", "i2", "i3"] {
              %init = arith.constant 0 : i32
              loop.store %init, %out[%i0_1, %i1_1, %i2_1, %i3_1] : i32 -> memref<1x4x3x3xi32>
            }
            loop.for %r0 = %c0 to %c3 step %c1 axis "r0" {
              loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
                loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                  loop.block "conv2d" reads(%pad, %xz, %w, %wz : memref<1x3x8x8xi8>, memref<i8>, memref<4x3x3x3xi8>, memref<i8>) writes(%out : memref<1x4x3x3xi32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                    %13 = arith.constant 2 : index
                    %14 = arith.muli %i2_1, %13 : index
                    %15 = arith.addi %14, %r1 : index
                    %16 = arith.muli %i3_1, %13 : index
                    %17 = arith.addi %16, %r2 : index
                    %18 = loop.load %pad[%i0_1, %r0, %15, %17] : memref<1x3x8x8xi8> -> i8
                    %19 = arith.extui %18 : i8 to i32
                    %20 = loop.load %xz[] : memref<i8> -> i8
                    %21 = arith.extui %20 : i8 to i32
                    %22 = arith.subi %19, %21 : i32
                    %23 = loop.load %w[%i1_1, %r0, %r1, %r2] : memref<4x3x3x3xi8> -> i8
                    %24 = arith.extsi %23 : i8 to i32
                    %25 = loop.load %wz[] : memref<i8> -> i8
                    %26 = arith.extsi %25 : i8 to i32
                    %27 = arith.subi %24, %26 : i32
                    %28 = arith.muli %22, %27 : i32
                    %acc = loop.load %out[%i0_1, %i1_1, %i2_1, %i3_1] : memref<1x4x3x3xi32> -> i32
                    %29 = arith.addi %acc, %28 : i32
                    loop.store %29, %out[%i0_1, %i1_1, %i2_1, %i3_1] : i32 -> memref<1x4x3x3xi32>
                  }
                }
              }
            }
          }
        }
      }
    }
    loop.dealloc %pad : memref<1x3x8x8xi8>
    func.return
  }

// -----

// With the weight a constant global at every call, the weight takes the panels (loop-fold-
// constant-nests packs them at compile time) and the input the rows: a plain im2col copy into
// [9 pixels][28] bytes; the write-back stores each output channel of a pixel.
// CHECK-LABEL: func.func private @fused_conv2d_integer_0
// CHECK:         %[[B:.*]] = loop.alloc global : memref<1x7x1x64xi8>
// CHECK:         loop.block "conv2d.pack_b" reads(%w : memref<4x3x3x3xi8>) writes(%[[B]] : memref<1x7x1x64xi8>)
// CHECK:         %[[A:.*]] = loop.alloc global : memref<9x28xi8>
// CHECK:         loop.block "conv2d.pack_a" reads(%pad : memref<1x3x8x8xi8>) writes(%[[A]] : memref<9x28xi8>)
// CHECK-NOT:       arith.divui
// CHECK:           loop.store %{{.*}}, %[[A]][%{{.*}}, %{{.*}}] : i8 -> memref<9x28xi8>
// CHECK:         loop.block "conv2d.rowsum" reads(%[[A]]
// CHECK:         loop.block "conv2d" reads(%[[A]], %[[B]] : memref<9x28xi8>, memref<1x7x1x64xi8>)
// CHECK:           loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK:         loop.block "conv2d.write"
// NOVNNI-NOT:    loop.intrinsic
  "memref.global"() <{sym_name = "w", type = memref<4x3x3x3xi8>, initial_value = dense<1> : tensor<4x3x3x3xi8>, constant, sym_visibility = "private"}> : () -> ()

  func.func @c(%x: memref<1x3x6x6xi8> {dlc.unsigned}, %xz: memref<i8> {dlc.unsigned}, %wz: memref<i8>, %out: memref<1x4x3x3xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %w = memref.get_global @w : memref<4x3x3x3xi8>
    func.call @fused_conv2d_integer_0(%x, %w, %xz, %wz, %out) : (memref<1x3x6x6xi8>, memref<4x3x3x3xi8>, memref<i8>, memref<i8>, memref<1x4x3x3xi32>) -> ()
    func.return
  }
  func.func private @fused_conv2d_integer_0(%x: memref<1x3x6x6xi8>, %w: memref<4x3x3x3xi8>, %xz: memref<i8>, %wz: memref<i8>, %out: memref<1x4x3x3xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %pad = loop.alloc global : memref<1x3x8x8xi8>
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
    loop.for %i0_1 = %c0 to %c1 step %c1 axis "i0" {
      loop.for %i1_1 = %c0 to %c4 step %c1 axis "i1" {
        loop.for %i2_1 = %c0 to %c3 step %c1 axis "i2" {
          loop.for %i3_1 = %c0 to %c3 step %c1 axis "i3" {
            loop.block "conv2d_init" reads() writes(%out : memref<1x4x3x3xi32>) spatial ["i0", "i1", "i2", "i3"] {
              %init = arith.constant 0 : i32
              loop.store %init, %out[%i0_1, %i1_1, %i2_1, %i3_1] : i32 -> memref<1x4x3x3xi32>
            }
            loop.for %r0 = %c0 to %c3 step %c1 axis "r0" {
              loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
                loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                  loop.block "conv2d" reads(%pad, %xz, %w, %wz : memref<1x3x8x8xi8>, memref<i8>, memref<4x3x3x3xi8>, memref<i8>) writes(%out : memref<1x4x3x3xi32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                    %13 = arith.constant 2 : index
                    %14 = arith.muli %i2_1, %13 : index
                    %15 = arith.addi %14, %r1 : index
                    %16 = arith.muli %i3_1, %13 : index
                    %17 = arith.addi %16, %r2 : index
                    %18 = loop.load %pad[%i0_1, %r0, %15, %17] : memref<1x3x8x8xi8> -> i8
                    %19 = arith.extui %18 : i8 to i32
                    %20 = loop.load %xz[] : memref<i8> -> i8
                    %21 = arith.extui %20 : i8 to i32
                    %22 = arith.subi %19, %21 : i32
                    %23 = loop.load %w[%i1_1, %r0, %r1, %r2] : memref<4x3x3x3xi8> -> i8
                    %24 = arith.extsi %23 : i8 to i32
                    %25 = loop.load %wz[] : memref<i8> -> i8
                    %26 = arith.extsi %25 : i8 to i32
                    %27 = arith.subi %24, %26 : i32
                    %28 = arith.muli %22, %27 : i32
                    %acc = loop.load %out[%i0_1, %i1_1, %i2_1, %i3_1] : memref<1x4x3x3xi32> -> i32
                    %29 = arith.addi %acc, %28 : i32
                    loop.store %29, %out[%i0_1, %i1_1, %i2_1, %i3_1] : i32 -> memref<1x4x3x3xi32>
                  }
                }
              }
            }
          }
        }
      }
    }
    loop.dealloc %pad : memref<1x3x8x8xi8>
    func.return
  }

// -----

// An NHWC 3x3 conv (as graph-convert-layout{integer_only} leaves int8 convs) with a constant
// weight: the weight takes the panels, the input the rows. The depth loop over the input
// channels (outermost in the nest) moves innermost, so A's rows are packed in whole vectors
// of channel bytes. The weight zero point is a constant 0 (symmetric s8 weights): zb' = 0,
// so no row sums are computed and the write-back subtracts only za' * colsum. The input's zero
// point is a constant (3), so the column sums' nest (folded at compile time) sums za' times each
// weight, and the write-back subtracts them as they are, with no multiply.
// CHECK-LABEL: func.func private @fused_conv2d_integer_0
// CHECK-NOT:     rowsum
// CHECK:         %[[A:.*]] = loop.alloc global : memref<1x288xi8>
// CHECK:         loop.for %[[KH:.*]] = %c0 to %c3
// CHECK-NEXT:      loop.for %[[KW:.*]] = %c0 to %c3
// CHECK-NEXT:        loop.for %[[CI:.*]] = %c0 to %c32 step %c1 axis "a2" kind vectorized {
// CHECK-NEXT:          loop.block "conv2d.pack_a" reads(%x : memref<1x3x3x32xi8>) writes(%[[A]] : memref<1x288xi8>)
// CHECK:                 loop.load %x[%c0, %{{.*}}, %{{.*}}, %[[CI]]]
// CHECK:         loop.block "conv2d.colsum" reads(%w_vnni, %colsum
// CHECK:           %[[BYTE:.*]] = arith.extsi %{{.*}} : i8 to i32
// CHECK-NEXT:      %[[ZA:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      %[[TERM:.*]] = arith.muli %[[BYTE]], %[[ZA]] : i32
// CHECK:           arith.addi %{{.*}}, %[[TERM]] : i32
// CHECK-NOT:     rowsum
// CHECK:         loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK-NOT:     rowsum
// CHECK:         loop.block "conv2d.write"
// CHECK:           %[[DOT:.*]] = loop.load %tile
// CHECK-NEXT:      %[[SUM:.*]] = loop.load %colsum
// CHECK-NEXT:      arith.subi %[[DOT]], %[[SUM]] : i32
// CHECK-NOT:     rowsum
// CHECK:       func.return

// With a zero point of 2 the row sums are computed and read by the write-back.
// CHECK-LABEL: func.func private @fused_conv2d_integer_1
// CHECK:         %[[ROWSUM:.*]] = loop.alloc global : memref<1x16xi32>
// CHECK:         loop.block "conv2d.rowsum"
// CHECK:         loop.block "conv2d.write" reads(%{{.*}}, %[[ROWSUM]], %{{.*}} : {{.*}})

  "memref.global"() <{sym_name = "fused_conv2d_integer_0_cst0", type = memref<i8>, initial_value = dense<3> : tensor<i8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_0_cst1", type = memref<3x3x32x16xi8>, initial_value = dense<1> : tensor<3x3x32x16xi8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_0_cst2", type = memref<16xi8>, initial_value = dense<0> : tensor<16xi8>, sym_visibility = "private", constant}> : () -> ()
  func.func @c(%x: memref<1x3x3x32xi8> {dlc.unsigned}, %out: memref<1x1x1x16xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %xz = memref.get_global @fused_conv2d_integer_0_cst0 : memref<i8>
    %w = memref.get_global @fused_conv2d_integer_0_cst1 : memref<3x3x32x16xi8>
    %wz = memref.get_global @fused_conv2d_integer_0_cst2 : memref<16xi8>
    func.call @fused_conv2d_integer_0(%x, %xz, %w, %wz, %out) : (memref<1x3x3x32xi8>, memref<i8>, memref<3x3x32x16xi8>, memref<16xi8>, memref<1x1x1x16xi32>) -> ()
    func.return
  }
  func.func private @fused_conv2d_integer_0(%x: memref<1x3x3x32xi8>, %xz: memref<i8>, %w: memref<3x3x32x16xi8>, %wz: memref<16xi8>, %out: memref<1x1x1x16xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c16 = arith.constant 16 : index
    loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
      loop.for %i1 = %c0 to %c1 step %c1 axis "i1" {
        loop.for %i2 = %c0 to %c1 step %c1 axis "i2" {
          loop.for %i3 = %c0 to %c16 step %c1 axis "i3" {
            loop.block "conv2d_init" reads() writes(%out : memref<1x1x1x16xi32>) spatial ["i0", "i1", "i2", "i3"] {
              %init = arith.constant 0 : i32
              loop.store %init, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x1x1x16xi32>
            }
            loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
              loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
                loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                  loop.block "conv2d" reads(%x, %xz, %w, %wz : memref<1x3x3x32xi8>, memref<i8>, memref<3x3x32x16xi8>, memref<16xi8>) writes(%out : memref<1x1x1x16xi32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                    %0 = arith.addi %i1, %r1 : index
                    %1 = arith.addi %i2, %r2 : index
                    %2 = loop.load %x[%i0, %0, %1, %r0] : memref<1x3x3x32xi8> -> i8
                    %3 = arith.extui %2 : i8 to i32
                    %4 = loop.load %xz[] : memref<i8> -> i8
                    %5 = arith.extui %4 : i8 to i32
                    %6 = arith.subi %3, %5 : i32
                    %7 = loop.load %w[%r1, %r2, %r0, %i3] : memref<3x3x32x16xi8> -> i8
                    %8 = arith.extsi %7 : i8 to i32
                    %9 = loop.load %wz[%i3] : memref<16xi8> -> i8
                    %10 = arith.extsi %9 : i8 to i32
                    %11 = arith.subi %8, %10 : i32
                    %12 = arith.muli %6, %11 : i32
                    %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x1x1x16xi32> -> i32
                    %13 = arith.addi %acc, %12 : i32
                    loop.store %13, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x1x1x16xi32>
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

  "memref.global"() <{sym_name = "fused_conv2d_integer_1_cst0", type = memref<i8>, initial_value = dense<3> : tensor<i8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_1_cst1", type = memref<3x3x32x16xi8>, initial_value = dense<1> : tensor<3x3x32x16xi8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_1_cst2", type = memref<16xi8>, initial_value = dense<2> : tensor<16xi8>, sym_visibility = "private", constant}> : () -> ()
  func.func @c_nonzero(%x: memref<1x3x3x32xi8> {dlc.unsigned}, %out: memref<1x1x1x16xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %xz = memref.get_global @fused_conv2d_integer_1_cst0 : memref<i8>
    %w = memref.get_global @fused_conv2d_integer_1_cst1 : memref<3x3x32x16xi8>
    %wz = memref.get_global @fused_conv2d_integer_1_cst2 : memref<16xi8>
    func.call @fused_conv2d_integer_1(%x, %xz, %w, %wz, %out) : (memref<1x3x3x32xi8>, memref<i8>, memref<3x3x32x16xi8>, memref<16xi8>, memref<1x1x1x16xi32>) -> ()
    func.return
  }
  func.func private @fused_conv2d_integer_1(%x: memref<1x3x3x32xi8>, %xz: memref<i8>, %w: memref<3x3x32x16xi8>, %wz: memref<16xi8>, %out: memref<1x1x1x16xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c16 = arith.constant 16 : index
    loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
      loop.for %i1 = %c0 to %c1 step %c1 axis "i1" {
        loop.for %i2 = %c0 to %c1 step %c1 axis "i2" {
          loop.for %i3 = %c0 to %c16 step %c1 axis "i3" {
            loop.block "conv2d_init" reads() writes(%out : memref<1x1x1x16xi32>) spatial ["i0", "i1", "i2", "i3"] {
              %init = arith.constant 0 : i32
              loop.store %init, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x1x1x16xi32>
            }
            loop.for %r0 = %c0 to %c32 step %c1 axis "r0" {
              loop.for %r1 = %c0 to %c3 step %c1 axis "r1" {
                loop.for %r2 = %c0 to %c3 step %c1 axis "r2" {
                  loop.block "conv2d" reads(%x, %xz, %w, %wz : memref<1x3x3x32xi8>, memref<i8>, memref<3x3x32x16xi8>, memref<16xi8>) writes(%out : memref<1x1x1x16xi32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                    %0 = arith.addi %i1, %r1 : index
                    %1 = arith.addi %i2, %r2 : index
                    %2 = loop.load %x[%i0, %0, %1, %r0] : memref<1x3x3x32xi8> -> i8
                    %3 = arith.extui %2 : i8 to i32
                    %4 = loop.load %xz[] : memref<i8> -> i8
                    %5 = arith.extui %4 : i8 to i32
                    %6 = arith.subi %3, %5 : i32
                    %7 = loop.load %w[%r1, %r2, %r0, %i3] : memref<3x3x32x16xi8> -> i8
                    %8 = arith.extsi %7 : i8 to i32
                    %9 = loop.load %wz[%i3] : memref<16xi8> -> i8
                    %10 = arith.extsi %9 : i8 to i32
                    %11 = arith.subi %8, %10 : i32
                    %12 = arith.muli %6, %11 : i32
                    %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x1x1x16xi32> -> i32
                    %13 = arith.addi %acc, %12 : i32
                    loop.store %13, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x1x1x16xi32>
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

// An NHWC 1x1 conv, stride 1, unpadded (16 -> 32 channels over a 4x4 image, constant weight):
// the input is the row-major matrix A already, its 16 pixels the rows and its channels the
// depth. The kernels read it through a collapse_shape to [16, 16], with no copy.
// CHECK-LABEL: func.func private @fused_conv2d_integer_0
// CHECK:         %[[ROWS:.*]] = memref.collapse_shape %x {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] : memref<1x4x4x16xi8> into memref<16x16xi8>
// CHECK-NOT:     conv2d.pack_a
// CHECK:         loop.block "conv2d" reads(%[[ROWS]], %{{.*}} : memref<16x16xi8>, memref<{{.*}}>)
// CHECK:           loop.load %[[ROWS]][%{{.*}}, %{{.*}}] : memref<16x16xi8> -> vector<4xi8>
// CHECK:           loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK:       func.return

// A signed input (s8, extsi) is flipped into u8 as vpdpbusd needs it: the copy into the packed
// rows reads the same view, a row and a depth index per byte.
// CHECK-LABEL: func.func private @fused_conv2d_integer_1
// CHECK:         %[[ROWS:.*]] = memref.collapse_shape %x {{.*}} : memref<1x4x4x16xi8> into memref<16x16xi8>
// CHECK:         %[[A:.*]] = loop.alloc global : memref<16x16xi8>
// CHECK:         loop.block "conv2d.pack_a" reads(%[[ROWS]] : memref<16x16xi8>) writes(%[[A]] : memref<16x16xi8>)
// CHECK:           arith.xori
// CHECK:         loop.block "conv2d" reads(%[[A]], %{{.*}} : memref<16x16xi8>, memref<{{.*}}>)

  "memref.global"() <{sym_name = "fused_conv2d_integer_0_cst0", type = memref<i8>, initial_value = dense<3> : tensor<i8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_0_cst1", type = memref<1x1x16x32xi8>, initial_value = dense<1> : tensor<1x1x16x32xi8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_0_cst2", type = memref<32xi8>, initial_value = dense<0> : tensor<32xi8>, sym_visibility = "private", constant}> : () -> ()
  func.func @c0(%x: memref<1x4x4x16xi8> {dlc.unsigned}, %out: memref<1x4x4x32xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %xz = memref.get_global @fused_conv2d_integer_0_cst0 : memref<i8>
    %w = memref.get_global @fused_conv2d_integer_0_cst1 : memref<1x1x16x32xi8>
    %wz = memref.get_global @fused_conv2d_integer_0_cst2 : memref<32xi8>
    func.call @fused_conv2d_integer_0(%x, %xz, %w, %wz, %out) : (memref<1x4x4x16xi8>, memref<i8>, memref<1x1x16x32xi8>, memref<32xi8>, memref<1x4x4x32xi32>) -> ()
    func.return
  }
  func.func private @fused_conv2d_integer_0(%x: memref<1x4x4x16xi8>, %xz: memref<i8>, %w: memref<1x1x16x32xi8>, %wz: memref<32xi8>, %out: memref<1x4x4x32xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
      loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
        loop.for %i2 = %c0 to %c4 step %c1 axis "i2" {
          loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
            loop.block "conv2d_init" reads() writes(%out : memref<1x4x4x32xi32>) spatial ["i0", "i1", "i2", "i3"] {
              %init = arith.constant 0 : i32
              loop.store %init, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x4x4x32xi32>
            }
            loop.for %r0 = %c0 to %c16 step %c1 axis "r0" {
              loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
                loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                  loop.block "conv2d" reads(%x, %xz, %w, %wz : memref<1x4x4x16xi8>, memref<i8>, memref<1x1x16x32xi8>, memref<32xi8>) writes(%out : memref<1x4x4x32xi32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                    %0 = arith.addi %i1, %r1 : index
                    %1 = arith.addi %i2, %r2 : index
                    %2 = loop.load %x[%i0, %0, %1, %r0] : memref<1x4x4x16xi8> -> i8
                    %3 = arith.extui %2 : i8 to i32
                    %4 = loop.load %xz[] : memref<i8> -> i8
                    %5 = arith.extui %4 : i8 to i32
                    %6 = arith.subi %3, %5 : i32
                    %7 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x16x32xi8> -> i8
                    %8 = arith.extsi %7 : i8 to i32
                    %9 = loop.load %wz[%i3] : memref<32xi8> -> i8
                    %10 = arith.extsi %9 : i8 to i32
                    %11 = arith.subi %8, %10 : i32
                    %12 = arith.muli %6, %11 : i32
                    %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x4x4x32xi32> -> i32
                    %13 = arith.addi %acc, %12 : i32
                    loop.store %13, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x4x4x32xi32>
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

  "memref.global"() <{sym_name = "fused_conv2d_integer_1_cst0", type = memref<i8>, initial_value = dense<3> : tensor<i8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_1_cst1", type = memref<1x1x16x32xi8>, initial_value = dense<1> : tensor<1x1x16x32xi8>, sym_visibility = "private", constant}> : () -> ()
  "memref.global"() <{sym_name = "fused_conv2d_integer_1_cst2", type = memref<32xi8>, initial_value = dense<0> : tensor<32xi8>, sym_visibility = "private", constant}> : () -> ()
  func.func @c1(%x: memref<1x4x4x16xi8> , %out: memref<1x4x4x32xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %xz = memref.get_global @fused_conv2d_integer_1_cst0 : memref<i8>
    %w = memref.get_global @fused_conv2d_integer_1_cst1 : memref<1x1x16x32xi8>
    %wz = memref.get_global @fused_conv2d_integer_1_cst2 : memref<32xi8>
    func.call @fused_conv2d_integer_1(%x, %xz, %w, %wz, %out) : (memref<1x4x4x16xi8>, memref<i8>, memref<1x1x16x32xi8>, memref<32xi8>, memref<1x4x4x32xi32>) -> ()
    func.return
  }
  func.func private @fused_conv2d_integer_1(%x: memref<1x4x4x16xi8>, %xz: memref<i8>, %w: memref<1x1x16x32xi8>, %wz: memref<32xi8>, %out: memref<1x4x4x32xi32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    loop.for %i0 = %c0 to %c1 step %c1 axis "i0" {
      loop.for %i1 = %c0 to %c4 step %c1 axis "i1" {
        loop.for %i2 = %c0 to %c4 step %c1 axis "i2" {
          loop.for %i3 = %c0 to %c32 step %c1 axis "i3" {
            loop.block "conv2d_init" reads() writes(%out : memref<1x4x4x32xi32>) spatial ["i0", "i1", "i2", "i3"] {
              %init = arith.constant 0 : i32
              loop.store %init, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x4x4x32xi32>
            }
            loop.for %r0 = %c0 to %c16 step %c1 axis "r0" {
              loop.for %r1 = %c0 to %c1 step %c1 axis "r1" {
                loop.for %r2 = %c0 to %c1 step %c1 axis "r2" {
                  loop.block "conv2d" reads(%x, %xz, %w, %wz : memref<1x4x4x16xi8>, memref<i8>, memref<1x1x16x32xi8>, memref<32xi8>) writes(%out : memref<1x4x4x32xi32>) spatial ["i0", "i1", "i2", "i3"] reduction ["r0", "r1", "r2"] {
                    %0 = arith.addi %i1, %r1 : index
                    %1 = arith.addi %i2, %r2 : index
                    %2 = loop.load %x[%i0, %0, %1, %r0] : memref<1x4x4x16xi8> -> i8
                    %3 = arith.extsi %2 : i8 to i32
                    %4 = loop.load %xz[] : memref<i8> -> i8
                    %5 = arith.extsi %4 : i8 to i32
                    %6 = arith.subi %3, %5 : i32
                    %7 = loop.load %w[%r1, %r2, %r0, %i3] : memref<1x1x16x32xi8> -> i8
                    %8 = arith.extsi %7 : i8 to i32
                    %9 = loop.load %wz[%i3] : memref<32xi8> -> i8
                    %10 = arith.extsi %9 : i8 to i32
                    %11 = arith.subi %8, %10 : i32
                    %12 = arith.muli %6, %11 : i32
                    %acc = loop.load %out[%i0, %i1, %i2, %i3] : memref<1x4x4x32xi32> -> i32
                    %13 = arith.addi %acc, %12 : i32
                    loop.store %13, %out[%i0, %i1, %i2, %i3] : i32 -> memref<1x4x4x32xi32>
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

// A dense 12x8 by 8x128 GEMM on one core: two row blocks of 6 rows, two column groups of 64.
// B's panels fit the L2, so the row blocks are the outer loop and the column groups the inner
// one (a block of A stays in L1 while B streams); the tile is zeroed, accumulated and written
// back per (row block, column group).
// CHECK-LABEL: func.func private @fused_matmul_integer_0
// CHECK:         loop.for %[[IO:.*]] = %c0 to %c2 step %c1 axis "i.o" {
// CHECK-NEXT:      loop.for %[[JO:.*]] = %c0 to %c2 step %c1 axis "j.o" {
// CHECK:             loop.block "matmul.init" reads() writes(%[[TILE:.*]] : memref<6x64xi32>)
// CHECK:             loop.intrinsic "x86.avx512.vpdpbusd"
// CHECK:             loop.block "matmul.write" reads(%[[TILE]]
// CHECK-NOT:     axis "j.o"
// CHECK:         func.return
// NOVNNI-NOT:    loop.intrinsic

"memref.global"() <{sym_name = "fused_matmul_integer_0_cst0", type = memref<i8>, initial_value = dense<0> : tensor<i8>, sym_visibility = "private", constant}> : () -> ()
func.func @main(%a: memref<12x8xi8> {dlc.unsigned}, %b: memref<8x128xi8>, %out: memref<12x128xi32>) attributes {dlc.num_outputs = 1 : i64} {
  func.call @fused_matmul_integer_0(%a, %b, %out) : (memref<12x8xi8>, memref<8x128xi8>, memref<12x128xi32>) -> ()
  func.return
}
func.func private @fused_matmul_integer_0(%a: memref<12x8xi8>, %b: memref<8x128xi8>, %out: memref<12x128xi32>) attributes {dlc.num_outputs = 1 : i64} {
  %az = memref.get_global @fused_matmul_integer_0_cst0 : memref<i8>
  %bz = memref.get_global @fused_matmul_integer_0_cst0 : memref<i8>
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c12 = arith.constant 12 : index
  loop.for %i0 = %c0 to %c12 step %c1 axis "i0" {
    loop.for %i1 = %c0 to %c128 step %c1 axis "i1" {
      loop.block "matmul_init" reads() writes(%out : memref<12x128xi32>) spatial ["i0", "i1"] {
        %init = arith.constant 0 : i32
        loop.store %init, %out[%i0, %i1] : i32 -> memref<12x128xi32>
      }
      loop.for %r0 = %c0 to %c8 step %c1 axis "r0" {
        loop.block "matmul" reads(%a, %az, %b, %bz : memref<12x8xi8>, memref<i8>, memref<8x128xi8>, memref<i8>) writes(%out : memref<12x128xi32>) spatial ["i0", "i1"] reduction ["r0"] {
          %0 = loop.load %a[%i0, %r0] : memref<12x8xi8> -> i8
          %1 = arith.extui %0 : i8 to i32
          %2 = loop.load %az[] : memref<i8> -> i8
          %3 = arith.extui %2 : i8 to i32
          %4 = arith.subi %1, %3 : i32
          %5 = loop.load %b[%r0, %i1] : memref<8x128xi8> -> i8
          %6 = arith.extsi %5 : i8 to i32
          %7 = loop.load %bz[] : memref<i8> -> i8
          %8 = arith.extsi %7 : i8 to i32
          %9 = arith.subi %6, %8 : i32
          %10 = arith.muli %4, %9 : i32
          %acc = loop.load %out[%i0, %i1] : memref<12x128xi32> -> i32
          %11 = arith.addi %acc, %10 : i32
          loop.store %11, %out[%i0, %i1] : i32 -> memref<12x128xi32>
        }
      }
    }
  }
  func.return
}
