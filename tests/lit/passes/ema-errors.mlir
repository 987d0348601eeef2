// graph-ema's errors (passes/EmaPass.cpp): a decay outside (0, 1), no finite
// check to skip with, and a name the average needs taken.
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer,graph-ema{decay=1}))' 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-ema))' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer,graph-ema{decay=0.5}))' 2>&1 | FileCheck %s --check-prefix=TAKEN

// DECAY: ema decay must be in (0, 1), got 1
// ORDER: the weight average needs the finite check: run graph-loss-scaling first
// TAKEN: the weight average of 'w' needs the name 'w.ema', which the graph already uses
graph.graph @taken attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<8x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %t = graph.param "w.ema" {trainable = false} : tensor<8x8xf32>
  %h = graph.matmul "h"(%x, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = graph.add "y"(%h, %t) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %loss = graph.reduce_sum "loss"(%y) : (tensor<8x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
