// graph-autodiff's gradient checkpointing (passes/GradientCheckpointing.cpp):
// the backward reads copies of the activations, recomputed segment by
// segment from the kept cuts, instead of the forward's.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-autodiff{gradient-checkpointing=true}))' | FileCheck %s
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-autodiff))' | FileCheck %s --check-prefix=OFF

// Two residual blocks: the residual stream between them (r1) is a cut, kept;
// the second block's matmul and tanh are recomputed from it where its
// backward starts, and the first block's from the input. The last segment
// (y, t and the loss) is not recomputed: its backward runs first.
// CHECK-LABEL: graph.graph @blocks
// CHECK: %o2.grad = graph.matmul "o2.grad"
// CHECK-NEXT: %h2.recompute = graph.matmul "h2.recompute"(%r1, %w3)
// CHECK-NEXT: %g2.recompute = graph.tanh "g2.recompute"(%h2.recompute)
// CHECK-NEXT: graph.matmul "o2.grad_1"(%g2.recompute, %y.grad) {{{.*}}transpose_a = true}
// CHECK-NEXT: graph.unary_backward "g2.grad"(%h2.recompute, %g2.recompute, %o2.grad)
// CHECK: graph.matmul "h2.grad_1"(%r1, %g2.grad)
// CHECK: %h1.recompute = graph.matmul "h1.recompute"(%e.recompute, %w1)
// CHECK: graph.matmul "h1.grad_1"(%e.recompute, %g1.grad)
// CHECK-NOT: "r1.recompute"
// CHECK-NOT: "y.recompute"
// CHECK-NOT: "r2.recompute"
// Without it, the backward reads the forward's matmuls (the tanh alone is
// recomputed, from the matmul: passes/BackwardPlacement.h).
// OFF-LABEL: graph.graph @blocks
// OFF-NOT: h2.recompute
// OFF: graph.unary_backward "g2.grad"(%h2, %g2.recompute, %o2.grad)
graph.graph @blocks attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w0 = graph.param "w0" : tensor<8x8xf32>
  %w1 = graph.param "w1" : tensor<8x8xf32>
  %w2 = graph.param "w2" : tensor<8x8xf32>
  %w3 = graph.param "w3" : tensor<8x8xf32>
  %w4 = graph.param "w4" : tensor<8x8xf32>
  %w5 = graph.param "w5" : tensor<8x8xf32>
  %e = graph.matmul "e"(%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h1 = graph.matmul "h1"(%e, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g1 = graph.tanh "g1"(%h1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %o1 = graph.matmul "o1"(%g1, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r1 = graph.add "r1"(%e, %o1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = graph.matmul "h2"(%r1, %w3) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g2 = graph.tanh "g2"(%h2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %o2 = graph.matmul "o2"(%g2, %w4) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r2 = graph.add "r2"(%r1, %o2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.matmul "y"(%r2, %w5) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %t = graph.tanh "t"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %loss = graph.reduce_sum "loss"(%t) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// Batch norm's result is kept (a copy would move the running statistics
// again); the mask, computed from an input alone, is read as it is; a node
// whose result has a name of its own gets a fresh one for its copy.
// CHECK-LABEL: graph.graph @kept
// CHECK-NOT: "bn.recompute"
// CHECK: %t.recompute = graph.tanh "t.recompute"(%bn)
// CHECK-NEXT: %b.recompute = graph.add "b.recompute"(%t.recompute, %m)
// CHECK: %d.recompute = graph.sigmoid "n.recompute"(%c.recompute) {outs = ["d.recompute"]}
// CHECK: %a.recompute = graph.mul "a.recompute"(%x, %w)
// CHECK-NEXT: graph.batch_norm_backward "bn.grad"(%a.recompute,
// CHECK-NOT: "m.recompute"
// CHECK-NOT: "bn.recompute"
graph.graph @kept attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<2x2x2x4xf32>
  %mask = graph.input "mask" : tensor<2x2x2x4xf32>
  %w = graph.param "w" : tensor<2x2x2x4xf32>
  %w2 = graph.param "w2" : tensor<2x2x2x4xf32>
  %scale = graph.param "scale" : tensor<4xf32>
  %bias = graph.param "bias" : tensor<4xf32>
  %mean = graph.param "mean" {trainable = false} : tensor<4xf32>
  %var = graph.param "var" {trainable = false} : tensor<4xf32>
  %m = graph.neg "m"(%mask) : (tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %a = graph.mul "a"(%x, %w) : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %bn = graph.batch_norm "bn"(%a, %scale, %bias, %mean, %var) : (tensor<2x2x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x2x2x4xf32>
  %t = graph.tanh "t"(%bn) : (tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %b = graph.add "b"(%t, %m) : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %c = graph.mul "c"(%b, %w2) : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %d = graph.sigmoid "n"(%c) {outs = ["d"]} : (tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %e = graph.add "e"(%d, %m) : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %f = graph.mul "f"(%e, %b) : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %g = graph.mul "g"(%f, %f) : (tensor<2x2x2x4xf32>, tensor<2x2x2x4xf32>) -> tensor<2x2x2x4xf32>
  %loss = graph.reduce_mean "loss"(%g) : (tensor<2x2x2x4xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// A chain of equal values: every gap is a candidate; the cuts come once the
// backward's reads since the last reach sqrt(9 values read * 1 value a cut),
// three values: a2 and a5 are kept, the rest recomputed.
// CHECK-LABEL: graph.graph @chain
// CHECK: %a6.recompute = graph.tanh "a6.recompute"(%a5)
// CHECK-NEXT: %a7.recompute = graph.tanh "a7.recompute"(%a6.recompute)
// CHECK: %a3.recompute = graph.tanh "a3.recompute"(%a2)
// CHECK-NEXT: %a4.recompute = graph.tanh "a4.recompute"(%a3.recompute)
// CHECK: %a0.recompute = graph.mul "a0.recompute"(%x, %w)
// CHECK-NEXT: %a1.recompute = graph.tanh "a1.recompute"(%a0.recompute)
// CHECK-NOT: "a2.recompute"
// CHECK-NOT: "a5.recompute"

graph.graph @chain attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<4x8xf32>
  %a0 = graph.mul "a0"(%x, %w) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %a1 = graph.tanh "a1"(%a0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a2 = graph.tanh "a2"(%a1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a3 = graph.tanh "a3"(%a2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a4 = graph.tanh "a4"(%a3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a5 = graph.tanh "a5"(%a4) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a6 = graph.tanh "a6"(%a5) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a7 = graph.tanh "a7"(%a6) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a8 = graph.tanh "a8"(%a7) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %loss = graph.reduce_sum "loss"(%a8) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
