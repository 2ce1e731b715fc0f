// RUN: dlc-opt %s -p convert-memref-view-to-llvm --split-input-file --verify-diagnostics | filecheck %s
// RUN: dlc-opt %s -p convert-memref-view-to-llvm,convert-loop-to-llvm --split-input-file --verify-diagnostics | filecheck %s --check-prefix=LLVM
// RUN: dlc-opt %s -p 'convert-memref-view-to-llvm{index_bitwidth=32}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=I32

// A view at byte 16 of a workspace: the buffer's pointer plus 16 bytes, reached through casts
// that convert-loop-to-llvm cancels.
// CHECK-LABEL: func.func @view_at_byte_offset
// CHECK:         %[[WS:.*]] = loop.alloc global : memref<64xi8>
// CHECK-NEXT:    %[[SHIFT:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[PTR:.*]] = builtin.unrealized_conversion_cast %[[WS]] : memref<64xi8> to !llvm.ptr
// CHECK-NEXT:    %[[OFF:.*]] = builtin.unrealized_conversion_cast %[[SHIFT]] : index to i64
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.getelementptr inbounds %[[PTR]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[VIEW:.*]] = builtin.unrealized_conversion_cast %[[ADDR]] : !llvm.ptr to memref<2x2xf32>
// CHECK:         loop.store %{{.*}}, %[[VIEW]][%i, %i] : f32 -> memref<2x2xf32>
// CHECK-NOT:     memref.view
// CHECK:         func.return
// LLVM-LABEL: llvm.func @view_at_byte_offset
// LLVM:         %[[BASE:.*]] = llvm.call @dlc_buffer_take
// LLVM:         %[[ADDR:.*]] = llvm.getelementptr inbounds %[[BASE]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// LLVM:         llvm.getelementptr inbounds %[[ADDR]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// LLVM-NOT:     unrealized_conversion_cast
// I32-LABEL: func.func @view_at_byte_offset
// I32:         builtin.unrealized_conversion_cast %{{.*}} : index to i32
func.func @view_at_byte_offset(%x: memref<f32>, %i: index) {
  %ws = loop.alloc global : memref<64xi8>
  %shift = arith.constant 16 : index
  %v = memref.view %ws[%shift][] : memref<64xi8> to memref<2x2xf32>
  %a = loop.load %x[] : memref<f32> -> f32
  loop.store %a, %v[%i, %i] : f32 -> memref<2x2xf32>
  loop.dealloc %ws : memref<64xi8>
  func.return
}

// -----

// A view of runtime rows (loop-plan-memory's plan of buffers of runtime rows): the same
// pointer arithmetic, at a byte shift computed at run time; its size does not enter it.
// CHECK-LABEL: func.func @runtime_rows_view
// CHECK:         %[[BYTES:.*]] = builtin.unrealized_conversion_cast %{{.*}} : index to i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[BYTES]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %{{.*}} = builtin.unrealized_conversion_cast %[[P]] : !llvm.ptr to memref<?x4xf32>
func.func @runtime_rows_view(%n: index) {
  %c16 = arith.constant 16 : index
  %bytes = arith.muli %n, %c16 : index
  %ws = loop.alloc global sizes(%bytes) : memref<?xi8>
  %shift = arith.muli %n, %c16 : index
  %v = memref.view %ws[%shift][%n] : memref<?xi8> to memref<?x4xf32>
  func.return
}

// -----

// A view of runtime sizes in any dims (loop-plan-memory's plan of buffers of runtime size):
// the same pointer arithmetic; the sizes do not enter it.
// CHECK-LABEL: func.func @runtime_sizes_view
// CHECK:         %[[BYTES:.*]] = builtin.unrealized_conversion_cast %{{.*}} : index to i64
// CHECK-NEXT:    %[[P:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[BYTES]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %{{.*}} = builtin.unrealized_conversion_cast %[[P]] : !llvm.ptr to memref<?x8x?x?xf32>
func.func @runtime_sizes_view(%n: index, %h: index, %w: index, %bytes: index, %shift: index) {
  %ws = loop.alloc global sizes(%bytes) : memref<?xi8>
  %v = memref.view %ws[%shift][%n, %h, %w] : memref<?xi8> to memref<?x8x?x?xf32>
  func.return
}

