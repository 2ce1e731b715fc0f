// RUN: dlc-opt %s --split-input-file -p graph-convert-layout | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-convert-layout{layout=NHWC},graph-convert-layout{layout=NCHW}' | filecheck %s --check-prefix=BACK
// RUN: dlc-opt %s --split-input-file -p 'graph-convert-layout{integer_only=true}' | filecheck %s --check-prefix=INT8
// RUN: dlc-opt %s --split-input-file -p 'graph-convert-layout{depthwise_regions=true}' | filecheck %s --check-prefix=DW
// RUN: not dlc-opt %s -p 'graph-convert-layout{layout=NCHW16c}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: dlc-opt: error: graph-convert-layout: expected layout in NCHW, NHWC, found 'NCHW16c'

// One conv: a transpose in, the conv in NHWC with an HWIO weight transposed at compile time,
// a transpose out. Converting back to NCHW cancels both transposes.

// CHECK-LABEL: @conv_to_nhwc
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-NEXT:  %[[IN:.*]] = graph.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:  %[[C:.*]] = graph.conv2d %[[IN]], %[[W]] {layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:  %[[OUT:.*]] = graph.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:  func.return %[[OUT]]
// BACK-LABEL:  @conv_to_nhwc
// BACK-SAME:   (%[[X:.*]]: tensor<1x2x4x4xf32>)
// BACK-NEXT:   %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<2x2x1x1xf32>
// BACK-NEXT:   %[[C:.*]] = graph.conv2d %[[X]], %[[W]] : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>)
// BACK-NEXT:   func.return %[[C]]
func.func @conv_to_nhwc(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %c : tensor<1x2x4x4xf32>
}

// -----

// conv → bias add → relu → pool → conv → residual add: the whole region runs in NHWC; the
// per-channel bias is transposed with it; the only transposes are at the argument and result.

// CHECK-LABEL: @conv_region_follows
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK:       %[[IN:.*]] = graph.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK:       %[[C:.*]] = graph.conv2d %[[IN]], %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"}
// CHECK:       %[[B:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-NEXT:  %[[A:.*]] = graph.add %[[C]], %[[B]] : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>)
// CHECK-NEXT:  %[[R:.*]] = graph.relu %[[A]] : tensor<1x4x4x2xf32>
// CHECK-NEXT:  %[[P:.*]] = graph.max_pool2d %[[R]] {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"{{.*}}} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK:       %[[C2:.*]] = graph.conv2d %[[P]], %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"}
// CHECK-NEXT:  %[[S:.*]] = graph.add %[[C2]], %[[P]] : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
// CHECK-NEXT:  %[[OUT:.*]] = graph.transpose %[[S]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:  func.return %[[OUT]]
func.func @conv_region_follows(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = graph.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %a : tensor<1x2x4x4xf32>
  %p = graph.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %c2 = graph.conv2d %p, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %s = graph.add %c2, %p : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %s : tensor<1x2x2x2xf32>
}

// -----

// Global pooling then flatten: the last transpose only moves size-1 axes and becomes a
// reshape, which merges into the flatten's reshape later (graph-simplify).

// CHECK-LABEL: @global_pool_edge_is_a_reshape
// CHECK:       %[[G:.*]] = graph.global_avg_pool2d %{{.*}} {layout = "NHWC"} : (tensor<1x4x4x2xf32>) -> tensor<1x1x1x2xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.reshape %[[G]] {shape = array<i64: 1, 2, 1, 1>}
// CHECK-NEXT:  %[[F:.*]] = graph.flatten %[[R]]
// CHECK-NOT:   graph.transpose
func.func @global_pool_edge_is_a_reshape(%x: tensor<1x2x4x4xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %g = graph.global_avg_pool2d %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %f = graph.flatten %g : (tensor<1x2x1x1xf32>) -> tensor<1x2xf32>
  func.return %f : tensor<1x2xf32>
}

// -----

// Concat along channels of two converted convs becomes a concat along axis 3.

// CHECK-LABEL: @concat_follows
// CHECK:       %[[A:.*]] = graph.conv2d {{.*}} {layout = "NHWC"
// CHECK:       %[[B:.*]] = graph.conv2d {{.*}} {layout = "NHWC"
// CHECK-NEXT:  %[[C:.*]] = graph.concat %[[A]], %[[B]] {axis = 3 : i64}
// CHECK-NEXT:  %[[S:.*]] = graph.softmax %[[C]] {axis = 3 : i64}
// CHECK-NEXT:  graph.transpose %[[S]] {perm = array<i64: 0, 3, 1, 2>}
func.func @concat_follows(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %a = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32>
  %s = graph.softmax %c {axis = 1 : i64} : tensor<1x4x4x4xf32>
  func.return %s : tensor<1x4x4x4xf32>
}

// -----

// A reduction over channels without keepdims: the result keeps H, W in order, no transpose.

// CHECK-LABEL: @reduce_follows
// CHECK:       %[[C:.*]] = graph.conv2d
// CHECK-NEXT:  %[[R:.*]] = graph.reduce %[[C]] {kind = "sum", axes = array<i64: 3>, keepdims = false} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT:  func.return %[[R]]
func.func @reduce_follows(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.reduce %c {axes = array<i64: 1>, keepdims = false, kind = "sum"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
  func.return %r : tensor<1x4x4xf32>
}

// -----

// The batch norm's channel axis is fixed: the region ends before it.

// CHECK-LABEL: @negative_batch_norm_stops_the_region
// CHECK:       %[[C:.*]] = graph.conv2d {{.*}} {layout = "NHWC"
// CHECK-NEXT:  %[[T:.*]] = graph.transpose %[[C]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:  graph.batch_norm %[[T]]
func.func @negative_batch_norm_stops_the_region(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %p = graph.constant dense<1.0> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = graph.batch_norm %c, %p, %p, %p, %p : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// -----

// An operand in the old layout that is neither a transpose nor a constant stops the sinking.

// CHECK-LABEL: @negative_mixed_layout_operands
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[Y:.*]]: tensor<1x2x4x4xf32>)
// CHECK:       %[[T:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:  graph.add %[[T]], %[[Y]]
func.func @negative_mixed_layout_operands(%x: tensor<1x2x4x4xf32>, %y: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %c, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}

// -----

// An int8 region: the integer conv moves to NHWC (its weight to HWIO, the per-output-channel
// weight zero point unchanged), the per-channel dequantize of its accumulator follows with its
// axis remapped to 3; the per-tensor quantize in front stays (a transpose of its bytes, not of
// the floats). With integer_only the float conv keeps NCHW and the region ends in front of it.

// CHECK-LABEL: @int8_region_follows
// CHECK:       graph.conv2d_integer %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"}
// CHECK:       graph.dequantize %{{.*}} {axis = 3 : i64} : (tensor<1x4x4x2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<1x4x4x2xf32>
// CHECK:       graph.conv2d %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"}
// INT8-LABEL:  @int8_region_follows
// INT8-SAME:   (%[[X:.*]]: tensor<1x2x4x4xf32>)
// INT8:        %[[Q:.*]] = graph.quantize %[[X]], %{{.*}}, %[[Z:.*]] : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
// INT8:        %[[WZ:.*]] = graph.constant dense<[0, 1]> : tensor<2xi8>
// INT8-NEXT:   %[[IN:.*]] = graph.transpose %[[Q]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xui8>) -> tensor<1x4x4x2xui8>
// INT8-NEXT:   %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1, 3], [2, 4]]]]> : tensor<1x1x2x2xi8>
// INT8-NEXT:   %[[C:.*]] = graph.conv2d_integer %[[IN]], %[[W]], %[[Z]], %[[WZ]] {layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xui8>, tensor<1x1x2x2xi8>, tensor<ui8>, tensor<2xi8>) -> tensor<1x4x4x2xi32>
// INT8:        %[[D:.*]] = graph.dequantize %[[C]], %{{.*}}, %{{.*}} {axis = 3 : i64} : (tensor<1x4x4x2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<1x4x4x2xf32>
// INT8-NEXT:   %[[NCHW:.*]] = graph.transpose %[[D]] {perm = array<i64: 0, 3, 1, 2>}
// INT8:        %[[F:.*]] = graph.conv2d %[[NCHW]], %{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// INT8-NEXT:   func.return %[[F]]
func.func @int8_region_follows(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %s = graph.constant dense<5.000000e-01> : tensor<f32>
  %z = graph.constant dense<128> : tensor<ui8>
  %q = graph.quantize %x, %s, %z : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  %w = graph.constant dense<[[[[1]], [[2]]], [[[3]], [[4]]]]> : tensor<2x2x1x1xi8>
  %wz = graph.constant dense<[0, 1]> : tensor<2xi8>
  %c = graph.conv2d_integer %q, %w, %z, %wz : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>, tensor<ui8>, tensor<2xi8>) -> tensor<1x2x4x4xi32>
  %cs = graph.constant dense<[2.500000e-01, 5.000000e-01]> : tensor<2xf32>
  %cz = graph.constant dense<0> : tensor<2xi32>
  %d = graph.dequantize %c, %cs, %cz {axis = 1 : i64} : (tensor<1x2x4x4xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<1x2x4x4xf32>
  %fw = graph.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %f = graph.conv2d %d, %fw : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %f : tensor<1x2x4x4xf32>
}

// -----

// Without an integer conv, integer_only changes nothing: the float conv keeps NCHW and the
// module's own transpose does not sink.

// INT8-LABEL:  @negative_no_integer_conv
// INT8-NEXT:   %[[T:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>}
// INT8-NEXT:   %[[R:.*]] = graph.relu %[[T]]
// INT8:        %[[C:.*]] = graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>)
func.func @negative_no_integer_conv(%x: tensor<1x2x4x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x4x4xf32>) {
  %t = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %r = graph.relu %t : tensor<1x4x4x2xf32>
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %r, %c : tensor<1x4x4x2xf32>, tensor<1x2x4x4xf32>
}

// -----

// depthwise_regions: the depthwise convs and the pointwise convs connected to them (through
// a relu and a residual add: two inverted residual blocks, six convs) move to NHWC, one
// transpose in after the stem and one out at the result; the stem's 3x3 conv keeps NCHW, and so
// does a 1x1 conv of stride 2 (not a GEMM over the pixels) that only the stem's output reaches.
// A lone depthwise conv (the second function: one conv, two edges, so two transposes for one
// conv) and a function without depthwise convs (the third) stay NCHW.

// DW-LABEL:  @depthwise_region
// DW-SAME:   (%[[X:.*]]: tensor<1x3x16x16xf32>)
// DW:        %[[STEM:.*]] = graph.conv2d %[[X]], %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
// DW:        graph.conv2d %[[STEM]], %{{.*}} {strides = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32>
// DW:        %[[IN:.*]] = graph.transpose %[[STEM]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
// DW:        %[[EXPAND:.*]] = graph.conv2d %[[IN]], %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x8x8x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x8x8x16xf32>
// DW-NEXT:   %[[R:.*]] = graph.relu %[[EXPAND]] : tensor<1x8x8x16xf32>
// DW:        %[[DW:.*]] = graph.conv2d %[[R]], %{{.*}} {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64, layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x8x8x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x8x8x16xf32>
// DW:        %[[PROJECT:.*]] = graph.conv2d %[[DW]], %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x8x8x16xf32>, tensor<1x1x16x8xf32>) -> tensor<1x8x8x8xf32>
// DW-COUNT-3: graph.conv2d %{{.*}} {{.*}}layout = "NHWC"
// DW-NEXT:   %[[ADD:.*]] = graph.add %{{.*}}, %[[PROJECT]] : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
// DW-NEXT:   %[[OUT:.*]] = graph.transpose %[[ADD]] {perm = array<i64: 0, 3, 1, 2>}
// DW:        func.return %[[OUT]]
// DW-LABEL:  @lone_depthwise_conv
// DW-NOT:    graph.transpose
// DW:        graph.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
// DW-LABEL:  @no_depthwise_no_region
// DW-NOT:    graph.transpose
// DW:        graph.conv2d %{{.*}}, %{{.*}} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
func.func @depthwise_region(%x: tensor<1x3x16x16xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x4x4x4xf32>) {
  %ws = graph.constant dense<1.0> : tensor<8x3x3x3xf32>
  %stem = graph.conv2d %x, %ws {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  %wd = graph.constant dense<1.0> : tensor<4x8x1x1xf32>
  %down = graph.conv2d %stem, %wd {strides = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32>
  %we = graph.constant dense<1.0> : tensor<16x8x1x1xf32>
  %expand = graph.conv2d %stem, %we : (tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x8x8xf32>
  %r = graph.relu %expand : tensor<1x16x8x8xf32>
  %wdw = graph.constant dense<1.0> : tensor<16x1x3x3xf32>
  %dw = graph.conv2d %r, %wdw {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
  %wp = graph.constant dense<1.0> : tensor<8x16x1x1xf32>
  %project = graph.conv2d %dw, %wp : (tensor<1x16x8x8xf32>, tensor<8x16x1x1xf32>) -> tensor<1x8x8x8xf32>
  %expand2 = graph.conv2d %project, %we : (tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x8x8xf32>
  %dw2 = graph.conv2d %expand2, %wdw {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
  %project2 = graph.conv2d %dw2, %wp : (tensor<1x16x8x8xf32>, tensor<8x16x1x1xf32>) -> tensor<1x8x8x8xf32>
  %block = graph.add %project2, %project : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %block, %down : tensor<1x8x8x8xf32>, tensor<1x4x4x4xf32>
}

func.func @lone_depthwise_conv(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<8x1x3x3xf32>
  %c = graph.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x4x4xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  %r = graph.relu %c : tensor<1x8x4x4xf32>
  func.return %r : tensor<1x8x4x4xf32>
}

func.func @no_depthwise_no_region(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<8x8x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
  func.return %c : tensor<1x8x4x4xf32>
}

// -----

// A residual add of the converted conv's own input: the transpose back sinks through the add,
// which reads the transpose of %x the conv already has, so one transpose goes in and one out.

// CHECK-LABEL: @residual_of_the_region_input
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-NEXT:  %[[IN:.*]] = graph.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK:       %[[C:.*]] = graph.conv2d %[[IN]], %{{.*}} {layout = "NHWC", kernel_layout = "HWIO"}
// CHECK-NEXT:  %[[A:.*]] = graph.add %[[C]], %[[IN]] : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:  %[[OUT:.*]] = graph.transpose %[[A]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:  func.return %[[OUT]]
func.func @residual_of_the_region_input(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %c, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}

// -----

// A conv over a runtime plane (`dynamic_shapes`) converts like a static one: the transposes
// keep the runtime dims, permuted. A depthwise region of four convs (two edges) over a runtime
// plane runs channels-last too.
// CHECK-LABEL: func.func @runtime_plane
// CHECK:         %[[IN:.*]] = graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x8xf32>
// CHECK-COUNT-4: layout = "NHWC"
// CHECK:         graph.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x8x?x?xf32>
// DW-LABEL: func.func @runtime_plane
// DW:         graph.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x8xf32>
// DW-COUNT-4: layout = "NHWC"
// DW:         graph.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>}
// DW-NOT:     graph.transpose
func.func @runtime_plane(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = graph.constant dense<0.5> : tensor<8x1x3x3xf32>
  %p = graph.constant dense<0.25> : tensor<8x8x1x1xf32>
  %a = graph.conv2d %x, %p : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %b = graph.conv2d %a, %w {groups = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  %c = graph.conv2d %b, %p : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r = graph.conv2d %c, %w {groups = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  func.return %r : tensor<?x8x?x?xf32>
}
