// graph-cross-entropy-options (passes/CrossEntropyOptionsPass.cpp): label
// smoothing, the ignored label and class weights on every
// softmax_cross_entropy, as PyTorch's cross_entropy takes them; autodiff
// copies them onto the gradient. An option left out keeps the graph's.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-cross-entropy-options{label-smoothing=0.1 ignore-index=-100},graph-autodiff))' | FileCheck %s --check-prefix=BOTH
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-cross-entropy-options{ignore-index=0}))' | FileCheck %s --check-prefix=KEEP

// BOTH: graph.softmax_cross_entropy "loss"(%{{.*}}, %labels) {ignore_index = -100 : i64, label_smoothing = 1.000000e-01 : f64}
// BOTH: graph.softmax_cross_entropy_backward "loss.grad"({{.*}}) {ignore_index = -100 : i64, label_smoothing = 1.000000e-01 : f64}
// The smoothing the graph has stays when only the ignored label is set.
// KEEP: graph.softmax_cross_entropy "loss"(%{{.*}}, %labels) {ignore_index = 0 : i64, label_smoothing = 2.000000e-01 : f64}

// Class weights: an f32 const among the graph's values, the loss's third
// operand and its gradient's fourth; given again, the same const takes the
// new values.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-cross-entropy-options{class-weights=1,2,0.5,1,3},graph-autodiff))' | FileCheck %s --check-prefix=WEIGHTS
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-cross-entropy-options{class-weights=9,9,9,9,9},graph-cross-entropy-options{class-weights=1,2,0.5,1,3}))' | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: %w = graph.param "w"
// WEIGHTS-NEXT: %loss.class_weights = graph.const "loss.class_weights" {value = dense<[1.000000e+00, 2.000000e+00, 5.000000e-01, 1.000000e+00, 3.000000e+00]> : tensor<5xf32>} : tensor<5xf32>
// WEIGHTS-NOT: graph.const
// WEIGHTS: graph.softmax_cross_entropy "loss"(%logits, %labels, %loss.class_weights) {label_smoothing = 2.000000e-01 : f64}
// WEIGHTS-SAME: (tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32>) -> tensor<f32>
graph.graph @classifier attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w = graph.param "w" {init = {kind = "normal", std = 0.1 : f64}} : tensor<8x5xf32>
  %logits = graph.matmul "logits"(%x, %w) : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %loss = graph.softmax_cross_entropy "loss"(%logits, %labels) {label_smoothing = 0.2 : f64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

