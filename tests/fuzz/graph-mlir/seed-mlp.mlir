module {
  graph.graph @mlp attributes {loss = "loss"} {
    %x = graph.input "x" : tensor<2x784xf32>
    %labels = graph.input "labels" : tensor<2xi64>
    %fc1.w = graph.param "fc1.w" {init = {kind = "xavier_uniform"}} : tensor<784x8xf32>
    %fc1.b = graph.param "fc1.b" {init = {kind = "zeros"}} : tensor<8xf32>
    %fc2.w = graph.param "fc2.w" {init = {kind = "xavier_uniform"}} : tensor<8x8xf32>
    %fc2.b = graph.param "fc2.b" {init = {kind = "zeros"}} : tensor<8xf32>
    %fc3.w = graph.param "fc3.w" {init = {kind = "xavier_uniform"}} : tensor<8x10xf32>
    %fc3.b = graph.param "fc3.b" {init = {kind = "zeros"}} : tensor<10xf32>
    %fc1.matmul = graph.matmul "fc1.matmul"(%x, %fc1.w) : (tensor<2x784xf32>, tensor<784x8xf32>) -> tensor<2x8xf32>
    %fc1.add = graph.add "fc1.add"(%fc1.matmul, %fc1.b) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %relu1 = graph.relu "relu1"(%fc1.add) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %fc2.matmul = graph.matmul "fc2.matmul"(%relu1, %fc2.w) : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %fc2.add = graph.add "fc2.add"(%fc2.matmul, %fc2.b) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    %relu2 = graph.relu "relu2"(%fc2.add) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %fc3.matmul = graph.matmul "fc3.matmul"(%relu2, %fc3.w) : (tensor<2x8xf32>, tensor<8x10xf32>) -> tensor<2x10xf32>
    %fc3.add = graph.add "fc3.add"(%fc3.matmul, %fc3.b) : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
    %loss = graph.softmax_cross_entropy "loss"(%fc3.add, %labels) : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
    graph.return %fc3.add, %loss : tensor<2x10xf32>, tensor<f32>
  }
}
