// RUN: dlc-opt %s -p test-break-add | filecheck %s
// RUN: not dlc-opt %s --check-semantics -p graph-simplify,test-break-add,cse 2>&1 | filecheck %s --check-prefix=CAUGHT

// A deliberately wrong pass: add becomes sub. --check-semantics names it.

// CHECK-LABEL: @add_becomes_sub
// CHECK-SAME:  (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-NEXT:  %[[S:.*]] = graph.sub %[[X]], %[[Y]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  func.return %[[S]]
// CAUGHT:      dlc-opt: error: --check-semantics: pass 'test-break-add' changed the results of @add_becomes_sub: output #0: max abs error {{[0-9.e+-]+}}, max rel error
func.func @add_becomes_sub(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %a = graph.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}
