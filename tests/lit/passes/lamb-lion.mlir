// graph-optimizer's lamb and lion (passes/OptimizerPass.cpp). lamb: Adam's
// state and step count, weight decay 0.01 and epsilon 1e-6 by default;
// with no-decay-1d the rank-1 params get neither decay nor a trust ratio
// (`adapt` false). At O2 the update writes the f32 master; at O1
// graph-fold-unscale hands it the loss scale and graph-fuse-weight-casts
// keeps each weight's f16 copy beside it, as for the other updates. lion:
// one state `<P>.lion_m`, no step count, betas 0.9,0.99 by default (the
// attributes' defaults, so unprinted), no decay unless asked.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=lamb}))' | FileCheck %s
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=lamb no-decay-1d=true weight-decay=0.1 epsilon=1e-8}))' | FileCheck %s --check-prefix=EXCLUDE
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O2},graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer{optimizer=lamb}))' | FileCheck %s --check-prefix=O2
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer{optimizer=lamb},graph-fold-unscale,graph-fold-casts,graph-fuse-weight-casts))' | FileCheck %s --check-prefix=COPIES
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=lion no-decay-1d=true weight-decay=0.1}))' | FileCheck %s --check-prefix=LION
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=lion beta1=0.5 beta2=0.75}))' | FileCheck %s --check-prefix=BETAS
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=lars}))' 2>&1 | FileCheck %s --check-prefix=KIND

// CHECK: %optimizer.step = graph.param "optimizer.step" {init = {kind = "zeros"}, trainable = false} : tensor<f32>
// CHECK: graph.count_step "optimizer.count_step"(%optimizer.step, %found_inf)
// CHECK-NEXT: graph.lamb "enc.w.lamb"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.adam_m, %enc.w.adam_v, %optimizer.step) {weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: graph.lamb "head.w.lamb"(%head.w, %head.w.grad_unscaled, %lr, %found_inf, %head.w.adam_m, %head.w.adam_v, %optimizer.step) {weight_decay = 1.000000e-02 : f64}
// CHECK-NEXT: graph.lamb "head.b.lamb"(%head.b, %head.b.grad_unscaled, %lr, %found_inf, %head.b.adam_m, %head.b.adam_v, %optimizer.step) {weight_decay = 1.000000e-02 : f64}

// EXCLUDE: graph.lamb "enc.w.lamb"({{.*}}) {epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
// EXCLUDE-NEXT: graph.lamb "head.w.lamb"({{.*}}) {epsilon = 1.000000e-08 : f64, weight_decay = 1.000000e-01 : f64}
// EXCLUDE-NEXT: graph.lamb "head.b.lamb"({{.*}}) {adapt = false, epsilon = 1.000000e-08 : f64}

// O2: graph.lamb "enc.w.lamb"(%enc.w.master, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.adam_m, %enc.w.adam_v, %optimizer.step)
// O2-NEXT: graph.assign "enc.w.from_master"(%enc.w, %enc.w.master)

// COPIES: %enc.w.f16 = graph.param "enc.w.f16" {copy_of = "enc.w", trainable = false}
// COPIES: %found_inf = graph.check_finite "check_finite"
// COPIES: graph.lamb "enc.w.lamb"(%enc.w, %h.grad, %lr, %found_inf, %enc.w.adam_m, %enc.w.adam_v, %optimizer.step, %loss_scale)
// COPIES-NEXT: graph.assign "enc.w.f16.refresh"(%enc.w.f16, %enc.w)

// LION-NOT: optimizer.step
// LION: graph.lion "enc.w.lion"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.lion_m) {weight_decay = 1.000000e-01 : f64}
// LION-NEXT: graph.lion "head.w.lion"(%head.w, %head.w.grad_unscaled, %lr, %found_inf, %head.w.lion_m) {weight_decay = 1.000000e-01 : f64}
// LION-NEXT: graph.lion "head.b.lion"(%head.b, %head.b.grad_unscaled, %lr, %found_inf, %head.b.lion_m) :

// BETAS: graph.lion "enc.w.lion"({{.*}}) {beta1 = 5.000000e-01 : f64, beta2 = 7.500000e-01 : f64}

// KIND: error: optimizer must be sgd, momentum, adam, adamw, lamb, lion, rmsprop or adagrad, got 'lars'
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
