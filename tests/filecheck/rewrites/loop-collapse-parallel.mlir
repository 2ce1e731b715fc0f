// RUN: dlc-opt %s --split-input-file -p loop-collapse-parallel | filecheck %s

// A kernel's batch of runtime size around the parallel loop of its channels' blocks: one
// parallel loop over the batch times the 2 blocks (the bound computed before it), the image and
// the block recovered by division and remainder; the index arithmetic of the batch loop's body
// moves inside.
// CHECK-LABEL: func.func @batch_around_channels
// CHECK:         %[[TRIP:.*]] = arith.muli %n, %[[C2:.*]] : index
// CHECK-NEXT:    loop.for %[[F:.*]] = %{{.*}} to %[[TRIP]] step %{{.*}} axis "i.o.fused" kind parallel {
// CHECK-NEXT:      %[[I:.*]] = arith.divui %[[F]], %[[C2]] : index
// CHECK-NEXT:      %[[O:.*]] = arith.remui %[[F]], %[[C2]] : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} axis "p" {
// CHECK-NEXT:        loop.block "copy" {{.*}} spatial ["i.o.fused", "p"] {
// CHECK-NEXT:          %{{.*}} = loop.load %{{.*}}[%[[I]], %[[O]], %{{.*}}]
func.func @batch_around_channels(%x: memref<?x2x?xf32>, %y: memref<?x2x?xf32>, %n: index, %w: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    %row = arith.muli %i, %c4 : index
    loop.for %o = %c0 to %c2 step %c1 axis "o" kind parallel {
      loop.for %p = %c0 to %w step %c1 axis "p" {
        loop.block "copy" reads(%x : memref<?x2x?xf32>) writes(%y : memref<?x2x?xf32>) spatial ["i", "o", "p"] {
          %v = loop.load %x[%i, %o, %p] : memref<?x2x?xf32> -> f32
          loop.store %v, %y[%i, %o, %p] : f32 -> memref<?x2x?xf32>
        }
      }
    }
  }
  func.return
}

// -----

// Left alone: a batch loop holding two nests (fused per image by loop-fuse-nests: each image's
// stages in turn), one of static extent (a static compile's IR does not change), one whose
// parallel loop is of runtime extent (its rows), one holding a buffer of its own.
// CHECK-LABEL: func.func @negative_two_nests
// CHECK:         loop.for %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %{{.*}} axis "o" kind parallel {
// CHECK:           loop.for %{{.*}} axis "o" kind parallel {
func.func @negative_two_nests(%x: memref<?x2xf32>, %y: memref<?x2xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.for %o = %c0 to %c2 step %c1 axis "o" kind parallel {
      loop.block "first" reads(%x : memref<?x2xf32>) writes(%y : memref<?x2xf32>) spatial ["i", "o"] {
        %v = loop.load %x[%i, %o] : memref<?x2xf32> -> f32
        loop.store %v, %y[%i, %o] : f32 -> memref<?x2xf32>
      }
    }
    loop.for %o = %c0 to %c2 step %c1 axis "o" kind parallel {
      loop.block "second" reads(%y : memref<?x2xf32>) writes(%x : memref<?x2xf32>) spatial ["i", "o"] {
        %v = loop.load %y[%i, %o] : memref<?x2xf32> -> f32
        loop.store %v, %x[%i, %o] : f32 -> memref<?x2xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @negative_static_batch
// CHECK:         loop.for %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %{{.*}} axis "o" kind parallel {
func.func @negative_static_batch(%x: memref<4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 axis "i" {
    loop.for %o = %c0 to %c2 step %c1 axis "o" kind parallel {
      loop.block "fill" reads() writes(%x : memref<4x2xf32>) spatial ["i", "o"] {
        %z = arith.constant 0.0 : f32
        loop.store %z, %x[%i, %o] : f32 -> memref<4x2xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @negative_runtime_rows
// CHECK:         loop.for %{{.*}} axis "i" {
// CHECK-NEXT:      loop.for %{{.*}} axis "p" kind parallel {
func.func @negative_runtime_rows(%x: memref<?x?xf32>, %n: index, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    loop.for %p = %c0 to %h step %c1 axis "p" kind parallel {
      loop.block "fill" reads() writes(%x : memref<?x?xf32>) spatial ["i", "p"] {
        %z = arith.constant 0.0 : f32
        loop.store %z, %x[%i, %p] : f32 -> memref<?x?xf32>
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @negative_buffer_per_image
// CHECK:         loop.for %{{.*}} axis "i" {
// CHECK-NEXT:      %{{.*}} = loop.alloc global : memref<2xf32>
// CHECK-NEXT:      loop.for %{{.*}} axis "o" kind parallel {
func.func @negative_buffer_per_image(%x: memref<?x2xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i = %c0 to %n step %c1 axis "i" {
    %t = loop.alloc global : memref<2xf32>
    loop.for %o = %c0 to %c2 step %c1 axis "o" kind parallel {
      loop.block "fill" reads() writes(%t : memref<2xf32>) spatial ["i", "o"] {
        %z = arith.constant 0.0 : f32
        loop.store %z, %t[%o] : f32 -> memref<2xf32>
      }
    }
    loop.dealloc %t : memref<2xf32>
  }
  func.return
}
