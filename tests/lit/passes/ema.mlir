// graph-ema (passes/EmaPass.cpp): per trained param an f32 `<P>.ema` with
// P's init, and after every optimizer update an `ema` of what the update
// wrote (P, or its master at O2), skipped with the step; frozen params are
// not averaged. With warmup, one `ema.step` counter of applied steps comes
// first; with accumulation all of it runs in the apply phase.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-autodiff,graph-loss-scaling{mode=none},graph-optimizer,graph-ema{decay=0.99}))' | FileCheck %s
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O2},graph-autodiff,graph-loss-scaling{accumulate=2},graph-optimizer{optimizer=adam},graph-ema{decay=0.999 warmup=true}))' | FileCheck %s --check-prefix=MASTER

// CHECK: %enc.w.ema = graph.param "enc.w.ema" {init = {kind = "normal", std = 2.000000e-02 : f64}, trainable = false} : tensor<8x8xf32>
// CHECK-NEXT: %head.w.ema = graph.param "head.w.ema" {init = {kind = "zeros"}, trainable = false} : tensor<8x8xf32>
// CHECK-NOT: head.b.ema
// CHECK: graph.sgd "enc.w.sgd"
// CHECK-NEXT: graph.sgd "head.w.sgd"
// CHECK-NEXT: graph.ema "enc.w.ema_update"(%enc.w.ema, %enc.w, %found_inf) {decay = 0.98999999999999999 : f64}
// CHECK-NEXT: graph.ema "head.w.ema_update"(%head.w.ema, %head.w, %found_inf) {decay = 0.98999999999999999 : f64}
// CHECK-NEXT: graph.return

// MASTER: %enc.w = graph.param "enc.w" {{.*}} : tensor<8x8xf16>
// MASTER: %ema.step = graph.param "ema.step" {init = {kind = "zeros"}, trainable = false} : tensor<f32>
// MASTER-NEXT: %enc.w.ema = graph.param "enc.w.ema" {{.*}} : tensor<8x8xf32>
// MASTER: graph.assign "head.w.from_master"
// MASTER-NEXT: graph.count_step "ema.count_step"(%ema.step, %found_inf) {phase = "apply"}
// MASTER-NEXT: graph.ema "enc.w.ema_update"(%enc.w.ema, %enc.w.master, %found_inf, %ema.step) {decay = {{.*}} : f64, phase = "apply"}
// MASTER-NEXT: graph.ema "head.w.ema_update"(%head.w.ema, %head.w.master, %found_inf, %ema.step)

graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w0 = graph.param "enc.w" {init = {kind = "normal", std = 0.02 : f64}} : tensor<8x8xf32>
  %w1 = graph.param "head.w" : tensor<8x8xf32>
  %b1 = graph.param "head.b" {trainable = false} : tensor<8xf32>
  %h = graph.matmul "h"(%x, %w0) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %g = graph.tanh "g"(%h) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.matmul "y"(%g, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %z = graph.add "z"(%y, %b1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %loss = graph.reduce_sum "loss"(%z) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
