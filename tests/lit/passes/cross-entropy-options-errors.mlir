// graph-cross-entropy-options refuses a graph without a cross entropy.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-cross-entropy-options{label-smoothing=0.1}))' -verify-diagnostics

// A graph whose loss is not a cross entropy has nothing to smooth.
// expected-error @+1 {{--label-smoothing needs a softmax_cross_entropy loss; this graph has none}}
graph.graph @regression attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x8xf32>
  %loss = graph.mse_loss "loss"(%x, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

