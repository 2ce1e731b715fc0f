// REQUIRES: ptxas
// RUN: dlc-opt %s -p gpu-ptx -t ptx | ptxas -arch=sm_80 - -o /dev/null
// RUN: dlc-opt %s --dlc-target='cuda -arch=sm_90' -p gpu-ptx -t ptx | ptxas -arch=sm_90 - -o /dev/null
// RUN: dlc-opt %s -p gpu-ptx -t ptx | filecheck %s
// RUN: dlc-opt %s --dlc-target='cuda -arch=sm_90' -p gpu-ptx -t ptx | filecheck %s --check-prefix=SM90

// An f16 GEMM (f32 accumulation, rounded to f16) through the gpu-ptx pipeline runs on tensor
// cores, software-pipelined over its K tiles: the A and B tiles of the next K slice are copied
// from global into shared memory by cp.async (16 bytes each; B kept [k][n] as in memory) while
// the warps compute on the current one (two stages: commit, wait_group 1, barrier); each
// warp's fragments are loaded by ldmatrix (x4 for A, x2.trans for B; no scalar 16-bit shared
// loads), multiplied by mma.sync m16n8k16 into f32 registers, written to the output tile in
// shared memory and rounded to f16 on the way out. ptxas assembles the kernel for sm_80 and
// sm_90.

// CHECK:       .target sm_80
// CHECK-LABEL: .visible .entry fused_matmul_0_round(
// CHECK-DAG:     .shared .align 16 .b8 fused_matmul_0_round_a_tile[{{[0-9]+}}];
// CHECK-DAG:     .shared .align 16 .b8 fused_matmul_0_round_b_tile[{{[0-9]+}}];
// CHECK-DAG:     .shared .align 16 .b8 fused_matmul_0_round_c_tile[{{[0-9]+}}];
// CHECK:         mov.u32 {{.*}}%tid.x
// CHECK:         cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// CHECK:         cp.async.commit_group;
// CHECK:         cp.async.cg.shared.global
// CHECK:         cp.async.commit_group;
// CHECK-NEXT:    // end inline asm
// CHECK-NEXT:    // begin inline asm
// CHECK-NEXT:    cp.async.wait_group 1;
// CHECK:         bar.sync 0;
// CHECK-NOT:     ld.shared.b16
// CHECK:         ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// CHECK:         ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// CHECK-NOT:     ld.shared.b16
// CHECK:         mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK:         cp.async.wait_group 0;
// CHECK:         st.shared.b32
// CHECK:         bar.sync 0;
// CHECK:         cvt.rn.f16.f32
// CHECK:         st.global.b16

// SM90:        .target sm_90
// SM90:        cp.async.cg.shared.global
// SM90:        ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM90:        mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

func.func @gemm(%0: tensor<128x64xf16>, %1: tensor<64x96xf16>) -> tensor<128x96xf16> {
  %2 = graph.matmul %0, %1 : (tensor<128x64xf16>, tensor<64x96xf16>) -> tensor<128x96xf16>
  func.return %2 : tensor<128x96xf16>
}
