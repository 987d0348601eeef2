graph.graph @bad {
  %x = graph.input "x" : tensor<4x8xf32>
  %y = graph.matmul "y"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  graph.return %y : tensor<4x8xf32>
}
