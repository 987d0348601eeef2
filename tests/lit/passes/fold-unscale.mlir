// graph-fold-unscale: the optimizer updates read the scaled gradients and the
// scale, the check writes nothing but found_inf, and in-place writers of what
// the updates now read move after them.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer{optimizer=adam},graph-fold-unscale,graph-fold-casts))' | FileCheck %s --check-prefix=DYN
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none accumulate=2},graph-optimizer,graph-fold-unscale))' | FileCheck %s --check-prefix=ACC

// DYN-LABEL: graph.graph @net
// DYN-NOT: check_finite_and_unscale
// DYN: %found_inf = graph.check_finite "check_finite"(%mm.grad, %y.grad) {outs = ["found_inf"]} : (tensor<8x8xf16>, tensor<8xf16>) -> tensor<i1>
// DYN: graph.count_step "optimizer.count_step"(%optimizer.step, %found_inf)
// DYN: graph.adam "w.adam"(%w, %mm.grad, %lr, %found_inf, %w.adam_m, %w.adam_v, %optimizer.step, %loss_scale) {decoupled = false} : (tensor<8x8xf32>, tensor<8x8xf16>,
// DYN: graph.adam "b.adam"(%b, %y.grad, %lr, %found_inf, %b.adam_m, %b.adam_v, %optimizer.step, %loss_scale) {decoupled = false} : (tensor<8xf32>, tensor<8xf16>,
// S changes after the updates have read it.
// DYN-NEXT: graph.update_loss_scaling "update_loss_scaling"(%found_inf, %loss_scale,
// DYN-NEXT: graph.return %loss, %found_inf

// Mode none (S is the constant 1): no grad_scale. The accumulators are reset
// after the updates that read them.
// ACC-LABEL: graph.graph @net
// ACC: %found_inf = graph.check_finite "check_finite"(%w.grad_acc, %b.grad_acc) {outs = ["found_inf"], phase = "apply"}
// ACC: graph.sgd "w.sgd"(%w, %w.grad_acc, %lr, %found_inf) {phase = "apply"} :
// ACC-NEXT: graph.sgd "b.sgd"(%b, %b.grad_acc, %lr, %found_inf) {phase = "apply"} :
// ACC-NEXT: graph.assign "w.grad_acc.reset"(%w.grad_acc, %w.grad_acc.zeros) {phase = "apply"}
// ACC-NEXT: graph.assign "b.grad_acc.reset"(%b.grad_acc, %b.grad_acc.zeros) {phase = "apply"}
// ACC-NEXT: graph.return
graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w = graph.param "w" {init = {kind = "xavier_uniform"}} : tensor<8x8xf32>
  %b = graph.param "b" {init = {kind = "zeros"}} : tensor<8xf32>
  %mm = graph.matmul "mm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = graph.add "y"(%mm, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %loss = graph.softmax_cross_entropy "loss"(%y, %labels) : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
