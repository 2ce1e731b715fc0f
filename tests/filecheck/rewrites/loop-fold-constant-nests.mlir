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
