module {
  graph.graph @mnist_cnn attributes {loss = "loss"} {
    %x = graph.input "x" : tensor<2x28x28x1xf32>
    %labels = graph.input "labels" : tensor<2xi64>
    %conv1.w = graph.param "conv1.w" {init = {kind = "kaiming_normal"}} : tensor<16x5x5x1xf32>
    %bn1.scale = graph.param "bn1.scale" {init = {kind = "ones"}} : tensor<16xf32>
    %bn1.bias = graph.param "bn1.bias" {init = {kind = "zeros"}} : tensor<16xf32>
    %bn1.running_mean = graph.param "bn1.running_mean" {init = {kind = "zeros"}, trainable = false} : tensor<16xf32>
    %bn1.running_var = graph.param "bn1.running_var" {init = {kind = "ones"}, trainable = false} : tensor<16xf32>
    %conv2.w = graph.param "conv2.w" {init = {kind = "kaiming_normal"}} : tensor<64x5x5x16xf32>
    %bn2.scale = graph.param "bn2.scale" {init = {kind = "ones"}} : tensor<64xf32>
    %bn2.bias = graph.param "bn2.bias" {init = {kind = "zeros"}} : tensor<64xf32>
    %bn2.running_mean = graph.param "bn2.running_mean" {init = {kind = "zeros"}, trainable = false} : tensor<64xf32>
    %bn2.running_var = graph.param "bn2.running_var" {init = {kind = "ones"}, trainable = false} : tensor<64xf32>
    %fc1.w = graph.param "fc1.w" {init = {kind = "xavier_uniform"}} : tensor<3136x64xf32>
    %fc1.b = graph.param "fc1.b" {init = {kind = "zeros"}} : tensor<64xf32>
    %fc2.w = graph.param "fc2.w" {init = {kind = "xavier_uniform"}} : tensor<64x10xf32>
    %fc2.b = graph.param "fc2.b" {init = {kind = "zeros"}} : tensor<10xf32>
    %conv1.conv2d = graph.conv2d "conv1.conv2d"(%x, %conv1.w) {padding = array<i64: 2, 2>} : (tensor<2x28x28x1xf32>, tensor<16x5x5x1xf32>) -> tensor<2x28x28x16xf32>
    %bn1.batch_norm = graph.batch_norm "bn1.batch_norm"(%conv1.conv2d, %bn1.scale, %bn1.bias, %bn1.running_mean, %bn1.running_var) : (tensor<2x28x28x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x28x28x16xf32>
    %relu1 = graph.relu "relu1"(%bn1.batch_norm) : (tensor<2x28x28x16xf32>) -> tensor<2x28x28x16xf32>
    %pool1 = graph.max_pool2d "pool1"(%relu1) {kernel = array<i64: 2, 2>} : (tensor<2x28x28x16xf32>) -> tensor<2x14x14x16xf32>
    %conv2.conv2d = graph.conv2d "conv2.conv2d"(%pool1, %conv2.w) {padding = array<i64: 2, 2>} : (tensor<2x14x14x16xf32>, tensor<64x5x5x16xf32>) -> tensor<2x14x14x64xf32>
    %bn2.batch_norm = graph.batch_norm "bn2.batch_norm"(%conv2.conv2d, %bn2.scale, %bn2.bias, %bn2.running_mean, %bn2.running_var) : (tensor<2x14x14x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x14x14x64xf32>
    %relu2 = graph.relu "relu2"(%bn2.batch_norm) : (tensor<2x14x14x64xf32>) -> tensor<2x14x14x64xf32>
    %pool2 = graph.max_pool2d "pool2"(%relu2) {kernel = array<i64: 2, 2>} : (tensor<2x14x14x64xf32>) -> tensor<2x7x7x64xf32>
    %flatten = graph.flatten "flatten"(%pool2) : (tensor<2x7x7x64xf32>) -> tensor<2x3136xf32>
    %fc1.matmul = graph.matmul "fc1.matmul"(%flatten, %fc1.w) : (tensor<2x3136xf32>, tensor<3136x64xf32>) -> tensor<2x64xf32>
    %fc1.add = graph.add "fc1.add"(%fc1.matmul, %fc1.b) : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
    %relu3 = graph.relu "relu3"(%fc1.add) : (tensor<2x64xf32>) -> tensor<2x64xf32>
    %fc2.matmul = graph.matmul "fc2.matmul"(%relu3, %fc2.w) : (tensor<2x64xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
    %fc2.add = graph.add "fc2.add"(%fc2.matmul, %fc2.b) : (tensor<2x10xf32>, tensor<10xf32>) -> tensor<2x10xf32>
    %loss = graph.softmax_cross_entropy "loss"(%fc2.add, %labels) : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
    graph.return %fc2.add, %loss : tensor<2x10xf32>, tensor<f32>
  }
}
