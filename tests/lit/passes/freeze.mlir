// graph-freeze (passes/FreezePass.cpp): params frozen by name or module,
// glob or not; autodiff then builds no backward for what frozen params feed.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-freeze{freeze=enc},graph-autodiff))' | FileCheck %s --check-prefix=ENC
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-freeze{train-only=head.w},graph-autodiff))' | FileCheck %s --check-prefix=ONLY
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-freeze{freeze=*.b,e?c.w},graph-autodiff))' | FileCheck %s --check-prefix=GLOB
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-freeze{freeze=head.b train-only=head}))' | FileCheck %s --check-prefix=BOTH

// A module name freezes its params: the encoder's weight keeps no gradient,
// and nothing flows back past the head (no gradient of g, h or the tanh).
// ENC: graph.param "enc.w" {trainable = false}
// ENC: graph.param "head.w" :
// ENC: graph.param "head.b" :
// ENC-NOT: enc.w.grad
// ENC-NOT: "g.grad"
// ENC-NOT: unary_backward
// ENC: "head.w.grad"
// ENC: graph.return

// --train-only keeps one param trainable; the bias is frozen with the rest.
// ONLY: graph.param "enc.w" {trainable = false}
// ONLY: graph.param "head.w" :
// ONLY: graph.param "head.b" {trainable = false}
// ONLY-NOT: head.b.grad
// ONLY: "head.w.grad"

// Globs: `*` spans dots, `?` is one letter.
// GLOB: graph.param "enc.w" {trainable = false}
// GLOB: graph.param "head.w" :
// GLOB: graph.param "head.b" {trainable = false}

// Both: the train-only set, less what --freeze names.
// BOTH: graph.param "enc.w" {trainable = false}
// BOTH: graph.param "head.w" :
// BOTH: graph.param "head.b" {trainable = false}
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
