// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example (full unroll): one copy of the body per iteration, the induction
// variable replaced by constants; the block loses the axis.
// CHECK-LABEL: func.func @full
// CHECK:       %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:  %[[C1:.*]] = arith.constant 1 : index
// CHECK:       %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:  loop.for %[[I:.*]] = {{.*}} axis "i" {
// CHECK-NEXT:    loop.block "dot" {{.*}} spatial ["i"] {
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]], %[[C0]]] :
// CHECK:         loop.block "dot" {{.*}} spatial ["i"] {
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]], %[[C1]]] :
// CHECK:         loop.block "dot" {{.*}} spatial ["i"] {
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]], %[[C2]]] :
// CHECK-NOT:     loop.block
// CHECK:       func.return
func.func @full(%A: memref<4x3xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %k = %c0 to %c3 step %c1 axis "k" {
      loop.block "dot" reads(%A : memref<4x3xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %a = loop.load %A[%i, %k] : memref<4x3xf32> -> f32
        %s = loop.load %S[%i] : memref<4xf32> -> f32
        %t = arith.addf %s, %a : f32
        loop.store %t, %S[%i] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "dot" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.unroll %k : !transform.any_op
  transform.yield
}

// -----

// By a factor (here a parameter): the step grows, the body is followed by copies at iv + step.
// CHECK-LABEL: func.func @by_factor
// CHECK:       loop.for %[[K:.*]] = %{{.*}} to %{{.*}} step %[[C2:.*]] axis "k" {
// CHECK-NEXT:    loop.block "copy"
// CHECK-NEXT:      %[[A:.*]] = loop.load %[[X:.*]][%[[K]]]
// CHECK-NEXT:      loop.store %[[A]], %[[Y:.*]][%[[K]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[K1:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK-NEXT:    loop.block "copy"
// CHECK-NEXT:      %[[B:.*]] = loop.load %[[X]][%[[K1]]]
// CHECK-NEXT:      loop.store %[[B]], %[[Y]][%[[K1]]]
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @by_factor(%X: memref<8xf32>, %Y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %k = %c0 to %c8 step %c1 axis "k" {
    loop.block "copy" reads(%X : memref<8xf32>) writes(%Y : memref<8xf32>) spatial ["k"] {
      %a = loop.load %X[%k] : memref<8xf32> -> f32
      loop.store %a, %Y[%k] : f32 -> memref<8xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "copy" in %root : (!transform.any_op) -> !transform.any_op
  %k = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  %two = transform.param.constant 2 : i64 -> !transform.param<i64>
  transform.loop.unroll %k factor %two : !transform.any_op, !transform.param<i64>
  transform.yield
}

// -----

// CHECK:     'transform.loop.unroll' op failed on loop "k" (%k): cannot unroll: expected the factor 3 to divide the trip count 8 (split the loop first)
// CHECK:     <{axis = "k", kind = "serial"}>
// CHECK:     "transform.named_sequence"
func.func @negative_factor(%X: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %k = %c0 to %c8 step %c1 axis "k" {
    loop.block "fill" reads() writes(%X : memref<8xf32>) spatial ["k"] {
      %a = loop.load %X[%k] : memref<8xf32> -> f32
      loop.store %a, %X[%k] : f32 -> memref<8xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %k = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  transform.loop.unroll %k factor 3 : !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.unroll' op failed on loop "k" (%k): cannot unroll: expected a trip count of at most 1024 to unroll fully, found 4096
func.func @negative_too_long(%X: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  loop.for %k = %c0 to %c4096 step %c1 axis "k" {
    loop.block "fill" reads() writes(%X : memref<4096xf32>) spatial ["k"] {
      %a = loop.load %X[%k] : memref<4096xf32> -> f32
      loop.store %a, %X[%k] : f32 -> memref<4096xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "fill" in %root : (!transform.any_op) -> !transform.any_op
  %k = transform.loop.match_loop %b axis "k" : (!transform.any_op) -> !transform.any_op
  transform.loop.unroll %k : !transform.any_op
  transform.yield
}
