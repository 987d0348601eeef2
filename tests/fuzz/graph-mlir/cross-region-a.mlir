%r = graph.relu "r"(%x) : (tensor<4xf32>) -> tensor<4xf32>
graph.graph @g {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}
