// RUN: dlc-opt %s --split-input-file --verify-diagnostics | filecheck %s

target_gpu.kernel @negative_results(%x: f32) -> f32 {
  target_gpu.return
}
// CHECK: 'target_gpu.kernel' op expected no results in @negative_results, found 1

// -----

target_gpu.kernel @negative_tensor_argument(%x: tensor<4xf32>) {
  target_gpu.return
}
// CHECK: 'target_gpu.kernel' op expected argument 0 of @negative_tensor_argument to be a memref or a scalar, found tensor<4xf32>

// -----

"target_gpu.kernel"() <{sym_name = "negative_no_body", function_type = () -> ()}> ({
}) : () -> ()
// CHECK: 'target_gpu.kernel' op expected a body in @negative_no_body, found none

// -----

"target_gpu.kernel"() <{sym_name = "negative_block_args", function_type = (f32) -> ()}> ({
^bb0(%x: i32):
  target_gpu.return
}) : () -> ()
// CHECK: 'target_gpu.kernel' op expected the entry block arguments of @negative_block_args to have the function's input types, found (i32)

// -----

func.func @negative_unknown_kernel() {
  %o = arith.constant 1 : index
  target_gpu.launch @m::@missing grid(%o, %o, %o) block(%o, %o, %o) args()
  func.return
}
// CHECK: 'target_gpu.launch' op expected @m::@missing to name a kernel, found no such symbol

// -----

target_gpu.module @m {
  target_gpu.kernel @k(%x: memref<8xf32>) {
    target_gpu.return
  }
}
func.func @negative_argument_count() {
  %o = arith.constant 1 : index
  target_gpu.launch @m::@k grid(%o, %o, %o) block(%o, %o, %o) args()
  func.return
}
// CHECK: 'target_gpu.launch' op expected 1 arguments for @m::@k, found 0

// -----

target_gpu.module @m {
  target_gpu.kernel @k(%x: memref<8xf32>) {
    target_gpu.return
  }
}
func.func @negative_argument_type(%y: memref<8xf16>) {
  %o = arith.constant 1 : index
  target_gpu.launch @m::@k grid(%o, %o, %o) block(%o, %o, %o) args(%y : memref<8xf16>)
  func.return
}
// CHECK: 'target_gpu.launch' op expected argument 0 of @m::@k to have type memref<8xf32>, found memref<8xf16>

// -----

target_gpu.kernel @negative_dimension() {
  %t = target_gpu.thread_id "w"
  target_gpu.return
}
// CHECK: 'target_gpu.thread_id' op expected dimension to be one of x, y, z, found 'w'

// -----

target_gpu.kernel @negative_shared_space() {
  %s = target_gpu.shared_alloc : memref<32xf32>
  target_gpu.return
}
// CHECK: 'target_gpu.shared_alloc' op expected a memref in memory space 3 (shared), found memref<32xf32>

// -----

target_gpu.kernel @negative_shared_dynamic() {
  %s = target_gpu.shared_alloc : memref<?xf32, 3>
  target_gpu.return
}
// CHECK: 'target_gpu.shared_alloc' op expected a static shape, found memref<?xf32, 3 : i64>

// -----

func.func @negative_return_outside_kernel() {
  target_gpu.return
}
// CHECK: 'target_gpu.return' expects parent op 'target_gpu.kernel'
