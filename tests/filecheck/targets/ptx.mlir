// REQUIRES: ptxas
// RUN: dlc-opt %s -p gpu-ptx -t ptx | ptxas -arch=sm_80 - -o /dev/null
// RUN: dlc-opt %s -p gpu-ptx -t ptx | filecheck %s
// RUN: dlc-opt %s --dlc-target='cuda -arch=sm_90' -p gpu-ptx -t ptx | ptxas -arch=sm_90 - -o /dev/null
// RUN: dlc-opt %s -p 'graph-opt,convert-graph-to-tensor-expr,tensor-expr-inline,convert-tensor-expr-to-loop,loop-gpu-default-schedule{target="cuda -arch=sm_90"},convert-loop-to-target-gpu{target="cuda -arch=sm_90"},target-gpu-compact-private-buffers,target-gpu-insert-barriers,target-gpu-map-bound-loops,target-gpu-unroll,target-gpu-vectorize,target-gpu-lower-to-nvvm{target="cuda -arch=sm_90"}' -t ptx | filecheck %s --check-prefix=SM90
// RUN: dlc-opt %s -p gpu-ptx -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=SM90
// RUN: not dlc-opt %s -p gpu-opencl -t ptx 2>&1 | filecheck %s --check-prefix=UNLOWERED

// Graph-level models through the gpu-ptx pipeline; ptxas assembles every emitted kernel, for
// sm_80 and sm_90 (the module's dlc.target, the passes' target option, or -t ptx's arch). The checks follow the GEMM (shared-memory tiles, vector reads of B, fma on
// register tiles of 2x4 per thread: the largest that still give 1024x512 outputs two blocks per
// multiprocessor), the tree reductions of softmax (bar.sync between steps; its exp a kernel of its own,
// computed once: tensor-expr-inline keeps it stored) and the math
// functions NVPTX computes with its approximate instructions.

// CHECK:       .version 7.0
// CHECK-NEXT:  .target sm_80
// CHECK-NEXT:  .address_size 64
// CHECK-LABEL: .visible .entry fused_matmul_0_matmul(
// CHECK-DAG:     .shared .align 16 .b8 fused_matmul_0_matmul_a_tile[1024];
// CHECK-DAG:     .shared .align 16 .b8 fused_matmul_0_matmul_b_tile[2048];
// CHECK:         ld.global.nc
// CHECK:         st.shared
// CHECK:         bar.sync 0;
// CHECK:         ld.shared.v4
// CHECK:         fma.rn.f32
// CHECK-LABEL: .visible .entry fused_conv2d_0_conv2d(
// CHECK-LABEL: .visible .entry fused_softmax_0_softmax_max(
// CHECK:         .shared .align 16 .b8 fused_softmax_0_softmax_max_softmax_max_red[1024];
// CHECK-COUNT-8: bar.sync 0;
// CHECK-LABEL: .visible .entry fused_softmax_0_softmax_exp(
// CHECK:         ex2.approx.f32
// CHECK-LABEL: .visible .entry fused_softmax_0_softmax(
// CHECK-NOT:     ex2.approx.f32
// CHECK-LABEL: .visible .entry fused_tanh_exp_erf_sigmoid_0_sigmoid(
// CHECK-NOT:     call
// CHECK:         ex2.approx.f32
// CHECK-LABEL: .visible .entry fused_reduce_0_reduce_mean(

// SM90:        .version 7.8
// SM90-NEXT:   .target sm_90
// SM90:        .visible .entry fused_matmul_0_matmul(

// UNLOWERED: 'target_gpu.kernel' op expected only llvm.func and llvm.mlir.global in a target_gpu.module printed as PTX (run target-gpu-lower-to-nvvm first)

builtin.module {
func.func @gemm(%0: tensor<1024x32xf32>, %1: tensor<32x512xf32>) -> tensor<1024x512xf32> {
  %2 = graph.matmul %0, %1 : (tensor<1024x32xf32>, tensor<32x512xf32>) -> tensor<1024x512xf32>
  func.return %2 : tensor<1024x512xf32>
}
func.func @dense_relu(%0: tensor<8x64xf32>, %1: tensor<64x32xf32>, %2: tensor<32xf32>) -> tensor<8x32xf32> {
  %3 = graph.matmul %0, %1 : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %4 = graph.add %3, %2 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %5 = graph.relu %4 : tensor<8x32xf32>
  func.return %5 : tensor<8x32xf32>
}
func.func @conv_pool(%0: tensor<1x4x12x12xf32>, %1: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %2 = graph.conv2d %0, %1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x12x12xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x12x12xf32>
  %3 = graph.max_pool2d %2 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x8x12x12xf32>) -> tensor<1x8x6x6xf32>
  func.return %3 : tensor<1x8x6x6xf32>
}
func.func @softmax_rows(%0: tensor<4x300xf32>) -> tensor<4x300xf32> {
  %1 = graph.softmax %0 {axis = 1 : i64} : tensor<4x300xf32>
  func.return %1 : tensor<4x300xf32>
}
func.func @activations(%0: tensor<2x40xf32>) -> tensor<2x40xf32> {
  %1 = graph.tanh %0 : tensor<2x40xf32>
  %2 = graph.exp %1 : tensor<2x40xf32>
  %3 = graph.erf %2 : tensor<2x40xf32>
  %4 = graph.sigmoid %3 : tensor<2x40xf32>
  func.return %4 : tensor<2x40xf32>
}
func.func @mean_all(%0: tensor<3x200xf32>) -> tensor<f32> {
  %1 = graph.reduce %0 {kind = "mean", axes = array<i64>, keepdims = false} : (tensor<3x200xf32>) -> tensor<f32>
  func.return %1 : tensor<f32>
}
}
