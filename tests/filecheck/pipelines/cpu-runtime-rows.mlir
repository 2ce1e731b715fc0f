// RUN: dlc-opt %s --dlc-target='llvm -mcpu=znver4 -num-cores=2' -p cpu-runtime-rows | filecheck %s

// The two dense layers of cpu.mlir over a dynamic batch (`?`, the symbol N): no entry of one
// row nor blocks of rows (graph-batch-rows is not run); the entry takes the batch's size after
// the pointers and passes it to the one kernel both layers share (their weights are its
// arguments); the intermediate between the calls has the batch's rows: a view into the
// workspace of runtime rows (N x the peak bytes of one row, 64, from its site's cache slot);
// the metadata gives the batched arguments' shapes with -1 and their symbol, and which
// arguments' dims the sizes are.
// CHECK-LABEL: llvm.func @main
// CHECK-SAME:    (%[[X:.*]]: !llvm.ptr {llvm.noalias}, %[[OUT:.*]]: !llvm.ptr {llvm.noalias}, %[[N:.*]]: i64, %[[NOUT:.*]]: i64)
// CHECK:         %[[ROW:.*]] = llvm.mlir.constant(64) : i64
// CHECK-NEXT:    %[[BYTES:.*]] = llvm.mul %[[N]], %[[ROW]] : i64
// CHECK:         %[[WS:.*]] = llvm.call @dlc_rows_buffer_take(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         %[[TMP:.*]] = llvm.getelementptr inbounds %[[WS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.call @[[KERNEL:fused_matmul_relu_0]](%[[X]], %{{.*}}, %[[TMP]], %[[N]], %[[N]])
// CHECK:         llvm.call @[[KERNEL]](%[[TMP]], %{{.*}}, %[[OUT]], %[[N]], %[[NOUT]])
// CHECK:         llvm.call @dlc_rows_buffer_release(%{{.*}}, %[[WS]], %{{.*}})
// CHECK:       llvm.func internal @[[KERNEL]](
// CHECK-NOT:   llvm.func internal @fused_matmul_relu_1
// CHECK:       llvm.mlir.global external constant @dlc_metadata
// CHECK-SAME:    \22shape\22:[-1,8],\22dtype\22:\22float32\22,\22batch\22:\22N\22
// CHECK-SAME:    \22dim_args\22:[[0,0],[1,0]]
func.func @main(%x: tensor<?x8xf32> {dlc.dim_symbols = ["N", ""]}) -> (tensor<?x8xf32> {dlc.dim_symbols = ["N", ""]}) {
  %w1 = graph.constant dense<0.5> : tensor<8x8xf32>
  %w2 = graph.constant dense<0.25> : tensor<8x8xf32>
  %a = graph.matmul %x, %w1 : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = graph.relu %a : tensor<?x8xf32>
  %c = graph.matmul %b, %w2 : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %d = graph.relu %c : tensor<?x8xf32>
  func.return %d : tensor<?x8xf32>
}
