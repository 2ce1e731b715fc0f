// RUN: dlc-opt %s --split-input-file --verify-diagnostics -t llvm | filecheck %s

// `-t llvm` prints llvm-dialect IR as LLVM IR for the module's target (its dlc.target, which
// convert-loop-to-llvm sets; here none: the fixed default, x86-64-v3, never the host): triple,
// data layout, and the CPU's name and vector width on every function it defines.

// CHECK:       target triple = "x86_64-unknown-linux-gnu"
// CHECK-NEXT:  target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
// CHECK:       @"dlc_metadata" = constant [3 x i8] c"{}\00"
// CHECK-LABEL: define void @"scale"(ptr noalias %".1", ptr noalias %".2")
// CHECK-SAME:    "prefer-vector-width"="256" "target-cpu"="x86-64-v3"{{$}}
// CHECK:         %[[P:.*]] = getelementptr inbounds float, ptr %".1", i64 16
// CHECK-NEXT:    %[[V:.*]] = load <16 x float>, ptr %[[P]], align 4
// CHECK-NEXT:    %[[E:.*]] = call <16 x float> @"llvm.exp.v16f32"(<16 x float> %[[V]])
// CHECK-NEXT:    %[[S:.*]] = call <16 x float> @"llvm.fma.v16f32"(<16 x float> %[[E]], <16 x float> %[[V]], <16 x float> %[[V]])
// CHECK-NEXT:    store <16 x float> %[[S]], ptr %".2", align 4
// CHECK-NEXT:    ret void
// CHECK:       declare <16 x float> @"llvm.exp.v16f32"(<16 x float> %".1")
// CHECK-NOT:   "target-cpu"
builtin.module {
  llvm.mlir.global external constant @dlc_metadata("{}\00") {addr_space = 0 : i32} : !llvm.array<3 x i8>
  llvm.func @scale(%x: !llvm.ptr {llvm.noalias}, %y: !llvm.ptr {llvm.noalias}) {
    %c16 = llvm.mlir.constant(16) : i64
    %p = llvm.getelementptr inbounds %x[%c16] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %p {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
    %e = llvm.call_intrinsic "llvm.exp.v16f32"(%v) : (vector<16xf32>) -> vector<16xf32>
    %s = llvm.intr.fma(%e, %v, %v) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
    llvm.store %s, %y {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
    llvm.return
  }
}

// -----

// Dense globals (weights) are printed as raw little-endian bytes, aligned as requested.

// CHECK: @"weights" = internal constant [8 x i8] c"\00\00\80?\00\00\00@", align 64
builtin.module {
  llvm.mlir.global internal constant @weights(dense<[1.0, 2.0]> : tensor<2xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x f32>
}

// -----

// CHECK: 'func.func' op expected only llvm.func and llvm.mlir.global at the top level of a module printed as LLVM IR (run convert-loop-to-llvm first)
func.func @negative_not_lowered() {
  func.return
}

// -----

// A back edge marked `dlc.unroll_full` (an `unrolled` loop) carries `!llvm.loop` metadata
// asking LLVM for a full unroll: a distinct node whose first operand is itself.

// CHECK-LABEL: define void @"count"
// CHECK:         br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// CHECK:       ![[FULL:[0-9]+]] = !{ !"llvm.loop.unroll.full" }
// CHECK:       ![[LOOP]] = distinct !{ ![[LOOP]], ![[FULL]] }
builtin.module {
  llvm.func @count(%x: !llvm.ptr) {
    %c0 = llvm.mlir.constant(0) : i64
    %c1 = llvm.mlir.constant(1) : i64
    %c4 = llvm.mlir.constant(4) : i64
    llvm.br ^cond(%c0 : i64)
  ^cond(%i: i64):
    %more = llvm.icmp "slt" %i, %c4 : i64
    llvm.cond_br %more, ^body, ^end
  ^body:
    %p = llvm.getelementptr %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %z = llvm.mlir.constant(0.0 : f32) : f32
    llvm.store %z, %p {alignment = 4 : i64} : f32, !llvm.ptr
    %next = llvm.add %i, %c1 : i64
    llvm.br ^cond(%next : i64) {dlc.unroll_full}
  ^end:
    llvm.return
  }
}

// -----

// The module's dlc.target: -mattr changes are the functions' target-features, and the vector
// width follows them (AVX-512 enabled on a Zen 3: 512 bits).

// CHECK:       target triple = "x86_64-unknown-linux-gnu"
// CHECK-LABEL: define void @"features_from_mattr"()
// CHECK-SAME:    "prefer-vector-width"="512" "target-cpu"="znver3" "target-features"="+avx512f"
module attributes {dlc.target = "llvm -mcpu=znver3 -mattr=+avx512f"} {
  llvm.func @features_from_mattr() {
    llvm.return
  }
}

// -----

// An AArch64 target: its triple and data layout, NEON's 128-bit vectors.

// CHECK:       target triple = "aarch64-linux-gnu"
// CHECK-NEXT:  target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i8:8:32-i16:16:32-i64:64-i128:128-n32:64-S128-Fn32"
// CHECK-LABEL: define void @"aarch64_target"()
// CHECK-SAME:    "prefer-vector-width"="128" "target-cpu"="cortex-a72"{{$}}
module attributes {dlc.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72"} {
  llvm.func @aarch64_target() {
    llvm.return
  }
}

// -----

// CHECK: 'builtin.module' op invalid dlc.target: expected a CPU target (llvm ...), found 'opencl'
module attributes {dlc.target = "opencl"} {
  llvm.func @negative_gpu_target() {
    llvm.return
  }
}

// -----

// CHECK: 'builtin.module' op invalid dlc.target: expected +FEATURE or -FEATURE in -mattr, found 'avx2'
module attributes {dlc.target = "llvm -mcpu=znver3 -mattr=avx2"} {
  llvm.func @negative_bad_mattr() {
    llvm.return
  }
}

// -----

// A module that takes heap buffers from cache slots (convert-loop-to-llvm) gets its own internal
// definitions of dlc_buffer_take (an atomic exchange empties the slot; aligned_alloc only when
// it was empty) and dlc_buffer_release (a compare-and-swap puts the buffer back into an empty
// slot; free otherwise).

// CHECK:       @"dlc_buffer_cache_0" = internal global i64 0, align 8
// CHECK-LABEL: define void @"cached_buffer"()
// CHECK:         %[[BUFFER:.*]] = call ccc ptr @"dlc_buffer_take"({{.*}} @"dlc_buffer_cache_0", i64 64, i64 4096)
// CHECK:         call ccc void @"dlc_buffer_release"({{.*}} @"dlc_buffer_cache_0", ptr %[[BUFFER]])
// CHECK-LABEL: define internal ptr @"dlc_buffer_take"(ptr %".1", i64 %".2", i64 %".3")
// CHECK:         %[[CACHED:.*]] = atomicrmw xchg ptr %".1", i64 0 acquire
// CHECK:         inttoptr i64 %[[CACHED]] to ptr
// CHECK:         call ptr @"aligned_alloc"(i64 %".2", i64 %".3")
// CHECK-LABEL: define internal void @"dlc_buffer_release"(ptr %".1", ptr %".2")
// CHECK:         cmpxchg ptr %".1", i64 0, i64 %{{.*}} acq_rel monotonic
// CHECK:         call void @"free"(ptr %".2")
builtin.module {
  llvm.func @cached_buffer() {
    %slot = llvm.mlir.addressof @dlc_buffer_cache_0 : !llvm.ptr
    %align = llvm.mlir.constant(64) : i64
    %size = llvm.mlir.constant(4096) : i64
    %buffer = llvm.call @dlc_buffer_take(%slot, %align, %size) : (!llvm.ptr, i64, i64) -> !llvm.ptr
    %back = llvm.mlir.addressof @dlc_buffer_cache_0 : !llvm.ptr
    llvm.call @dlc_buffer_release(%back, %buffer) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func @dlc_buffer_take(!llvm.ptr, i64, i64) -> !llvm.ptr
  llvm.func @dlc_buffer_release(!llvm.ptr, !llvm.ptr)
  llvm.mlir.global internal @dlc_buffer_cache_0(0 : i64) {addr_space = 0 : i32, alignment = 8 : i64} : i64
}
