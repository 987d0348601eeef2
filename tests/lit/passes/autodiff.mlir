// graph-autodiff: backward nodes from each rule, summed contributions, the
// param gradients named <param>.grad, casts carrying f32 gradients back.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-autodiff))' | FileCheck %s

// CHECK-LABEL: graph.graph @linear
// CHECK: %loss.grad_seed = graph.fill "loss.grad_seed"() {value = 1.000000e+00 : f64} : () -> tensor<f32>
// CHECK: %loss.grad = graph.mse_loss_backward "loss.grad"(%y, %t, %loss.grad_seed)
// CHECK: %b.grad = graph.reduce_to "y.grad"(%loss.grad) {outs = ["b.grad"], shape = array<i64: 8>}
// CHECK: %w.grad = graph.matmul "mm.grad"(%x, %loss.grad) {outs = ["w.grad"], transpose_a = true}
// CHECK: graph.return %loss
graph.graph @linear attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %b = graph.param "b" : tensor<8xf32>
  %mm = graph.matmul "mm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = graph.add "y"(%mm, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %loss = graph.mse_loss "loss"(%y, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// An input's cast stays alive for the backward (the batch is bound all
// step; a recast would read it again), where a param's is made again.
// CHECK-LABEL: graph.graph @input_cast
// CHECK-NOT: recast
// CHECK: %w.cast_f16.recast = graph.cast "w.cast_f16.recast"(%w) {to = f16}
// CHECK: graph.matmul "mm.grad"(%mm.cast_f32.grad, %w.cast_f16.recast) {transpose_b = true}
// CHECK-NOT: recast
// CHECK: graph.matmul "h.grad"(%x.cast_f16, %mm.grad) {transpose_a = true}
// CHECK-NOT: recast
// CHECK: graph.return
graph.graph @input_cast attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %x16 = graph.cast "x.cast_f16"(%x) {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %w16 = graph.cast "w.cast_f16"(%w) {to = f16} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %h = graph.matmul "h"(%x16, %w16) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %mm = graph.matmul "mm"(%h, %w16) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %y = graph.cast "mm.cast_f32"(%mm) {to = f32} : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %loss = graph.mse_loss "loss"(%y, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// A value used twice gets the sum of both contributions; an f16 compute
// path brings the param's gradient back to f32 through the cast's rule.
// CHECK-LABEL: graph.graph @shared_and_cast
// The backward reads a fresh cast of the param, not the forward's copy.
// CHECK: %w.cast_f16.recast = graph.cast "w.cast_f16.recast"(%w) {to = f16}
// The tanh is recomputed from it (its operand is read by the backward).
// CHECK: %h.recompute = graph.tanh "h.recompute"(%w.cast_f16.recast)
// CHECK: %e.grad = graph.unary_backward "e.grad"(%w.cast_f16.recast, %e, %s.grad_1) {fn = "exp"}
// CHECK: %h.grad = graph.unary_backward "h.grad"(%w.cast_f16.recast, %h.recompute, %s.grad) {fn = "tanh"}
// CHECK: %h.grad.sum = graph.add "h.grad.sum"(%e.grad, %h.grad)
// CHECK: %w.grad = graph.cast "w.cast_f16.grad"(%{{.*}}) {outs = ["w.grad"], to = f32} : (tensor<4xf16>) -> tensor<4xf32>
graph.graph @shared_and_cast attributes {loss = "loss"} {
  %w = graph.param "w" : tensor<4xf32>
  %w16 = graph.cast "w.cast_f16"(%w) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %h = graph.tanh "h"(%w16) : (tensor<4xf16>) -> tensor<4xf16>
  %e = graph.exp "e"(%w16) : (tensor<4xf16>) -> tensor<4xf16>
  %s = graph.mul "s"(%h, %e) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %s32 = graph.cast "s32"(%s) {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %loss = graph.reduce_sum "loss"(%s32) : (tensor<4xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// Integer inputs and non-trainable state get no gradient; batch norm's
// backward gives scale and bias gradients in f32.
// CHECK-LABEL: graph.graph @state
// CHECK: graph.batch_norm_backward "bn.grad"(%x, %{{.*}}, %scale) {{.*}}outs = ["bn.grad.0", "scale.grad", "bias.grad"]
// CHECK-NOT: mean.grad
graph.graph @state attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<2x2x2x4xf32>
  %scale = graph.param "scale" : tensor<4xf32>
  %bias = graph.param "bias" : tensor<4xf32>
  %mean = graph.param "mean" {trainable = false} : tensor<4xf32>
  %var = graph.param "var" {trainable = false} : tensor<4xf32>
  %bn = graph.batch_norm "bn"(%x, %scale, %bias, %mean, %var) : (tensor<2x2x2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x2x2x4xf32>
  %loss = graph.reduce_mean "loss"(%bn) : (tensor<2x2x2x4xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}


// -----

// A param read in f32 early and through an f16 cast late (tied weights): the
// f32 cast of the late gradient moves down to the sum, so the f16 gradient
// lives through the backward in between instead of its f32 copy.
// CHECK-LABEL: graph.graph @tied
// CHECK: %mm.grad_1 = graph.matmul "mm.grad_1"(%h16, %y.grad) {transpose_a = true}
// CHECK: %h16.grad = graph.cast "h16.grad"(%mm.grad) {to = f32}
// CHECK-NEXT: %h.grad = graph.matmul "h.grad"(%x, %h16.grad) {transpose_a = true}
// CHECK-NEXT: %w16.grad = graph.cast "w16.grad"(%mm.grad_1) {to = f32}
// CHECK-NEXT: %w.grad = graph.add "h.grad.sum"(%w16.grad, %h.grad) {outs = ["w.grad"]}
graph.graph @tied attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %h = graph.matmul "h"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h16 = graph.cast "h16"(%h) {to = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %w16 = graph.cast "w16"(%w) {to = f16} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %mm = graph.matmul "mm"(%h16, %w16) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %y = graph.cast "y"(%mm) {to = f32} : (tensor<4x8xf16>) -> tensor<4x8xf32>
  %loss = graph.reduce_mean "loss"(%y) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// softmax of widened f16 scores: the backward recomputes the f32 probabilities
// (and their f16 cast) from the f16 scores, which stay alive instead.
// CHECK-LABEL: graph.graph @attention
// CHECK: %ctx.grad = graph.matmul "ctx.grad"(%out.grad, %k)
// CHECK-NEXT: %wide.recompute = graph.cast "wide.recompute"(%scores) {to = f32}
// CHECK-NEXT: %probs.recompute = graph.softmax "probs.recompute"(%wide.recompute)
// CHECK-NEXT: %p16.recompute = graph.cast "p16.recompute"(%probs.recompute) {to = f16}
// CHECK-NEXT: graph.matmul "ctx.grad_1"(%p16.recompute, %out.grad) {transpose_a = true}
// CHECK: graph.softmax_backward "probs.grad"(%probs.recompute, %p16.grad)
graph.graph @attention attributes {loss = "loss"} {
  %q = graph.input "q" : tensor<2x4x8xf16>
  %w = graph.param "w" : tensor<8x8xf32>
  %w16 = graph.cast "w16"(%w) {to = f16} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %k = graph.matmul "k"(%q, %w16) : (tensor<2x4x8xf16>, tensor<8x8xf16>) -> tensor<2x4x8xf16>
  %scores = graph.matmul "scores"(%q, %k) {transpose_b = true} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x4xf16>
  %wide = graph.cast "wide"(%scores) {to = f32} : (tensor<2x4x4xf16>) -> tensor<2x4x4xf32>
  %probs = graph.softmax "probs"(%wide) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p16 = graph.cast "p16"(%probs) {to = f16} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf16>
  %ctx = graph.matmul "ctx"(%p16, %k) : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  %out = graph.cast "out"(%ctx) {to = f32} : (tensor<2x4x8xf16>) -> tensor<2x4x8xf32>
  %loss = graph.reduce_mean "loss"(%out) : (tensor<2x4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// An activation whose operand the backward reads anyway is recomputed where
// the backward first reads its result, so the forward's result dies with the
// forward (passes/BackwardPlacement.h). The weight gradient of mm2 and the
// GELU's own backward read the recomputed value.
// CHECK-LABEL: graph.graph @recompute_gelu
// CHECK: %g = graph.gelu "g"(%h)
// CHECK: %g.recompute = graph.gelu "g.recompute"(%h)
// CHECK: graph.matmul "y.grad_1"(%g.recompute, %{{.*}}) {{{.*}}transpose_a = true}
// CHECK: graph.unary_backward "g.grad"(%h, %g.recompute, %{{.*}}) {fn = "gelu"}
graph.graph @recompute_gelu attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w1 = graph.param "w1" : tensor<8x8xf32>
  %w2 = graph.param "w2" : tensor<8x8xf32>
  %h = graph.matmul "h"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g = graph.gelu "g"(%h) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.matmul "y"(%g, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = graph.reduce_sum "loss"(%y) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// Not where the graph returns the result (it stays alive anyway).
// CHECK-LABEL: graph.graph @returned_gelu
// CHECK-NOT: recompute
graph.graph @returned_gelu attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w1 = graph.param "w1" : tensor<8x8xf32>
  %w2 = graph.param "w2" : tensor<8x8xf32>
  %h = graph.matmul "h"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g = graph.gelu "g"(%h) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.matmul "y"(%g, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = graph.reduce_sum "loss"(%y) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss, %g : tensor<f32>, tensor<4x8xf32>
}

// -----

// The gradients of adjacent slices of one axis (an LSTM's gates) join as
// one concat: no zero-filled slice_backward each, no sum. Slices that leave
// a gap keep their slice_backward and sum.
// CHECK-LABEL: graph.graph @slices
// CHECK-NOT: graph.slice_backward
// CHECK: %[[J:.*]] = graph.concat "{{.*}}joined"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
// CHECK-NOT: graph.slice_backward
// CHECK-NOT: "{{.*}}sum"
// CHECK: graph.return
graph.graph @slices attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<2x6xf32>
  %t = graph.input "t" : tensor<2x2xf32>
  %w = graph.param "w" : tensor<2x6xf32>
  %h = graph.mul "h"(%x, %w) : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %a = graph.slice "a"(%h) {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 2>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
  %b = graph.slice "b"(%h) {axes = array<i64: 1>, starts = array<i64: 2>, ends = array<i64: 4>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
  %c = graph.slice "c"(%h) {axes = array<i64: 1>, starts = array<i64: 4>, ends = array<i64: 6>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
  %ab = graph.mul "ab"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %abc = graph.add "abc"(%ab, %c) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %loss = graph.mse_loss "loss"(%abc, %t) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// -----

// CHECK-LABEL: graph.graph @gap
// CHECK: graph.slice_backward {{.*}}ends = array<i64: 6>{{.*}}starts = array<i64: 4>
// CHECK: graph.slice_backward {{.*}}ends = array<i64: 2>{{.*}}starts = array<i64: 0>
// CHECK: graph.add "{{.*}}sum"
graph.graph @gap attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<2x6xf32>
  %t = graph.input "t" : tensor<2x2xf32>
  %w = graph.param "w" : tensor<2x6xf32>
  %h = graph.mul "h"(%x, %w) : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %a = graph.slice "a"(%h) {axes = array<i64: 1>, starts = array<i64: 0>, ends = array<i64: 2>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
  %c = graph.slice "c"(%h) {axes = array<i64: 1>, starts = array<i64: 4>, ends = array<i64: 6>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
  %ac = graph.mul "ac"(%a, %c) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %loss = graph.mse_loss "loss"(%ac, %t) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
