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
