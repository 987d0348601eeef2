// graph-optimizer's lr-scales (passes/OptimizerPass.cpp): the params a
// pattern matches, the first pattern that does, read the step's rate through
// one `scale` by its factor (in the apply phase with accumulation); the
// others read the rate itself.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none accumulate=2},graph-optimizer{lr-scales=enc=0.1,*.b=3,head=2}))' | FileCheck %s
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{lr-scales=head.w=0.5}))' | FileCheck %s --check-prefix=ONE
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{lr-scales=enc}))' 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{lr-scales=enc=0}))' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer{lr-scales=haed=2}))' 2>&1 | FileCheck %s --check-prefix=NONE

// CHECK: %lr_scale = graph.scale "lr_scale"(%lr) {phase = "apply", scale = 1.000000e-01 : f64}
// CHECK-NEXT: graph.sgd "enc.w.sgd"(%enc.w, %enc.w.grad_unscaled, %lr_scale, %found_inf)
// CHECK-NEXT: %lr_scale_1 = graph.scale "lr_scale_1"(%lr) {phase = "apply", scale = 2.000000e+00 : f64}
// CHECK-NEXT: graph.sgd "head.w.sgd"(%head.w, %head.w.grad_unscaled, %lr_scale_1, %found_inf)
// CHECK-NEXT: %lr_scale_2 = graph.scale "lr_scale_2"(%lr) {phase = "apply", scale = 3.000000e+00 : f64}
// CHECK-NEXT: graph.sgd "head.b.sgd"(%head.b, %head.b.grad_unscaled, %lr_scale_2, %found_inf)

// ONE: graph.sgd "enc.w.sgd"(%enc.w, %enc.w.grad_unscaled, %lr, %found_inf)
// ONE-NEXT: %lr_scale = graph.scale "lr_scale"(%lr) {scale = 5.000000e-01 : f64}
// ONE-NEXT: graph.sgd "head.w.sgd"(%head.w, %head.w.grad_unscaled, %lr_scale, %found_inf)
// ONE-NEXT: graph.sgd "head.b.sgd"(%head.b, %head.b.grad_unscaled, %lr, %found_inf)
// ONE-NOT: graph.scale

// FORM: lr scale: 'enc' is not PATTERN=FACTOR with a factor above 0 (--freeze takes params out of training)
// ZERO: lr scale: 'enc=0' is not PATTERN=FACTOR
// NONE: lr scale: 'haed' matches no param; did you mean 'head'?
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
