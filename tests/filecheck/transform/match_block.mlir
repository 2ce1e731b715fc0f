// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The handle holds every block with the name, in program order: here both "relu" blocks, split
// apart and parallelised one by one.
// CHECK-LABEL: func.func @two_blocks
// CHECK:       loop.for %{{.*}} axis "i" kind parallel {
// CHECK-NEXT:    loop.block "relu"
// CHECK:       loop.for %{{.*}} axis "j" {
// CHECK-NEXT:    loop.block "other"
// CHECK:       loop.for %{{.*}} axis "i" kind parallel {
// CHECK-NEXT:    loop.block "relu"
func.func @two_blocks(%X: memref<8xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "relu" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      %y = arith.maximumf %x, %zero : f32
      loop.store %y, %Y[%i] : f32 -> memref<8xf32>
    }
  }
  loop.for %j = %c0 to %c8 step %c1 axis "j" {
    loop.block "other" reads(%Y : memref<8xf32>) writes(%X : memref<8xf32>) spatial ["j"] {
      %y = loop.load %Y[%j] : memref<8xf32> -> f32
      loop.store %y, %X[%j] : f32 -> memref<8xf32>
    }
  }
  loop.for %i2 = %c0 to %c8 step %c1 axis "i" {
    loop.block "relu" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i2] : memref<8xf32> -> f32
      %y = arith.maximumf %x, %zero : f32
      loop.store %y, %Y[%i2] : f32 -> memref<8xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "relu" in %root : (!transform.any_op) -> !transform.any_op
  %first, %second = "transform.split_handle"(%b) <{pass_through_empty_handle = false, fail_on_payload_too_small = true}> : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %i1 = transform.loop.match_loop %first axis "i" : (!transform.any_op) -> !transform.any_op
  %i2 = transform.loop.match_loop %second axis "i" : (!transform.any_op) -> !transform.any_op
  transform.loop.parallel %i1 : !transform.any_op
  transform.loop.parallel %i2 : !transform.any_op
  transform.yield
}

// -----

// CHECK: 'transform.loop.match_block' op failed on 'builtin.module' (%root): expected a loop.block named "missing" in the payload, found none
func.func @negative_no_such_block() {
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "missing" in %root : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// A primitive needs a handle to one payload op.
// CHECK: 'transform.loop.match_loop' op expected %b to hold one payload op, found 2 (use transform.split_handle)
func.func @negative_two_blocks(%X: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.block "fill" reads() writes(%X : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      loop.store %x, %X[%i] : f32 -> memref<8xf32>
    }
    loop.block "fill" reads() writes(%X : memref<8xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<8xf32> -> f32
      loop.store %x, %X[%i] : f32 -> memref<8xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  transform.yield
}
