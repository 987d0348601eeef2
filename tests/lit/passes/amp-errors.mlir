// Bad AMP options are errors on the graph.
// RUN: ampc-opt %s -verify-diagnostics --pass-pipeline='builtin.module(graph.graph(graph-amp{level=O7}))'
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{dtype=f8}))' 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-white-list=frobnicate}))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-white-list=cast}))' 2>&1 | FileCheck %s --check-prefix=NO-LIST
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-white-list=relu custom-gray-list=relu}))' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not ampc-opt %s --pass-pipeline='builtin.module(graph.graph(graph-amp{custom-black-varnames=nope}))' 2>&1 | FileCheck %s --check-prefix=VARNAME

// expected-error @+1 {{level must be O0, O1, O2 or O3, got 'O7'}}
graph.graph @g {
  %x = graph.input "x" : tensor<4xf32>
  %r = graph.relu "r"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  graph.return %r : tensor<4xf32>
}

// DTYPE: dtype must be f16, bf16 or fp8, got 'f8'
// UNKNOWN: error: custom_white_list: unknown op 'frobnicate'
// NO-LIST: error: custom_white_list: op 'cast' is on no AMP list and cannot be moved
// TWICE: error: op 'relu' is in both custom_white_list and custom_gray_list
// VARNAME: error: custom_black_varnames: 'nope' names no value
