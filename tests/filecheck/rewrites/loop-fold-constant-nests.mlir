// RUN: dlc-opt %s -p loop-fold-constant-nests --split-input-file | filecheck %s

// A kernel transposes its constant weight into a buffer before using it, and is called with two
// weights: each call now passes its own transposed constant, computed at compile time; the
// transposing nest, its buffer and the original weights are gone.
// CHECK:       "memref.global"() <{sym_name = "w0_t", type = memref<3x2xf32>, initial_value = dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>, sym_visibility = "private", constant}>
// CHECK-NEXT:  "memref.global"() <{sym_name = "w1_t", type = memref<3x2xf32>, initial_value = dense<{{\[}}[7.000000e+00, 1.000000e+01], [8.000000e+00, 1.100000e+01], [9.000000e+00, 1.200000e+01]]> : tensor<3x2xf32>, sym_visibility = "private", constant}>
// CHECK-NOT:   sym_name = "w0"
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[T0:.*]] = memref.get_global @w0_t : memref<3x2xf32>
// CHECK-NEXT:    func.call @transpose_add(%x, %[[T0]], %out) : (memref<3x2xf32>, memref<3x2xf32>, memref<3x2xf32>) -> ()
// CHECK-NEXT:    %[[T1:.*]] = memref.get_global @w1_t : memref<3x2xf32>
// CHECK-NEXT:    func.call @transpose_add(%out, %[[T1]], %out)
// CHECK:       func.func private @transpose_add(%x: memref<3x2xf32>, %t: memref<3x2xf32>, %out: memref<3x2xf32>)
// CHECK-NOT:     loop.alloc
// CHECK-NOT:     loop.block "transpose"
// CHECK:         loop.block "add" reads(%x, %t : memref<3x2xf32>, memref<3x2xf32>)
// CHECK-NOT:     loop.dealloc
// CHECK:         func.return
builtin.module {
  "memref.global"() <{sym_name = "w0", type = memref<2x3xf32>, initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, constant, sym_visibility = "private"}> : () -> ()
  "memref.global"() <{sym_name = "w1", type = memref<2x3xf32>, initial_value = dense<[[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]> : tensor<2x3xf32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%x: memref<3x2xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %w0 = memref.get_global @w0 : memref<2x3xf32>
    %w1 = memref.get_global @w1 : memref<2x3xf32>
    func.call @transpose_add(%x, %w0, %out) : (memref<3x2xf32>, memref<2x3xf32>, memref<3x2xf32>) -> ()
    func.call @transpose_add(%out, %w1, %out) : (memref<3x2xf32>, memref<2x3xf32>, memref<3x2xf32>) -> ()
    func.return
  }
  func.func private @transpose_add(%x: memref<3x2xf32>, %w: memref<2x3xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = loop.alloc global : memref<3x2xf32>
    loop.for %i = %c0 to %c3 step %c1 axis "i" {
      loop.for %j = %c0 to %c2 step %c1 axis "j" {
        loop.block "transpose" reads(%w : memref<2x3xf32>) writes(%t : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %w[%j, %i] : memref<2x3xf32> -> f32
          loop.store %v, %t[%i, %j] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.for %i_1 = %c0 to %c3 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c2 step %c1 axis "j" {
        loop.block "add" reads(%x, %t : memref<3x2xf32>, memref<3x2xf32>) writes(%out : memref<3x2xf32>) spatial ["i", "j"] {
          %a = loop.load %x[%i_1, %j_1] : memref<3x2xf32> -> f32
          %b = loop.load %t[%i_1, %j_1] : memref<3x2xf32> -> f32
          %s = arith.addf %a, %b : f32
          loop.store %s, %out[%i_1, %j_1] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.dealloc %t : memref<3x2xf32>
    func.return
  }
}

// -----

// The weight comes from the entry function's own argument (not a constant): nothing changes.
// CHECK-LABEL: func.func @main
// CHECK:         func.call @transpose(%w, %out)
// CHECK:       func.func private @transpose(%w: memref<2x3xf32>, %out: memref<3x2xf32>)
// CHECK:         %t = loop.alloc global : memref<3x2xf32>
// CHECK:         loop.block "transpose"
// CHECK:         loop.dealloc %t
builtin.module {
  func.func @main(%w: memref<2x3xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    func.call @transpose(%w, %out) : (memref<2x3xf32>, memref<3x2xf32>) -> ()
    func.return
  }
  func.func private @transpose(%w: memref<2x3xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = loop.alloc global : memref<3x2xf32>
    loop.for %i = %c0 to %c3 step %c1 axis "i" {
      loop.for %j = %c0 to %c2 step %c1 axis "j" {
        loop.block "transpose" reads(%w : memref<2x3xf32>) writes(%t : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %w[%j, %i] : memref<2x3xf32> -> f32
          loop.store %v, %t[%i, %j] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.for %i_1 = %c0 to %c3 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c2 step %c1 axis "j" {
        loop.block "copy" reads(%t : memref<3x2xf32>) writes(%out : memref<3x2xf32>) spatial ["i", "j"] {
          %v_1 = loop.load %t[%i_1, %j_1] : memref<3x2xf32> -> f32
          loop.store %v_1, %out[%i_1, %j_1] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.dealloc %t : memref<3x2xf32>
    func.return
  }
}

// -----

// A chain of re-layouts (a transpose, then a nest that reads the transposed buffer: here a scale
// by 2, as a pack reads a transposed weight) folds into one constant: after the first fold the
// second nest reads a constant argument too; the intermediate global is not kept.
// CHECK:       "memref.global"() <{sym_name = "w_t_t2", type = memref<3x2xf32>, initial_value = dense<{{\[}}[2.000000e+00, 8.000000e+00], [4.000000e+00, 1.000000e+01], [6.000000e+00, 1.200000e+01]]> : tensor<3x2xf32>, sym_visibility = "private", constant}>
// CHECK-NOT:   sym_name = "w_t"
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[T:.*]] = memref.get_global @w_t_t2 : memref<3x2xf32>
// CHECK-NEXT:    func.call @chain(%x, %[[T]], %out)
// CHECK:       func.func private @chain(%x: memref<3x2xf32>, %t2: memref<3x2xf32>, %out: memref<3x2xf32>)
// CHECK-NOT:     loop.alloc
// CHECK:         loop.block "add" reads(%x, %t2 : memref<3x2xf32>, memref<3x2xf32>)
builtin.module {
  "memref.global"() <{sym_name = "w", type = memref<2x3xf32>, initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%x: memref<3x2xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %w = memref.get_global @w : memref<2x3xf32>
    func.call @chain(%x, %w, %out) : (memref<3x2xf32>, memref<2x3xf32>, memref<3x2xf32>) -> ()
    func.return
  }
  func.func private @chain(%x: memref<3x2xf32>, %w: memref<2x3xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %two = arith.constant 2.0 : f32
    %t = loop.alloc global : memref<3x2xf32>
    loop.for %i = %c0 to %c3 step %c1 axis "i" {
      loop.for %j = %c0 to %c2 step %c1 axis "j" {
        loop.block "transpose" reads(%w : memref<2x3xf32>) writes(%t : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %w[%j, %i] : memref<2x3xf32> -> f32
          loop.store %v, %t[%i, %j] : f32 -> memref<3x2xf32>
        }
      }
    }
    %t2 = loop.alloc global : memref<3x2xf32>
    loop.for %i_1 = %c0 to %c3 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c2 step %c1 axis "j" {
        loop.block "scale" reads(%t : memref<3x2xf32>) writes(%t2 : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %t[%i_1, %j_1] : memref<3x2xf32> -> f32
          %s = arith.mulf %v, %two : f32
          loop.store %s, %t2[%i_1, %j_1] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.for %i_2 = %c0 to %c3 step %c1 axis "i" {
      loop.for %j_2 = %c0 to %c2 step %c1 axis "j" {
        loop.block "add" reads(%x, %t2 : memref<3x2xf32>, memref<3x2xf32>) writes(%out : memref<3x2xf32>) spatial ["i", "j"] {
          %a = loop.load %x[%i_2, %j_2] : memref<3x2xf32> -> f32
          %b = loop.load %t2[%i_2, %j_2] : memref<3x2xf32> -> f32
          %s = arith.addf %a, %b : f32
          loop.store %s, %out[%i_2, %j_2] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.dealloc %t : memref<3x2xf32>
    loop.dealloc %t2 : memref<3x2xf32>
    func.return
  }
}

// -----

// The buffer the transposing nest fills from a constant is also written by a later nest, through a
// `memref.collapse_shape` view of it: its contents are not the constant's alone, so nothing folds
// (the store through the view counts as a store into the buffer).
// CHECK-LABEL: func.func @main
// CHECK:         %[[W:.*]] = memref.get_global @w : memref<2x3xf32>
// CHECK:         func.call @transpose_then_overwrite(%x, %[[W]], %out)
// CHECK:       func.func private @transpose_then_overwrite
// CHECK:         %t = loop.alloc global : memref<3x2xf32>
// CHECK:         loop.block "transpose"
// CHECK:         %flat = memref.collapse_shape %t
// CHECK:         loop.block "overwrite"
// CHECK:         loop.block "add"
builtin.module {
  "memref.global"() <{sym_name = "w", type = memref<2x3xf32>, initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%x: memref<3x2xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %w = memref.get_global @w : memref<2x3xf32>
    func.call @transpose_then_overwrite(%x, %w, %out) : (memref<3x2xf32>, memref<2x3xf32>, memref<3x2xf32>) -> ()
    func.return
  }
  func.func private @transpose_then_overwrite(%x: memref<3x2xf32>, %w: memref<2x3xf32>, %out: memref<3x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = loop.alloc global : memref<3x2xf32>
    loop.for %i = %c0 to %c3 step %c1 axis "i" {
      loop.for %j = %c0 to %c2 step %c1 axis "j" {
        loop.block "transpose" reads(%w : memref<2x3xf32>) writes(%t : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %w[%j, %i] : memref<2x3xf32> -> f32
          loop.store %v, %t[%i, %j] : f32 -> memref<3x2xf32>
        }
      }
    }
    %flat = memref.collapse_shape %t [[0, 1]] : memref<3x2xf32> into memref<6xf32>
    loop.for %k = %c0 to %c2 step %c1 axis "k" {
      loop.block "overwrite" reads(%x : memref<3x2xf32>) writes(%flat : memref<6xf32>) spatial ["k"] {
        %v = loop.load %x[%c0, %k] : memref<3x2xf32> -> f32
        loop.store %v, %flat[%k] : f32 -> memref<6xf32>
      }
    }
    loop.for %i_1 = %c0 to %c3 step %c1 axis "i" {
      loop.for %j_1 = %c0 to %c2 step %c1 axis "j" {
        loop.block "add" reads(%x, %t : memref<3x2xf32>, memref<3x2xf32>) writes(%out : memref<3x2xf32>) spatial ["i", "j"] {
          %a = loop.load %x[%i_1, %j_1] : memref<3x2xf32> -> f32
          %b = loop.load %t[%i_1, %j_1] : memref<3x2xf32> -> f32
          %s = arith.addf %a, %b : f32
          loop.store %s, %out[%i_1, %j_1] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.dealloc %t : memref<3x2xf32>
    func.return
  }
}

// -----

// Every call passes the same one-element constants (a requantize's scale of 1 and a zero
// point): the kernel loads them no more, it holds them as constants, which LLVM folds (no
// division by 1). The i8 zero point 200 (an u8 one) keeps its bits: -56.
// CHECK-LABEL: func.func private @requantize
// CHECK:         loop.block "quantize"
// CHECK-NEXT:      %[[X:.*]] = loop.load %x[%i] : memref<4xf32> -> f32
// CHECK-NEXT:      %[[S:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant -56 : i8
// CHECK-NEXT:      %[[ZF:.*]] = arith.uitofp %[[Z]] : i8 to f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[X]], %[[S]] : f32
builtin.module {
  "memref.global"() <{sym_name = "one", type = memref<f32>, initial_value = dense<1.0> : tensor<f32>, constant, sym_visibility = "private"}> : () -> ()
  "memref.global"() <{sym_name = "one_again", type = memref<f32>, initial_value = dense<1.0> : tensor<f32>, constant, sym_visibility = "private"}> : () -> ()
  "memref.global"() <{sym_name = "zp", type = memref<i8>, initial_value = dense<-56> : tensor<i8>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %one = memref.get_global @one : memref<f32>
    %one_again = memref.get_global @one_again : memref<f32>
    %zp = memref.get_global @zp : memref<i8>
    func.call @requantize(%x, %one, %zp, %out) : (memref<4xf32>, memref<f32>, memref<i8>, memref<4xf32>) -> ()
    func.call @requantize(%out, %one_again, %zp, %out) : (memref<4xf32>, memref<f32>, memref<i8>, memref<4xf32>) -> ()
    func.return
  }
  func.func private @requantize(%x: memref<4xf32>, %scale: memref<f32>, %zero_point: memref<i8>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    loop.for %i = %c0 to %c4 step %c1 axis "i" {
      loop.block "quantize" reads(%x, %scale, %zero_point : memref<4xf32>, memref<f32>, memref<i8>) writes(%out : memref<4xf32>) spatial ["i"] {
        %v = loop.load %x[%i] : memref<4xf32> -> f32
        %s = loop.load %scale[] : memref<f32> -> f32
        %z = loop.load %zero_point[] : memref<i8> -> i8
        %zf = arith.uitofp %z : i8 to f32
        %q = arith.divf %v, %s : f32
        %r = arith.addf %q, %zf : f32
        loop.store %r, %out[%i] : f32 -> memref<4xf32>
      }
    }
    func.return
  }
}

// -----

// negative: the calls pass different scales, so the kernel keeps loading its scale.
// CHECK-LABEL: func.func private @negative_scales_differ
// CHECK:         %[[S:.*]] = loop.load %scale[] : memref<f32> -> f32
// CHECK-NEXT:    arith.divf %{{.*}}, %[[S]] : f32
builtin.module {
  "memref.global"() <{sym_name = "one", type = memref<f32>, initial_value = dense<1.0> : tensor<f32>, constant, sym_visibility = "private"}> : () -> ()
  "memref.global"() <{sym_name = "two", type = memref<f32>, initial_value = dense<2.0> : tensor<f32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %one = memref.get_global @one : memref<f32>
    %two = memref.get_global @two : memref<f32>
    func.call @negative_scales_differ(%x, %one, %out) : (memref<4xf32>, memref<f32>, memref<4xf32>) -> ()
    func.call @negative_scales_differ(%out, %two, %out) : (memref<4xf32>, memref<f32>, memref<4xf32>) -> ()
    func.return
  }
  func.func private @negative_scales_differ(%x: memref<4xf32>, %scale: memref<f32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    loop.for %i = %c0 to %c4 step %c1 axis "i" {
      loop.block "scale" reads(%x, %scale : memref<4xf32>, memref<f32>) writes(%out : memref<4xf32>) spatial ["i"] {
        %v = loop.load %x[%i] : memref<4xf32> -> f32
        %s = loop.load %scale[] : memref<f32> -> f32
        %q = arith.divf %v, %s : f32
        loop.store %q, %out[%i] : f32 -> memref<4xf32>
      }
    }
    func.return
  }
}

// -----

// Per-channel weight zero points that are all 0 (a splat, what ORT's quantizer writes) become
// the constant 0; per-channel scales that differ stay loads.
// CHECK-LABEL: func.func private @splat_zero_points
// CHECK:         loop.block "shift"
// CHECK-NEXT:      %[[W:.*]] = loop.load %w[%i] : memref<4xi8> -> i8
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : i8
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[W]], %[[Z]] : i8
// CHECK-NEXT:      %[[S:.*]] = loop.load %scales[%i] : memref<4xf32> -> f32
builtin.module {
  "memref.global"() <{sym_name = "zeros", type = memref<4xi8>, initial_value = dense<0> : tensor<4xi8>, constant, sym_visibility = "private"}> : () -> ()
  "memref.global"() <{sym_name = "scales", type = memref<4xf32>, initial_value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%w: memref<4xi8>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %zeros = memref.get_global @zeros : memref<4xi8>
    %scales = memref.get_global @scales : memref<4xf32>
    func.call @splat_zero_points(%w, %zeros, %scales, %out) : (memref<4xi8>, memref<4xi8>, memref<4xf32>, memref<4xf32>) -> ()
    func.return
  }
  func.func private @splat_zero_points(%w: memref<4xi8>, %zero_points: memref<4xi8>, %scales: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    loop.for %i = %c0 to %c4 step %c1 axis "i" {
      loop.block "shift" reads(%w, %zero_points, %scales : memref<4xi8>, memref<4xi8>, memref<4xf32>) writes(%out : memref<4xf32>) spatial ["i"] {
        %v = loop.load %w[%i] : memref<4xi8> -> i8
        %z = loop.load %zero_points[%i] : memref<4xi8> -> i8
        %d = arith.subi %v, %z : i8
        %s = loop.load %scales[%i] : memref<4xf32> -> f32
        %f = arith.sitofp %d : i8 to f32
        %r = arith.mulf %f, %s : f32
        loop.store %r, %out[%i] : f32 -> memref<4xf32>
      }
    }
    func.return
  }
}

// -----

// Two kernels (a dynamic batch's entries of 1 and 2 rows) transpose the same constant weight
// alike: both calls pass one folded global, not two equal copies.
// CHECK:       "memref.global"() <{sym_name = "w_t", type = memref<3x2xf32>
// CHECK-NOT:   "memref.global"
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[T:.*]] = memref.get_global @w_t : memref<3x2xf32>
// CHECK-NEXT:    func.call @row(%x, %[[T]], %out)
// CHECK-LABEL: func.func @main__rows2
// CHECK-NEXT:    %[[T2:.*]] = memref.get_global @w_t : memref<3x2xf32>
// CHECK-NEXT:    func.call @rows2(%x, %[[T2]], %out)
builtin.module {
  "memref.global"() <{sym_name = "w", type = memref<2x3xf32>, initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, constant, sym_visibility = "private"}> : () -> ()
  func.func @main(%x: memref<1x3xf32>, %out: memref<1x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %w = memref.get_global @w : memref<2x3xf32>
    func.call @row(%x, %w, %out) : (memref<1x3xf32>, memref<2x3xf32>, memref<1x2xf32>) -> ()
    func.return
  }
  func.func @main__rows2(%x: memref<2x3xf32>, %out: memref<2x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %w = memref.get_global @w : memref<2x3xf32>
    func.call @rows2(%x, %w, %out) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x2xf32>) -> ()
    func.return
  }
  func.func private @row(%x: memref<1x3xf32>, %w: memref<2x3xf32>, %out: memref<1x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = loop.alloc global : memref<3x2xf32>
    loop.for %i = %c0 to %c3 step %c1 axis "i" {
      loop.for %j = %c0 to %c2 step %c1 axis "j" {
        loop.block "transpose" reads(%w : memref<2x3xf32>) writes(%t : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %w[%j, %i] : memref<2x3xf32> -> f32
          loop.store %v, %t[%i, %j] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.for %j_1 = %c0 to %c2 step %c1 axis "j" {
      loop.block "first" reads(%x, %t : memref<1x3xf32>, memref<3x2xf32>) writes(%out : memref<1x2xf32>) spatial ["j"] {
        %a = loop.load %x[%c0, %c0] : memref<1x3xf32> -> f32
        %b = loop.load %t[%c0, %j_1] : memref<3x2xf32> -> f32
        %s = arith.mulf %a, %b : f32
        loop.store %s, %out[%c0, %j_1] : f32 -> memref<1x2xf32>
      }
    }
    loop.dealloc %t : memref<3x2xf32>
    func.return
  }
  func.func private @rows2(%x: memref<2x3xf32>, %w: memref<2x3xf32>, %out: memref<2x2xf32>) attributes {dlc.num_outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %t = loop.alloc global : memref<3x2xf32>
    loop.for %i = %c0 to %c3 step %c1 axis "i" {
      loop.for %j = %c0 to %c2 step %c1 axis "j" {
        loop.block "transpose" reads(%w : memref<2x3xf32>) writes(%t : memref<3x2xf32>) spatial ["i", "j"] {
          %v = loop.load %w[%j, %i] : memref<2x3xf32> -> f32
          loop.store %v, %t[%i, %j] : f32 -> memref<3x2xf32>
        }
      }
    }
    loop.for %r = %c0 to %c2 step %c1 axis "r" {
      loop.for %j_1 = %c0 to %c2 step %c1 axis "j" {
        loop.block "first" reads(%x, %t : memref<2x3xf32>, memref<3x2xf32>) writes(%out : memref<2x2xf32>) spatial ["r", "j"] {
          %a = loop.load %x[%r, %c0] : memref<2x3xf32> -> f32
          %b = loop.load %t[%c0, %j_1] : memref<3x2xf32> -> f32
          %s = arith.mulf %a, %b : f32
          loop.store %s, %out[%r, %j_1] : f32 -> memref<2x2xf32>
        }
      }
    }
    loop.dealloc %t : memref<3x2xf32>
    func.return
  }
}
