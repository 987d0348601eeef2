graph.graph @broken {
  %x = graph.input "x" : tensor<4xf32>
  %y = graph.relu "y"(%x : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}
