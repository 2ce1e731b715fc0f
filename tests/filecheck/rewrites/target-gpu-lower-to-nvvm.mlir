// RUN: dlc-opt %s --split-input-file --verify-diagnostics -p target-gpu-lower-to-nvvm | filecheck %s

// Coordinates read PTX special registers; a barrier is bar.sync 0; shared memory is an
// addrspace(3) global of the gpu module; kernels are llvm.funcs marked nvvm.kernel with noalias
// buffers; the host function and its launch stay.
// CHECK-LABEL: func.func @host
// CHECK:         target_gpu.launch @kernels::@reverse
// CHECK:       target_gpu.module @kernels attributes {dlc.target = "cuda -arch=sm_80", llvm.target_triple = "nvptx64-nvidia-cuda"} {
// CHECK-NEXT:    llvm.mlir.global internal @reverse_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
// CHECK-NEXT:    llvm.func @reverse(%[[X:.*]]: !llvm.ptr {llvm.noalias}, %[[Y:.*]]: !llvm.ptr {llvm.noalias}) attributes {nvvm.kernel} {
// CHECK:           %[[TILE:.*]] = llvm.mlir.addressof @reverse_tile : !llvm.ptr<3>
// CHECK-NEXT:      %[[TID32:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:      %[[TID:.*]] = llvm.zext %[[TID32]] : i32 to i64
// CHECK:           %[[BASE:.*]] = llvm.ptrtoint %[[TILE]] : !llvm.ptr<3> to i64
// CHECK-NEXT:      %[[ADDR:.*]] = llvm.add %[[BASE]], %{{.*}} : i64
// CHECK-NEXT:      %[[P:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr<3>
// CHECK-NEXT:      llvm.store %{{.*}}, %[[P]] {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
// CHECK:           llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK-NOT:       target_gpu.{{(thread_id|block_id|barrier|shared_alloc|kernel|return)}}
func.func @host(%x: memref<64xf32>, %y: memref<64xf32>) attributes {dlc.num_outputs = 1 : i64} {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  target_gpu.launch @kernels::@reverse grid(%c1, %c1, %c1) block(%c64, %c1, %c1) args(%x, %y : memref<64xf32>, memref<64xf32>)
  func.return
}
target_gpu.module @kernels {
  target_gpu.kernel @reverse(%x: memref<64xf32>, %y: memref<64xf32>) {
    %c63 = arith.constant 63 : index
    %tile = target_gpu.shared_alloc : memref<64xf32, 3>
    %t = target_gpu.thread_id "x"
    %b = target_gpu.block_id "y"
    %v = loop.load %x[%t] : memref<64xf32> -> f32
    loop.store %v, %tile[%t] : f32 -> memref<64xf32, 3>
    target_gpu.barrier
    %r = arith.subi %c63, %t : index
    %w = loop.load %tile[%r] : memref<64xf32, 3> -> f32
    loop.store %w, %y[%t] : f32 -> memref<64xf32>
    target_gpu.return
  }
}

// -----

// A warp-level mma.sync becomes inline PTX: the lane's f16 fragments packed two per 32-bit
// register (a: 4, b: 2, "r"), the f32 accumulator one per register ("f"), the result's four
// registers gathered back into a vector.
// CHECK-LABEL: llvm.func @mma_f16
// CHECK:         %[[CV:.*]] = llvm.load %{{.*}} -> vector<4xf32>
// CHECK:         %[[AV:.*]] = llvm.load %{{.*}} -> vector<8xf16>
// CHECK:         %[[BV:.*]] = llvm.load %{{.*}} -> vector<4xf16>
// CHECK-NEXT:    %[[C0V:.*]] = llvm.shufflevector %[[CV]], %[[CV]] [0] : vector<4xf32>
// CHECK-NEXT:    %[[C0:.*]] = llvm.bitcast %[[C0V]] : vector<1xf32> to f32
// CHECK:         %[[AW:.*]] = llvm.bitcast %[[AV]] : vector<8xf16> to vector<4xi32>
// CHECK-NEXT:    %[[A0V:.*]] = llvm.shufflevector %[[AW]], %[[AW]] [0] : vector<4xi32>
// CHECK-NEXT:    %[[A0:.*]] = llvm.bitcast %[[A0V]] : vector<1xi32> to i32
// CHECK:         %[[BW:.*]] = llvm.bitcast %[[BV]] : vector<4xf16> to vector<2xi32>
// CHECK-NEXT:    %[[B0V:.*]] = llvm.shufflevector %[[BW]], %[[BW]] [0] : vector<2xi32>
// CHECK-NEXT:    %[[B0:.*]] = llvm.bitcast %[[B0V]] : vector<1xi32> to i32
// CHECK:         %[[R:.*]] = llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f" %[[A0]], %{{.*}}, %{{.*}}, %{{.*}}, %[[B0]], %{{.*}}, %[[C0]], %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:         llvm.extractvalue %[[R]][0]
// CHECK:         llvm.extractvalue %[[R]][3]
// CHECK:         %[[D:.*]] = llvm.insertelement %{{.*}}[%{{.*}} : i32] : vector<4xf32>
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    llvm.store %[[D]]
target_gpu.module @kernels {
  target_gpu.kernel @mma_f16(%c: memref<4xf32>, %a: memref<8xf16>, %b: memref<4xf16>) {
    %c0 = arith.constant 0 : index
    %cv = loop.load %c[%c0] : memref<4xf32> -> vector<4xf32>
    %av = loop.load %a[%c0] : memref<8xf16> -> vector<8xf16>
    %bv = loop.load %b[%c0] : memref<4xf16> -> vector<4xf16>
    %d = loop.intrinsic "ptx.mma.m16n8k16.f16" %cv, %av, %bv : (vector<4xf32>, vector<8xf16>, vector<4xf16>) -> vector<4xf32>
    loop.store %d, %c[%c0] : vector<4xf32> -> memref<4xf32>
    target_gpu.return
  }
}

// -----

// The int8 mma.sync (m16n8k32): four s8 per register, an s32 accumulator in "r" registers.
// CHECK-LABEL: llvm.func @mma_s8
// CHECK:         llvm.bitcast %{{.*}} : vector<16xi8> to vector<4xi32>
// CHECK:         llvm.bitcast %{{.*}} : vector<8xi8> to vector<2xi32>
// CHECK:         llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};", "=r,=r,=r,=r,r,r,r,r,r,r,r,r,r,r" {{.*}} -> !llvm.struct<(i32, i32, i32, i32)>
target_gpu.module @kernels {
  target_gpu.kernel @mma_s8(%c: memref<4xi32>, %a: memref<16xi8>, %b: memref<8xi8>) {
    %c0 = arith.constant 0 : index
    %cv = loop.load %c[%c0] : memref<4xi32> -> vector<4xi32>
    %av = loop.load %a[%c0] : memref<16xi8> -> vector<16xi8>
    %bv = loop.load %b[%c0] : memref<8xi8> -> vector<8xi8>
    %d = loop.intrinsic "ptx.mma.m16n8k32.s8" %cv, %av, %bv : (vector<4xi32>, vector<16xi8>, vector<8xi8>) -> vector<4xi32>
    loop.store %d, %c[%c0] : vector<4xi32> -> memref<4xi32>
    target_gpu.return
  }
}

// -----

// A matrix load (ldmatrix) becomes inline PTX on the lane's 32-bit shared address: one "=r"
// register (two f16) per 8x8 matrix, gathered into a vector of words and bitcast to the
// lane's f16 elements.
// CHECK-LABEL: llvm.func @ldmatrix
// CHECK:         %[[TILE:.*]] = llvm.mlir.addressof @ldmatrix_tile : !llvm.ptr<3>
// CHECK:         %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// CHECK-NEXT:    %[[W:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr<3> to i32
// CHECK-NEXT:    %[[R:.*]] = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r" %[[W]] : (i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK:         llvm.extractvalue %[[R]][3] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK:         %[[WORDS:.*]] = llvm.insertelement %{{.*}}[%{{.*}} : i32] : vector<4xi32>
// CHECK-NEXT:    %[[F:.*]] = llvm.bitcast %[[WORDS]] : vector<4xi32> to vector<8xf16>
// CHECK:         %[[T:.*]] = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {$0, $1}, [$2];", "=r,=r,r"
// CHECK:         llvm.bitcast %{{.*}} : vector<2xi32> to vector<4xf16>
target_gpu.module @kernels {
  target_gpu.kernel @ldmatrix(%out: memref<32x8xf16>, %out2: memref<32x4xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %tile = target_gpu.shared_alloc : memref<16x16xf16, 3>
    %t = target_gpu.thread_id "x"
    %row = arith.remui %t, %c8 : index
    %f = loop.matrix_load "ptx.ldmatrix.x4" %tile[%row, %c0] : memref<16x16xf16, 3> -> vector<8xf16>
    loop.store %f, %out[%t, %c0] : vector<8xf16> -> memref<32x8xf16>
    %g = loop.matrix_load "ptx.ldmatrix.x2.trans" %tile[%row, %c8] : memref<16x16xf16, 3> -> vector<4xf16>
    loop.store %g, %out2[%t, %c0] : vector<4xf16> -> memref<32x4xf16>
    target_gpu.return
  }
}

// -----

// Async copies become volatile inline PTX: cp.async.cg of 16 bytes from the source's (generic =
// global) address to the 32-bit shared address, the byte count (valid elements x 2: 0
// zero-fills) as its source size; commit_group and wait_group N clobber memory.
// CHECK-LABEL: llvm.func @async_copy
// CHECK:         %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<3>
// CHECK-NEXT:    %[[S:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr<3> to i32
// CHECK:         %[[G:.*]] = llvm.getelementptr inbounds %G[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK:         %[[BYTES:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[B32:.*]] = llvm.trunc %[[BYTES]] : i64 to i32
// CHECK-NEXT:    llvm.inline_asm has_side_effects "cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,r" %[[S]], %[[G]], %[[B32]] : (i32, !llvm.ptr, i32) -> ()
// CHECK-NEXT:    llvm.inline_asm has_side_effects "cp.async.commit_group;", "~{memory}"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "cp.async.wait_group 1;", "~{memory}"
target_gpu.module @kernels {
  target_gpu.kernel @async_copy(%G: memref<64x64xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %tile = target_gpu.shared_alloc : memref<2x16x40xf16, 3>
    %t = target_gpu.thread_id "x"
    loop.async_copy %G[%t, %c8], %tile[%c0, %t, %c8], %c8 : memref<64x64xf16>, memref<2x16x40xf16, 3>
    loop.async_commit
    loop.async_wait 1
    target_gpu.return
  }
}

// -----

// CHECK: 'loop.async_copy' op expected the destination in shared memory, found memref<16x16xf16>
target_gpu.module @kernels {
  target_gpu.kernel @negative_async_copy_global(%G: memref<64x64xf16>, %D: memref<16x16xf16>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    loop.async_copy %G[%c0, %c8], %D[%c0, %c8], %c8 : memref<64x64xf16>, memref<16x16xf16>
    target_gpu.return
  }
}

// -----

// CHECK: 'loop.matrix_load' op expected "ptx.ldmatrix.x2" to read shared memory, found memref<16x16xf16>
target_gpu.module @kernels {
  target_gpu.kernel @negative_matrix_load_global(%in: memref<16x16xf16>, %out: memref<32x4xf16>) {
    %c0 = arith.constant 0 : index
    %t = target_gpu.thread_id "x"
    %g = loop.matrix_load "ptx.ldmatrix.x2" %in[%c0, %c0] : memref<16x16xf16> -> vector<4xf16>
    loop.store %g, %out[%t, %c0] : vector<4xf16> -> memref<32x4xf16>
    target_gpu.return
  }
}

// -----

// CHECK: 'loop.intrinsic' op expected a GPU intrinsic in a kernel, found "x86.avx512.vpdpbusd" (the CPU intrinsic llvm.x86.avx512.vpdpbusd.512)
target_gpu.module @kernels {
  target_gpu.kernel @negative_cpu_intrinsic(%c: memref<16xi32>, %a: memref<4xi8>, %b: memref<64xi8>) {
    %c0 = arith.constant 0 : index
    %cv = loop.load %c[%c0] : memref<16xi32> -> vector<16xi32>
    %av = loop.load %a[%c0] : memref<4xi8> -> vector<4xi8>
    %bv = loop.load %b[%c0] : memref<64xi8> -> vector<64xi8>
    %d = loop.intrinsic "x86.avx512.vpdpbusd" %cv, %av, %bv : (vector<16xi32>, vector<4xi8>, vector<64xi8>) -> vector<16xi32>
    loop.store %d, %c[%c0] : vector<16xi32> -> memref<16xi32>
    target_gpu.return
  }
}

// -----

// Math functions NVPTX has no instruction for become NVVM's approximate ex2/lg2.
// CHECK-LABEL: llvm.func @exp_log
// CHECK:         %[[V:.*]] = llvm.load
// CHECK-NEXT:    %[[LOG2E:.*]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK-NEXT:    %[[S:.*]] = llvm.fmul %[[V]], %[[LOG2E]] : f32
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f"(%[[S]]) : (f32) -> f32
// CHECK-NEXT:    %[[L2:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%[[E]]) : (f32) -> f32
// CHECK-NEXT:    %[[LN2:.*]] = llvm.mlir.constant(0.693147182 : f32) : f32
// CHECK-NEXT:    %{{.*}} = llvm.fmul %[[L2]], %[[LN2]] : f32
target_gpu.module @kernels {
  target_gpu.kernel @exp_log(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %v = loop.load %x[%c0] : memref<4xf32> -> f32
    %e = math.exp %v : f32
    %l = math.log %e : f32
    loop.store %l, %x[%c0] : f32 -> memref<4xf32>
    target_gpu.return
  }
}

// -----

// CHECK: 'math.atan' op has no lowering for NVPTX (no libm on the GPU)
target_gpu.module @kernels {
  target_gpu.kernel @negative_atan(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %v = loop.load %x[%c0] : memref<4xf32> -> f32
    %a = math.atan %v : f32
    loop.store %a, %x[%c0] : f32 -> memref<4xf32>
    target_gpu.return
  }
}

// -----

// CHECK: 'target_gpu.kernel' op expected to be inside a target_gpu.module
target_gpu.kernel @negative_top_level() {
  target_gpu.return
}

// -----

// CHECK: 'loop.for' op expected no loop bound to a GPU axis in a kernel (run target-gpu-map-bound-loops first), found axis "i" bound to threadIdx.x
target_gpu.module @kernels {
  target_gpu.kernel @negative_bound_loop(%x: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %f = arith.constant 1.0 : f32
    loop.for %i = %c0 to %c4 step %c1 axis "i" kind bound thread "threadIdx.x" {
      loop.store %f, %x[%i] : f32 -> memref<4xf32>
    }
    target_gpu.return
  }
}

// -----

// The module's dlc.target names the architecture; each target_gpu.module records it for -t ptx.
// CHECK:       target_gpu.module @kernels attributes {dlc.target = "cuda -arch=sm_90", llvm.target_triple = "nvptx64-nvidia-cuda"} {
// CHECK:         llvm.func @module_target_sm90
module attributes {dlc.target = "cuda -arch=sm_90"} {
  target_gpu.module @kernels {
    target_gpu.kernel @module_target_sm90() {
      target_gpu.return
    }
  }
}

// -----

// CHECK: target-gpu-lower-to-nvvm: expected a CUDA target (cuda -arch=...), found 'opencl'
module attributes {dlc.target = "opencl"} {
  target_gpu.module @kernels {
    target_gpu.kernel @negative_opencl_target() {
      target_gpu.return
    }
  }
}

// -----

// CHECK: 'builtin.module' op invalid dlc.target: expected a CUDA architecture for -arch (sm_80, sm_90), found 'sm_70'
module attributes {dlc.target = "cuda -arch=sm_70"} {
  target_gpu.module @kernels {
    target_gpu.kernel @negative_unknown_arch() {
      target_gpu.return
    }
  }
}
