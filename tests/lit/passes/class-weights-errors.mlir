// graph-cross-entropy-options refuses class weights that are not one per
// class, naming both counts.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-cross-entropy-options{class-weights=1,2}))' -verify-diagnostics
graph.graph @classes {
  %x = graph.input "x" : tensor<4x5xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  // expected-error @+1 {{--class-weights gives 2 weights; its logits have 5 classes}}
  %loss = graph.softmax_cross_entropy "loss"(%x, %labels) : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
