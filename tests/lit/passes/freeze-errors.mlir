// graph-freeze's errors: a pattern that matches nothing (with the nearest
// module or name), nothing left to train.
// RUN: ampc-opt %s -verify-diagnostics --pass-pipeline='builtin.module(graph.graph(graph-freeze{freeze=haed}))'
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-freeze{train-only=head.x}))' 2>&1 | FileCheck %s --check-prefix=NEAR-NAME
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-freeze{freeze=enc,head}))' 2>&1 | FileCheck %s --check-prefix=ALL
// NEAR-NAME: train-only: 'head.x' matches no param; did you mean 'head.w'?
// ALL: freeze: every param is frozen; nothing is left to train

// expected-error @+1 {{freeze: 'haed' matches no param; did you mean 'head'?}}
graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w0 = graph.param "enc.w" : tensor<8x8xf32>
  %w1 = graph.param "head.w" : tensor<8x8xf32>
  %b1 = graph.param "head.b" : tensor<8xf32>
  %h = graph.matmul "h"(%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g = graph.tanh "g"(%h) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.matmul "y"(%g, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %z = graph.add "z"(%y, %b1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %loss = graph.reduce_sum "loss"(%z) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
