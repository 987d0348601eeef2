// graph-fold-unscale leaves a check whose unscaled gradients are read by
// something other than an optimizer update.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-fold-unscale))' | FileCheck %s

// CHECK-LABEL: graph.graph @observed
// CHECK: %g.unscaled, %found_inf = graph.check_finite_and_unscale "check"(%g, %s)
// CHECK: graph.sgd "w.sgd"(%w, %g.unscaled, %lr, %found_inf) :
// CHECK: graph.return %g.unscaled
graph.graph @observed {
  %lr = graph.input "lr" : tensor<f32>
  %g = graph.input "g" : tensor<8xf16>
  %w = graph.param "w" : tensor<8xf32>
  %s = graph.param "s" {trainable = false} : tensor<f32>
  %g.unscaled, %found_inf = graph.check_finite_and_unscale "check"(%g, %s) {outs = ["g.unscaled", "found_inf"]} : (tensor<8xf16>, tensor<f32>) -> (tensor<8xf32>, tensor<i1>)
  graph.sgd "w.sgd"(%w, %g.unscaled, %lr, %found_inf) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>) -> ()
  graph.return %g.unscaled : tensor<8xf32>
}
