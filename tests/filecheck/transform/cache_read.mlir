// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: %X is copied into a shared buffer before the nest, and the block reads
// the copy.
// CHECK-LABEL: func.func @stage_input
// CHECK:       %[[COPY:.*]] = loop.alloc shared : memref<8x4xf32>
// CHECK-NEXT:  loop.for %[[A0:.*]] = %{{.*}} axis "ax0" {
// CHECK-NEXT:    loop.for %[[A1:.*]] = %{{.*}} axis "ax1" {
// CHECK-NEXT:      loop.block "rowsum.shared_read0" reads(%[[X:.*]] : memref<8x4xf32>) writes(%[[COPY]] : memref<8x4xf32>) spatial ["ax0", "ax1"] {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X]][%[[A0]], %[[A1]]] : memref<8x4xf32> -> f32
// CHECK-NEXT:        loop.store %[[V]], %[[COPY]][%[[A0]], %[[A1]]] : f32 -> memref<8x4xf32>
// CHECK:       loop.block "rowsum" reads(%[[COPY]] : memref<8x4xf32>)
// CHECK-NEXT:    %{{.*}} = loop.load %[[COPY]][%{{.*}}, %{{.*}}] : memref<8x4xf32> -> f32
func.func @stage_input(%X: memref<8x4xf32>, %S: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "rowsum" reads(%X : memref<8x4xf32>) writes(%S : memref<8xf32>) spatial ["i"] reduction ["k"] {
        %x = loop.load %X[%i, %k] : memref<8x4xf32> -> f32
        %s = loop.load %S[%i] : memref<8xf32> -> f32
        %t = arith.addf %s, %x : f32
        loop.store %t, %S[%i] : f32 -> memref<8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "rowsum" in %root : (!transform.any_op) -> !transform.any_op
  %copy = transform.loop.cache_read %b, 0, "shared" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// Then compute_at moves the copy where it is used: one row per iteration of "i".
// CHECK-LABEL: func.func @then_compute_at
// CHECK:       %[[COPY:.*]] = loop.alloc local : memref<8x4xf32>
// CHECK-NEXT:  loop.for %[[I:.*]] = %{{.*}} axis "i" {
// CHECK-NEXT:    loop.for %[[K:.*]] = %{{.*}} axis "k" {
// CHECK-NEXT:      loop.block "rowsum.local_read0" {{.*}} spatial ["i", "k"] {
// CHECK-NEXT:        %[[V:.*]] = loop.load %{{.*}}[%[[I]], %[[K]]]
// CHECK-NEXT:        loop.store %[[V]], %[[COPY]][%[[I]], %[[K]]]
// CHECK:         loop.for %{{.*}} axis "k" {
// CHECK-NEXT:      loop.block "rowsum"
func.func @then_compute_at(%X: memref<8x4xf32>, %S: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 axis "i" {
    loop.for %k = %c0 to %c4 step %c1 axis "k" {
      loop.block "rowsum" reads(%X : memref<8x4xf32>) writes(%S : memref<8xf32>) spatial ["i"] reduction ["k"] {
        %x = loop.load %X[%i, %k] : memref<8x4xf32> -> f32
        %s = loop.load %S[%i] : memref<8xf32> -> f32
        %t = arith.addf %s, %x : f32
        loop.store %t, %S[%i] : f32 -> memref<8xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "rowsum" in %root : (!transform.any_op) -> !transform.any_op
  %i, %k = transform.loop.get_loops %b : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  %copy = transform.loop.cache_read %b, 0, "local" : (!transform.any_op) -> !transform.any_op
  transform.loop.compute_at %copy, %i : !transform.any_op, !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.cache_read' op failed on block "rowsum" (%b): cannot cache_read: expected an operand index below 1 (the number of buffers the block reads), found 3
// CHECK-NOT: loop.alloc
// CHECK:     "transform.named_sequence"
func.func @negative_operand_index(%X: memref<8xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %k = %c0 to %c8 step %c1 axis "k" {
    loop.block "rowsum" reads(%X : memref<8xf32>) writes(%S : memref<1xf32>) reduction ["k"] {
      %x = loop.load %X[%k] : memref<8xf32> -> f32
      loop.store %x, %S[%c0] : f32 -> memref<1xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "rowsum" in %root : (!transform.any_op) -> !transform.any_op
  %copy = transform.loop.cache_read %b, 3, "local" : (!transform.any_op) -> !transform.any_op
  transform.yield
}

// -----

// CHECK:     'transform.loop.cache_read' op failed on block "rowsum" (%b): cannot cache_read: expected a scope among global, local, shared, found 'texture'
func.func @negative_scope(%X: memref<8xf32>, %S: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %k = %c0 to %c8 step %c1 axis "k" {
    loop.block "rowsum" reads(%X : memref<8xf32>) writes(%S : memref<1xf32>) reduction ["k"] {
      %x = loop.load %X[%k] : memref<8xf32> -> f32
      loop.store %x, %S[%c0] : f32 -> memref<1xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "rowsum" in %root : (!transform.any_op) -> !transform.any_op
  %copy = transform.loop.cache_read %b, 0, "texture" : (!transform.any_op) -> !transform.any_op
  transform.yield
}
