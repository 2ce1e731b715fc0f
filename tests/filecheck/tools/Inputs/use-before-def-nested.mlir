func.func @negative_later(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = graph.fused (%x) {kind = "elementwise", name = "f"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%y: tensor<4xf32>):
    %r = graph.add %y, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    graph.yield %r : tensor<4xf32>
  }
  %b = graph.relu %x : tensor<4xf32>
  func.return %f : tensor<4xf32>
}
