// graph-fuse-weight-casts: the O1 casts of f32 weights become reads of one
// f16 copy per weight (`copy_of`), refreshed by an assign right after the
// weight's update; a frozen weight's copy has no refresh (nothing writes
// it); the input and the params written otherwise (batch-norm statistics,
// gradient accumulators) keep their casts or have none.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer{optimizer=momentum},graph-fold-unscale,graph-fold-casts,graph-fuse-weight-casts))' | FileCheck %s
// Accumulated gradients: the refresh runs in the update's apply phase.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling{accumulate=2},graph-optimizer,graph-fold-unscale,graph-fold-casts,graph-fuse-weight-casts))' | FileCheck %s --check-prefix=ACC
// The weight average reads a param and writes its own state: the copies stay.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer,graph-ema{decay=0.9},graph-fold-unscale,graph-fold-casts,graph-fuse-weight-casts))' | FileCheck %s --check-prefix=EMA
// Twice is once.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-autodiff,graph-loss-scaling,graph-optimizer,graph-fold-unscale,graph-fold-casts,graph-fuse-weight-casts,graph-fuse-weight-casts))' | FileCheck %s --check-prefix=TWICE
// Nothing to do without updates (a forward graph).
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts,graph-fuse-weight-casts))' | FileCheck %s --check-prefix=FWD

// CHECK-LABEL: graph.graph @net
// CHECK: %w = graph.param "w"
// CHECK-NEXT: %w.f16 = graph.param "w.f16" {copy_of = "w", trainable = false} : tensor<8x8xf16>
// CHECK: %b = graph.param "b"
// CHECK-NEXT: %b.f16 = graph.param "b.f16" {copy_of = "b", trainable = false} : tensor<8xf16>
// CHECK: %frozen.f16 = graph.param "frozen.f16" {copy_of = "frozen", trainable = false} : tensor<8x8xf16>
// CHECK: %x.cast_f16 = graph.cast "x.cast_f16"(%x)
// CHECK-NOT: graph.cast "w.cast_f16"
// CHECK-NOT: graph.cast "b.cast_f16"
// CHECK: graph.matmul "mm"(%x.cast_f16, %w.f16)
// CHECK: graph.add "y"(%mm, %b.f16)
// CHECK-NOT: graph.cast
// CHECK: graph.matmul "z"(%y, %frozen.f16)
// CHECK: graph.matmul "z.grad"(%loss.grad, %frozen.f16)
// The input's cast stays alive for the weight gradient.
// CHECK: graph.matmul "mm.grad"(%x.cast_f16, %z.grad)
// CHECK-NOT: graph.cast
// CHECK: graph.momentum "w.momentum"(%w,
// CHECK-NEXT: graph.assign "w.f16.refresh"(%w.f16, %w) : (tensor<8x8xf16>, tensor<8x8xf32>) -> ()
// CHECK-NEXT: graph.momentum "b.momentum"(%b,
// CHECK-NEXT: graph.assign "b.f16.refresh"(%b.f16, %b)
// CHECK-NOT: refresh

// ACC-LABEL: graph.graph @net
// ACC: graph.sgd "w.sgd"(%w, {{.*}} {phase = "apply"}
// ACC-NEXT: graph.assign "w.f16.refresh"(%w.f16, %w) {phase = "apply"}

// EMA: %w.f16 = graph.param "w.f16" {copy_of = "w", trainable = false}
// EMA: graph.sgd "w.sgd"(%w,
// EMA-NEXT: graph.assign "w.f16.refresh"(%w.f16, %w)
// EMA: graph.ema "w.ema_update"(%w.ema, %w, %found_inf)

// TWICE-COUNT-3: graph.param "{{w|b|frozen}}.f16"
// TWICE-NOT: graph.param "{{.*}}.f16.f16"
// TWICE-COUNT-2: .refresh"
// TWICE-NOT: .refresh"

// FWD-LABEL: graph.graph @net
// FWD: %w.f16 = graph.param "w.f16" {copy_of = "w", trainable = false}
// FWD: graph.cast "x.cast_f16"(%x)
// FWD-NOT: graph.cast
// FWD-NOT: graph.assign
graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w = graph.param "w" {init = {kind = "xavier_uniform"}} : tensor<8x8xf32>
  %b = graph.param "b" {init = {kind = "zeros"}} : tensor<8xf32>
  %frozen = graph.param "frozen" {init = {kind = "ones"}, trainable = false} : tensor<8x8xf32>
  %mm = graph.matmul "mm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = graph.add "y"(%mm, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = graph.matmul "z"(%y, %frozen) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = graph.softmax_cross_entropy "loss"(%z, %labels) : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
