// RUN: dlc-opt %s --split-input-file -p cse | filecheck %s --check-prefix=CSE
// RUN: dlc-opt %s --split-input-file -p dce | filecheck %s --check-prefix=DCE

// xDSL's cse and dce work on graph ops because they are Pure.

// CSE-LABEL: @duplicates_merge
// CSE-SAME:  (%[[X:.*]]: tensor<2x3xf32>)
// CSE-NEXT:  %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<3xf32>
// CSE-NEXT:  %[[A:.*]] = graph.add %[[X]], %[[C]]
// CSE-NEXT:  %[[R:.*]] = graph.relu %[[A]]
// CSE-NEXT:  %[[M:.*]] = graph.mul %[[R]], %[[R]]
// CSE-NEXT:  func.return %[[M]]
func.func @duplicates_merge(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c1 = graph.constant dense<1.0> : tensor<3xf32>
  %c2 = graph.constant dense<1.0> : tensor<3xf32>
  %a1 = graph.add %x, %c1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %a2 = graph.add %x, %c2 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r1 = graph.relu %a1 : tensor<2x3xf32>
  %r2 = graph.relu %a2 : tensor<2x3xf32>
  %m = graph.mul %r1, %r2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %m : tensor<2x3xf32>
}

// -----

// Ops that differ in an attribute are not merged.

// CSE-LABEL: @negative_different_attributes
// CSE:       graph.transpose %{{.*}} {perm = array<i64: 1, 0, 2>}
// CSE:       graph.transpose %{{.*}} {perm = array<i64: 0, 2, 1>}
func.func @negative_different_attributes(%x: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %a = graph.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %b = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  func.return %a, %b : tensor<2x2x2xf32>, tensor<2x2x2xf32>
}

// -----

// DCE-LABEL: @dead_ops_removed
// DCE-SAME:  (%[[X:.*]]: tensor<1x2x4x4xf32>)
// DCE-NEXT:  %[[R:.*]] = graph.relu %[[X]]
// DCE-NEXT:  func.return %[[R]]
func.func @dead_ops_removed(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.max_pool2d %c {kernel = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  %r = graph.relu %x : tensor<1x2x4x4xf32>
  %dead = graph.fused (%r) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    %e = graph.exp %a : tensor<1x2x4x4xf32>
    graph.yield %e : tensor<1x2x4x4xf32>
  }
  func.return %r : tensor<1x2x4x4xf32>
}

// -----

// CSE inside fused groups, and of two identical groups.

// CSE-LABEL: @identical_groups_merge
// CSE:       %[[G:.*]] = graph.fused
// CSE-NOT:   graph.fused
// CSE:       func.return %[[G]], %[[G]]
func.func @identical_groups_merge(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g1 = graph.fused (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    graph.yield %e : tensor<4xf32>
  }
  %g2 = graph.fused (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = graph.exp %a : tensor<4xf32>
    graph.yield %e : tensor<4xf32>
  }
  func.return %g1, %g2 : tensor<4xf32>, tensor<4xf32>
}
