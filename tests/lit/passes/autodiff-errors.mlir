// RUN: ampc-opt %s -verify-diagnostics --pass-pipeline='builtin.module(graph.graph(graph-autodiff))'
// expected-error @+1 {{the graph has no loss to differentiate}}
graph.graph @no_loss {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}
