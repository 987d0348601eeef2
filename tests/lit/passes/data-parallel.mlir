// graph-data-parallel: each gradient is summed over the ranks in the dtype
// the backward made it in (f16 at O1, before its cast to f32; f32 at O0), in
// buckets by dtype and production order, before the finite check, with the
// 1/N of averaging folded into the unscale.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O1},graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-data-parallel{world-size=4},graph-fold-casts))' | FileCheck %s --check-prefix=O1
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling,graph-data-parallel{world-size=2 bucket-mib=0.001 average=false}))' | FileCheck %s --check-prefix=O0
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O1},graph-fold-casts,graph-autodiff,graph-loss-scaling{accumulate=2},graph-data-parallel{world-size=2}))' | FileCheck %s --check-prefix=ACC
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling,graph-data-parallel))' | FileCheck %s --check-prefix=ONE
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-data-parallel{world-size=2}))' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling,graph-data-parallel{world-size=2 bucket-mib=0}))' 2>&1 | FileCheck %s --check-prefix=BUCKET
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling,graph-data-parallel{world-size=0}))' 2>&1 | FileCheck %s --check-prefix=WORLD

graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w1 = graph.param "w1" {init = {kind = "xavier_uniform"}} : tensor<8x64xf32>
  %w2 = graph.param "w2" {init = {kind = "xavier_uniform"}} : tensor<64x8xf32>
  %h = graph.matmul "h"(%x, %w1) : (tensor<4x8xf32>, tensor<8x64xf32>) -> tensor<4x64xf32>
  %r = graph.relu "r"(%h) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %mm = graph.matmul "mm"(%r, %w2) : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %loss = graph.softmax_cross_entropy "loss"(%mm, %labels) : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// At O1 the f16 gradients are summed in f16, in one bucket (25 MiB), right
// after the last of them; the finite check reads the sums and divides by S·4.
// O1: %h.grad = graph.matmul "h.grad"
// O1-NEXT: %mm.grad_1.sum, %h.grad.sum = graph.all_reduce "all_reduce.0"(%mm.grad_1, %h.grad) {outs = ["mm.grad_1.sum", "h.grad.sum"], world_size = 4 : i64} : (tensor<64x8xf16>, tensor<8x64xf16>) -> (tensor<64x8xf16>, tensor<8x64xf16>)
// O1-NOT: graph.cast "w1.cast_f16.grad"
// O1: %loss_scale.times_world = graph.scale "loss_scale.times_world"(%loss_scale) {scale = 4.000000e+00 : f64}
// O1-NEXT: graph.check_finite_and_unscale "check_finite"(%h.grad.sum, %mm.grad_1.sum, %loss_scale.times_world)
// O1: graph.update_loss_scaling "update_loss_scaling"(%found_inf, %loss_scale,

// At O0, f32 gradients in f32; a bucket of 1 KiB holds one of them (2 KiB
// each), so each gets its own, in the order the backward produces them; no
// averaging: the check divides by S alone.
// O0: %w2.grad = graph.matmul "mm.grad_1"
// O0-NEXT: %w2.grad.sum = graph.all_reduce "all_reduce.0"(%w2.grad) {outs = ["w2.grad.sum"], world_size = 2 : i64} : (tensor<64x8xf32>) -> tensor<64x8xf32>
// O0: %w1.grad = graph.matmul "h.grad"
// O0-NEXT: %w1.grad.sum = graph.all_reduce "all_reduce.1"(%w1.grad) {bucket = 1 : i64,
// O0-NEXT: graph.check_finite_and_unscale "check_finite"(%w1.grad.sum, %w2.grad.sum, %loss_scale)

// With accumulation the accumulators are summed, once per window.
// ACC: graph.accumulate "w2.accumulate"
// ACC-NEXT: %w1.grad_acc.sum, %w2.grad_acc.sum = graph.all_reduce "all_reduce.0"(%w1.grad_acc, %w2.grad_acc) {outs = ["w1.grad_acc.sum", "w2.grad_acc.sum"], phase = "apply", world_size = 2 : i64}
// ACC-NEXT: graph.scale "loss_scale.times_world"(%loss_scale) {phase = "apply", scale = 2.000000e+00 : f64}

// One rank: nothing to sum.
// ONE-NOT: all_reduce
// ONE-NOT: times_world

// ORDER: error: data parallel needs the finite check: run graph-loss-scaling first
// BUCKET: error: data parallel: the bucket size must be above 0 MiB, got 0.000000e+00
// WORLD: error: data parallel: the world size must be at least 1, got 0
