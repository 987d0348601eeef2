// graph-fold-casts: float cast chains that widen first fold, no-op and dead
// casts go; chains that narrow first (they round), integer casts and graph
// outputs stay, and other unused nodes are never removed.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-fold-casts))' | FileCheck %s

// CHECK-LABEL: graph.graph @chains
// A user's f32 -> f16 -> f32 round trip keeps its rounding; so does f16 -> bf16.
// CHECK: %h = graph.cast "h"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: %b = graph.cast "b"(%h) {to = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
// CHECK: %back = graph.cast "back"(%h) {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: %r = graph.relu "r"(%back) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %i2 = graph.cast "i2"(%i1) {to = f32}
// CHECK: %unused = graph.relu "unused"(%x)
// CHECK: %keep = graph.cast "keep"(%x) {to = f32}
// Widening first is exact: f16 -> f32 -> f16 is f16 as it was, f16 -> f32 -> bf16 one cast.
// CHECK: %s = graph.relu "s"(%y) : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: %to_bf16 = graph.cast "to_bf16"(%y) {to = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
// CHECK-NOT: "dead"
// CHECK-NOT: "wide"
// CHECK-NOT: "narrow"
graph.graph @chains {
  %x = graph.input "x" : tensor<4xf32>
  %y = graph.input "y" : tensor<4xf16>
  %h = graph.cast "h"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %b = graph.cast "b"(%h) {to = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
  %back = graph.cast "back"(%h) {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %r = graph.relu "r"(%back) : (tensor<4xf32>) -> tensor<4xf32>
  %i1 = graph.cast "i1"(%x) {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
  %i2 = graph.cast "i2"(%i1) {to = f32} : (tensor<4xi32>) -> tensor<4xf32>
  %dead = graph.cast "dead"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %unused = graph.relu "unused"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %keep = graph.cast "keep"(%x) {to = f32} : (tensor<4xf32>) -> tensor<4xf32>
  %wide = graph.cast "wide"(%y) {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %narrow = graph.cast "narrow"(%wide) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %s = graph.relu "s"(%narrow) : (tensor<4xf16>) -> tensor<4xf16>
  %to_bf16 = graph.cast "to_bf16"(%wide) {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  graph.return %b, %r, %i2, %keep, %s, %to_bf16 : tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>
}

// -----

// A float fill read only by a cast becomes the fill of the cast's dtype, its
// value rounded as the cast would round it (0.1 in f16 is 0.0999755859375;
// 1e5 overflows f16 to infinity). A fill with other readers, or a cast that
// is a graph output, stays.
// CHECK-LABEL: graph.graph @fills
// CHECK: %tenth = graph.fill "tenth"() {value = 0.0999755859375 : f64} : () -> tensor<f16>
// CHECK: %big = graph.fill "big"() {value = 0x7FF0000000000000 : f64} : () -> tensor<f16>
// CHECK: %shared = graph.fill "shared"() {value = 2.000000e+00 : f64} : () -> tensor<f32>
// CHECK: %shared_h = graph.cast "shared_h"(%shared)
// CHECK: %out = graph.cast "out"(%o) {to = f16}
// CHECK-NOT: "tenth_h"
// CHECK-NOT: "big_h"
graph.graph @fills {
  %x = graph.input "x" : tensor<4xf16>
  %tenth = graph.fill "tenth"() {value = 0.1 : f64} : () -> tensor<f32>
  %tenth_h = graph.cast "tenth_h"(%tenth) {to = f16} : (tensor<f32>) -> tensor<f16>
  %a = graph.minimum "a"(%x, %tenth_h) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %big = graph.fill "big"() {value = 1.0e5 : f64} : () -> tensor<f32>
  %big_h = graph.cast "big_h"(%big) {to = f16} : (tensor<f32>) -> tensor<f16>
  %b = graph.minimum "b"(%a, %big_h) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %shared = graph.fill "shared"() {value = 2.0 : f64} : () -> tensor<f32>
  %shared_h = graph.cast "shared_h"(%shared) {to = f16} : (tensor<f32>) -> tensor<f16>
  %c = graph.maximum "c"(%b, %shared_h) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %o = graph.fill "o"() {value = 3.0 : f64} : () -> tensor<f32>
  %out = graph.cast "out"(%o) {to = f16} : (tensor<f32>) -> tensor<f16>
  graph.return %c, %shared, %out : tensor<4xf16>, tensor<f32>, tensor<f16>
}

// -----

// A float constant read only by a cast becomes the constant of the cast's
// dtype, each element rounded as the cast would round it (0.1 in f16 is
// 0.0999755859375; 1e5 overflows to infinity; 1e-8 is below f16's smallest
// subnormal and rounds to 0). A constant with other readers, one holding a
// NaN, and a constant cast to FP8 (which saturates) stay casts.
// CHECK-LABEL: graph.graph @constants
// CHECK: %table = graph.constant "table"() {value = dense<[1.000000e+00, 9.997550e-02, 0x7C00, 0.000000e+00]> : tensor<4xf16>} : () -> tensor<4xf16>
// CHECK: %wide = graph.constant "wide"() {value = dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-NOT: "table_h"
// CHECK-NOT: "wide_d"
// CHECK: %shared_h = graph.cast "shared_h"(%shared)
// CHECK: %nan_h = graph.cast "nan_h"(%nan)
// CHECK: %eight = graph.cast "eight"(%fp8) {to = f8E4M3FN}
graph.graph @constants {
  %x = graph.input "x" : tensor<4xf16>
  %table = graph.constant "table"() {value = dense<[1.0, 0.1, 1.0e5, 1.0e-8]> : tensor<4xf32>} : () -> tensor<4xf32>
  %table_h = graph.cast "table_h"(%table) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %a = graph.mul "a"(%x, %table_h) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %wide = graph.constant "wide"() {value = dense<[1.0, 0.5]> : tensor<2xbf16>} : () -> tensor<2xbf16>
  %wide_d = graph.cast "wide_d"(%wide) {to = f32} : (tensor<2xbf16>) -> tensor<2xf32>
  %d = graph.add "d"(%wide_d, %wide_d) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %shared = graph.constant "shared"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %shared_h = graph.cast "shared_h"(%shared) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %b = graph.mul "b"(%a, %shared_h) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %nan = graph.constant "nan"() {value = dense<[1.0, 0x7FC00000, 2.0, 3.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %nan_h = graph.cast "nan_h"(%nan) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %c = graph.mul "c"(%b, %nan_h) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %fp8 = graph.constant "fp8"() {value = dense<[1.0, 500.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %eight = graph.cast "eight"(%fp8) {to = f8E4M3FN} : (tensor<2xf32>) -> tensor<2xf8E4M3FN>
  graph.return %c, %shared, %d, %eight : tensor<4xf16>, tensor<4xf32>, tensor<2xf32>, tensor<2xf8E4M3FN>
}
