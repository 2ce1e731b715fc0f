// RUN: dlc-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @negative_for_two_block_args(%c0: index) {
  "loop.for"(%c0, %c0, %c0) <{axis = "i", kind = "serial"}> ({
  ^bb0(%i: index, %j: index):
    "loop.yield"() : () -> ()
  }) : (index, index, index) -> ()
  func.return
}
// CHECK: 'loop.for' op expected the body to have one index argument (the induction variable), found (index, index)

// -----

func.func @negative_for_bad_kind(%c0: index) {
  loop.for %i = %c0 to %c0 step %c0 axis "i" kind tiled {
  }
  func.return
}
// CHECK: 'loop.for' op expected kind to be one of serial, parallel, vectorized, unrolled, bound, found 'tiled'

// -----

func.func @negative_for_bound_without_thread(%c0: index) {
  loop.for %i = %c0 to %c0 step %c0 axis "i" kind bound {
  }
  func.return
}
// CHECK: 'loop.for' op expected a thread for kind bound, found none

// -----

func.func @negative_for_thread_not_bound(%c0: index) {
  loop.for %i = %c0 to %c0 step %c0 axis "i" kind parallel thread "threadIdx.x" {
  }
  func.return
}
// CHECK: 'loop.for' op expected no thread for kind parallel, found 'threadIdx.x'

// -----

func.func @negative_for_bad_thread(%c0: index) {
  loop.for %i = %c0 to %c0 step %c0 axis "i" kind bound thread "warp.x" {
  }
  func.return
}
// CHECK: 'loop.for' op expected thread to be one of blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, found 'warp.x'

// -----

func.func @negative_block_with_args(%C: memref<4xf32>) {
  "loop.block"(%C) <{name = "b", operandSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%x: index):
    "loop.yield"() : () -> ()
  }) : (memref<4xf32>) -> ()
  func.return
}
// CHECK: 'loop.block' op expected a body without arguments, found 1

// -----

func.func @negative_block_no_writes(%A: memref<4xf32>) {
  loop.block "b" reads(%A : memref<4xf32>) writes() {
  }
  func.return
}
// CHECK: 'loop.block' op expected at least one written buffer in 'b', found none

// -----

func.func @negative_block_duplicate_axis(%C: memref<4xf32>) {
  loop.block "b" reads() writes(%C : memref<4xf32>) spatial ["i"] reduction ["i"] {
  }
  func.return
}
// CHECK: 'loop.block' op expected distinct axis names, found 'i' twice

// -----

func.func @negative_block_unlisted_store(%C: memref<4xf32>, %D: memref<4xf32>, %i: index, %v: f32) {
  loop.block "b" reads() writes(%C : memref<4xf32>) spatial ["i"] {
    loop.store %v, %D[%i] : f32 -> memref<4xf32>
  }
  func.return
}
// CHECK: 'loop.block' op expected every buffer stored to in 'b' to be in its writes, found a 'loop.store' into memref<4xf32> that is not

// -----

func.func @negative_block_unlisted_load(%A: memref<4xf32>, %C: memref<4xf32>, %i: index) {
  loop.block "b" reads() writes(%C : memref<4xf32>) spatial ["i"] {
    %a = loop.load %A[%i] : memref<4xf32> -> f32
    loop.store %a, %C[%i] : f32 -> memref<4xf32>
  }
  func.return
}
// CHECK: 'loop.block' op expected every buffer loaded from in 'b' to be in its reads or writes, found a 'loop.load' from memref<4xf32> that is not

// -----

func.func @negative_load_index_count(%A: memref<4x8xf32>, %i: index) {
  %a = loop.load %A[%i] : memref<4x8xf32> -> f32
  func.return
}
// CHECK: 'loop.load' op expected 2 indices for memref<4x8xf32>, found 1

// -----

func.func @negative_prefetch_index_count(%A: memref<4x8xf32>, %i: index) {
  loop.prefetch %A[%i] : memref<4x8xf32>
  func.return
}
// CHECK: 'loop.prefetch' op expected 2 indices for memref<4x8xf32>, found 1

// -----

func.func @negative_load_element_type(%A: memref<4x8xf32>, %i: index) {
  %a = loop.load %A[%i, %i] : memref<4x8xf32> -> f16
  func.return
}
// CHECK: 'loop.load' op expected element type f32 of memref<4x8xf32>, found f16

// -----

func.func @negative_load_vector_too_wide(%A: memref<4x8xf32>, %i: index) {
  %a = loop.load %A[%i, %i] : memref<4x8xf32> -> vector<16xf32>
  func.return
}
// CHECK: 'loop.load' op expected a vector width at most the last dimension 8 of memref<4x8xf32>, found 16

// -----

func.func @negative_load_vector_2d(%A: memref<4x8xf32>, %i: index) {
  %a = loop.load %A[%i, %i] : memref<4x8xf32> -> vector<2x4xf32>
  func.return
}
// CHECK: 'loop.load' op expected a one-dimensional fixed-width vector, found vector<2x4xf32>

// -----

func.func @negative_load_vector_rank0(%A: memref<f32>) {
  %a = loop.load %A[] : memref<f32> -> vector<4xf32>
  func.return
}
// CHECK: 'loop.load' op expected a memref of rank at least 1 for a vector access, found memref<f32>

// -----

func.func @negative_store_element_type(%C: memref<4xf32>, %i: index, %v: vector<4xi32>) {
  loop.store %v, %C[%i] : vector<4xi32> -> memref<4xf32>
  func.return
}
// CHECK: 'loop.store' op expected element type f32 of memref<4xf32>, found vector<4xi32>

// -----

func.func @negative_alloc_scope() {
  %b = loop.alloc texture : memref<4xf32>
  func.return
}
// CHECK: 'loop.alloc' op expected scope to be one of global, local, shared, found 'texture'

// -----

func.func @negative_alloc_dynamic() {
  %b = loop.alloc global : memref<?xf32>
  func.return
}
// CHECK: 'loop.alloc' op expected one size operand per dynamic dim of memref<?xf32> (1), found 0

// -----

func.func @negative_alloc_dynamic_local(%n: index) {
  %b = loop.alloc local sizes(%n) : memref<?xf32>
  func.return
}
// CHECK: 'loop.alloc' op expected a static shape in scope 'local', found memref<?xf32>

// -----

func.func @negative_intrinsic_unknown(%acc: vector<16xi32>, %a: vector<4xi8>, %b: vector<64xi8>) {
  %r = loop.intrinsic "x86.vpdpwssd" %acc, %a, %b : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
  func.return
}
// CHECK: 'loop.intrinsic' op expected an intrinsic among ptx.mma.m16n8k16.bf16, ptx.mma.m16n8k16.f16, ptx.mma.m16n8k32.s8, x86.avx512.vdpbf16ps, x86.avx512.vpdpbusd, x86.avx512.vpdpwssd, found 'x86.vpdpwssd'

// -----

func.func @negative_intrinsic_operand(%acc: vector<16xi32>, %a: vector<4xi8>, %b: vector<32xi8>) {
  %r = loop.intrinsic "x86.avx512.vpdpbusd" %acc, %a, %b : (vector<16xi32>, vector<4xi8>, vector<32xi8>) -> vector<16xi32>
  func.return
}
// CHECK: 'loop.intrinsic' op expected operand 'b' of "x86.avx512.vpdpbusd" to be vector<64xi8>, found vector<32xi8>

// -----

// A warp-level intrinsic takes a lane's fragments (8 f16 of A for mma.m16n8k16), not tiles.
func.func @negative_intrinsic_fragment(%acc: vector<4xf32>, %a: vector<256xf16>, %b: vector<4xf16>) {
  %r = loop.intrinsic "ptx.mma.m16n8k16.f16" %acc, %a, %b : (vector<4xf32>, vector<256xf16>, vector<4xf16>) -> vector<4xf32>
  func.return
}
// CHECK: 'loop.intrinsic' op expected operand 'a' of "ptx.mma.m16n8k16.f16" to be vector<8xf16>, found vector<256xf16>

// -----

func.func @negative_matrix_load_unknown(%S: memref<16x16xf16>, %i: index) {
  %f = loop.matrix_load "ptx.ldmatrix.x8" %S[%i, %i] : memref<16x16xf16> -> vector<16xf16>
  func.return
}
// CHECK: 'loop.matrix_load' op expected a matrix load among ptx.ldmatrix.x1, ptx.ldmatrix.x1.trans, ptx.ldmatrix.x2, ptx.ldmatrix.x2.trans, ptx.ldmatrix.x4, ptx.ldmatrix.x4.trans, found 'ptx.ldmatrix.x8'

// -----

// ldmatrix moves 16-bit elements only.
func.func @negative_matrix_load_element(%S: memref<16x16xf32>, %i: index) {
  %f = loop.matrix_load "ptx.ldmatrix.x2" %S[%i, %i] : memref<16x16xf32> -> vector<4xf32>
  func.return
}
// CHECK: 'loop.matrix_load' op expected a buffer of 16-bit elements, found memref<16x16xf32>

// -----

// Each lane receives two elements per 8x8 matrix: four for x2.
func.func @negative_matrix_load_result(%S: memref<16x16xf16>, %i: index) {
  %f = loop.matrix_load "ptx.ldmatrix.x2" %S[%i, %i] : memref<16x16xf16> -> vector<8xf16>
  func.return
}
// CHECK: 'loop.matrix_load' op expected the result of "ptx.ldmatrix.x2" to be vector<4xf16>, found vector<8xf16>

// -----

// cp.async moves 16 bytes of one element type.
func.func @negative_async_copy_types(%G: memref<64xf32>, %S: memref<64xf16>, %i: index) {
  loop.async_copy %G[%i], %S[%i], %i : memref<64xf32>, memref<64xf16>
  func.return
}
// CHECK: 'loop.async_copy' op expected the same element type in memref<64xf32> and memref<64xf16>

// -----

func.func @negative_async_copy_narrow(%G: memref<4xf16>, %S: memref<64xf16>, %i: index) {
  loop.async_copy %G[%i], %S[%i], %i : memref<4xf16>, memref<64xf16>
  func.return
}
// CHECK: 'loop.async_copy' op expected a vector width at most the last dimension 4 of memref<4xf16>, found 8

// -----

func.func @negative_async_wait() {
  loop.async_wait -1
  func.return
}
// CHECK: 'loop.async_wait' op expected a pending count >= 0, found -1

// -----

func.func @negative_rows_trailing_dims(%x: memref<?x8xf32>, %first: index) {
  %v = loop.rows %x[%first] : memref<?x8xf32> -> memref<2x4xf32>
  func.return
}
// CHECK: 'loop.rows' op expected a result of static rows with the source's element type and trailing dims, found memref<?x8xf32> -> memref<2x4xf32>

// -----

func.func @negative_rows_dynamic_result(%x: memref<?x8xf32>, %first: index) {
  %v = loop.rows %x[%first] : memref<?x8xf32> -> memref<?x8xf32>
  func.return
}
// CHECK: 'loop.rows' op expected a result of static rows with the source's element type and trailing dims, found memref<?x8xf32> -> memref<?x8xf32>

// -----

func.func @negative_rows_strided(%x: memref<4x8xf32, strided<[16, 1]>>, %first: index) {
  %v = loop.rows %x[%first] : memref<4x8xf32, strided<[16, 1]>> -> memref<2x8xf32>
  func.return
}
// CHECK: 'loop.rows' op expected a ranked source with an identity layout, found memref<4x8xf32, strided<[16, 1]>>
