// RUN: dlc-opt %s -p graph-opt | filecheck %s
// RUN: dlc-opt %s -p graph-opt --check-semantics --timing 2>&1 >/dev/null | filecheck %s --check-prefix=TIMING

// A residual block as the ONNX importer writes it: weights transposed by the model, conv +
// batch norm + relu, conv + batch norm + shortcut add + relu, global pooling, flatten, a dense
// layer (matmul + bias) and softmax. After graph-opt: no batch norm, no transpose, six groups
// (the flatten and reshape merge; an injective op never fuses into a matmul's input).

// CHECK-LABEL: @resnet_block
// CHECK-SAME:  (%[[X:.*]]: tensor<1x4x6x6xf32>)
// CHECK-NOT:   graph.batch_norm
// CHECK-NOT:   graph.transpose
// CHECK:       %[[B1:.*]] = graph.fused (%[[X]]) {kind = "out_fusable", name = "fused_conv2d_relu"}
// CHECK:       %[[B2:.*]] = graph.fused (%[[B1]], %[[X]]) {kind = "out_fusable", name = "fused_conv2d_add_relu"}
// CHECK:       %[[P:.*]] = graph.fused (%[[B2]]) {kind = "out_fusable", name = "fused_global_avg_pool2d"}
// CHECK:       %[[F:.*]] = graph.fused (%[[P]]) {kind = "injective", name = "fused_reshape"}
// CHECK:       %[[D:.*]] = graph.fused (%[[F]]) {kind = "out_fusable", name = "fused_matmul_add"}
// CHECK:       %[[S:.*]] = graph.fused (%[[D]]) {kind = "opaque", name = "fused_softmax"}
// CHECK-NEXT:  ^{{.*}}
// CHECK-NEXT:    graph.softmax
// CHECK-NEXT:    graph.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %[[S]]

// TIMING:      Execution time report
// TIMING:      graph-fold-constants
// TIMING:      graph-fold-batch-norm
// TIMING:      graph-fuse-ops
// TIMING:      (check-semantics)
// TIMING:      Total
func.func @resnet_block(%x: tensor<1x4x6x6xf32>) -> tensor<1x3xf32> {
  %w1t = graph.constant dense<[[[[0.1, -0.2, 0.3, 0.1]], [[0.2, 0.1, -0.1, 0.3]], [[-0.3, 0.2, 0.2, 0.1]]], [[[0.1, 0.1, 0.1, -0.2]], [[0.3, -0.1, 0.2, 0.2]], [[0.1, 0.3, -0.2, 0.1]]], [[[0.2, -0.1, 0.1, 0.3]], [[-0.2, 0.2, 0.3, 0.1]], [[0.1, -0.3, 0.1, 0.2]]]]> : tensor<3x3x1x4xf32>
  %w1r = graph.reshape %w1t {shape = array<i64: 3, 3, 4, 1>} : (tensor<3x3x1x4xf32>) -> tensor<3x3x4x1xf32>
  %w1b = graph.concat %w1r, %w1r, %w1r, %w1r {axis = 3 : i64} : (tensor<3x3x4x1xf32>, tensor<3x3x4x1xf32>, tensor<3x3x4x1xf32>, tensor<3x3x4x1xf32>) -> tensor<3x3x4x4xf32>
  %w1 = graph.transpose %w1b {perm = array<i64: 3, 2, 0, 1>} : (tensor<3x3x4x4xf32>) -> tensor<4x4x3x3xf32>
  %g1 = graph.constant dense<[1.0, 0.5, 2.0, 1.5]> : tensor<4xf32>
  %b1 = graph.constant dense<[0.1, 0.0, -0.1, 0.2]> : tensor<4xf32>
  %m1 = graph.constant dense<[0.05, -0.05, 0.1, 0.0]> : tensor<4xf32>
  %v1 = graph.constant dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>
  %c1 = graph.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %n1 = graph.batch_norm %c1, %g1, %b1, %m1, %v1 : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r1 = graph.relu %n1 : tensor<1x4x6x6xf32>
  %w2 = graph.transpose %w1b {perm = array<i64: 2, 3, 1, 0>} : (tensor<3x3x4x4xf32>) -> tensor<4x4x3x3xf32>
  %c2 = graph.conv2d %r1, %w2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %n2 = graph.batch_norm %c2, %v1, %m1, %b1, %g1 : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %s = graph.add %n2, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r2 = graph.relu %s : tensor<1x4x6x6xf32>
  %p = graph.global_avg_pool2d %r2 : (tensor<1x4x6x6xf32>) -> tensor<1x4x1x1xf32>
  %f = graph.flatten %p : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
  %fr = graph.reshape %f {shape = array<i64: 1, 4>} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %wd = graph.constant dense<[[0.5, -0.5, 0.25], [0.1, 0.2, 0.3], [-0.1, 0.4, 0.2], [0.3, 0.3, -0.3]]> : tensor<4x3xf32>
  %d = graph.matmul %fr, %wd : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %zero = graph.constant dense<0.0> : tensor<3xf32>
  %dz = graph.add %d, %zero : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %bd = graph.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %db = graph.add %dz, %bd : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %sm = graph.softmax %db : tensor<1x3xf32>
  func.return %sm : tensor<1x3xf32>
}
