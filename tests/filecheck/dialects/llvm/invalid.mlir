// RUN: dlc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: 'llvm.fcmp' op expected result type vector<8xi1> for operands of type vector<8xf32>, found i1
llvm.func @negative_fcmp_scalar_result(%a: vector<8xf32>) -> i1 {
  %m = "llvm.fcmp"(%a, %a) <{predicate = 4 : i64}> : (vector<8xf32>, vector<8xf32>) -> i1
  llvm.return %m : i1
}

// -----

// CHECK: 'llvm.select' op expected values of shape [8] for a condition of type vector<8xi1>, found vector<4xf32>
llvm.func @negative_select_shape(%m: vector<8xi1>, %a: vector<4xf32>) -> vector<4xf32> {
  %r = llvm.select %m, %a, %a : vector<8xi1>, vector<4xf32>
  llvm.return %r : vector<4xf32>
}
