module {
  graph.graph @gpt2 attributes {loss = "head.loss", model = {args = {batch = "1", decode = "0", heads = "2", hidden = "16", layers = "1", seq = "4", vocab = "16"}, name = "gpt2"}} {
    %ids = graph.input "ids" : tensor<1x4xi64>
    %targets = graph.input "targets" : tensor<1x4xi64>
    %embeddings.token.w = graph.param "embeddings.token.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<16x16xf32>
    %embeddings.position.w = graph.param "embeddings.position.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<4x16xf32>
    %layer0.attn.norm.scale = graph.param "layer0.attn.norm.scale" {init = {kind = "ones"}} : tensor<16xf32>
    %layer0.attn.norm.bias = graph.param "layer0.attn.norm.bias" {init = {kind = "zeros"}} : tensor<16xf32>
    %layer0.attn.q.w = graph.param "layer0.attn.q.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<16x16xf32>
    %layer0.attn.q.b = graph.param "layer0.attn.q.b" {init = {kind = "zeros"}} : tensor<16xf32>
    %layer0.attn.k.w = graph.param "layer0.attn.k.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<16x16xf32>
    %layer0.attn.k.b = graph.param "layer0.attn.k.b" {init = {kind = "zeros"}} : tensor<16xf32>
    %layer0.attn.v.w = graph.param "layer0.attn.v.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<16x16xf32>
    %layer0.attn.v.b = graph.param "layer0.attn.v.b" {init = {kind = "zeros"}} : tensor<16xf32>
    %layer0.attn.out.w = graph.param "layer0.attn.out.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 0.014142135623730949 : f64}} : tensor<16x16xf32>
    %layer0.attn.out.b = graph.param "layer0.attn.out.b" {init = {kind = "zeros"}} : tensor<16xf32>
    %layer0.mlp.norm.scale = graph.param "layer0.mlp.norm.scale" {init = {kind = "ones"}} : tensor<16xf32>
    %layer0.mlp.norm.bias = graph.param "layer0.mlp.norm.bias" {init = {kind = "zeros"}} : tensor<16xf32>
    %layer0.mlp.fc1.w = graph.param "layer0.mlp.fc1.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 2.000000e-02 : f64}} : tensor<16x64xf32>
    %layer0.mlp.fc1.b = graph.param "layer0.mlp.fc1.b" {init = {kind = "zeros"}} : tensor<64xf32>
    %layer0.mlp.fc2.w = graph.param "layer0.mlp.fc2.w" {init = {kind = "normal", mean = 0.000000e+00 : f64, std = 0.014142135623730949 : f64}} : tensor<64x16xf32>
    %layer0.mlp.fc2.b = graph.param "layer0.mlp.fc2.b" {init = {kind = "zeros"}} : tensor<16xf32>
    %head.norm.scale = graph.param "head.norm.scale" {init = {kind = "ones"}} : tensor<16xf32>
    %head.norm.bias = graph.param "head.norm.bias" {init = {kind = "zeros"}} : tensor<16xf32>
    %embeddings.token.embedding = graph.embedding "embeddings.token.embedding"(%ids, %embeddings.token.w) : (tensor<1x4xi64>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
    %embeddings.sum = graph.add "embeddings.sum"(%embeddings.token.embedding, %embeddings.position.w) : (tensor<1x4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.norm.layer_norm = graph.layer_norm "layer0.attn.norm.layer_norm"(%embeddings.sum, %layer0.attn.norm.scale, %layer0.attn.norm.bias) : (tensor<1x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.q.matmul = graph.matmul "layer0.attn.q.matmul"(%layer0.attn.norm.layer_norm, %layer0.attn.q.w) : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.q.add = graph.add "layer0.attn.q.add"(%layer0.attn.q.matmul, %layer0.attn.q.b) : (tensor<1x4x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.q.split = graph.reshape "layer0.attn.q.split"(%layer0.attn.q.add) {shape = array<i64: 1, 4, 2, 8>} : (tensor<1x4x16xf32>) -> tensor<1x4x2x8xf32>
    %layer0.attn.k.matmul = graph.matmul "layer0.attn.k.matmul"(%layer0.attn.norm.layer_norm, %layer0.attn.k.w) : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.k.add = graph.add "layer0.attn.k.add"(%layer0.attn.k.matmul, %layer0.attn.k.b) : (tensor<1x4x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.k.split = graph.reshape "layer0.attn.k.split"(%layer0.attn.k.add) {shape = array<i64: 1, 4, 2, 8>} : (tensor<1x4x16xf32>) -> tensor<1x4x2x8xf32>
    %layer0.attn.v.matmul = graph.matmul "layer0.attn.v.matmul"(%layer0.attn.norm.layer_norm, %layer0.attn.v.w) : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.v.add = graph.add "layer0.attn.v.add"(%layer0.attn.v.matmul, %layer0.attn.v.b) : (tensor<1x4x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.v.split = graph.reshape "layer0.attn.v.split"(%layer0.attn.v.add) {shape = array<i64: 1, 4, 2, 8>} : (tensor<1x4x16xf32>) -> tensor<1x4x2x8xf32>
    %layer0.attn.context = graph.attention "layer0.attn.context"(%layer0.attn.q.split, %layer0.attn.k.split, %layer0.attn.v.split) {causal = true} : (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
    %layer0.attn.context.flat = graph.reshape "layer0.attn.context.flat"(%layer0.attn.context) {shape = array<i64: 1, 4, 16>} : (tensor<1x4x2x8xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.out.matmul = graph.matmul "layer0.attn.out.matmul"(%layer0.attn.context.flat, %layer0.attn.out.w) : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.out.add = graph.add "layer0.attn.out.add"(%layer0.attn.out.matmul, %layer0.attn.out.b) : (tensor<1x4x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.attn.residual = graph.add "layer0.attn.residual"(%embeddings.sum, %layer0.attn.out.add) : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %layer0.mlp.norm.layer_norm = graph.layer_norm "layer0.mlp.norm.layer_norm"(%layer0.attn.residual, %layer0.mlp.norm.scale, %layer0.mlp.norm.bias) : (tensor<1x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.mlp.fc1.matmul = graph.matmul "layer0.mlp.fc1.matmul"(%layer0.mlp.norm.layer_norm, %layer0.mlp.fc1.w) : (tensor<1x4x16xf32>, tensor<16x64xf32>) -> tensor<1x4x64xf32>
    %layer0.mlp.fc1.add = graph.add "layer0.mlp.fc1.add"(%layer0.mlp.fc1.matmul, %layer0.mlp.fc1.b) : (tensor<1x4x64xf32>, tensor<64xf32>) -> tensor<1x4x64xf32>
    %layer0.mlp.gelu = graph.gelu "layer0.mlp.gelu"(%layer0.mlp.fc1.add) {approximate = true} : (tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
    %layer0.mlp.fc2.matmul = graph.matmul "layer0.mlp.fc2.matmul"(%layer0.mlp.gelu, %layer0.mlp.fc2.w) : (tensor<1x4x64xf32>, tensor<64x16xf32>) -> tensor<1x4x16xf32>
    %layer0.mlp.fc2.add = graph.add "layer0.mlp.fc2.add"(%layer0.mlp.fc2.matmul, %layer0.mlp.fc2.b) : (tensor<1x4x16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %layer0.mlp.residual = graph.add "layer0.mlp.residual"(%layer0.attn.residual, %layer0.mlp.fc2.add) : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
    %head.norm.layer_norm = graph.layer_norm "head.norm.layer_norm"(%layer0.mlp.residual, %head.norm.scale, %head.norm.bias) : (tensor<1x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x4x16xf32>
    %head.logits = graph.matmul "head.logits"(%head.norm.layer_norm, %embeddings.token.w) {transpose_b = true} : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
    %head.loss = graph.softmax_cross_entropy "head.loss"(%head.logits, %targets) : (tensor<1x4x16xf32>, tensor<1x4xi64>) -> tensor<f32>
    graph.return %head.loss : tensor<f32>
  }
}
