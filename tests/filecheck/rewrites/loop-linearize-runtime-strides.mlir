// RUN: dlc-opt %s -p loop-linearize-runtime-strides --split-input-file --verify-diagnostics | filecheck %s
// RUN: dlc-opt %s -p loop-linearize-runtime-strides,convert-memref-view-to-llvm,convert-loop-to-llvm --split-input-file --verify-diagnostics | filecheck %s --check-prefix=LLVM

// Arguments of runtime strides: each gets a flat view at the function's entry; a load and a
// store use it at the linear index made of the indices and the sizes after the leading one (a
// static dim as a constant); blocks read and write the views. The leading dim's size is not
// needed.
// CHECK-LABEL: func.func @arguments
// CHECK-SAME:    (%[[X:.*]]: memref<?x3x?xf32>, %[[OUT:.*]]: memref<?x3x?xf32>, %[[XN:.*]]: index, %[[XW:.*]]: index, %[[ON:.*]]: index, %[[OW:.*]]: index)
// CHECK-NEXT:    %[[OUTF:.*]] = memref.collapse_shape %[[OUT]] {{\[}}[0 : i64, 1 : i64, 2 : i64]] : memref<?x3x?xf32> into memref<?xf32>
// CHECK-NEXT:    %[[XF:.*]] = memref.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64, 2 : i64]] : memref<?x3x?xf32> into memref<?xf32>
// CHECK:         loop.block "copy" reads(%[[XF]] : memref<?xf32>) writes(%[[OUTF]] : memref<?xf32>)
// CHECK-NEXT:      %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:      %[[A:.*]] = arith.muli %[[I:.*]], %[[C3]] : index
// CHECK-NEXT:      %[[B:.*]] = arith.addi %[[A]], %[[C:.*]] : index
// CHECK-NEXT:      %[[D:.*]] = arith.muli %[[B]], %[[XW]] : index
// CHECK-NEXT:      %[[E:.*]] = arith.addi %[[D]], %[[J:.*]] : index
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[XF]][%[[E]]] : memref<?xf32> -> vector<8xf32>
// CHECK:           %[[G:.*]] = arith.muli %{{.*}}, %[[OW]] : index
// CHECK-NEXT:      %[[H:.*]] = arith.addi %[[G]], %[[J]] : index
// CHECK-NEXT:      loop.store %[[V]], %[[OUTF]][%[[H]]] : vector<8xf32> -> memref<?xf32>
// LLVM-LABEL: llvm.func @arguments
// LLVM:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
func.func @arguments(%x: memref<?x3x?xf32>, %out: memref<?x3x?xf32>, %x_n: index, %x_w: index, %out_n: index, %out_w: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 4 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %x_n step %c1 axis "i" {
    loop.for %c = %c0 to %c3 step %c1 axis "c" {
      loop.for %j = %c0 to %x_w step %c8 axis "j" {
        loop.block "copy" reads(%x : memref<?x3x?xf32>) writes(%out : memref<?x3x?xf32>) spatial ["i", "c", "j"] {
          %v = loop.load %x[%i, %c, %j] : memref<?x3x?xf32> -> vector<8xf32>
          loop.store %v, %out[%i, %c, %j] : vector<8xf32> -> memref<?x3x?xf32>
        }
      }
    }
  }
  func.return
}

// -----

// An allocation of runtime sizes: its view follows it, its accesses use its `sizes`; a call
// and the dealloc take the buffer itself; a buffer of runtime rows alone is left as it is.
// CHECK-LABEL: func.func @allocation
// CHECK:         %[[T:.*]] = loop.alloc global sizes(%[[H:.*]], %[[W:.*]]) : memref<?x?xf32>
// CHECK-NEXT:    %[[TF:.*]] = memref.collapse_shape %[[T]] {{\[}}[0 : i64, 1 : i64]] : memref<?x?xf32> into memref<?xf32>
// CHECK-NEXT:    %[[A:.*]] = arith.muli %{{.*}}, %[[W]] : index
// CHECK-NEXT:    %[[B:.*]] = arith.addi %[[A]], %{{.*}} : index
// CHECK-NEXT:    loop.prefetch %[[TF]][%[[B]]] : memref<?xf32>
// CHECK:         loop.store %{{.*}}, %[[TF]][%{{.*}}] : f32 -> memref<?xf32>
// CHECK-NEXT:    func.call @use(%[[T]], %[[H]], %[[W]]) : (memref<?x?xf32>, index, index) -> ()
// CHECK-NEXT:    loop.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x4xf32> -> f32
// CHECK-NEXT:    loop.dealloc %[[T]] : memref<?x?xf32>
func.func @allocation(%r: memref<?x4xf32>, %h: index, %w: index, %r_n: index) attributes {dlc.num_outputs = 0 : i64, dlc.dim_args = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = loop.alloc global sizes(%h, %w) : memref<?x?xf32>
  loop.prefetch %t[%c1, %c0] : memref<?x?xf32>
  %z = arith.constant 0.0 : f32
  loop.store %z, %t[%c1, %c1] : f32 -> memref<?x?xf32>
  func.call @use(%t, %h, %w) : (memref<?x?xf32>, index, index) -> ()
  %v = loop.load %r[%c0, %c1] : memref<?x4xf32> -> f32
  loop.dealloc %t : memref<?x?xf32>
  func.return
}
func.func private @use(%t: memref<?x?xf32>, %h: index, %w: index) attributes {dlc.num_outputs = 0 : i64, dlc.dim_args = 2 : i64}

// -----

// A view of a buffer of runtime strides (rows of a plane) has runtime strides of its own,
// which this pass does not follow.
// CHECK: 'loop.rows' op expected loads, stores, prefetches, calls, deallocs or blocks to use the buffer of runtime strides memref<?x?xf32> (loop-linearize-runtime-strides)
func.func @rows_of_a_plane(%x: memref<?x?xf32>, %h: index, %w: index) attributes {dlc.num_outputs = 0 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %v = loop.rows %x[%c0] : memref<?x?xf32> -> memref<2x?xf32>
  func.return
}

// -----

// A view that merges adjacent dims of a buffer of runtime strides (a plane made one dim by
// the schedule of runtime extents): its accesses go to the buffer's flat view at the linear
// index over the view's sizes (the plane's size the product of its dims', multiplied where
// the view was), and the view is gone.
// CHECK-LABEL: func.func @plane_view
// CHECK-NEXT:    %[[FLAT:.*]] = memref.collapse_shape %x {{\[}}[0 : i64, 1 : i64, 2 : i64]] : memref<2x?x?xf32> into memref<?xf32>
// CHECK-NOT:     into memref<2x?xf32>
// CHECK:         %hw = arith.muli %x_h, %x_w : index
// CHECK-NEXT:    %[[HW:.*]] = arith.muli %x_h, %x_w : index
// CHECK:           loop.block "zero" reads() writes(%[[FLAT]] : memref<?xf32>)
// CHECK-NEXT:        %[[ROW:.*]] = arith.muli %c1, %[[HW]] : index
// CHECK-NEXT:        %[[AT:.*]] = arith.addi %[[ROW]], %i : index
// CHECK-NEXT:        loop.store %z, %[[FLAT]][%[[AT]]] : f32 -> memref<?xf32>
// LLVM-LABEL: llvm.func @plane_view
// LLVM:         llvm.store
func.func @plane_view(%x: memref<2x?x?xf32>, %x_h: index, %x_w: index) attributes {dlc.num_outputs = 0 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %hw = arith.muli %x_h, %x_w : index
  %p = memref.collapse_shape %x [[0 : i64], [1 : i64, 2 : i64]] : memref<2x?x?xf32> into memref<2x?xf32>
  %z = arith.constant 0.0 : f32
  loop.for %i = %c0 to %hw step %c1 axis "i" {
    loop.block "zero" reads() writes(%p : memref<2x?xf32>) spatial ["i"] {
      loop.store %z, %p[%c1, %i] : f32 -> memref<2x?xf32>
    }
  }
  func.return
}
