// The O1 rules of the AMP pass, one graph per rule.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts))' | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts))' > %t.once
// RUN: ampc-opt %t.once -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-amp,graph-fold-casts))' > %t.twice
// RUN: diff %t.once %t.twice

// Rule 2: a white op computes in f16; its float inputs get one cast each, and
// the graph output keeps its name and f32 dtype through a cast.
// CHECK-LABEL: graph.graph @white
// CHECK: %x.cast_f16 = graph.cast "x.cast_f16"(%x) {to = f16}
// CHECK: %w.cast_f16 = graph.cast "w.cast_f16"(%w) {to = f16}
// CHECK: %y.f16 = graph.matmul "y"(%x.cast_f16, %w.cast_f16) {outs = ["y.f16"]} : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK: %y = graph.cast "y.cast_f32"(%y.f16) {outs = ["y"], to = f32} : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK: graph.return %y : tensor<4x8xf32>
graph.graph @white {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %y = graph.matmul "y"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  graph.return %y : tensor<4x8xf32>
}

// -----

// Rule 3: black taints gray consumers; black wins over low in a gray node.
// CHECK-LABEL: graph.graph @black_taint
// CHECK: %e = graph.exp "e"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %r = graph.relu "r"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %mm = graph.matmul "mm"({{.*}}) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK: %mm.cast_f32 = graph.cast "mm.cast_f32"(%mm) {to = f32}
// CHECK: %s = graph.add "s"(%r, %mm.cast_f32) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %t = graph.tanh "t"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
graph.graph @black_taint {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %e = graph.exp "e"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = graph.relu "r"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = graph.matmul "mm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = graph.add "s"(%r, %mm) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.tanh "t"(%s) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  graph.return %t : tensor<4x8xf32>
}

// -----

// Rule 3: a gray node fed by an L node is L; one fed only by inputs and
// params is F32-NEUTRAL.
// CHECK-LABEL: graph.graph @gray_follows
// CHECK: %b.cast_f16 = graph.cast "b.cast_f16"(%b) {to = f16}
// CHECK: %plus = graph.add "plus"(%mm, %b.cast_f16) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK: %act = graph.relu "act"(%plus) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK: %neutral = graph.sigmoid "neutral"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
graph.graph @gray_follows {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %b = graph.param "b" : tensor<8xf32>
  %mm = graph.matmul "mm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %plus = graph.add "plus"(%mm, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %act = graph.relu "act"(%plus) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %neutral = graph.sigmoid "neutral"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_sum "l"(%act) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %l, %neutral : tensor<f32>, tensor<4x8xf32>
}

// -----

// A white op feeding black and white consumers: the white consumer reads f16
// directly, the black one through one shared f32 cast.
// CHECK-LABEL: graph.graph @white_to_black_and_white
// CHECK: %mm1 = graph.matmul "mm1"{{.*}} -> tensor<4x8xf16>
// CHECK: %mm1.cast_f32 = graph.cast "mm1.cast_f32"(%mm1) {to = f32}
// CHECK: %mm2.f16 = graph.matmul "mm2"(%mm1, %w.cast_f16)
// CHECK: %e1 = graph.exp "e1"(%mm1.cast_f32)
// CHECK: %e2 = graph.log "e2"(%mm1.cast_f32)
// CHECK-NOT: graph.cast "mm1.cast_f32_1"
graph.graph @white_to_black_and_white {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %mm1 = graph.matmul "mm1"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mm2 = graph.matmul "mm2"(%mm1, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e1 = graph.exp "e1"(%mm1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = graph.log "e2"(%mm1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  graph.return %mm2, %e1, %e2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Rule 4: precision-agnostic ops between an f32 value and L consumers take
// the cast upstream: one cast of x serves the reshape and the transpose.
// CHECK-LABEL: graph.graph @agnostic_upstream
// CHECK: %x.cast_f16 = graph.cast "x.cast_f16"(%x) {to = f16} : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CHECK: %flat = graph.reshape "flat"(%x.cast_f16) {shape = array<i64: 8, 8>} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: %tr = graph.transpose "tr"(%x.cast_f16) {perm = array<i64: 1, 0>} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CHECK: graph.matmul "mm1"(%flat, %w.cast_f16)
// CHECK: graph.matmul "mm2"(%tr, %w.cast_f16)
// CHECK-NOT: graph.cast "flat.cast_f16"
// CHECK-NOT: graph.cast "tr.cast_f16"
graph.graph @agnostic_upstream {
  %x = graph.input "x" : tensor<8x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %flat = graph.reshape "flat"(%x) {shape = array<i64: 8, 8>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %tr = graph.transpose "tr"(%x) {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm1 = graph.matmul "mm1"(%flat, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm2 = graph.matmul "mm2"(%tr, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = graph.add "s"(%mm1, %mm2) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %l = graph.reduce_mean "l"(%s) : (tensor<8x8xf32>) -> tensor<f32>
  graph.return %l : tensor<f32>
}

// -----

// Rule 4 does not apply when a consumer stays f32, or when the agnostic node
// writes a graph output.
// CHECK-LABEL: graph.graph @agnostic_stays
// CHECK: %mixed = graph.reshape "mixed"(%x) {{.*}} -> tensor<8x8xf32>
// CHECK: %out = graph.transpose "out"(%x) {{.*}} -> tensor<8x8xf32>
graph.graph @agnostic_stays {
  %x = graph.input "x" : tensor<8x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %mixed = graph.reshape "mixed"(%x) {shape = array<i64: 8, 8>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = graph.matmul "mm"(%mixed, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = graph.exp "e"(%mixed) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %out = graph.transpose "out"(%x) {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm2 = graph.matmul "mm2"(%out, %w) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  graph.return %mm, %e, %out, %mm2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A concat moves upstream where its inputs are views of one value (a 3-D
// convolution's depth taps): x is cast once, and the slices and the concat
// move f16. Concatenating two values keeps one cast after the concat.
// CHECK-LABEL: graph.graph @agnostic_concat_one_value
// CHECK: %x.cast_f16 = graph.cast "x.cast_f16"(%x) {to = f16}
// CHECK: graph.slice "t0"(%x.cast_f16) {{.*}} -> tensor<4x8xf16>
// CHECK: graph.slice "t1"(%x.cast_f16) {{.*}} -> tensor<4x8xf16>
// CHECK: %taps = graph.concat "taps"(%t0, %t1) {{.*}} -> tensor<4x16xf16>
// CHECK: graph.matmul "mm"(%taps, %w.cast_f16)
// CHECK-NOT: "taps.cast_f16"
graph.graph @agnostic_concat_one_value {
  %x = graph.input "x" : tensor<5x8xf32>
  %w = graph.param "w" : tensor<16x8xf32>
  %t0 = graph.slice "t0"(%x) {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: 4>} : (tensor<5x8xf32>) -> tensor<4x8xf32>
  %t1 = graph.slice "t1"(%x) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: 5>} : (tensor<5x8xf32>) -> tensor<4x8xf32>
  %taps = graph.concat "taps"(%t0, %t1) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %mm = graph.matmul "mm"(%taps, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_mean "l"(%mm) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %l : tensor<f32>
}

// -----

// CHECK-LABEL: graph.graph @agnostic_concat_two_values
// CHECK: %both = graph.concat "both"(%x, %y) {{.*}} -> tensor<4x16xf32>
// CHECK: %both.cast_f16 = graph.cast "both.cast_f16"(%both) {to = f16}
// CHECK-NOT: "x.cast_f16"
// CHECK-NOT: "y.cast_f16"
graph.graph @agnostic_concat_two_values {
  %x = graph.input "x" : tensor<4x8xf32>
  %y = graph.input "y" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<16x8xf32>
  %both = graph.concat "both"(%x, %y) {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %mm = graph.matmul "mm"(%both, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_mean "l"(%mm) : (tensor<4x8xf32>) -> tensor<f32>
  graph.return %l : tensor<f32>
}

// -----

// Existing casts are kept: a cast to f16 counts as L for its consumers; a
// cast to f32 counts as F32-NEUTRAL.
// CHECK-LABEL: graph.graph @existing_casts
// CHECK: %to16 = graph.cast "to16"(%x) {to = f16}
// CHECK: %r16 = graph.relu "r16"(%to16) : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: %to32 = graph.cast "to32"(%h) {to = f32}
// CHECK: %r32 = graph.relu "r32"(%to32) : (tensor<4xf32>) -> tensor<4xf32>
graph.graph @existing_casts {
  %x = graph.input "x" : tensor<4xf32>
  %h = graph.input "h" : tensor<4xf16>
  %to16 = graph.cast "to16"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %r16 = graph.relu "r16"(%to16) : (tensor<4xf16>) -> tensor<4xf16>
  %to32 = graph.cast "to32"(%h) {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %r32 = graph.relu "r32"(%to32) : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %r16, %r32 : tensor<4xf16>, tensor<4xf32>
}

// -----

// Integer values are never cast: ids and labels keep their dtype. The loss
// reads the f16 logits as they are: it widens them exactly itself (no f32
// copy), and its result is f32.
// CHECK-LABEL: graph.graph @integers
// CHECK-NOT: graph.cast "ids
// CHECK-NOT: graph.cast "labels
// CHECK: %emb = graph.embedding "emb"(%ids, %table) : (tensor<4xi64>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT: logits.cast_f32
// CHECK: %xent = graph.softmax_cross_entropy "xent"(%logits, %labels) : (tensor<4x8xf16>, tensor<4xi64>) -> tensor<f32>
graph.graph @integers attributes {loss = "xent"} {
  %ids = graph.input "ids" : tensor<4xi64>
  %labels = graph.input "labels" : tensor<4xi64>
  %table = graph.param "table" : tensor<16x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %emb = graph.embedding "emb"(%ids, %table) : (tensor<4xi64>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %logits = graph.matmul "logits"(%emb, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %xent = graph.softmax_cross_entropy "xent"(%logits, %labels) : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %xent : tensor<f32>
}

// -----

// Batch norm computes in L while its scale, bias and statistics stay f32.
// CHECK-LABEL: graph.graph @batch_norm
// CHECK-NOT: graph.cast "scale
// CHECK: %bn = graph.batch_norm "bn"(%conv, %scale, %scale, %scale, %scale) : (tensor<2x4x4x8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x4x8xf16>
graph.graph @batch_norm {
  %x = graph.input "x" : tensor<2x4x4x8xf32>
  %f = graph.param "f" : tensor<8x1x1x8xf32>
  %scale = graph.param "scale" : tensor<8xf32>
  %conv = graph.conv2d "conv"(%x, %f) : (tensor<2x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<2x4x4x8xf32>
  %bn = graph.batch_norm "bn"(%conv, %scale, %scale, %scale, %scale) : (tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x4x8xf32>
  %l = graph.reduce_mean "l"(%bn) : (tensor<2x4x4x8xf32>) -> tensor<f32>
  graph.return %l : tensor<f32>
}

// -----

// The node that produces the loss stays f32 even when a custom list would
// move it to L.
// CHECK-LABEL: graph.graph @loss_stays_f32
// CHECK: %loss = graph.mse_loss "loss"(%p.cast_f32, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
graph.graph @loss_stays_f32 attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x8xf32>
  %w = graph.param "w" : tensor<8x8xf32>
  %p = graph.matmul "p"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = graph.mse_loss "loss"(%p, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}
