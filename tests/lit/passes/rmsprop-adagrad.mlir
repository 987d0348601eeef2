// graph-optimizer's rmsprop and adagrad (passes/OptimizerPass.cpp), as
// PyTorch's. rmsprop: one state `<P>.rmsprop_v`, alpha 0.99 and epsilon 1e-8
// by default; with momentum a buffer `<P>.rmsprop_buf`, centered an average
// `<P>.rmsprop_avg`, in that order, and graph-fold-unscale's grad_scale after
// them. adagrad: one state `<P>.adagrad_sum` that starts at the initial
// accumulator (zeros by default), epsilon 1e-10. Weight decay is L2.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=rmsprop}))' | FileCheck %s
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=rmsprop momentum=0.9 centered=true alpha=0.9 epsilon=1e-3 weight-decay=0.01 no-decay-1d=true}))' | FileCheck %s --check-prefix=FULL
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer{optimizer=rmsprop momentum=0.5 centered=true},graph-fold-unscale,graph-fold-casts,graph-fuse-weight-casts))' | FileCheck %s --check-prefix=COPIES
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=adagrad}))' | FileCheck %s --check-prefix=ADAGRAD
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=adagrad initial-accumulator=0.1 epsilon=1e-7 weight-decay=0.5}))' | FileCheck %s --check-prefix=KERAS
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=adagrad initial-accumulator=-1}))' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=rmsprop alpha=1}))' 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{optimizer=lars}))' 2>&1 | FileCheck %s --check-prefix=KIND

// CHECK-NOT: optimizer.step
// CHECK: %enc.w.rmsprop_v = graph.param "enc.w.rmsprop_v" {init = {kind = "zeros"}, trainable = false} : tensor<8x8xf32>
// CHECK-NOT: rmsprop_buf
// CHECK-NOT: rmsprop_avg
// CHECK: graph.rmsprop "enc.w.rmsprop"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.rmsprop_v) :
// CHECK-NEXT: graph.rmsprop "head.w.rmsprop"(%head.w, %head.w.grad_unscaled, %lr, %found_inf, %head.w.rmsprop_v)
// CHECK-NEXT: graph.rmsprop "head.b.rmsprop"(%head.b, %head.b.grad_unscaled, %lr, %found_inf, %head.b.rmsprop_v)

// FULL: graph.rmsprop "enc.w.rmsprop"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.rmsprop_v, %enc.w.rmsprop_buf, %enc.w.rmsprop_avg) {alpha = 9.000000e-01 : f64, centered = true, epsilon = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64}
// FULL: graph.rmsprop "head.b.rmsprop"(%head.b, %head.b.grad_unscaled, %lr, %found_inf, %head.b.rmsprop_v, %head.b.rmsprop_buf, %head.b.rmsprop_avg) {alpha = 9.000000e-01 : f64, centered = true, epsilon = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64} :

// COPIES: %found_inf = graph.check_finite "check_finite"
// COPIES: graph.rmsprop "enc.w.rmsprop"(%enc.w, %h.grad, %lr, %found_inf, %enc.w.rmsprop_v, %enc.w.rmsprop_buf, %enc.w.rmsprop_avg, %loss_scale)
// COPIES-NEXT: graph.assign "enc.w.f16.refresh"(%enc.w.f16, %enc.w)

// ADAGRAD: %enc.w.adagrad_sum = graph.param "enc.w.adagrad_sum" {init = {kind = "zeros"}, trainable = false} : tensor<8x8xf32>
// ADAGRAD: graph.adagrad "enc.w.adagrad"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.adagrad_sum) :
// ADAGRAD-NEXT: graph.adagrad "head.w.adagrad"(%head.w, %head.w.grad_unscaled, %lr, %found_inf, %head.w.adagrad_sum) :

// KERAS: %enc.w.adagrad_sum = graph.param "enc.w.adagrad_sum" {init = {kind = "constant", value = 1.000000e-01 : f64}, trainable = false} : tensor<8x8xf32>
// KERAS: graph.adagrad "enc.w.adagrad"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf, %enc.w.adagrad_sum) {epsilon = 9.9999999999999995E-8 : f64, weight_decay = 5.000000e-01 : f64}

// NEGATIVE: error: adagrad's initial accumulator must be 0 or above, got -1
// ALPHA: error: loc("node 'enc.w.rmsprop'"): 'graph.rmsprop' op alpha must be in [0, 1), got 1.000000e+00
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
