// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: the init and the update of the reduction both go to the local copy;
// a write-back nest follows.
// CHECK-LABEL: func.func @accumulate_locally
// CHECK:       %[[ACC:.*]] = loop.alloc local : memref<4xf32>
// CHECK-NEXT:  loop.for %{{.*}} axis "i" {
// CHECK-NEXT:    loop.block "rowsum.init" reads() writes(%[[ACC]] : memref<4xf32>)
// CHECK:         loop.for %{{.*}} axis "k" {
// CHECK-NEXT:      loop.block "rowsum" reads(%{{.*}} : memref<4x8xf32>) writes(%[[ACC]] : memref<4xf32>)
// CHECK:       loop.for %[[A0:.*]] = %{{.*}} axis "ax0" {
// CHECK-NEXT:    loop.block "rowsum.local_write" reads(%[[ACC]] : memref<4xf32>) writes(%[[S:.*]] : memref<4xf32>) spatial ["ax0"] {
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[ACC]][%[[A0]]] : memref<4xf32> -> f32
// CHECK-NEXT:      loop.store %[[V]], %[[S]][%[[A0]]] : f32 -> memref<4xf32>
func.func @accumulate_locally(%X: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "rowsum.init" reads() writes(%S : memref<4xf32>) spatial ["i"] {
      loop.store %zero, %S[%i] : f32 -> memref<4xf32>
    }
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "rowsum" reads(%X : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %x = loop.load %X[%i, %k] : memref<4x8xf32> -> f32
        %s = loop.load %S[%i] : memref<4xf32> -> f32
        %t = arith.addf %s, %x : f32
        loop.store %t, %S[%i] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "rowsum" in %root : (!transform.any_op) -> !transform.any_op
  %wb = transform.loop.cache_write %b, "local" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// Without an init the nest reads the buffer first: a copy-in nest fills the copy. Then
// reverse_compute_at writes each element back right after its reduction.
// CHECK-LABEL: func.func @accumulate_into_existing
// CHECK:       %[[ACC:.*]] = loop.alloc local : memref<4xf32>
// CHECK-NEXT:  loop.for %{{.*}} axis "ax0" {
// CHECK-NEXT:    loop.block "rowsum.local_fill" reads(%[[S:.*]] : memref<4xf32>) writes(%[[ACC]] : memref<4xf32>)
// CHECK:       loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %{{.*}} axis "k" {
// CHECK-NEXT:      loop.block "rowsum" {{.*}} writes(%[[ACC]] : memref<4xf32>)
// CHECK:         loop.block "rowsum.local_write" reads(%[[ACC]] : memref<4xf32>) writes(%[[S]] : memref<4xf32>) spatial ["i"] {
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[ACC]][%[[I]]]
// CHECK-NEXT:      loop.store %[[V]], %[[S]][%[[I]]]
func.func @accumulate_into_existing(%X: memref<4x8xf32>, %S: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %k = %c0 to %c8 step %c1 axis "k" {
      loop.block "rowsum" reads(%X : memref<4x8xf32>) writes(%S : memref<4xf32>) spatial ["i"] reduction ["k"] {
        %x = loop.load %X[%i, %k] : memref<4x8xf32> -> f32
        %s = loop.load %S[%i] : memref<4xf32> -> f32
        %t = arith.addf %s, %x : f32
        loop.store %t, %S[%i] : f32 -> memref<4xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "rowsum" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %wb = transform.loop.cache_write %b, "local" : (!transform.any_op) -> !transform.any_op
  transform.loop.reverse_compute_at %wb, %i : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.cache_write' op failed on block "split" (%b): cannot cache_write: expected a block writing one buffer, found 2
// CHECK-NOT: loop.alloc
// CHECK:     "transform.named_sequence"
func.func @negative_two_outputs(%X: memref<4xf32>, %Y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.block "split" reads() writes(%X, %Y : memref<4xf32>, memref<4xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<4xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<4xf32>
      loop.store %x, %X[%i] : f32 -> memref<4xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "split" in %root : (!transform.any_op) -> !transform.any_op
  %wb = transform.loop.cache_write %b, "local" : (!transform.any_op) -> !transform.any_op
  transform.yield
}
