// RUN: ampc-opt %s -verify-diagnostics --split-input-file --pass-pipeline='builtin.module(graph.graph(graph-autodiff))'
// expected-error @+1 {{the graph has no loss to differentiate}}
graph.graph @no_loss {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// -----

// Class weights that are a trained param have no gradient.
graph.graph @trained_class_weights attributes {loss = "loss"} {
  %x = graph.param "x" {init = {kind = "zeros"}} : tensor<4x5xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w = graph.param "w" {init = {kind = "ones"}} : tensor<5xf32>
  // expected-error @+2 {{the class weights of cross entropy 'loss' have no gradient: make them a const, or a param with trainable = false}}
  // expected-error @+1 {{cannot build the gradient of node 'loss'}}
  %loss = graph.softmax_cross_entropy "loss"(%x, %labels, %w) : (tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
