// Every op of the graph dialect parses, verifies, prints and parses again.
// RUN: ampc-opt %s | ampc-opt | FileCheck %s
// RUN: ampc-opt %s --mlir-print-op-generic | ampc-opt | FileCheck %s

// CHECK-LABEL: graph.graph @structure attributes {loss = "loss"}
// CHECK: %x = graph.input "x" : tensor<4x8xf32>
// CHECK: %w = graph.param "w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<8x8xf32>
// CHECK: %stat = graph.param "stat" {init = {kind = "zeros"}, trainable = false} : tensor<8xf32>
// CHECK: %eps = graph.const "eps" {value = dense<9.99999974E-6> : tensor<f32>} : tensor<f32>
// CHECK: %y = graph.matmul "y"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: %loss = graph.mse_loss "loss"(%y, %x)
// CHECK: graph.return %y, %loss : tensor<4x8xf32>, tensor<f32>
graph.graph @structure attributes {loss = "loss"} {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "w" {init = {kind = "normal", mean = 0.0 : f64, std = 0.02 : f64}} : tensor<8x8xf32>
  %stat = graph.param "stat" {init = {kind = "zeros"}, trainable = false} : tensor<8xf32>
  %eps = graph.const "eps" {value = dense<1.0e-5> : tensor<f32>} : tensor<f32>
  %y = graph.matmul "y"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = graph.mse_loss "loss"(%y, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32>
  graph.return %y, %loss : tensor<4x8xf32>, tensor<f32>
}

// The zoo's model record prints and parses with the graph.
// CHECK-LABEL: graph.graph @recorded attributes {model = {args = {layers = "2", rope_theta = "5e+05"}, name = "llama"}}
graph.graph @recorded attributes {model = {name = "llama", args = {layers = "2", rope_theta = "5e+05"}}} {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// CHECK-LABEL: graph.graph @matrix
// CHECK: graph.matmul "mm"(%a, %b) {transpose_b = true} : (tensor<2x4x8xf16>, tensor<16x8xf16>) -> tensor<2x4x16xf16>
// CHECK: graph.conv2d "conv"(%img, %f) {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x8x8xf32>, tensor<16x3x3x8xf32>) -> tensor<2x4x4x16xf32>
// CHECK: graph.conv2d "conv_nchw"(%img2, %f2) {groups = 2 : i64, layout = "NCHW"} : (tensor<1x8x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32>
graph.graph @matrix {
  %a = graph.input "a" : tensor<2x4x8xf16>
  %b = graph.input "b" : tensor<16x8xf16>
  %img = graph.input "img" : tensor<2x8x8x8xf32>
  %f = graph.input "f" : tensor<16x3x3x8xf32>
  %img2 = graph.input "img2" : tensor<1x8x6x6xf32>
  %f2 = graph.input "f2" : tensor<4x4x3x3xf32>
  %mm = graph.matmul "mm"(%a, %b) {transpose_b = true} : (tensor<2x4x8xf16>, tensor<16x8xf16>) -> tensor<2x4x16xf16>
  %conv = graph.conv2d "conv"(%img, %f) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<2x8x8x8xf32>, tensor<16x3x3x8xf32>) -> tensor<2x4x4x16xf32>
  %c2 = graph.conv2d "conv_nchw"(%img2, %f2) {groups = 2 : i64, layout = "NCHW"} : (tensor<1x8x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32>
  graph.return %mm, %conv, %c2 : tensor<2x4x16xf16>, tensor<2x4x4x16xf32>, tensor<1x4x4x4xf32>
}

// CHECK-LABEL: graph.graph @elementwise
// CHECK: graph.add "add"(%p, %q) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: graph.sub "sub"
// CHECK: graph.mul "mul"
// CHECK: graph.div "div"
// CHECK: graph.maximum "max"
// CHECK: graph.minimum "min"
// CHECK: graph.add "iadd"(%i, %i) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK: graph.neg "neg"
// CHECK: graph.abs "abs"
// CHECK: graph.scale "scale"(%q) {bias = 1.000000e+00 : f64, scale = 2.000000e+00 : f64}
// CHECK: graph.relu "relu"
// CHECK: graph.gelu "gelu"(%q) {approximate = true}
// CHECK: graph.tanh "tanh"
// CHECK: graph.sigmoid "sigmoid"
// CHECK: graph.dropout "dropout"(%q) {rate = 1.000000e-01 : f64, seed = 7 : i64}
graph.graph @elementwise {
  %p = graph.input "p" : tensor<4x1xf32>
  %q = graph.input "q" : tensor<3xf32>
  %i = graph.input "i" : tensor<3xi32>
  %0 = graph.add "add"(%p, %q) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = graph.sub "sub"(%p, %q) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = graph.mul "mul"(%p, %q) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = graph.div "div"(%p, %q) : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %4 = graph.maximum "max"(%q, %q) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %5 = graph.minimum "min"(%q, %q) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %6 = graph.add "iadd"(%i, %i) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %7 = graph.neg "neg"(%q) : (tensor<3xf32>) -> tensor<3xf32>
  %8 = graph.abs "abs"(%q) : (tensor<3xf32>) -> tensor<3xf32>
  %9 = graph.scale "scale"(%q) {scale = 2.0 : f64, bias = 1.0 : f64} : (tensor<3xf32>) -> tensor<3xf32>
  %10 = graph.relu "relu"(%q) : (tensor<3xf32>) -> tensor<3xf32>
  %11 = graph.gelu "gelu"(%q) {approximate = true} : (tensor<3xf32>) -> tensor<3xf32>
  %12 = graph.tanh "tanh"(%q) : (tensor<3xf32>) -> tensor<3xf32>
  %13 = graph.sigmoid "sigmoid"(%q) : (tensor<3xf32>) -> tensor<3xf32>
  %14 = graph.dropout "dropout"(%q) {rate = 0.1 : f64, seed = 7 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  graph.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: graph.graph @movement
// CHECK: graph.identity "id"(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: graph.reshape "reshape"(%x) {shape = array<i64: 6, -1>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: graph.transpose "transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK: graph.flatten "flatten"(%x) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK: graph.concat "concat"(%x, %x) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
// CHECK: graph.slice "slice"(%x) {axes = array<i64: 2, 0>, ends = array<i64: -1, 100>, starts = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
// CHECK: graph.max_pool2d "maxpool"(%img) {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK: graph.avg_pool2d "avgpool"(%img) {kernel = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK: graph.global_avg_pool "gap"(%img) : (tensor<1x8x8x8xf32>) -> tensor<1x8xf32>
// CHECK: graph.reshape "labels2d"(%labels) {shape = array<i64: 1, 2>} : (tensor<2xi64>) -> tensor<1x2xi64>
graph.graph @movement {
  %x = graph.input "x" : tensor<2x3x4xf32>
  %img = graph.input "img" : tensor<1x8x8x8xf32>
  %labels = graph.input "labels" : tensor<2xi64>
  %0 = graph.identity "id"(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = graph.reshape "reshape"(%x) {shape = array<i64: 6, -1>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %2 = graph.transpose "transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %3 = graph.flatten "flatten"(%x) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %4 = graph.concat "concat"(%x, %x) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  %5 = graph.slice "slice"(%x) {axes = array<i64: 2, 0>, starts = array<i64: 1, 0>, ends = array<i64: -1, 100>} : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>
  %6 = graph.max_pool2d "maxpool"(%img) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<1x8x8x8xf32>) -> tensor<1x4x4x8xf32>
  %7 = graph.avg_pool2d "avgpool"(%img) {kernel = array<i64: 2, 2>} : (tensor<1x8x8x8xf32>) -> tensor<1x4x4x8xf32>
  %8 = graph.global_avg_pool "gap"(%img) : (tensor<1x8x8x8xf32>) -> tensor<1x8xf32>
  %9 = graph.reshape "labels2d"(%labels) {shape = array<i64: 1, 2>} : (tensor<2xi64>) -> tensor<1x2xi64>
  graph.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<4x2x3xf32>, tensor<2x12xf32>, tensor<2x6x4xf32>, tensor<2x3x2xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x8xf32>, tensor<1x2xi64>
}

// CHECK-LABEL: graph.graph @sensitive
// CHECK: graph.batch_norm "bn"(%img, %c, %c, %c, %c) : (tensor<2x4x4x8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x4x8xf16>
// CHECK: graph.layer_norm "ln"(%x, %d, %d) {epsilon = 9.9999999999999998E-13 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK: graph.exp "exp"
// CHECK: graph.log "log"
// CHECK: graph.sqrt "sqrt"
// CHECK: graph.rsqrt "rsqrt"
// CHECK: graph.square "square"
// CHECK: graph.pow "pow"(%x) {exponent = 3.000000e+00 : f64}
// CHECK: graph.reduce_sum "sum"(%x) {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
// CHECK: graph.reduce_mean "mean"(%x) : (tensor<2x3x8xf32>) -> tensor<f32>
// CHECK: graph.softmax "softmax"(%x) {axis = 1 : i64}
// CHECK: graph.log_softmax "log_softmax"
// CHECK: graph.embedding "emb"(%ids, %table) : (tensor<2x3xi64>, tensor<16x8xf32>) -> tensor<2x3x8xf32>
// CHECK: graph.softmax_cross_entropy "xent"(%x, %ids) : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<f32>
// CHECK: graph.softmax_cross_entropy "smoothed"(%x, %ids) {ignore_index = -100 : i64, label_smoothing = 1.000000e-01 : f64} : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<f32>
// CHECK: graph.softmax_cross_entropy "weighted"(%x, %ids, %d) : (tensor<2x3x8xf32>, tensor<2x3xi64>, tensor<8xf32>) -> tensor<f32>
// CHECK: graph.softmax_cross_entropy "rows"(%x, %ids) {reduction = "none"} : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
// CHECK: graph.sin "sin"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK: graph.cos "cos"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
graph.graph @sensitive {
  %img = graph.input "img" : tensor<2x4x4x8xf16>
  %c = graph.input "c" : tensor<8xf32>
  %x = graph.input "x" : tensor<2x3x8xf32>
  %d = graph.input "d" : tensor<8xf32>
  %ids = graph.input "ids" : tensor<2x3xi64>
  %table = graph.input "table" : tensor<16x8xf32>
  %0 = graph.batch_norm "bn"(%img, %c, %c, %c, %c) : (tensor<2x4x4x8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x4x8xf16>
  %1 = graph.layer_norm "ln"(%x, %d, %d) {epsilon = 1.0e-12 : f64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %2 = graph.exp "exp"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %3 = graph.log "log"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %4 = graph.sqrt "sqrt"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %5 = graph.rsqrt "rsqrt"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %6 = graph.square "square"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %7 = graph.pow "pow"(%x) {exponent = 3.0 : f64} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %8 = graph.reduce_sum "sum"(%x) {axes = array<i64: -1>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %9 = graph.reduce_mean "mean"(%x) : (tensor<2x3x8xf32>) -> tensor<f32>
  %10 = graph.softmax "softmax"(%x) {axis = 1 : i64} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %11 = graph.log_softmax "log_softmax"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %12 = graph.embedding "emb"(%ids, %table) : (tensor<2x3xi64>, tensor<16x8xf32>) -> tensor<2x3x8xf32>
  %13 = graph.softmax_cross_entropy "xent"(%x, %ids) : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<f32>
  %smoothed = graph.softmax_cross_entropy "smoothed"(%x, %ids) {label_smoothing = 0.1 : f64, ignore_index = -100 : i64} : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<f32>
  %weighted = graph.softmax_cross_entropy "weighted"(%x, %ids, %d) : (tensor<2x3x8xf32>, tensor<2x3xi64>, tensor<8xf32>) -> tensor<f32>
  %rows = graph.softmax_cross_entropy "rows"(%x, %ids) {reduction = "none"} : (tensor<2x3x8xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %14 = graph.sin "sin"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %15 = graph.cos "cos"(%x) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  graph.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %smoothed, %weighted, %rows, %14, %15 : tensor<2x4x4x8xf16>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<f32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<2x3xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// CHECK-LABEL: graph.graph @precision
// CHECK: %x.cast_f16 = graph.cast "x.cast_f16"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: graph.cast "x.cast_bf16"(%x) {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: graph.constant "k"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf16>} : () -> tensor<2xf16>
// CHECK: graph.fill "zeros"() : () -> tensor<2x2xbf16>
// CHECK: %two.y = graph.dropout "two"(%x) {outs = ["two.y"]}
graph.graph @precision {
  %x = graph.input "x" : tensor<4xf32>
  %0 = graph.cast "x.cast_f16"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %1 = graph.cast "x.cast_bf16"(%x) {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  %2 = graph.constant "k"() {value = dense<[1.0, 2.0]> : tensor<2xf16>} : () -> tensor<2xf16>
  %3 = graph.fill "zeros"() : () -> tensor<2x2xbf16>
  %4 = graph.dropout "two"(%x) {outs = ["two.y"]} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %0, %1, %2, %3, %4 : tensor<4xf16>, tensor<4xbf16>, tensor<2xf16>, tensor<2x2xbf16>, tensor<4xf32>
}

// Fused attention and its gradient: [batch, seq, heads, head_dim].
// CHECK-LABEL: graph.graph @attention
// CHECK: %y = graph.attention "y"(%q, %k, %v) {causal = true, scale = 1.250000e-01 : f64} : (tensor<2x8x4x16xf16>, tensor<2x6x4x16xf16>, tensor<2x6x4x32xf16>) -> tensor<2x8x4x32xf16>
// CHECK: graph.attention_backward "g"(%q, %k, %v, %y, %y) {dropout = 1.000000e-01 : f64, outs = ["dq", "dk", "dv"], seed = 3 : i64}
graph.graph @attention {
  %q = graph.input "q" : tensor<2x8x4x16xf16>
  %k = graph.input "k" : tensor<2x6x4x16xf16>
  %v = graph.input "v" : tensor<2x6x4x32xf16>
  %y = graph.attention "y"(%q, %k, %v) {causal = true, scale = 0.125 : f64} : (tensor<2x8x4x16xf16>, tensor<2x6x4x16xf16>, tensor<2x6x4x32xf16>) -> tensor<2x8x4x32xf16>
  %dq, %dk, %dv = graph.attention_backward "g"(%q, %k, %v, %y, %y) {dropout = 0.1 : f64, outs = ["dq", "dk", "dv"], seed = 3 : i64} : (tensor<2x8x4x16xf16>, tensor<2x6x4x16xf16>, tensor<2x6x4x32xf16>, tensor<2x8x4x32xf16>, tensor<2x8x4x32xf16>) -> (tensor<2x8x4x16xf16>, tensor<2x6x4x16xf16>, tensor<2x6x4x32xf16>)
  graph.return %y, %dq, %dk, %dv : tensor<2x8x4x32xf16>, tensor<2x8x4x16xf16>, tensor<2x6x4x16xf16>, tensor<2x6x4x32xf16>
}

// FP8 values and the delayed-scaling update of an FP8 operand's state.
// CHECK-LABEL: graph.graph @fp8
// CHECK: %q = graph.cast "q"(%x) {to = f8E4M3FN} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
// CHECK: %g = graph.cast "g"(%x) {to = f8E5M2} : (tensor<4xf32>) -> tensor<4xf8E5M2>
// CHECK: graph.fp8_scale_update "x.scaling"(%history, %scale, %scale_inv, %amax) {amax_compute = "most_recent", fp8_max = 5.734400e+04 : f64, margin = 1 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> ()
graph.graph @fp8 {
  %x = graph.input "x" : tensor<4xf32>
  %amax = graph.input "amax" : tensor<f32>
  %history = graph.param "history" {init = {kind = "zeros"}, trainable = false} : tensor<16xf32>
  %scale = graph.param "scale" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  %scale_inv = graph.param "scale_inv" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  %q = graph.cast "q"(%x) {to = f8E4M3FN} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %g = graph.cast "g"(%x) {to = f8E5M2} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  graph.fp8_scale_update "x.scaling"(%history, %scale, %scale_inv, %amax) {amax_compute = "most_recent", fp8_max = 57344.0 : f64, margin = 1 : i64} : (tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> ()
  graph.return %q, %g : tensor<4xf8E4M3FN>, tensor<4xf8E5M2>
}

// The weights' moving average, with and without the warmup's step count.
// CHECK-LABEL: graph.graph @ema
// CHECK: graph.ema "w.ema_update"(%avg, %w, %flag) {decay = 5.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<i1>) -> ()
// CHECK: graph.ema "w.ema_warm"(%avg, %w, %flag, %step) {decay = 2.500000e-01 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<i1>, tensor<f32>) -> ()
graph.graph @ema {
  %flag = graph.input "flag" : tensor<i1>
  %step = graph.input "step" : tensor<f32>
  %w = graph.param "w" : tensor<8xf16>
  %avg = graph.param "avg" {trainable = false} : tensor<8xf32>
  graph.ema "w.ema_update"(%avg, %w, %flag) {decay = 0.5 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<i1>) -> ()
  graph.ema "w.ema_warm"(%avg, %w, %flag, %step) {decay = 0.25 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<i1>, tensor<f32>) -> ()
  graph.return
}

// LAMB, with its settings and a grad_scale, and without the trust ratio;
// Lion, with its settings and with a grad_scale.
// CHECK-LABEL: graph.graph @lamb
// CHECK: graph.lamb "w.lamb"(%w, %g, %lr, %flag, %m, %v, %step, %scale) {beta2 = 5.000000e-01 : f64, weight_decay = 1.000000e-02 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>) -> ()
// CHECK: graph.lamb "b.lamb"(%b, %gb, %lr, %flag, %mb, %vb, %step) {adapt = false} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> ()
// CHECK: graph.lion "w.lion"(%w, %g, %lr, %flag, %m) {beta1 = 5.000000e-01 : f64, weight_decay = 2.500000e-01 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
// CHECK: graph.lion "b.lion"(%b, %gb, %lr, %flag, %mb, %scale) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<f32>) -> ()
graph.graph @lamb {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %step = graph.input "step" : tensor<f32>
  %scale = graph.input "scale" : tensor<f32>
  %g = graph.input "g" : tensor<8xf16>
  %gb = graph.input "gb" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %b = graph.param "b" : tensor<8xf32>
  %m = graph.param "m" {trainable = false} : tensor<8xf32>
  %v = graph.param "v" {trainable = false} : tensor<8xf32>
  %mb = graph.param "mb" {trainable = false} : tensor<8xf32>
  %vb = graph.param "vb" {trainable = false} : tensor<8xf32>
  graph.lamb "w.lamb"(%w, %g, %lr, %flag, %m, %v, %step, %scale) {beta2 = 0.5 : f64, weight_decay = 0.01 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>) -> ()
  graph.lamb "b.lamb"(%b, %gb, %lr, %flag, %mb, %vb, %step) {adapt = false} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> ()
  graph.lion "w.lion"(%w, %g, %lr, %flag, %m) {beta1 = 0.5 : f64, weight_decay = 0.25 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
  graph.lion "b.lion"(%b, %gb, %lr, %flag, %mb, %scale) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<f32>) -> ()
  graph.return
}

// RMSprop: plain, with momentum and centered and a grad_scale; Adagrad.
// CHECK-LABEL: graph.graph @rmsprop_adagrad
// CHECK: graph.rmsprop "w.rmsprop"(%w, %g, %lr, %flag, %v) : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
// CHECK: graph.rmsprop "b.rmsprop"(%b, %gb, %lr, %flag, %v, %buf, %avg, %scale) {alpha = 9.000000e-01 : f64, centered = true, momentum = 5.000000e-01 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> ()
// CHECK: graph.adagrad "w.adagrad"(%w, %g, %lr, %flag, %v, %scale) {epsilon = 9.9999999999999995E-8 : f64, weight_decay = 2.500000e-01 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<f32>) -> ()
graph.graph @rmsprop_adagrad {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %scale = graph.input "scale" : tensor<f32>
  %g = graph.input "g" : tensor<8xf16>
  %gb = graph.input "gb" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %b = graph.param "b" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  %buf = graph.param "buf" : tensor<8xf32>
  %avg = graph.param "avg" : tensor<8xf32>
  graph.rmsprop "w.rmsprop"(%w, %g, %lr, %flag, %v) : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
  graph.rmsprop "b.rmsprop"(%b, %gb, %lr, %flag, %v, %buf, %avg, %scale) {alpha = 0.9 : f64, centered = true, momentum = 0.5 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> ()
  graph.adagrad "w.adagrad"(%w, %g, %lr, %flag, %v, %scale) {epsilon = 1.0e-7 : f64, weight_decay = 0.25 : f64} : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<f32>) -> ()
  graph.return
}
