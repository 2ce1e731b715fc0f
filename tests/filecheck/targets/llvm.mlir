// RUN: dlc-opt %s --split-input-file --verify-diagnostics -t llvm | filecheck %s

// `-t llvm` prints llvm-dialect IR as LLVM IR for the host: triple, data layout, and the host
// CPU's name, features and vector width on every function it defines.

// CHECK:       target triple = "{{.+}}"
// CHECK-NEXT:  target datalayout = "{{.+}}"
// CHECK:       @"dlc_metadata" = constant [3 x i8] c"{}\00"
// CHECK-LABEL: define void @"scale"(ptr noalias %".1", ptr noalias %".2")
// CHECK-SAME:    "prefer-vector-width"="{{(128|256|512)}}"
// CHECK-SAME:    "target-cpu"="{{[a-z0-9_.-]+}}"
// CHECK-SAME:    "target-features"="{{[+-][a-z0-9]+.*}}"
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
