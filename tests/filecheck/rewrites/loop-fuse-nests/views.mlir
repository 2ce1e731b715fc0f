// RUN: dlc-opt %s -p loop-fuse-nests --split-input-file | filecheck %s

// A nest that writes a buffer through a `memref.collapse_shape` view and one that reads the
// buffer itself touch one memory: the view merges both axes, so iteration i of the first
// writes elements the second's other iterations read (a transpose). They must not fuse.
// CHECK-LABEL: func.func @view_of_merged_axes_blocks_fusion
// CHECK:         loop.for %{{.*}} axis "i" kind parallel {
// CHECK:           loop.store %{{.*}}, %[[V:.*]][%{{.*}}] : f32 -> memref<8xf32>
// CHECK:         }
// CHECK:         loop.for %{{.*}} axis "i" kind parallel {
// CHECK:           loop.load %b[
func.func @view_of_merged_axes_blocks_fusion(%out: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %b = loop.alloc global : memref<2x4xf32>
  %v = memref.collapse_shape %b [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  loop.for %i = %c0 to %c2 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c4 step %c1 axis "j" {
      loop.block "transpose" reads() writes(%v : memref<8xf32>) spatial ["i", "j"] {
        %s = arith.muli %j, %c2 : index
        %k = arith.addi %s, %i : index
        %n = arith.index_cast %k : index to i32
        %a = arith.sitofp %n : i32 to f32
        loop.store %a, %v[%k] : f32 -> memref<8xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c2 step %c1 axis "i" kind parallel {
    loop.for %j2 = %c0 to %c4 step %c1 axis "j" {
      loop.block "copy" reads(%b : memref<2x4xf32>) writes(%out : memref<2x4xf32>) spatial ["i", "j"] {
        %a = loop.load %b[%i2, %j2] : memref<2x4xf32> -> f32
        loop.store %a, %out[%i2, %j2] : f32 -> memref<2x4xf32>
      }
    }
  }
  loop.dealloc %b : memref<2x4xf32>
  func.return
}

// -----

// A view that keeps the leading axis (rows merged, as the schedule rules make them) indexes
// it like its buffer: both nests touch only row i in iteration i, so they fuse.
// CHECK-LABEL: func.func @view_keeping_the_row_axis_fuses
// CHECK:         loop.for %[[I:.*]] = {{.*}} axis "i" kind parallel {
// CHECK:           loop.store %{{.*}}, %{{.*}}[%[[I]], %{{.*}}] : f32 -> memref<2x12xf32>
// CHECK:           loop.load %b[%[[I]],
// CHECK-NOT:     loop.for {{.*}} axis "i" kind parallel
func.func @view_keeping_the_row_axis_fuses(%x: memref<2x12xf32>, %out: memref<2x3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c12 = arith.constant 12 : index
  %b = loop.alloc global : memref<2x3x4xf32>
  %v = memref.collapse_shape %b [[0], [1, 2]] : memref<2x3x4xf32> into memref<2x12xf32>
  loop.for %i = %c0 to %c2 step %c1 axis "i" kind parallel {
    loop.for %j = %c0 to %c12 step %c1 axis "j" {
      loop.block "row" reads(%x : memref<2x12xf32>) writes(%v : memref<2x12xf32>) spatial ["i", "j"] {
        %a = loop.load %x[%i, %j] : memref<2x12xf32> -> f32
        loop.store %a, %v[%i, %j] : f32 -> memref<2x12xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c2 step %c1 axis "i" kind parallel {
    loop.for %j2 = %c0 to %c3 step %c1 axis "j" {
      loop.for %k2 = %c0 to %c4 step %c1 axis "k" {
        loop.block "copy" reads(%b : memref<2x3x4xf32>) writes(%out : memref<2x3x4xf32>) spatial ["i", "j", "k"] {
          %a = loop.load %b[%i2, %j2, %k2] : memref<2x3x4xf32> -> f32
          loop.store %a, %out[%i2, %j2, %k2] : f32 -> memref<2x3x4xf32>
        }
      }
    }
  }
  loop.dealloc %b : memref<2x3x4xf32>
  func.return
}
