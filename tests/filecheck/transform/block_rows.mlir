// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p loop-interpret-transforms | filecheck %s

// The docstring example: whole blocks of 8 rows, then the rows left one by one, each part a
// nest of static rows over views of its rows; the buffers read beside the rows stay as they are.
// CHECK-LABEL: func.func @blocks_then_rows
// CHECK:       %[[LEFT:.*]] = arith.remui %[[N:.*]], %[[C8:.*]] : index
// CHECK-NEXT:  %[[WHOLE:.*]] = arith.subi %[[N]], %[[LEFT]] : index
// CHECK-NEXT:  loop.for %[[B:.*]] = %{{.*}} to %[[WHOLE]] step %[[C8]] axis "i.rows" kind parallel {
// CHECK-NEXT:    %[[Y8:.*]] = loop.rows %{{.*}}[%[[B]]] : memref<?x16xf32> -> memref<8x16xf32>
// CHECK-NEXT:    %[[X8:.*]] = loop.rows %{{.*}}[%[[B]]] : memref<?x16xf32> -> memref<8x16xf32>
// CHECK-NEXT:    loop.for %[[I:.*]] = %{{.*}} to %[[C8]] step %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %[[J:.*]] = {{.*}} axis "j" {
// CHECK-NEXT:        loop.block "scale" reads(%[[X8]], %[[W:.*]] : memref<8x16xf32>, memref<16xf32>) writes(%[[Y8]] : memref<8x16xf32>)
// CHECK-NEXT:          loop.load %[[X8]][%[[I]], %[[J]]] : memref<8x16xf32> -> f32
// CHECK-NEXT:          loop.load %[[W]][%[[J]]] : memref<16xf32> -> f32
// CHECK:       loop.for %[[R:.*]] = %[[WHOLE]] to %[[N]] step %{{.*}} axis "i.rest1" {
// CHECK-NEXT:    loop.rows %{{.*}}[%[[R]]] : memref<?x16xf32> -> memref<1x16xf32>
func.func @blocks_then_rows(%X: memref<?x16xf32>, %W: memref<16xf32>, %Y: memref<?x16xf32>, %n: index, %m: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.for %j = %c0 to %c16 step %c1 axis "j" {
      loop.block "scale" reads(%X, %W : memref<?x16xf32>, memref<16xf32>) writes(%Y : memref<?x16xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<?x16xf32> -> f32
        %w = loop.load %W[%j] : memref<16xf32> -> f32
        %p = arith.mulf %x, %w : f32
        loop.store %p, %Y[%i, %j] : f32 -> memref<?x16xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "scale" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %blocks, %rest = transform.loop.block_rows %i [8, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
  transform.loop.parallel %blocks : !transform.any_op
  transform.yield
}

// -----

// exact: after the whole blocks of 4, the part whose size is the number of rows left runs once
// (its upper bound is the start plus that size when it matches, else the start).
// CHECK-LABEL: func.func @exact_rest
// CHECK:       %[[WHOLE:.*]] = arith.subi %[[N:.*]], %{{.*}} : index
// CHECK-NEXT:  %[[REST:.*]] = arith.subi %[[N]], %[[WHOLE]] : index
// CHECK-NEXT:  %[[IS3:.*]] = arith.cmpi eq, %[[REST]], %[[C3:c3]] : index
// CHECK-NEXT:  %[[EXT3:.*]] = arith.select %[[IS3]], %[[C3]], %{{.*}} : index
// CHECK-NEXT:  %[[END3:.*]] = arith.addi %[[WHOLE]], %[[EXT3]] : index
// CHECK:       loop.for %{{.*}} = %{{.*}} to %[[WHOLE]] step %{{.*}} axis "i.rows" {
// CHECK:       loop.for %[[R3:.*]] = %[[WHOLE]] to %[[END3]] step %[[C3]] axis "i.rest3" {
// CHECK-NEXT:    loop.rows %{{.*}}[%[[R3]]] : memref<?xf32> -> memref<3xf32>
// CHECK:       axis "i.rest2"
// CHECK:       axis "i.rest1"
func.func @exact_rest(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.block "neg" reads(%X : memref<?xf32>) writes(%Y : memref<?xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<?xf32> -> f32
      %y = arith.negf %x : f32
      loop.store %y, %Y[%i] : f32 -> memref<?xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "neg" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  %p:4 = transform.loop.block_rows %i [4, 3, 2, 1] exact : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}

// -----

// A loop whose induction variable indexes a row buffer other than first: not blocked.
func.func @transposed(%X: memref<?x4xf32>, %Y: memref<4x?xf32>, %n: index, %m: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "t" reads(%X : memref<?x4xf32>) writes(%Y : memref<4x?xf32>) spatial ["i", "j"] {
        %x = loop.load %X[%i, %j] : memref<?x4xf32> -> f32
        loop.store %x, %Y[%j, %i] : f32 -> memref<4x?xf32>
      }
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "t" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  // expected-error @+1 {{cannot block rows: expected the induction variable only as the leading index of loads and stores, found a use by 'loop.store'}}
  %p:1 = transform.loop.block_rows %i [1] : (!transform.any_op) -> (!transform.any_op)
  transform.yield
}

// -----

// The sizes must be ones block_rows takes.
func.func @bad_sizes(%X: memref<?xf32>, %Y: memref<?xf32>, %n: index, %m: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.block "neg" reads(%X : memref<?xf32>) writes(%Y : memref<?xf32>) spatial ["i"] {
      %x = loop.load %X[%i] : memref<?xf32> -> f32
      loop.store %x, %Y[%i] : f32 -> memref<?xf32>
    }
  }
  func.return
}
transform.named_sequence @__transform_main(%root: !transform.any_op) {
  %b = transform.loop.match_block "neg" in %root : (!transform.any_op) -> !transform.any_op
  %i = transform.loop.match_loop %b axis "i" : (!transform.any_op) -> !transform.any_op
  // expected-error @+1 {{cannot block rows: expected block sizes in descending order, each a multiple of the next, ending with 1, found [8, 3, 1]}}
  %p:3 = transform.loop.block_rows %i [8, 3, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
  transform.yield
}
