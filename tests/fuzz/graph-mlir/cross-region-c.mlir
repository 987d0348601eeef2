%r = graph.relu "r"(%x) : (tensor<4xf32>) -> tensor<4xf32>
graph.graph @g {
  %x = graph.input "x" : tensor<4xf32>
  %y = graph.relu "y"(%r) : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}
