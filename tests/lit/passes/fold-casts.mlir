// graph-fold-casts: float cast chains fold, no-op and dead casts go, integer
// casts and graph outputs stay, and other unused nodes are never removed.
// RUN: ampc-opt %s -split-input-file --pass-pipeline='builtin.module(graph.graph(graph-fold-casts))' | FileCheck %s

// CHECK-LABEL: graph.graph @chains
// CHECK: %b = graph.cast "b"(%x) {to = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK: %r = graph.relu "r"(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %i2 = graph.cast "i2"(%i1) {to = f32}
// CHECK: %unused = graph.relu "unused"(%x)
// CHECK: %keep = graph.cast "keep"(%x) {to = f32}
// CHECK-NOT: "h"
// CHECK-NOT: "back"
// CHECK-NOT: "dead"
graph.graph @chains {
  %x = graph.input "x" : tensor<4xf32>
  %h = graph.cast "h"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %b = graph.cast "b"(%h) {to = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
  %back = graph.cast "back"(%h) {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %r = graph.relu "r"(%back) : (tensor<4xf32>) -> tensor<4xf32>
  %i1 = graph.cast "i1"(%x) {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
  %i2 = graph.cast "i2"(%i1) {to = f32} : (tensor<4xi32>) -> tensor<4xf32>
  %dead = graph.cast "dead"(%x) {to = f16} : (tensor<4xf32>) -> tensor<4xf16>
  %unused = graph.relu "unused"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %keep = graph.cast "keep"(%x) {to = f32} : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %b, %r, %i2, %keep : tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
