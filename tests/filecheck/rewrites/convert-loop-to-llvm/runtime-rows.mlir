// RUN: dlc-opt %s -p 'convert-loop-to-llvm{target="llvm -mcpu=znver3"}' | filecheck %s

// A function over a runtime number of rows: the sizes come as i64 arguments after the
// pointers; a view of rows is the base advanced by first x row elements; a buffer of runtime
// rows (rows x row bytes) is taken from its site's cache slot (dlc_rows_buffer_take: the cached
// buffer when large enough, else a new one) and given back at its dealloc; the metadata gives
// the dynamic dims as -1 and lists which argument and dim each size is (dim_args), for the
// runtime to pass them.
// CHECK-LABEL: llvm.func @double_rows
// CHECK-SAME:    (%[[X:.*]]: !llvm.ptr {llvm.noalias}, %[[OUT:.*]]: !llvm.ptr {llvm.noalias}, %[[XN:.*]]: i64, %[[ON:.*]]: i64)
// CHECK:         %[[ROW:.*]] = llvm.mlir.constant(32) : i64
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.mul %[[ROW]], %[[XN]] : i64
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.mlir.addressof @[[CACHE:dlc_buffer_cache_0]] : !llvm.ptr
// CHECK-NEXT:    %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[TMP:.*]] = llvm.call @dlc_rows_buffer_take(%[[SLOT]], %[[ALIGN]], %[[BYTES]]) : (!llvm.ptr, i64, i64) -> !llvm.ptr
// CHECK:         %[[FIRST:.*]] = llvm.mul %{{.*}}, %{{.*}} overflow<nsw> : i64
// CHECK-NEXT:    %{{.*}} = llvm.getelementptr inbounds %[[X]][%[[FIRST]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.call @dlc_rows_buffer_release(%{{.*}}, %[[TMP]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK:       llvm.mlir.global internal @[[CACHE]](0 : i64)
// CHECK:       llvm.mlir.global external constant @dlc_metadata
// CHECK-SAME:    \22shape\22:[-1,8]
// CHECK-SAME:    \22dim_args\22:[[0,0],[1,0]]
func.func @double_rows(%x: memref<?x8xf32>, %out: memref<?x8xf32>, %x_d0: index, %out_d0: index) attributes {dlc.num_outputs = 1 : i64, dlc.dim_args = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %tmp = loop.alloc global sizes(%x_d0) : memref<?x8xf32>
  loop.for %r = %c0 to %x_d0 step %c2 axis "r" {
    %xr = loop.rows %x[%r] : memref<?x8xf32> -> memref<2x8xf32>
    %tr = loop.rows %tmp[%r] : memref<?x8xf32> -> memref<2x8xf32>
    loop.for %i = %c0 to %c2 step %c1 axis "i" {
      loop.for %j = %c0 to %c8 step %c1 axis "j" {
        loop.block "double" reads(%xr : memref<2x8xf32>) writes(%tr : memref<2x8xf32>) spatial ["i", "j"] {
          %v = loop.load %xr[%i, %j] : memref<2x8xf32> -> f32
          %w = arith.addf %v, %v : f32
          loop.store %w, %tr[%i, %j] : f32 -> memref<2x8xf32>
        }
      }
    }
  }
  loop.for %i = %c0 to %x_d0 step %c1 axis "i" {
    loop.for %j = %c0 to %c8 step %c1 axis "j" {
      loop.block "copy" reads(%tmp : memref<?x8xf32>) writes(%out : memref<?x8xf32>) spatial ["i", "j"] {
        %v = loop.load %tmp[%i, %j] : memref<?x8xf32> -> f32
        loop.store %v, %out[%i, %j] : f32 -> memref<?x8xf32>
      }
    }
  }
  loop.dealloc %tmp : memref<?x8xf32>
  func.return
}
