// AMP options: custom black varnames, custom lists, levels and dtypes.
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-black-varnames=x},graph-fold-casts))' | FileCheck %s --check-prefix=VAR-INPUT
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-black-varnames=mm1},graph-fold-casts))' | FileCheck %s --check-prefix=VAR-OUTPUT
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-black-varnames=w2},graph-fold-casts))' | FileCheck %s --check-prefix=VAR-PARAM
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-black-list=matmul custom-white-list=exp},graph-fold-casts))' | FileCheck %s --check-prefix=LISTS
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-gray-list=exp},graph-fold-casts))' | FileCheck %s --check-prefix=GRAY
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O0},graph-fold-casts))' | FileCheck %s --check-prefix=O0
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{dtype=bf16},graph-fold-casts))' | FileCheck %s --check-prefix=BF16
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O2},graph-fold-casts))' | FileCheck %s --check-prefix=O2
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O2},graph-fold-casts))' | ampc-opt --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O2},graph-fold-casts))' | FileCheck %s --check-prefix=O2
// RUN: ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O3},graph-fold-casts))' 2>&1 | FileCheck %s --check-prefix=O3

graph.graph @net attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %t = graph.input "t" : tensor<4x8xf32>
  %w1 = graph.param "w1" : tensor<8x8xf32>
  %w2 = graph.param "w2" : tensor<8x8xf32>
  %scale = graph.param "scale" : tensor<8xf32>
  %mm1 = graph.matmul "mm1"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = graph.relu "r"(%mm1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm2 = graph.matmul "mm2"(%r, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %e = graph.exp "e"(%mm2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %bn = graph.batch_norm "bn"(%e, %scale, %scale, %scale, %scale) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %loss = graph.mse_loss "loss"(%bn, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  graph.return %loss : tensor<f32>
}

// A varname on an input: its consumers stay f32.
// VAR-INPUT: %mm1 = graph.matmul "mm1"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// VAR-INPUT: %r = graph.relu "r"(%mm1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// VAR-INPUT: %mm2 = graph.matmul "mm2"({{.*}}) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>

// A varname on a node output: its producer and its consumers stay f32.
// VAR-OUTPUT: %mm1 = graph.matmul "mm1"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// VAR-OUTPUT: %r = graph.relu "r"(%mm1) : (tensor<4x8xf32>) -> tensor<4x8xf32>

// A varname on a param: the matmul reading it stays f32, the other does not.
// VAR-PARAM: %mm1 = graph.matmul "mm1"({{.*}}) -> tensor<4x8xf16>
// VAR-PARAM: %r = graph.relu "r"(%mm1) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// VAR-PARAM: %mm2 = graph.matmul "mm2"(%r.cast_f32, %w2) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>

// Custom lists move ops between lists: matmul to black, exp to white.
// LISTS: %mm1 = graph.matmul "mm1"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// LISTS: %r = graph.relu "r"(%mm1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// LISTS: %e = graph.exp "e"(%mm2.cast_f16) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// LISTS: %bn = graph.batch_norm "bn"(%e, %scale, %scale, %scale, %scale) : (tensor<4x8xf16>, tensor<8xf32>

// exp on the gray list follows its L producer.
// GRAY: %e = graph.exp "e"(%mm2) : (tensor<4x8xf16>) -> tensor<4x8xf16>

// O0 changes nothing.
// O0-NOT: graph.cast
// O0: %mm1 = graph.matmul "mm1"(%x, %w1) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>

// bf16 is the low-precision dtype.
// BF16: %x.cast_bf16 = graph.cast "x.cast_bf16"(%x) {to = bf16}
// BF16: %mm1 = graph.matmul "mm1"({{.*}}) : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// BF16: %mm2.cast_f32 = graph.cast "mm2.cast_f32"(%mm2) {to = f32} : (tensor<4x8xbf16>) -> tensor<4x8xf32>

// At O2, every node not black by rule 1 computes in L (batch norm too, with f32
// parameters), params that feed L nodes are stored in L with an f32 master,
// and params that only feed f32 slots stay f32. Running it twice is the same.
// O2: %w1 = graph.param "w1" {master_dtype = f32} : tensor<8x8xf16>
// O2: %w2 = graph.param "w2" {master_dtype = f32} : tensor<8x8xf16>
// O2: %scale = graph.param "scale" : tensor<8xf32>
// O2-NOT: graph.cast "w1
// O2: %mm1 = graph.matmul "mm1"(%x.cast_f16, %w1) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// O2: %e = graph.exp "e"(%mm2.cast_f32) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// O2: %e.cast_f16 = graph.cast "e.cast_f16"(%e) {to = f16}
// O2: %bn = graph.batch_norm "bn"(%e.cast_f16, %scale, %scale, %scale, %scale) : (tensor<4x8xf16>, tensor<8xf32>
// O2: %loss = graph.mse_loss "loss"(%bn.cast_f32, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>

// At O3, everything but the loss is in L, with a warning.
// O3: warning: O3 computes every node but the loss in f16; it is meant for inference experiments
// O3: %e = graph.exp "e"(%mm2) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// O3: %loss = graph.mse_loss "loss"(%bn.cast_f32, %t) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
