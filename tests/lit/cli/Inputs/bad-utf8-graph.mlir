graph.graph @"g\C3" {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}
