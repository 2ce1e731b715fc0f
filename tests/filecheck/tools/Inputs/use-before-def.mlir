func.func @negative_cycle(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.add %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
