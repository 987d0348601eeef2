// graph-lora (passes/LoraPass.cpp): adapters on the linear layers the
// targets name, a transposed ([out, in]) weight's too; the sum takes the
// layer's value name (the graph's output `y` stays `y`); the rest frozen.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{rank=2 alpha=4 targets=all dropout=0.1}))' | FileCheck %s
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{targets=enc}))' | FileCheck %s --check-prefix=ENC
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{targets=enc also-train=head}))' | FileCheck %s --check-prefix=ALSO
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{targets=enc also-train=haed}))' 2>&1 | FileCheck %s --check-prefix=ALSO-TYPO
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{targets=enc.bias}))' 2>&1 | FileCheck %s --check-prefix=NOT-LINEAR
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{rank=0 targets=all}))' 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora))' 2>&1 | FileCheck %s --check-prefix=NO-TARGETS
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-lora{targets=all}))' | not ampc-opt --pass-pipeline='builtin.module(graph.graph(graph-lora{targets=all}))' 2>&1 | FileCheck %s --check-prefix=TWICE

// CHECK: graph.param "enc.weight" {trainable = false}
// CHECK: graph.param "enc.bias" {trainable = false}
// CHECK: graph.param "head.w" {trainable = false}
// CHECK: %enc.lora_a = graph.param "enc.lora_a" {init = {high = 0.35355339059327373 : f64, kind = "uniform", low = -0.35355339059327373 : f64}} : tensor<8x2xf32>
// CHECK: %enc.lora_b = graph.param "enc.lora_b" {init = {kind = "zeros"}} : tensor<2x6xf32>
// CHECK: %head.lora_a = graph.param "head.lora_a" {{.*}} : tensor<6x2xf32>
// CHECK: %head.lora_b = graph.param "head.lora_b" {{.*}} : tensor<2x3xf32>
// CHECK: %h.base = graph.matmul "h"(%x, %t) {outs = ["h.base"]}
// CHECK-NEXT: %enc.lora_dropout = graph.dropout "enc.lora_dropout"(%x) {rate = 1.000000e-01 : f64, seed = 1617070571 : i64}
// CHECK-NEXT: %enc.lora_down = graph.matmul "enc.lora_down"(%enc.lora_dropout, %enc.lora_a)
// CHECK-NEXT: %enc.lora_up = graph.matmul "enc.lora_up"(%enc.lora_down, %enc.lora_b)
// CHECK-NEXT: %enc.lora_scale = graph.scale "enc.lora_scale"(%enc.lora_up) {scale = 2.000000e+00 : f64}
// CHECK-NEXT: %h = graph.add "enc.lora_add"(%h.base, %enc.lora_scale) {outs = ["h"]}
// CHECK-NEXT: graph.add "hb"(%h, %enc.bias)
// CHECK: %y = graph.add "head.lora_add"(%y.base, %head.lora_scale) {outs = ["y"]}
// CHECK: graph.return %loss, %y

// The default rank 8 and alpha 8 (a scale of 1); no dropout; one layer.
// ENC: graph.param "enc.lora_a" {{.*}} : tensor<8x8xf32>
// ENC: graph.scale "enc.lora_scale"(%enc.lora_up) : (tensor<2x4x6xf32>)
// ENC-NOT: head.lora
// ENC-NOT: graph.dropout

// also-train keeps the head trained beside the adapters.
// ALSO: graph.param "enc.weight" {trainable = false}
// ALSO: graph.param "head.w" :
// ALSO-NOT: head.lora_a
// ALSO-TYPO: lora also-train: 'haed' matches no param; did you mean 'head'?

// NOT-LINEAR: lora targets: 'enc.bias' matches no linear layer; the layers are enc, head
// RANK: lora: the rank must be 1 or more, got 0
// NO-TARGETS: lora: give the target layers (patterns, or all); the layers are enc, head
// TWICE: lora: layer 'enc' has adapters already
graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<2x4x8xf32>
  %w0 = graph.param "enc.weight" : tensor<6x8xf32>
  %b0 = graph.param "enc.bias" : tensor<6xf32>
  %w1 = graph.param "head.w" : tensor<6x3xf32>
  %t = graph.transpose "t"(%w0) {perm = array<i64: 1, 0>} : (tensor<6x8xf32>) -> tensor<8x6xf32>
  %h = graph.matmul "h"(%x, %t) : (tensor<2x4x8xf32>, tensor<8x6xf32>) -> tensor<2x4x6xf32>
  %hb = graph.add "hb"(%h, %b0) : (tensor<2x4x6xf32>, tensor<6xf32>) -> tensor<2x4x6xf32>
  %g = graph.tanh "g"(%hb) : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %y = graph.matmul "y"(%g, %w1) : (tensor<2x4x6xf32>, tensor<6x3xf32>) -> tensor<2x4x3xf32>
  %loss = graph.reduce_sum "loss"(%y) : (tensor<2x4x3xf32>) -> tensor<f32>
  graph.return %loss, %y : tensor<f32>, tensor<2x4x3xf32>
}
