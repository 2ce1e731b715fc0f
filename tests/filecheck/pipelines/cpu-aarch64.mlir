// RUN: dlc-opt %s --dlc-target='llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -num-cores=2' -p cpu | filecheck %s
// RUN: dlc-opt %s --dlc-target='llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -num-cores=2' -p cpu | not grep -E 'vector<(8|16)xf32>'
// RUN: dlc-opt %s --dlc-target='llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -num-cores=2' -p cpu -t llvm | filecheck %s --check-prefix=LLVM
// RUN: dlc-opt %s --dlc-target='llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72' -p 'graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,loop-default-schedule' | filecheck %s --check-prefix=SCHED

// A dense layer through the cpu pipeline for an AArch64 target (a cross compile on any host):
// the default schedule vectorizes by NEON's 128 bits (4 f32 lanes, never AVX's 8 or 16), and
// the LLVM IR carries the triple, AArch64's data layout and the CPU on every function. (The
// weight is an argument: a splat constant would be folded into the kernel as a scalar.)

// CHECK:       builtin.module attributes {dlc.target = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -num-cores=2"}
// CHECK:       llvm.func internal @fused_matmul_relu_0_parallel0_body
// CHECK:         llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
// CHECK:         llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>

// LLVM:        target triple = "aarch64-linux-gnu"
// LLVM-NEXT:   target datalayout = "e-m:e-{{.*}}-n32:64-S128-Fn32"
// LLVM:        define void @"fused_matmul_relu_0_parallel0_body"({{.*}}) "prefer-vector-width"="128" "target-cpu"="cortex-a72"
// LLVM:          call <4 x float> @"llvm.fma.v4f32"

// The GEMM's register tile: 8 rows of 2 vectors of 4 lanes (16 of NEON's 32 registers).
// SCHED:       loop.for %{{.*}} axis "r0" {
// SCHED-NEXT:    loop.for %{{.*}} = %c0 to %c8 step %c1 axis "i0.i" kind unrolled {
// SCHED-NEXT:      loop.for %{{.*}} = %c0 to %c2 step %c1 axis "i1.v" kind unrolled {
// SCHED:             loop.for %{{.*}} = %c0 to %c4 step %c1 axis "i1.l" kind vectorized {

func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %a = graph.matmul %x, %w : (tensor<16x32xf32>, tensor<32x24xf32>) -> tensor<16x24xf32>
  %b = graph.relu %a : tensor<16x24xf32>
  func.return %b : tensor<16x24xf32>
}
