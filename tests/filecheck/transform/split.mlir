// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: the outer loop keeps the op and the bounds, the inner loop runs over
// one tile; the original induction variable is their sum.
// CHECK-LABEL: func.func @divisible
// CHECK:       %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:  loop.for %[[K0:.*]] = %[[C0:.*]] to %[[C64:.*]] step %[[C8]] axis "k.0" {
// CHECK-NEXT:    loop.for %[[K1:.*]] = %[[C0]] to %[[C8]] step %[[C1:.*]] axis "k.1" {
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[K0]], %[[K1]] : index
// CHECK-NEXT:      loop.block "sum" reads(%{{.*}} : memref<64xf32>) writes(%{{.*}} : memref<1xf32>) reduction ["k.0", "k.1"] {
// CHECK-NEXT:        %{{.*}} = loop.load %{{.*}}[%[[K]]] : memref<64xf32> -> f32
func.func @divisible(%X: memref<64xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %k = %c0 to %c64 step %c1 axis "k" {
    loop.block "sum" reads(%X : memref<64xf32>) writes(%S : memref<1xf32>) reduction ["k"] {
      %x = loop.load %X[%k] : memref<64xf32> -> f32
      %s = loop.load %S[%c0] : memref<1xf32> -> f32
      %t = arith.addf %s, %x : f32
      loop.store %t, %S[%c0] : f32 -> memref<1xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "sum" in %root : (!transform.any_op) -> !transform.any_op
  %k = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  %k0, %k1 = transform.loop.split %k [8] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// 10 is not a multiple of 4: the inner loop's bound is guarded, the last tile runs 2 iterations.
// CHECK-LABEL: func.func @guarded_tail
// CHECK:       %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:  loop.for %[[I0:.*]] = %[[C0:.*]] to %[[C10:.*]] step %[[C4]] axis "i.0" {
// CHECK-NEXT:    %[[REM:.*]] = arith.subi %[[C10]], %[[I0]] : index
// CHECK-NEXT:    %[[UB:.*]] = arith.minui %[[C4]], %[[REM]] : index
// CHECK-NEXT:    loop.for %[[I1:.*]] = %[[C0]] to %[[UB]] step %{{.*}} axis "i.1" {
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK-NEXT:      loop.block "copy" {{.*}} spatial ["i.0", "i.1"] {
// CHECK-NEXT:        %[[X:.*]] = loop.load %{{.*}}[%[[I]]]
// CHECK-NEXT:        loop.store %[[X]], %{{.*}}[%[[I]]]
func.func @guarded_tail(%X: memref<10xf32>, %Y: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  loop.for %i = %c0 to %c10 step %c1 axis "i" {
    loop.block "copy" reads(%X : memref<10xf32>) writes(%Y : memref<10xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<10xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<10xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %i0, %i1 = transform.loop.split %i [4] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// Two factors make three loops; a factor may be a parameter.
// CHECK-LABEL: func.func @three_ways_with_param
// CHECK:       %[[C32:.*]] = arith.constant 32 : index
// CHECK-NEXT:  %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:  loop.for %[[I0:.*]] = %[[C0:.*]] to %{{.*}} step %[[C32]] axis "i.0" {
// CHECK-NEXT:    loop.for %[[I1:.*]] = %[[C0]] to %[[C32]] step %[[C16]] axis "i.1" {
// CHECK-NEXT:      loop.for %[[I2:.*]] = %[[C0]] to %[[C16]] step %{{.*}} axis "i.2" {
// CHECK-NEXT:        %[[S:.*]] = arith.addi %[[I0]], %[[I1]] : index
// CHECK-NEXT:        %[[I:.*]] = arith.addi %[[S]], %[[I2]] : index
// CHECK-NEXT:        loop.block "copy" {{.*}} spatial ["i.0", "i.1", "i.2"] {
// CHECK-NEXT:          %{{.*}} = loop.load %{{.*}}[%[[I]]]
func.func @three_ways_with_param(%X: memref<64xf32>, %Y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c64 step %c1 axis "i" {
    loop.block "copy" reads(%X : memref<64xf32>) writes(%Y : memref<64xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<64xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<64xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %vector = transform.param.constant 16 : i64 -> !transform.param<i64>
  %i0, %i1, %i2 = transform.loop.split %i [2, %vector] : (!transform.any_op, !transform.param<i64>) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// The failed split leaves the payload as it was: one serial loop "i".
// CHECK:     'transform.loop.split' op failed on loop "i" (%i): cannot split: expected positive factors, found 0
// CHECK:     <{axis = "i", kind = "serial"}>
// CHECK-NOT: "loop.for"
// CHECK:     "transform.named_sequence"
func.func @negative_zero_factor(%X: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
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
  %i0, %i1 = transform.loop.split %i [0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// CHECK:     'transform.loop.split' op failed on loop "i" (%i): cannot split: expected a serial loop, found kind parallel
// CHECK:     <{axis = "i", kind = "parallel"}>
// CHECK-NOT: "loop.for"
// CHECK:     "transform.named_sequence"
func.func @negative_parallel_loop(%X: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" kind parallel {
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
  %i0, %i1 = transform.loop.split %i [2] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.yield
}
