// Every verifier of the graph dialect rejects bad IR with a clear message.
// RUN: ampc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

graph.graph @dup_node {
  %x = graph.input "x" : tensor<4xf32>
  %a = graph.relu "r"(%x) {outs = ["a"]} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{duplicate node name 'r'}}
  %b = graph.relu "r"(%a) {outs = ["b"]} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %b : tensor<4xf32>
}

// -----

graph.graph @dup_value {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{duplicate value name 'x'}}
  %a = graph.relu "r"(%x) {outs = ["x"]} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %a : tensor<4xf32>
}

// -----

graph.graph @outs_count {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{names 2 outputs in 'outs' but has 1}}
  %a = graph.relu "r"(%x) {outs = ["a", "b"]} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{loss 'nope' names no value}}
graph.graph @loss_missing attributes {loss = "nope"} {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{loss 'x' must be a float scalar}}
graph.graph @loss_not_scalar attributes {loss = "x"} {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{loss 'l' is not a graph output}}
graph.graph @loss_not_output attributes {loss = "l"} {
  %x = graph.input "x" : tensor<4xf32>
  %l = graph.reduce_sum "l"(%x) : (tensor<4xf32>) -> tensor<f32>
  graph.return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{model record needs exactly a string 'name' and a dictionary 'args'}}
graph.graph @model_no_args attributes {model = {name = "llama"}} {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{model record's arg 'layers' must be a string}}
graph.graph @model_number_arg attributes {model = {name = "llama", args = {layers = 2 : i64}}} {
  %x = graph.input "x" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// -----

graph.graph @empty_name {
  // expected-error @+1 {{needs a non-empty 'name'}}
  %x = graph.input "" : tensor<4xf32>
  graph.return %x : tensor<4xf32>
}

// -----

graph.graph @bad_init {
  // expected-error @+1 {{init 'normal' has no field 'sigma'}}
  %w = graph.param "w" {init = {kind = "normal", sigma = 1.0 : f64}} : tensor<4xf32>
  graph.return %w : tensor<4xf32>
}

// -----

graph.graph @const_type {
  // expected-error @+1 {{value has type 'tensor<2xf32>' but the result is 'tensor<2xf16>'}}
  %c = graph.const "c" {value = dense<1.0> : tensor<2xf32>} : tensor<2xf16>
  graph.return %c : tensor<2xf16>
}

// -----

graph.graph @dynamic_shape {
  // expected-error @+1 {{must be statically shaped tensor}}
  %x = graph.input "x" : tensor<?xf32>
  graph.return
}

// -----

graph.graph @matmul_contract {
  %a = graph.input "a" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<4x8xf32>
  // expected-error @+1 {{contracting dimensions differ: [4,8] x [4,8]}}
  %y = graph.matmul "y"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  graph.return %y : tensor<4x8xf32>
}

// -----

graph.graph @matmul_dtype {
  %a = graph.input "a" : tensor<4x8xf16>
  %b = graph.input "b" : tensor<8x8xf32>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.matmul "y"(%a, %b) : (tensor<4x8xf16>, tensor<8x8xf32>) -> tensor<4x8xf16>
  graph.return %y : tensor<4x8xf16>
}

// -----

graph.graph @matmul_batch {
  %a = graph.input "a" : tensor<2x4x8xf32>
  %b = graph.input "b" : tensor<3x8x8xf32>
  // expected-error @+1 {{batch dimensions do not broadcast}}
  %y = graph.matmul "y"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x8xf32>) -> tensor<2x4x8xf32>
  graph.return %y : tensor<2x4x8xf32>
}

// -----

graph.graph @matmul_int {
  %a = graph.input "a" : tensor<4x8xi32>
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %y = graph.matmul "y"(%a, %a) {transpose_b = true} : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x4xi32>
  graph.return %y : tensor<4x4xi32>
}

// -----

graph.graph @wrong_result_type {
  %a = graph.input "a" : tensor<4x8xf32>
  %b = graph.input "b" : tensor<8x2xf32>
  // expected-error @+1 {{result types ('tensor<4x3xf32>') differ from the inferred ('tensor<4x2xf32>')}}
  %y = graph.matmul "y"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x3xf32>
  graph.return %y : tensor<4x3xf32>
}

// -----

graph.graph @conv_channels {
  %x = graph.input "x" : tensor<1x8x8x4xf32>
  %w = graph.input "w" : tensor<8x3x3x3xf32>
  // expected-error @+1 {{filter [8,3,3,3] expects 3 input channels, got 4}}
  %y = graph.conv2d "y"(%x, %w) : (tensor<1x8x8x4xf32>, tensor<8x3x3x3xf32>) -> tensor<1x6x6x8xf32>
  graph.return %y : tensor<1x6x6x8xf32>
}

// -----

graph.graph @conv_layout {
  %x = graph.input "x" : tensor<1x8x8x4xf32>
  %w = graph.input "w" : tensor<8x3x3x4xf32>
  // expected-error @+1 {{layout must be NHWC or NCHW, got 'HWCN'}}
  %y = graph.conv2d "y"(%x, %w) {layout = "HWCN"} : (tensor<1x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x6x6x8xf32>
  graph.return %y : tensor<1x6x6x8xf32>
}

// -----

graph.graph @conv_padding {
  %x = graph.input "x" : tensor<1x8x8x4xf32>
  %w = graph.input "w" : tensor<8x3x3x4xf32>
  // expected-error @+1 {{padding needs 2 or 4 values, got 3}}
  %y = graph.conv2d "y"(%x, %w) {padding = array<i64: 1, 1, 1>} : (tensor<1x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x8x8x8xf32>
  graph.return %y : tensor<1x8x8x8xf32>
}

// -----

graph.graph @conv_groups {
  %x = graph.input "x" : tensor<1x8x8x4xf32>
  %w = graph.input "w" : tensor<6x3x3x2xf32>
  // expected-error @+1 {{groups (4) must divide the input and output channels}}
  %y = graph.conv2d "y"(%x, %w) {groups = 4 : i64} : (tensor<1x8x8x4xf32>, tensor<6x3x3x2xf32>) -> tensor<1x6x6x6xf32>
  graph.return %y : tensor<1x6x6x6xf32>
}

// -----

graph.graph @conv_too_small {
  %x = graph.input "x" : tensor<1x2x2x4xf32>
  %w = graph.input "w" : tensor<8x3x3x4xf32>
  // expected-error @+1 {{filter is larger than the padded input}}
  %y = graph.conv2d "y"(%x, %w) : (tensor<1x2x2x4xf32>, tensor<8x3x3x4xf32>) -> tensor<1x1x1x8xf32>
  graph.return %y : tensor<1x1x1x8xf32>
}

// -----

graph.graph @broadcast {
  %a = graph.input "a" : tensor<4x3xf32>
  %b = graph.input "b" : tensor<4xf32>
  // expected-error @+1 {{shapes [4,3] and [4] do not broadcast}}
  %y = graph.add "y"(%a, %b) : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  graph.return %y : tensor<4x3xf32>
}

// -----

graph.graph @unary_int {
  %a = graph.input "a" : tensor<4xi64>
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float}}
  %y = graph.exp "y"(%a) : (tensor<4xi64>) -> tensor<4xi64>
  graph.return %y : tensor<4xi64>
}

// -----

graph.graph @dropout_rate {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{rate must be in [0, 1), got 1}}
  %y = graph.dropout "y"(%a) {rate = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @attr_kind {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute}}
  %y = graph.softmax "y"(%a) {axis = "last"} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @softmax_axis {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{axis is out of range for rank 1}}
  %y = graph.softmax "y"(%a) {axis = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @reshape_count {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{cannot reshape [4,3] to [5,-1]}}
  %y = graph.reshape "y"(%a) {shape = array<i64: 5, -1>} : (tensor<4x3xf32>) -> tensor<5x2xf32>
  graph.return %y : tensor<5x2xf32>
}

// -----

graph.graph @transpose_perm {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{perm [1,1] is not a permutation of rank 2}}
  %y = graph.transpose "y"(%a) {perm = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<3x3xf32>
  graph.return %y : tensor<3x3xf32>
}

// -----

graph.graph @flatten_axis {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %y = graph.flatten "y"(%a) {axis = 3 : i64} : (tensor<4x3xf32>) -> tensor<12x1xf32>
  graph.return %y : tensor<12x1xf32>
}

// -----

graph.graph @concat_shapes {
  %a = graph.input "a" : tensor<4x3xf32>
  %b = graph.input "b" : tensor<5x2xf32>
  // expected-error @+1 {{operand shapes [4,3] and [5,2] differ off the axis}}
  %y = graph.concat "y"(%a, %b) : (tensor<4x3xf32>, tensor<5x2xf32>) -> tensor<9x3xf32>
  graph.return %y : tensor<9x3xf32>
}

// -----

graph.graph @slice_lengths {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{axes, starts and ends need the same length}}
  %y = graph.slice "y"(%a) {axes = array<i64: 0>, starts = array<i64: 0, 1>, ends = array<i64: 2>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  graph.return %y : tensor<2x3xf32>
}

// -----

graph.graph @pool_rank {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{expects a 4-D input}}
  %y = graph.max_pool2d "y"(%a) {kernel = array<i64: 2, 2>} : (tensor<4x3xf32>) -> tensor<2x1xf32>
  graph.return %y : tensor<2x1xf32>
}

// -----

graph.graph @pool_padding {
  %a = graph.input "a" : tensor<1x8x8x4xf32>
  // expected-error @+1 {{padding must be smaller than the kernel}}
  %y = graph.avg_pool2d "y"(%a) {kernel = array<i64: 2, 2>, padding = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x6x6x4xf32>
  graph.return %y : tensor<1x6x6x4xf32>
}

// -----

graph.graph @gap_rank {
  %a = graph.input "a" : tensor<4x3xf32>
  // expected-error @+1 {{expects a 4-D input}}
  %y = graph.global_avg_pool "y"(%a) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  graph.return %y : tensor<4x3xf32>
}

// -----

graph.graph @batch_norm_params {
  %x = graph.input "x" : tensor<2x4x4x8xf32>
  %c = graph.input "c" : tensor<4xf32>
  // expected-error @+1 {{scale, bias and statistics must be [8]}}
  %y = graph.batch_norm "y"(%x, %c, %c, %c, %c) : (tensor<2x4x4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x4x8xf32>
  graph.return %y : tensor<2x4x4x8xf32>
}

// -----

graph.graph @layer_norm_params {
  %x = graph.input "x" : tensor<2x8xf32>
  %c = graph.input "c" : tensor<4xf32>
  // expected-error @+1 {{scale and bias must be [8], got [4]}}
  %y = graph.layer_norm "y"(%x, %c, %c) : (tensor<2x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  graph.return %y : tensor<2x8xf32>
}

// -----

graph.graph @reduce_axes {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{axis -1 is out of range or repeated}}
  %y = graph.reduce_sum "y"(%x) {axes = array<i64: 1, -1>} : (tensor<2x8xf32>) -> tensor<2xf32>
  graph.return %y : tensor<2xf32>
}

// -----

graph.graph @embedding_ids {
  %ids = graph.input "ids" : tensor<4xf32>
  %w = graph.input "w" : tensor<16x8xf32>
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %y = graph.embedding "y"(%ids, %w) : (tensor<4xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  graph.return %y : tensor<4x8xf32>
}

// -----

graph.graph @embedding_table {
  %ids = graph.input "ids" : tensor<4xi64>
  %w = graph.input "w" : tensor<16xf32>
  // expected-error @+1 {{weight must be [vocab, dim]}}
  %y = graph.embedding "y"(%ids, %w) : (tensor<4xi64>, tensor<16xf32>) -> tensor<4x16xf32>
  graph.return %y : tensor<4x16xf32>
}

// -----

graph.graph @xent_labels {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<5xi64>
  // expected-error @+1 {{labels [5] must be the logits' shape [4,10] without the class dimension}}
  %y = graph.softmax_cross_entropy "y"(%logits, %labels) : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  graph.return %y : tensor<f32>
}

// -----

graph.graph @xent_smoothing {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  // expected-error @+1 {{label_smoothing must be in [0, 1], got 1.500000e+00}}
  %y = graph.softmax_cross_entropy "y"(%logits, %labels) {label_smoothing = 1.5 : f64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %y : tensor<f32>
}

// -----

graph.graph @xent_reduction {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  // expected-error @+1 {{reduction must be "mean", "sum" or "none", got "max"}}
  %y = graph.softmax_cross_entropy "y"(%logits, %labels) {reduction = "max"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %y : tensor<f32>
}

// -----

graph.graph @xent_rows_scalar {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  // expected-error @+1 {{result types ('tensor<f32>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.softmax_cross_entropy "y"(%logits, %labels) {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  graph.return %y : tensor<f32>
}

// -----

graph.graph @xent_rows_backward {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %dloss = graph.input "dloss" : tensor<f32>
  // expected-error @+1 {{with reduction "none", dloss must have the labels' shape [4]}}
  %dx = graph.softmax_cross_entropy_backward "dx"(%logits, %labels, %dloss) {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x10xf32>
  graph.return %dx : tensor<4x10xf32>
}

// -----

graph.graph @xent_weight_per_class {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %w = graph.input "w" : tensor<8xf32>
  // expected-error @+1 {{weight must be f32 [classes] = [10], got 'tensor<8xf32>'}}
  %y = graph.softmax_cross_entropy "y"(%logits, %labels, %w) : (tensor<4x10xf32>, tensor<4xi64>, tensor<8xf32>) -> tensor<f32>
  graph.return %y : tensor<f32>
}

// -----

graph.graph @xent_backward_weight_f32 {
  %logits = graph.input "logits" : tensor<4x10xf16>
  %labels = graph.input "labels" : tensor<4xi64>
  %dloss = graph.input "dloss" : tensor<f32>
  %w = graph.input "w" : tensor<10xf16>
  // expected-error @+1 {{weight must be f32 [classes] = [10], got 'tensor<10xf16>'}}
  %dx = graph.softmax_cross_entropy_backward "dx"(%logits, %labels, %dloss, %w) : (tensor<4x10xf16>, tensor<4xi64>, tensor<f32>, tensor<10xf16>) -> tensor<4x10xf16>
  graph.return %dx : tensor<4x10xf16>
}

// -----

graph.graph @xent_backward_smoothing {
  %logits = graph.input "logits" : tensor<4x10xf32>
  %labels = graph.input "labels" : tensor<4xi64>
  %dloss = graph.input "dloss" : tensor<f32>
  // expected-error @+1 {{label_smoothing must be in [0, 1], got -1.000000e-01}}
  %dx = graph.softmax_cross_entropy_backward "dx"(%logits, %labels, %dloss) {label_smoothing = -0.1 : f64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x10xf32>
  graph.return %dx : tensor<4x10xf32>
}

// -----

graph.graph @mse_shapes {
  %a = graph.input "a" : tensor<4xf32>
  %b = graph.input "b" : tensor<5xf32>
  // expected-error @+1 {{prediction 'tensor<4xf32>' and target 'tensor<5xf32>' differ}}
  %y = graph.mse_loss "y"(%a, %b) : (tensor<4xf32>, tensor<5xf32>) -> tensor<f32>
  graph.return %y : tensor<f32>
}

// -----

graph.graph @cast_target {
  %a = graph.input "a" : tensor<4xf32>
  // expected-error @+1 {{result #0 must be statically shaped tensor}}
  %y = graph.cast "y"(%a) {to = i8} : (tensor<4xf32>) -> tensor<4xi8>
  graph.return %y : tensor<4xi8>
}

// -----

graph.graph @constant_dynamic {
  // expected-error @+1 {{'graph.constant' op result #0 must be statically shaped tensor}}
  %c = graph.constant "c"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<?xf32>
  graph.return
}

// -----

graph.graph @foreign_op {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{is not a graph op; a graph holds graph ops only}}
  "test.foreign"() : () -> ()
  graph.return %x : tensor<4xf32>
}

// -----

graph.graph @neg_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.neg "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @abs_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.abs "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @relu_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.relu "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @tanh_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.tanh "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @sigmoid_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.sigmoid "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @gelu_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.gelu "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @scale_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.scale "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @identity_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.identity "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @log_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.log "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @sqrt_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.sqrt "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @rsqrt_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.rsqrt "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @square_result {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{result types ('tensor<4xf16>') differ from the inferred ('tensor<4xf32>')}}
  %y = graph.square "y"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.graph @sub_dtypes {
  %a = graph.input "a" : tensor<4xf32>
  %b = graph.input "b" : tensor<4xbf16>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.sub "y"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @mul_dtypes {
  %a = graph.input "a" : tensor<4xf32>
  %b = graph.input "b" : tensor<4xbf16>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.mul "y"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @div_dtypes {
  %a = graph.input "a" : tensor<4xf32>
  %b = graph.input "b" : tensor<4xbf16>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.div "y"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @maximum_dtypes {
  %a = graph.input "a" : tensor<4xf32>
  %b = graph.input "b" : tensor<4xbf16>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.maximum "y"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @minimum_dtypes {
  %a = graph.input "a" : tensor<4xf32>
  %b = graph.input "b" : tensor<4xbf16>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.minimum "y"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @pow_exponent {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{requires attribute 'exponent'}}
  %y = graph.pow "y"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @reduce_mean_keepdims {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{result types ('tensor<2xf32>') differ from the inferred ('tensor<2x1xf32>')}}
  %y = graph.reduce_mean "y"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2xf32>
  graph.return %y : tensor<2xf32>
}

// -----

graph.graph @log_softmax_axis {
  %x = graph.input "x" : tensor<2x8xf32>
  // expected-error @+1 {{axis is out of range for rank 2}}
  %y = graph.log_softmax "y"(%x) {axis = -3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  graph.return %y : tensor<2x8xf32>
}

// -----

graph.graph @scale_attr_kind {
  %x = graph.input "x" : tensor<4xf32>
  // expected-error @+1 {{attribute 'scale' failed to satisfy constraint: 64-bit float attribute}}
  %y = graph.scale "y"(%x) {scale = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.graph @fill_dynamic {
  // expected-error @+1 {{result #0 must be statically shaped tensor}}
  %y = graph.fill "y"() : () -> tensor<?xf32>
  graph.return
}

// -----

graph.graph @param_dtype {
  // expected-error @+1 {{result #0 must be statically shaped tensor}}
  %w = graph.param "w" : tensor<4xi8>
  graph.return
}

// -----

graph.graph @input_type {
  // expected-error @+1 {{invalid kind of type specified}}
  %x = graph.input "x" : f32
  graph.return
}

// -----

graph.graph @sgd_grad_scale_not_scalar {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf16>
  %s = graph.input "s" : tensor<2xf32>
  %w = graph.param "w" : tensor<8xf32>
  // expected-error @+1 {{expects a scalar, got 'tensor<2xf32>'}}
  graph.sgd "w.sgd"(%w, %g, %lr, %flag, %s) : (tensor<8xf32>, tensor<8xf16>, tensor<f32>, tensor<i1>, tensor<2xf32>) -> ()
  graph.return
}

// -----

graph.graph @adam_grad_shape {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<4xf16>
  %s = graph.input "s" : tensor<f32>
  %w = graph.param "w" : tensor<8xf32>
  %m = graph.param "m" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  %t = graph.param "t" : tensor<f32>
  // expected-error @+1 {{operand shapes differ: 'tensor<8xf32>' and 'tensor<4xf16>'}}
  graph.adam "w.adam"(%w, %g, %lr, %flag, %m, %v, %t, %s) : (tensor<8xf32>, tensor<4xf16>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>) -> ()
  graph.return
}

// -----

graph.graph @check_finite_result {
  %g = graph.input "g" : tensor<8xf16>
  // expected-error @+1 {{result types ('tensor<f32>') differ from the inferred ('tensor<i1>')}}
  %found = graph.check_finite "check"(%g) : (tensor<8xf16>) -> tensor<f32>
  graph.return
}

// -----

graph.graph @all_reduce_dtypes {
  %a = graph.input "a" : tensor<8xf16>
  %b = graph.input "b" : tensor<4xf32>
  // expected-error @+1 {{'graph.all_reduce' op a bucket holds one dtype, got 'f16' and 'f32'}}
  %ra, %rb = graph.all_reduce "r"(%a, %b) {world_size = 2 : i64} : (tensor<8xf16>, tensor<4xf32>) -> (tensor<8xf16>, tensor<4xf32>)
  graph.return %ra : tensor<8xf16>
}

// -----

graph.graph @all_reduce_world {
  %a = graph.input "a" : tensor<8xf16>
  // expected-error @+1 {{'graph.all_reduce' op world_size must be at least 1 and bucket not negative}}
  %ra = graph.all_reduce "r"(%a) {world_size = 0 : i64} : (tensor<8xf16>) -> tensor<8xf16>
  graph.return %ra : tensor<8xf16>
}

// -----

graph.graph @all_reduce_empty {
  // expected-error @+1 {{'graph.all_reduce' op needs at least one tensor}}
  graph.all_reduce "r"() {world_size = 2 : i64} : () -> ()
  graph.return
}

// -----

graph.graph @attention_rank {
  %q = graph.input "q" : tensor<2x8x16xf32>
  // expected-error @+1 {{q, k and v must be [batch, seq, heads, head_dim]}}
  %y = graph.attention "attn"(%q, %q, %q) : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  graph.return %y : tensor<2x8x16xf32>
}

// -----

graph.graph @attention_head_dim {
  %q = graph.input "q" : tensor<2x8x4x16xf32>
  %k = graph.input "k" : tensor<2x8x4x32xf32>
  // expected-error @+1 {{k must be [batch, seq_k, heads, 16] and v [batch, seq_k, heads, head_dim_v], got [2,8,4,32], [2,8,4,32]}}
  %y = graph.attention "attn"(%q, %k, %k) : (tensor<2x8x4x16xf32>, tensor<2x8x4x32xf32>, tensor<2x8x4x32xf32>) -> tensor<2x8x4x32xf32>
  graph.return %y : tensor<2x8x4x32xf32>
}

// -----

graph.graph @attention_dtypes {
  %q = graph.input "q" : tensor<2x8x4x16xf16>
  %k = graph.input "k" : tensor<2x8x4x16xf32>
  // expected-error @+1 {{operands have different dtypes}}
  %y = graph.attention "attn"(%q, %k, %k) : (tensor<2x8x4x16xf16>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf16>
  graph.return %y : tensor<2x8x4x16xf16>
}

// -----

graph.graph @attention_scale {
  %q = graph.input "q" : tensor<1x8x1x16xf32>
  // expected-error @+1 {{scale must be finite and nonzero}}
  %y = graph.attention "attn"(%q, %q, %q) {scale = 0.0 : f64} : (tensor<1x8x1x16xf32>, tensor<1x8x1x16xf32>, tensor<1x8x1x16xf32>) -> tensor<1x8x1x16xf32>
  graph.return %y : tensor<1x8x1x16xf32>
}

// -----

graph.graph @attention_dropout {
  %q = graph.input "q" : tensor<1x8x1x16xf32>
  // expected-error @+1 {{dropout must be in [0, 1), got 1}}
  %y = graph.attention "attn"(%q, %q, %q) {dropout = 1.0 : f64} : (tensor<1x8x1x16xf32>, tensor<1x8x1x16xf32>, tensor<1x8x1x16xf32>) -> tensor<1x8x1x16xf32>
  graph.return %y : tensor<1x8x1x16xf32>
}

// -----

graph.graph @fp8_scale_history {
  %h = graph.param "h" {init = {kind = "zeros"}, trainable = false} : tensor<2x2xf32>
  %s = graph.param "s" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  // expected-error @+1 {{amax_history must be a 1-D f32 tensor of at least one amax}}
  graph.fp8_scale_update "u"(%h, %s, %s, %s) : (tensor<2x2xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> ()
  graph.return %s : tensor<f32>
}

// -----

graph.graph @fp8_scale_compute {
  %h = graph.param "h" {init = {kind = "zeros"}, trainable = false} : tensor<4xf32>
  %s = graph.param "s" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  // expected-error @+1 {{amax_compute must be max or most_recent, got 'mean'}}
  graph.fp8_scale_update "u"(%h, %s, %s, %s) {amax_compute = "mean"} : (tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> ()
  graph.return %s : tensor<f32>
}

// -----

graph.graph @fp8_scale_margin {
  %h = graph.param "h" {init = {kind = "zeros"}, trainable = false} : tensor<4xf32>
  %s = graph.param "s" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  // expected-error @+1 {{margin must be in [0, 127], got -1}}
  graph.fp8_scale_update "u"(%h, %s, %s, %s) {margin = -1 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> ()
  graph.return %s : tensor<f32>
}

// -----

graph.graph @ema_decay_one {
  %flag = graph.input "flag" : tensor<i1>
  %w = graph.param "w" : tensor<8xf32>
  %avg = graph.param "avg" : tensor<8xf32>
  // expected-error @+1 {{decay must be in [0, 1), got 1}}
  graph.ema "w.ema"(%avg, %w, %flag) {decay = 1.0 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<i1>) -> ()
  graph.return
}

// -----

graph.graph @ema_f16_average {
  %flag = graph.input "flag" : tensor<i1>
  %w = graph.param "w" : tensor<8xf32>
  %avg = graph.param "avg" : tensor<8xf16>
  // expected-error @+1 {{the average must be f32, got 'tensor<8xf16>'}}
  graph.ema "w.ema"(%avg, %w, %flag) {decay = 0.9 : f64} : (tensor<8xf16>, tensor<8xf32>, tensor<i1>) -> ()
  graph.return
}

// -----

graph.graph @ema_shape {
  %flag = graph.input "flag" : tensor<i1>
  %w = graph.param "w" : tensor<4xf32>
  %avg = graph.param "avg" : tensor<8xf32>
  // expected-error @+1 {{operand shapes differ: 'tensor<8xf32>' and 'tensor<4xf32>'}}
  graph.ema "w.ema"(%avg, %w, %flag) {decay = 0.9 : f64} : (tensor<8xf32>, tensor<4xf32>, tensor<i1>) -> ()
  graph.return
}

// -----

graph.graph @lamb_beta {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %m = graph.param "m" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  %t = graph.param "t" : tensor<f32>
  // expected-error @+1 {{betas must be in [0, 1), got 9.000000e-01, 1.000000e+00}}
  graph.lamb "w.lamb"(%w, %g, %lr, %flag, %m, %v, %t) {beta2 = 1.0 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> ()
  graph.return
}

// -----

graph.graph @lamb_epsilon {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %m = graph.param "m" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  %t = graph.param "t" : tensor<f32>
  // expected-error @+1 {{epsilon must be positive, got 0}}
  graph.lamb "w.lamb"(%w, %g, %lr, %flag, %m, %v, %t) {epsilon = 0.0 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> ()
  graph.return
}

// -----

graph.graph @lamb_moment_shape {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %m = graph.param "m" : tensor<4xf32>
  %v = graph.param "v" : tensor<8xf32>
  %t = graph.param "t" : tensor<f32>
  // expected-error @+1 {{operand shapes differ: 'tensor<8xf32>' and 'tensor<4xf32>'}}
  graph.lamb "w.lamb"(%w, %g, %lr, %flag, %m, %v, %t) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<4xf32>, tensor<8xf32>, tensor<f32>) -> ()
  graph.return
}

// -----

graph.graph @lion_beta {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %m = graph.param "m" : tensor<8xf32>
  // expected-error @+1 {{betas must be in [0, 1), got -1.000000e-01, 9.900000e-01}}
  graph.lion "w.lion"(%w, %g, %lr, %flag, %m) {beta1 = -0.1 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
  graph.return
}

// -----

graph.graph @lion_moment_shape {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %m = graph.param "m" : tensor<2x4xf32>
  // expected-error @+1 {{operand shapes differ: 'tensor<8xf32>' and 'tensor<2x4xf32>'}}
  graph.lion "w.lion"(%w, %g, %lr, %flag, %m) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<2x4xf32>) -> ()
  graph.return
}

// -----

graph.graph @rmsprop_missing_buffer {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  // expected-error @+1 {{takes 2 optional states (a momentum buffer where momentum > 0, the gradient's average where centered) and an optional grad_scale, got 0 more operands}}
  graph.rmsprop "w.rmsprop"(%w, %g, %lr, %flag, %v) {momentum = 0.9 : f64, centered = true} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
  graph.return
}

// -----

graph.graph @rmsprop_scale_not_scalar {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  %buf = graph.param "buf" : tensor<8xf32>
  // expected-error @+1 {{expects a scalar, got 'tensor<8xf32>'}}
  graph.rmsprop "w.rmsprop"(%w, %g, %lr, %flag, %v, %buf) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>) -> ()
  graph.return
}

// -----

graph.graph @rmsprop_buffer_shape {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  %buf = graph.param "buf" : tensor<4xf32>
  // expected-error @+1 {{operand shapes differ: 'tensor<8xf32>' and 'tensor<4xf32>'}}
  graph.rmsprop "w.rmsprop"(%w, %g, %lr, %flag, %v, %buf) {momentum = 0.9 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<4xf32>) -> ()
  graph.return
}

// -----

graph.graph @rmsprop_momentum {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %v = graph.param "v" : tensor<8xf32>
  // expected-error @+1 {{momentum must be in [0, 1), got 1.000000e+00}}
  graph.rmsprop "w.rmsprop"(%w, %g, %lr, %flag, %v, %v) {momentum = 1.0 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>, tensor<8xf32>) -> ()
  graph.return
}

// -----

graph.graph @adagrad_epsilon {
  %lr = graph.input "lr" : tensor<f32>
  %flag = graph.input "flag" : tensor<i1>
  %g = graph.input "g" : tensor<8xf32>
  %w = graph.param "w" : tensor<8xf32>
  %s = graph.param "s" : tensor<8xf32>
  // expected-error @+1 {{epsilon must be positive, got 0.000000e+00}}
  graph.adagrad "w.adagrad"(%w, %g, %lr, %flag, %s) {epsilon = 0.0 : f64} : (tensor<8xf32>, tensor<8xf32>, tensor<f32>, tensor<i1>, tensor<8xf32>) -> ()
  graph.return
}

// -----

graph.graph @lr_schedule_kind {
  %s = graph.param "s" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  // expected-error @+1 {{kind must be constant, cosine, linear, onecycle, step, polynomial, cosine_with_restarts, inverse_sqrt or warmup_stable_decay, got 'cosinus'}}
  %lr = graph.lr_schedule "l"(%s, %s, %s) {kind = "cosinus"} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.return %lr : tensor<f32>
}

// -----

graph.graph @lr_schedule_cycles {
  %s = graph.param "s" {init = {kind = "ones"}, trainable = false} : tensor<f32>
  // expected-error @+1 {{cycles >= 1 and decay_steps >= 0}}
  %lr = graph.lr_schedule "l"(%s, %s, %s) {kind = "cosine_with_restarts", cycles = 0 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.return %lr : tensor<f32>
}
