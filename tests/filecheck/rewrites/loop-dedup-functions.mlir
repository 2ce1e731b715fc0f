// RUN: dlc-opt %s -p loop-dedup-functions --split-input-file | filecheck %s
// RUN: dlc-opt %s -p 'loop-dedup-functions{lift-constants=false}' --split-input-file | filecheck %s --check-prefix=KEEP

// Two kernels that differ only in the weight they read (and in SSA names): the weights become
// arguments passed by the caller, then one kernel is left and both calls use it, each keeping
// its own ONNX node names.
// CHECK-LABEL: func.func @main
// CHECK:         %[[W1:.*]] = memref.get_global @scale_0_cst0 : memref<4xf32>
// CHECK-NEXT:    func.call @scale_0(%x, %[[W1]], %t) {dlc.onnx_nodes = ["mul1"]} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT:    %[[W2:.*]] = memref.get_global @scale_1_cst0 : memref<4xf32>
// CHECK-NEXT:    func.call @scale_0(%t, %[[W2]], %out) {dlc.onnx_nodes = ["mul2"]} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK:       func.func private @scale_0(%x: memref<4xf32>, %w: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
// CHECK-NOT:     memref.get_global
// CHECK:         loop.load %w[%i]
// CHECK-NOT:   func.func private @scale_1
// KEEP-LABEL:  func.func @main
// KEEP:          func.call @scale_0(%x, %t)
// KEEP:          func.call @scale_1(%t, %out)
// KEEP:        func.func private @scale_0
// KEEP:        func.func private @scale_1
"memref.global"() <{sym_name = "scale_0_cst0", type = memref<4xf32>, initial_value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>, sym_visibility = "private", constant}> : () -> ()
"memref.global"() <{sym_name = "scale_1_cst0", type = memref<4xf32>, initial_value = dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @main(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %t = loop.alloc global : memref<4xf32>
  func.call @scale_0(%x, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @scale_1(%t, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  loop.dealloc %t : memref<4xf32>
  func.return
}
func.func private @scale_0(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.onnx_nodes = ["mul1"]} {
  %w = memref.get_global @scale_0_cst0 : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "mul" reads(%x, %w : memref<4xf32>, memref<4xf32>) writes(%out : memref<4xf32>) spatial ["i"] {
      %a = loop.load %x[%i] : memref<4xf32> -> f32
      %b = loop.load %w[%i] : memref<4xf32> -> f32
      %p = arith.mulf %a, %b : f32
      loop.store %p, %out[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
func.func private @scale_1(%in: memref<4xf32>, %res: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64, dlc.onnx_nodes = ["mul2"]} {
  %weights = memref.get_global @scale_1_cst0 : memref<4xf32>
  %zero = arith.constant 0 : index
  %one = arith.constant 1 : index
  %four = arith.constant 4 : index
  loop.for %j = %zero to %four step %one axis "i" {
    loop.block "mul" reads(%in, %weights : memref<4xf32>, memref<4xf32>) writes(%res : memref<4xf32>) spatial ["i"] {
      %a = loop.load %in[%j] : memref<4xf32> -> f32
      %b = loop.load %weights[%j] : memref<4xf32> -> f32
      %p = arith.mulf %a, %b : f32
      loop.store %p, %res[%j] : f32 -> memref<4xf32>
    }
  }
  func.return
}

// -----

// Anything that changes what a kernel computes keeps it apart: here the loop's axis name
// (schedules match it), elsewhere an op, a constant, a shape.
// CHECK-LABEL: func.func @negative_axis_names_differ
// CHECK:         func.call @copy_0
// CHECK:         func.call @copy_1
// CHECK:       func.func private @copy_0
// CHECK:       func.func private @copy_1
func.func @negative_axis_names_differ(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %t = loop.alloc global : memref<4xf32>
  func.call @copy_0(%x, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  func.call @copy_1(%t, %out) : (memref<4xf32>, memref<4xf32>) -> ()
  func.return
}
func.func private @copy_0(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    %a = loop.load %x[%i] : memref<4xf32> -> f32
    loop.store %a, %out[%i] : f32 -> memref<4xf32>
  }
  func.return
}
func.func private @copy_1(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "j" {
    %a = loop.load %x[%i] : memref<4xf32> -> f32
    loop.store %a, %out[%i] : f32 -> memref<4xf32>
  }
  func.return
}

// -----

// Public functions are entry points: never merged, their signatures never changed.
// CHECK-LABEL: func.func @negative_public_twin_a(%x: memref<4xf32>, %out: memref<4xf32>)
// CHECK-NEXT:    memref.get_global @negative_cst
// CHECK-LABEL: func.func @negative_public_twin_b(%x: memref<4xf32>, %out: memref<4xf32>)
// CHECK-NEXT:    memref.get_global @negative_cst
"memref.global"() <{sym_name = "negative_cst", type = memref<4xf32>, initial_value = dense<1.0> : tensor<4xf32>, sym_visibility = "private", constant}> : () -> ()
func.func @negative_public_twin_a(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %w = memref.get_global @negative_cst : memref<4xf32>
  func.return
}
func.func @negative_public_twin_b(%x: memref<4xf32>, %out: memref<4xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %w = memref.get_global @negative_cst : memref<4xf32>
  func.return
}
