module {
  graph.graph @drop attributes {loss = "l"} {
    %x = graph.input "x" : tensor<16x32xf32>
    %t = graph.input "t" : tensor<16x8xf32>
    %w = graph.param "w" {init = {kind = "xavier_uniform"}} : tensor<32x8xf32>
    %xd = graph.dropout "d"(%x) {outs = ["xd"], rate = 3.000000e-01 : f64, seed = 7 : i64} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %xd.cast_f16 = graph.cast "xd.cast_f16"(%xd) {to = f16} : (tensor<16x32xf32>) -> tensor<16x32xf16>
    %w.cast_f16 = graph.cast "w.cast_f16"(%w) {to = f16} : (tensor<32x8xf32>) -> tensor<32x8xf16>
    %y = graph.matmul "mm"(%xd.cast_f16, %w.cast_f16) {outs = ["y"]} : (tensor<16x32xf16>, tensor<32x8xf16>) -> tensor<16x8xf16>
    %y.cast_f32 = graph.cast "y.cast_f32"(%y) {to = f32} : (tensor<16x8xf16>) -> tensor<16x8xf32>
    %l = graph.mse_loss "loss"(%y.cast_f32, %t) {outs = ["l"]} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<f32>
    graph.return %l : tensor<f32>
  }
}
