// RUN: dlc-opt %s --split-input-file -p graph-fold-constants | filecheck %s
// RUN: dlc-opt %s --split-input-file -p 'graph-fold-constants{size-limit=4}' | filecheck %s --check-prefix=LIMIT
// RUN: not dlc-opt %s -p 'graph-fold-constants{size-limit=-1}' 2>&1 | filecheck %s --check-prefix=BAD
// BAD: dlc-opt: error: graph-fold-constants: expected a non-negative size-limit, found -1

// CHECK-LABEL: @weight_chain_folds
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:  %[[W:.*]] = graph.constant dense<{{\[\[}}2.000000e+00, 6.000000e+00, 1.000000e+01], [4.000000e+00, 8.000000e+00, 1.200000e+01]]> : tensor<2x3xf32>
// CHECK-NEXT:  %[[R:.*]] = graph.add %[[X]], %[[W]]
// CHECK-NEXT:  func.return %[[R]]
// LIMIT-LABEL: @weight_chain_folds
// LIMIT:       graph.transpose
// LIMIT:       graph.mul
func.func @weight_chain_folds(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %m = graph.mul %t, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %r = graph.add %x, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// A shape computation on i64 folds to a small constant.

// CHECK-LABEL: @shape_chain_folds
// CHECK-DAG:   %[[R:.*]] = graph.constant dense<{{\[\[}}2], [1], [1]]> : tensor<3x1xi64>
// CHECK-DAG:   %[[C:.*]] = graph.constant dense<[2, 1, 1, 2, 3, 4]> : tensor<6xi64>
// CHECK-DAG:   %[[Q:.*]] = graph.constant dense<[2, 12]> : tensor<2xi64>
// CHECK-NOT:   graph.{{[a-z]+}} %
// CHECK:       func.return %[[R]], %[[C]], %[[Q]]
func.func @shape_chain_folds() -> (tensor<3x1xi64>, tensor<6xi64>, tensor<2xi64>) {
  %shape = graph.constant dense<[2, 3, 4]> : tensor<3xi64>
  %head = graph.constant dense<[1, 3, 4]> : tensor<3xi64>
  %d = graph.div %shape, %head : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %r = graph.reshape %d {shape = array<i64: 3, 1>} : (tensor<3xi64>) -> tensor<3x1xi64>
  %s = graph.reduce %shape {axes = array<i64: 0>, keepdims = false, kind = "prod"} : (tensor<3xi64>) -> tensor<i64>
  %c = graph.concat %d, %shape {axis = 0 : i64} : (tensor<3xi64>, tensor<3xi64>) -> tensor<6xi64>
  %two = graph.constant dense<[2, 12]> : tensor<2xi64>
  %p = graph.mul %two, %s : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %q = graph.div %p, %s : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  func.return %r, %c, %q : tensor<3x1xi64>, tensor<6xi64>, tensor<2xi64>
}

// -----

// A splat result is stored as one element, however large.

// CHECK-LABEL: @splat_result_stays_small
// CHECK-NEXT:  %[[C:.*]] = graph.constant dense<3.000000e+00> : tensor<256x256xf32>
// CHECK-NEXT:  func.return %[[C]]
func.func @splat_result_stays_small() -> tensor<256x256xf32> {
  %one = graph.constant dense<1.0> : tensor<256x256xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %r = graph.add %one, %two : (tensor<256x256xf32>, tensor<f32>) -> tensor<256x256xf32>
  func.return %r : tensor<256x256xf32>
}

// -----

// Broadcasting a 2-element column to 2x1024 would store 2048 elements for 3 freed.

// CHECK-LABEL: @negative_fold_would_bloat
// CHECK:       graph.add
func.func @negative_fold_would_bloat() -> tensor<2x1024xf32> {
  %v = graph.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %z = graph.constant dense<0.0> : tensor<1x1024xf32>
  %r = graph.add %z, %v : (tensor<1x1024xf32>, tensor<2x1xf32>) -> tensor<2x1024xf32>
  func.return %r : tensor<2x1024xf32>
}

// -----

// CHECK-LABEL: @negative_non_constant_operand
// CHECK:       graph.mul
func.func @negative_non_constant_operand(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = graph.constant dense<2.0> : tensor<3xf32>
  %r = graph.mul %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// A constant the folded op shares with another user stays.

// CHECK-LABEL: @shared_operand_stays
// CHECK-SAME:  (%[[X:.*]]: tensor<2xf32>)
// CHECK-DAG:   %[[C:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00]>
// CHECK-DAG:   %[[N:.*]] = graph.constant dense<[-1.000000e+00, -2.000000e+00]>
// CHECK:       graph.add %[[X]], %[[C]]
// CHECK-NOT:   graph.neg
func.func @shared_operand_stays(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %n = graph.neg %c : tensor<2xf32>
  %a = graph.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %a, %n : tensor<2xf32>, tensor<2xf32>
}
