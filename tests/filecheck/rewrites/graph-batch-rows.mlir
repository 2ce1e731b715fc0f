// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p graph-batch-rows | filecheck %s
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'graph-batch-rows{block=4}' | filecheck %s --check-prefix=BLOCK
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'graph-batch-rows{block=8 tails=true target="llvm -mcpu=skylake-avx512 -l2-bytes=65536"}' | filecheck %s --check-prefix=TAILS
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'graph-batch-rows{block=8 tails=true target="llvm -mcpu=skylake-avx512 -l2-bytes=4194304 -num-cores=1"}' | filecheck %s --check-prefix=CACHED
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'graph-batch-rows{block=8 tails=true target="llvm -mcpu=skylake-avx512 -l2-bytes=4194304"}' | filecheck %s --check-prefix=PARALLEL
// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p 'graph-batch-rows{block=8 tails=true target="llvm -mcpu=znver3 -l2-bytes=65536"}' | filecheck %s --check-prefix=NARROW

// The leading `?` of every type becomes 1 (one batch row); the arguments and results that had
// it say so with dlc.batch_rows, and reshape's leading -1 now infers 1.

// CHECK-LABEL: @conv_flatten_matmul
// CHECK-SAME:  (%[[X:.*]]: tensor<1x3x8x8xf32> {onnx.name = "x", dlc.batch_rows = "N"}, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[M:.*]]: tensor<256x10xf32>)
// CHECK-SAME:  -> (tensor<1x10xf32> {onnx.name = "y", dlc.batch_rows = "N"})
// CHECK-NEXT:  %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {{.*}} -> tensor<1x4x8x8xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.relu %[[C]] : tensor<1x4x8x8xf32>
// CHECK-NEXT:  %[[F:.*]] = graph.reshape %[[R]] {shape = array<i64: -1, 256>} : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32>
// CHECK-NEXT:  %[[Y:.*]] = graph.matmul %[[F]], %[[M]] : (tensor<1x256xf32>, tensor<256x10xf32>) -> tensor<1x10xf32>
// CHECK-NEXT:  func.return %[[Y]] : tensor<1x10xf32>
// With a block, a copy for 4 rows follows the row function.
// BLOCK-LABEL: func.func @conv_flatten_matmul(
// BLOCK-SAME:  tensor<1x3x8x8xf32>
// BLOCK:       func.func @conv_flatten_matmul__rows4(%{{.*}}: tensor<4x3x8x8xf32> {onnx.name = "x", dlc.batch_rows = "N"}
// BLOCK-SAME:  -> (tensor<4x10xf32> {onnx.name = "y", dlc.batch_rows = "N"})
// BLOCK:       graph.reshape %{{.*}} {shape = array<i64: -1, 256>} : (tensor<4x4x8x8xf32>) -> tensor<4x256xf32>
// BLOCK:       graph.matmul {{.*}} -> tensor<4x10xf32>
// BLOCK:       func.func @slice_rows__rows4(
// BLOCK:         graph.slice %x {starts = array<i64: 0, 2>, sizes = array<i64: 4, 3>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
// BLOCK-LABEL: func.func @broadcast_rows__rows4(
// BLOCK:         graph.broadcast_to %t {shape = array<i64: 4, 6>} : (tensor<1x6xi64>) -> tensor<4x6xi64>
// BLOCK:         graph.broadcast_to %m {shape = array<i64: 4, 2, 6>} : (tensor<4x1x6xf32>) -> tensor<4x2x6xf32>
// BLOCK-LABEL: func.func @resize_rows__rows4(
// BLOCK:         graph.resize %x {sizes = array<i64: 4, 2, 8, 8>, scales = array<f64: {{.*}}>} : (tensor<4x2x4x4xf32>) -> tensor<4x2x8x8xf32>
// BLOCK-LABEL: func.func @negative_static(
// BLOCK-NEXT:    graph.relu
// BLOCK-NEXT:    func.return
// BLOCK-NEXT:  }
// BLOCK-NEXT:  }
func.func @conv_flatten_matmul(%x: tensor<?x3x8x8xf32> {onnx.name = "x", dlc.dim_symbols = ["N", "", "", ""]}, %w: tensor<4x3x3x3xf32>, %m: tensor<256x10xf32>) -> (tensor<?x10xf32> {onnx.name = "y", dlc.dim_symbols = ["N", ""]}) {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x8x8xf32>
  %r = graph.relu %c : tensor<?x4x8x8xf32>
  %f = graph.reshape %r {shape = array<i64: -1, 256>} : (tensor<?x4x8x8xf32>) -> tensor<?x256xf32>
  %y = graph.matmul %f, %m : (tensor<?x256xf32>, tensor<256x10xf32>) -> tensor<?x10xf32>
  func.return %y : tensor<?x10xf32>
}

// -----

// A slice that takes the batch whole (size -1 on axis 0) takes the row, or the block's rows.

// CHECK-LABEL: @slice_rows
// CHECK:         graph.slice %x {starts = array<i64: 0, 2>, sizes = array<i64: 1, 3>, steps = array<i64: 1, 1>} : (tensor<1x6xf32>) -> tensor<1x3xf32>
func.func @slice_rows(%x: tensor<?x6xf32> {dlc.dim_symbols = ["N", ""]}) -> tensor<?x3xf32> {
  %s = graph.slice %x {starts = array<i64: 0, 2>, sizes = array<i64: -1, 3>, steps = array<i64: 1, 1>} : (tensor<?x6xf32>) -> tensor<?x3xf32>
  func.return %s : tensor<?x3xf32>
}

// -----

// A broadcast to the batch (sized by a batched operand) broadcasts to the rows, the operand
// that sized it dropped; one whose operand has the batch keeps it row by row.

// CHECK-LABEL: @broadcast_rows
// CHECK:         graph.broadcast_to %t {shape = array<i64: 1, 6>} : (tensor<1x6xi64>) -> tensor<1x6xi64>
// CHECK:         graph.broadcast_to %m {shape = array<i64: 1, 2, 6>} : (tensor<1x1x6xf32>) -> tensor<1x2x6xf32>
func.func @broadcast_rows(%ids: tensor<?x6xi64> {dlc.dim_symbols = ["N", ""]}, %t: tensor<1x6xi64>, %m: tensor<?x1x6xf32> {dlc.dim_symbols = ["N", "", ""]}) -> (tensor<?x6xi64>, tensor<?x2x6xf32>) {
  %p = graph.broadcast_to %t, %ids {shape = array<i64: -1, 6>} : (tensor<1x6xi64>, tensor<?x6xi64>) -> tensor<?x6xi64>
  %e = graph.broadcast_to %m {shape = array<i64: -1, 2, 6>} : (tensor<?x1x6xf32>) -> tensor<?x2x6xf32>
  func.return %p, %e : tensor<?x6xi64>, tensor<?x2x6xf32>
}

// -----

// A resize keeps the batch (size -1, scale 1): each row resized on its own.

// CHECK-LABEL: @resize_rows
// CHECK:         graph.resize %x {sizes = array<i64: 1, 2, 8, 8>, scales = array<f64: {{.*}}>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
func.func @resize_rows(%x: tensor<?x2x4x4xf32> {dlc.dim_symbols = ["N", "", "", ""]}) -> tensor<?x2x8x8xf32> {
  %r = graph.resize %x {sizes = array<i64: -1, 2, 8, 8>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<?x2x4x4xf32>) -> tensor<?x2x8x8xf32>
  func.return %r : tensor<?x2x8x8xf32>
}

// -----

// With tails, blocks of the sizes 2, 3, 4, 6, 8, 10, 12, 14, 16 up to twice `block` are
// added, largest first, where their rows cost less arithmetic than reading the weights once:
// here a 1 MiB weight (0.5 per byte: 524288) against 16448 vector instructions of 16 lanes a
// row (a 256 x 1024 matmul row and its relu), so every size up to 16 (31 rows would still
// do). With 8 lanes (NARROW) a row costs twice as much: up to 14 (16 rows cost what the
// weights do). A
// function whose weights are arguments gets none, and neither does this one on one thread
// when its weights fit the L2 (CACHED). On several threads (PARALLEL, the target with no core count:
// all there are) a call also starts each kernel's parallel loop (58000 each): one kernel here,
// about 3.5 rows' arithmetic, so that rows one by one or padded to 8 cost more than 1.25 times
// a block of their own, and blocks of 2, 3, 4 and 6 are added (2 rows one by one: 148896
// against 90896 for a block of 2; 5 rows padded to 8: 189584 against 140240). The other
// functions, whose rows cost next to nothing, run padded to 8 at no cost: none.

// TAILS-LABEL: func.func @conv_flatten_matmul(
// TAILS:       func.func @conv_flatten_matmul__rows8(
// TAILS-NOT:   func.func @conv_flatten_matmul__rows
// TAILS-LABEL: func.func @dense_rows(
// TAILS-SAME:    tensor<1x256xf32>
// TAILS:       func.func @dense_rows__rows16(%{{.*}}: tensor<16x256xf32> {dlc.batch_rows = "N"}) -> (tensor<16x1024xf32> {dlc.batch_rows = "N"})
// TAILS:       func.func @dense_rows__rows14(
// TAILS:       func.func @dense_rows__rows12(
// TAILS:       func.func @dense_rows__rows10(
// TAILS:       func.func @dense_rows__rows8(
// TAILS:       func.func @dense_rows__rows6(
// TAILS:       func.func @dense_rows__rows4(%{{.*}}: tensor<4x256xf32> {dlc.batch_rows = "N"}) -> (tensor<4x1024xf32> {dlc.batch_rows = "N"})
// TAILS:         graph.relu %{{.*}} : tensor<4x1024xf32>
// TAILS:       func.func @dense_rows__rows3(
// TAILS:       func.func @dense_rows__rows2(%{{.*}}: tensor<2x256xf32> {dlc.batch_rows = "N"})
// TAILS-NOT:   func.func @dense_rows__rows
// TAILS-LABEL: func.func @negative_static(
// NARROW-LABEL: func.func @dense_rows(
// NARROW-NEXT:    graph.constant
// NARROW:       func.func @dense_rows__rows14(
// NARROW:       func.func @dense_rows__rows12(
// NARROW:       func.func @dense_rows__rows8(
// NARROW-NOT:   func.func @dense_rows__rows16
// NARROW-LABEL: func.func @negative_static(
// CACHED-LABEL: func.func @dense_rows(
// CACHED:       func.func @dense_rows__rows8(
// CACHED-NOT:   func.func @dense_rows__rows
// CACHED-LABEL: func.func @negative_static(
// PARALLEL-LABEL: func.func @conv_flatten_matmul(
// PARALLEL:       func.func @conv_flatten_matmul__rows8(
// PARALLEL-NOT:   func.func @conv_flatten_matmul__rows
// PARALLEL-LABEL: func.func @dense_rows(
// PARALLEL:       func.func @dense_rows__rows8(
// PARALLEL:       func.func @dense_rows__rows6(
// PARALLEL:       func.func @dense_rows__rows4(
// PARALLEL:       func.func @dense_rows__rows3(
// PARALLEL:       func.func @dense_rows__rows2(
// PARALLEL-NOT:   func.func @dense_rows__rows
// PARALLEL-LABEL: func.func @negative_static(
func.func @dense_rows(%x: tensor<?x256xf32> {dlc.dim_symbols = ["N", ""]}) -> (tensor<?x1024xf32> {dlc.dim_symbols = ["N", ""]}) {
  %w = graph.constant dense<0.5> : tensor<256x1024xf32>
  %y = graph.matmul %x, %w : (tensor<?x256xf32>, tensor<256x1024xf32>) -> tensor<?x1024xf32>
  %r = graph.relu %y : tensor<?x1024xf32>
  func.return %r : tensor<?x1024xf32>
}

// -----

// A function with static shapes is left alone.

// CHECK-LABEL: @negative_static
// CHECK-SAME:  (%{{.*}}: tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @negative_static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = graph.relu %x : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// CHECK: 'func.func' op @negative_unnamed expected the dynamic leading dim of argument #0 (tensor<?x3xf32>) to be named by dlc.dim_symbols
func.func @negative_unnamed(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %r = graph.relu %x : tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}

// -----

// CHECK: 'func.func' op @negative_two_symbols expected one batch symbol for its dynamic leading dims, found 'M', 'N'
func.func @negative_two_symbols(%x: tensor<?x3xf32> {dlc.dim_symbols = ["N", ""]}, %z: tensor<?x3xf32> {dlc.dim_symbols = ["M", ""]}) -> tensor<?x3xf32> {
  %r = graph.add %x, %z : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}

// -----

// A shape-polymorphic function (a runtime dim after its leading one) is left alone: its
// kernels run over the whole batch (the schedules fuse each batch loop with the parallel loop
// inside it), with or without blocks.

// CHECK-LABEL: @negative_runtime_extents
// CHECK-SAME:  (%{{.*}}: tensor<?x4x?x?xf32> {dlc.dim_symbols = ["N", "", "H", "W"]}, %{{.*}}: tensor<4x4x3x3xf32>) -> tensor<?x2x2x?x?xf32> {
// CHECK-NEXT:  graph.conv2d {{.*}} -> tensor<?x4x?x?xf32>
// CHECK-NEXT:  graph.reshape {{.*}} {shape = array<i64: -1, 2, 2, -1, -1>} : (tensor<?x4x?x?xf32>) -> tensor<?x2x2x?x?xf32>
// TAILS-LABEL: func.func @negative_runtime_extents(
// TAILS-SAME:  -> tensor<?x2x2x?x?xf32> {
// TAILS-NOT:   func.func @negative_runtime_extents__rows
func.func @negative_runtime_extents(%x: tensor<?x4x?x?xf32> {dlc.dim_symbols = ["N", "", "H", "W"]}, %w: tensor<4x4x3x3xf32>) -> tensor<?x2x2x?x?xf32> {
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x?x?xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x?x?xf32>
  %s = graph.reshape %c {shape = array<i64: -1, 2, 2, -1, -1>} : (tensor<?x4x?x?xf32>) -> tensor<?x2x2x?x?xf32>
  func.return %s : tensor<?x2x2x?x?xf32>
}
