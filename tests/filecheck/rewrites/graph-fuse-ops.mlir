// RUN: dlc-opt %s --split-input-file -p graph-fuse-ops | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-fuse-ops{max-depth=2}' | filecheck %s --check-prefix=DEPTH
// RUN: dlc-opt %s --split-input-file -p graph-fuse-ops,graph-fuse-ops | filecheck %s
// RUN: not dlc-opt %s -p 'graph-fuse-ops{max-depth=0}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: dlc-opt: error: graph-fuse-ops: expected a positive max-depth, found 0

// conv2d + bias add + relu (the batch norm already folded) is one out-fusable group; the
// constants move in; the group's only argument is the input.

// CHECK-LABEL: @conv_bias_relu
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-NEXT:  %[[G:.*]] = graph.fused (%[[X]]) {kind = "out_fusable", name = "fused_conv2d_add_relu"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:  ^{{.*}}(%[[A:.*]]: tensor<1x2x4x4xf32>):
// CHECK-NEXT:    %[[W:.*]] = graph.constant
// CHECK-NEXT:    %[[B:.*]] = graph.constant
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[A]], %[[W]]
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[C]], %[[B]]
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[S]]
// CHECK-NEXT:    graph.yield %[[R]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %[[G]]
// DEPTH-LABEL: @conv_bias_relu
// DEPTH:       name = "fused_add_relu"
// DEPTH:       name = "fused_conv2d"
func.func @conv_bias_relu(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = graph.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %s : tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// -----

// A residual block: the second conv takes the add of the shortcut and the relu; the shortcut
// (a group's output used twice) ends its group; no conv is fused into another conv's input.

// CHECK-LABEL: @residual_block
// CHECK-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK:       %[[R1:.*]] = graph.fused (%[[X]]) {kind = "out_fusable", name = "fused_conv2d_relu"}
// CHECK:       %[[OUT:.*]] = graph.fused (%[[R1]], %[[X]]) {kind = "out_fusable", name = "fused_conv2d_add_relu"}
// CHECK-NEXT:  ^{{.*}}(%[[A:.*]]: tensor<1x2x4x4xf32>, %[[SHORT:.*]]: tensor<1x2x4x4xf32>):
// CHECK:         %[[C:.*]] = graph.conv2d %[[A]]
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[C]], %[[SHORT]]
// CHECK-NEXT:    graph.relu %[[S]]
// CHECK:       func.return %[[OUT]]
func.func @residual_block(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %v = graph.constant dense<2.0> : tensor<2x2x1x1xf32>
  %c1 = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r1 = graph.relu %c1 : tensor<1x2x4x4xf32>
  %c2 = graph.conv2d %r1, %v : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %c2, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r2 = graph.relu %s : tensor<1x2x4x4xf32>
  func.return %r2 : tensor<1x2x4x4xf32>
}

// -----

// The weight is shared by two groups: it stays outside and is an argument of both.

// CHECK-LABEL: @shared_constant_stays_outside
// CHECK-NEXT:  %[[W:.*]] = graph.constant
// CHECK-NEXT:  graph.fused (%{{.*}}, %[[W]])
// CHECK:       graph.fused (%{{.*}}, %[[W]])
func.func @shared_constant_stays_outside(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c1 = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c2 = graph.conv2d %c1, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %c2 : tensor<1x2x4x4xf32>
}

// -----

// Injective chains fuse, with the elementwise ops before them.

// CHECK-LABEL: @injective_chain
// CHECK-NEXT:  graph.fused (%{{.*}}) {kind = "injective", name = "fused_exp_transpose_reshape"}
// CHECK-NOT:   graph.fused
// CHECK:       func.return
func.func @injective_chain(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %e = graph.exp %x : tensor<2x3xf32>
  %t = graph.transpose %e {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r = graph.reshape %t {shape = array<i64: 6>} : (tensor<3x2xf32>) -> tensor<6xf32>
  func.return %r : tensor<6xf32>
}

// -----

// An elementwise chain that a conv could take as its epilogue (the SiLU) stays with the conv;
// the transpose after it is a group of its own (a transposed copy), not a scalar nest of the
// SiLU and the transpose. A chain with no out-fusable producer still joins the transpose
// (@injective_chain above), and so does one whose conv has another user.

// CHECK-LABEL: @silu_epilogue_before_transpose
// CHECK-NEXT:  %[[C:.*]] = graph.fused (%{{.*}}) {kind = "out_fusable", name = "fused_conv2d_sigmoid_mul"}
// CHECK:       graph.fused (%[[C]]) {kind = "injective", name = "fused_transpose"}
// CHECK-NOT:   graph.fused
// CHECK:       func.return
func.func @silu_epilogue_before_transpose(%x: tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.sigmoid %c : tensor<1x2x4x4xf32>
  %m = graph.mul %c, %s : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t = graph.transpose %m {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  func.return %t : tensor<1x4x4x2xf32>
}

// -----

// CHECK-LABEL: @conv_with_another_user_before_transpose
// CHECK-NEXT:  %[[C:.*]] = graph.fused (%{{.*}}) {kind = "out_fusable", name = "fused_conv2d"}
// CHECK:       graph.fused (%[[C]]) {kind = "injective", name = "fused_relu_transpose"}
// CHECK:       graph.fused (%[[C]]) {kind = "elementwise", name = "fused_exp"}
func.func @conv_with_another_user_before_transpose(%x: tensor<1x2x4x4xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x4x4xf32>) {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %c : tensor<1x2x4x4xf32>
  %t = graph.transpose %r {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %e = graph.exp %c : tensor<1x2x4x4xf32>
  func.return %t, %e : tensor<1x4x4x2xf32>, tensor<1x2x4x4xf32>
}

// -----

// A reduction takes its elementwise prologue; the op after it starts a new group.

// CHECK-LABEL: @reduction_with_prologue
// CHECK-NEXT:  %[[S:.*]] = graph.fused (%{{.*}}) {kind = "reduction", name = "fused_exp_mul_reduce"}
// CHECK:       graph.fused (%[[S]]) {kind = "elementwise", name = "fused_sqrt"}
func.func @reduction_with_prologue(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %e = graph.exp %x : tensor<2x3xf32>
  %m = graph.mul %e, %e : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = graph.reduce %m {axes = array<i64: 1>, keepdims = false, kind = "sum"} : (tensor<2x3xf32>) -> tensor<2xf32>
  %r = graph.sqrt %s : tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// A layer norm as the ONNX importer writes it: the row mean, x - mean (used by the variance and
// by the result), the mean of its squares, and the scaled result. By the rules above these are
// four groups; every op works row by row over the same trailing axis (results of the full
// shape or the rows' 1s), so they merge into one group: one kernel that loop-fuse-nests runs
// as one loop over the rows.

// CHECK-LABEL: @layer_norm_rows
// CHECK-SAME:  (%[[X:.*]]: tensor<2x8xf32>, %[[G:.*]]: tensor<8xf32>)
// CHECK-NEXT:  %[[Y:.*]] = graph.fused (%[[X]], %[[G]]) {kind = "reduction", name = "fused_reduce_sub_mul_add"}
// CHECK:         %[[MEAN:.*]] = graph.reduce
// CHECK:         graph.sub %{{.*}}, %[[MEAN]]
// CHECK:         %[[VAR:.*]] = graph.reduce
// CHECK:         graph.add %[[VAR]]
// CHECK:         graph.sqrt
// CHECK:         graph.reciprocal
// CHECK:         graph.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %[[Y]]
func.func @layer_norm_rows(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  %mean = graph.reduce %x {axes = array<i64: 1>, kind = "mean"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq = graph.mul %d, %d : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %var = graph.reduce %sq {axes = array<i64: 1>, kind = "mean"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %ve = graph.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %sd = graph.sqrt %ve : tensor<2x1xf32>
  %inv = graph.reciprocal %sd : tensor<2x1xf32>
  %n = graph.mul %d, %inv : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = graph.mul %n, %g : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// -----

// A reduction over the leading axis (a column mean) broadcast back: not rows, so the groups of
// the rules above stay.

// CHECK-LABEL: @negative_leading_axis_reduction
// CHECK-NEXT:  %[[M:.*]] = graph.fused (%{{.*}}) {kind = "reduction", name = "fused_reduce"}
// CHECK-NEXT:  ^
// CHECK-NEXT:    graph.reduce
// CHECK-NEXT:    graph.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  graph.fused (%{{.*}}, %[[M]]) {kind = "broadcast", name = "fused_sub"}
func.func @negative_leading_axis_reduction(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %mean = graph.reduce %x {axes = array<i64: 0>, kind = "mean"} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  %d = graph.sub %x, %mean : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  func.return %d : tensor<2x8xf32>
}

// -----

// A row group (the mean and x - mean) feeding a matmul: the matmul (out-fusable, not row by
// row) keeps its own group.

// CHECK-LABEL: @rows_stop_at_matmul
// CHECK:       %[[D:.*]] = graph.fused (%{{.*}}) {kind = "reduction", name = "fused_reduce_sub"}
// CHECK:       graph.fused (%[[D]], %{{.*}}) {kind = "out_fusable", name = "fused_matmul"}
func.func @rows_stop_at_matmul(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %mean = graph.reduce %x {axes = array<i64: 1>, kind = "mean"} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %d = graph.sub %x, %mean : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %y = graph.matmul %d, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}

// -----

// An elementwise op feeding a conv is not fused into it (the conv would recompute it).

// CHECK-LABEL: @negative_no_prologue_into_conv
// CHECK:       name = "fused_relu"
// CHECK:       name = "fused_conv2d"
func.func @negative_no_prologue_into_conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %r = graph.relu %x : tensor<1x2x4x4xf32>
  %c = graph.conv2d %r, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %c : tensor<1x2x4x4xf32>
}

// -----

// The relu's result is also returned: it ends the group, the exp after it is another group.

// CHECK-LABEL: @negative_value_used_outside
// CHECK:       %[[A:.*]] = graph.fused {{.*}} name = "fused_matmul_relu"
// CHECK:       %[[B:.*]] = graph.fused (%[[A]]) {kind = "elementwise", name = "fused_exp"}
// CHECK:       func.return %[[A]], %[[B]]
func.func @negative_value_used_outside(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %m = graph.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %m : tensor<2x4xf32>
  %e = graph.exp %r : tensor<2x4xf32>
  func.return %r, %e : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// softmax is opaque: a group of its own, nothing joins it.

// CHECK-LABEL: @negative_opaque_alone
// CHECK:       name = "fused_exp"
// CHECK:       {kind = "opaque", name = "fused_softmax"}
func.func @negative_opaque_alone(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = graph.exp %x : tensor<2x3xf32>
  %s = graph.softmax %e : tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// -----

// Two convs meeting in an add: only one out-fusable op per group.

// CHECK-LABEL: @negative_two_convs
// CHECK:       name = "fused_conv2d"
// CHECK:       name = "fused_conv2d_add"
func.func @negative_two_convs(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %v = graph.constant dense<2.0> : tensor<2x2x1x1xf32>
  %a = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.conv2d %x, %v : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = graph.add %a, %b : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %s : tensor<1x2x4x4xf32>
}

// -----

// The regions of graph.if and graph.loop are fused like function bodies; a captured value (%a,
// %w) becomes an input of the group that uses it; the control-flow op joins no group, and a value
// used inside a region (%a) ends its producer's group.

// CHECK-LABEL: @fuse_inside_regions
// CHECK:       %[[A:.*]] = graph.fused (%x) {kind = "elementwise", name = "fused_exp"}
// CHECK:       %[[R:.*]] = graph.if %c : tensor<i1> -> tensor<2x3xf32> {
// CHECK-NEXT:    %[[T:.*]] = graph.fused (%[[A]], %w) {kind = "out_fusable", name = "fused_matmul_relu"}
// CHECK:           graph.yield %{{.*}} : tensor<2x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.yield %[[T]] : tensor<2x3xf32>
// CHECK-NEXT:  } else {
// CHECK-NEXT:    graph.yield %[[A]] : tensor<2x3xf32>
// CHECK-NEXT:  }
// CHECK:       graph.fused (%[[R]]) {kind = "elementwise", name = "fused_neg"}
func.func @fuse_inside_regions(%c: tensor<i1>, %x: tensor<2x3xf32>, %w: tensor<3x3xf32>) -> tensor<2x3xf32> {
  %a = graph.exp %x : tensor<2x3xf32>
  %r = graph.if %c : tensor<i1> -> tensor<2x3xf32> {
    %m = graph.matmul %a, %w : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
    %t = graph.relu %m : tensor<2x3xf32>
    graph.yield %t : tensor<2x3xf32>
  } else {
    graph.yield %a : tensor<2x3xf32>
  }
  %s = graph.neg %r : tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: @fuse_inside_loop_body
// CHECK:       graph.loop (%m, %c, %x)
// CHECK:       ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
// CHECK-NEXT:    %[[N:.*]] = graph.fused (%v, %x) {kind = "broadcast", name = "fused_add_tanh"}
// CHECK:         graph.yield %ci, %[[N]] : tensor<i1>, tensor<2xf32>
func.func @fuse_inside_loop_body(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = graph.loop (%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %v: tensor<2xf32>):
    %s = graph.add %v, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %n = graph.tanh %s : tensor<2xf32>
    graph.yield %ci, %n : tensor<i1>, tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
