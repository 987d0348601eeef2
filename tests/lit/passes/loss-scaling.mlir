// graph-loss-scaling and graph-optimizer: the scale state seeds the backward,
// one fused finite check, Paddle's update, updates gated on found_inf, f32
// masters at O2, and accumulation phases.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O1},graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer{optimizer=momentum}))' | FileCheck %s --check-prefix=O1
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O2},graph-fold-casts,graph-autodiff,graph-loss-scaling{mode=static init-loss-scaling=1024},graph-optimizer{optimizer=adamw}))' | FileCheck %s --check-prefix=O2
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none accumulate=4},graph-optimizer))' | FileCheck %s --check-prefix=ACC
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-loss-scaling))' 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=sometimes}))' 2>&1 | FileCheck %s --check-prefix=MODE

graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w = graph.param "w" {init = {kind = "xavier_uniform"}} : tensor<8x8xf32>
  %mm = graph.matmul "mm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = graph.softmax_cross_entropy "loss"(%mm, %labels) : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// O1: %lr = graph.input "lr" : tensor<f32>
// O1: %loss_scale = graph.param "loss_scale" {init = {kind = "constant", value = 6.553600e+04 : f64}, trainable = false} : tensor<f32>
// O1: %loss_scale.good = graph.param "loss_scale.good" {init = {kind = "zeros"}, trainable = false}
// O1: %loss_scale.bad = graph.param "loss_scale.bad"
// O1: %w.velocity = graph.param "w.velocity" {init = {kind = "zeros"}, trainable = false} : tensor<8x8xf32>
// O1: graph.softmax_cross_entropy_backward "loss.grad"(%mm, %labels, %loss_scale) : (tensor<4x8xf16>
// The f16 gradient goes into the finite check, which unscales it to f32.
// O1: %w.grad_unscaled, %found_inf = graph.check_finite_and_unscale "check_finite"(%mm.grad, %loss_scale) {outs = ["w.grad_unscaled", "found_inf"]} : (tensor<8x8xf16>, tensor<f32>) -> (tensor<8x8xf32>, tensor<i1>)
// O1: graph.update_loss_scaling "update_loss_scaling"(%found_inf, %loss_scale, %loss_scale.good, %loss_scale.bad) : (tensor<i1>, tensor<f32>, tensor<f32>, tensor<f32>) -> ()
// O1: graph.momentum "w.momentum"(%w, %w.grad_unscaled, %lr, %found_inf, %w.velocity) : (tensor<8x8xf32>
// O1: graph.return %loss, %found_inf : tensor<f32>, tensor<i1>

// O2: %w = graph.param "w" {init = {kind = "xavier_uniform"}, master_dtype = f32} : tensor<8x8xf16>
// O2: %optimizer.step = graph.param "optimizer.step"
// O2: %w.master = graph.param "w.master" {init = {kind = "xavier_uniform"}, trainable = false} : tensor<8x8xf32>
// O2: graph.update_loss_scaling "update_loss_scaling"({{.*}}) {dynamic = false}
// O2: graph.count_step "optimizer.count_step"(%optimizer.step, %found_inf)
// O2: graph.adam "w.adam"(%w.master, %w.grad_unscaled, %lr, %found_inf, %w.adam_m, %w.adam_v, %optimizer.step) {weight_decay = 1.000000e-02 : f64}
// O2: graph.assign "w.from_master"(%w, %w.master) : (tensor<8x8xf16>, tensor<8x8xf32>) -> ()

// ACC: %w.grad_acc = graph.param "w.grad_acc" {init = {kind = "zeros"}, trainable = false}
// ACC-NOT: loss_scale
// ACC: graph.accumulate "w.accumulate"(%w.grad_acc, %w.grad)
// ACC-NOT: phase
// ACC: graph.check_finite_and_unscale "check_finite"(%w.grad_acc, %loss.grad_seed) {outs = ["w.grad_unscaled", "found_inf"], phase = "apply"}
// ACC: graph.fill "w.grad_acc.zeros"() {phase = "apply"
// ACC: graph.assign "w.grad_acc.reset"(%w.grad_acc, %w.grad_acc.zeros) {phase = "apply"}
// ACC: graph.sgd "w.sgd"(%w, %w.grad_unscaled, %lr, %found_inf) {phase = "apply"}

// ORDER: error: loss scaling needs the backward: run graph-autodiff first
// MODE: error: loss scaling must be dynamic, static or none, got 'sometimes'
