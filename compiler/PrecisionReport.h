// What `ampc report` prints: per op type, how many nodes compute in each
// dtype; the number of casts; and the share of FLOPs that run in low precision.
#ifndef AMPC_COMPILER_PRECISIONREPORT_H
#define AMPC_COMPILER_PRECISIONREPORT_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"

namespace ampc {

struct PrecisionReport {
  std::string graph;
  int64_t nodes = 0, casts = 0;
  /// Low precision: f16, bf16 and FP8 (of which flopsFp8).
  double flopsTotal = 0, flopsLowPrecision = 0, flopsFp8 = 0;
  /// Elements of the params: trained, and state (running statistics,
  /// optimizer moments, loss scale).
  int64_t trainableElements = 0, stateElements = 0;
  /// op -> compute dtype -> node count.
  std::map<std::string, std::map<std::string, int64_t>> ops;
  /// The execution plan's memory: arena (inputs and temporaries, with reuse)
  /// and persistent state (params, consts); peak = both; unshared = the
  /// arena without reuse.
  int64_t arenaBytes = 0, persistentBytes = 0, unsharedBytes = 0;
  int64_t peakBytes() const { return arenaBytes + persistentBytes; }
  /// Data parallel: each `all_reduce` bucket's dtype and bytes, in order,
  /// and the ranks they sum over (1: none).
  std::vector<std::pair<std::string, int64_t>> buckets;
  int64_t worldSize = 1;
  int64_t allreduceBytes() const;
};

/// The dtype a node computes in: that of its first float output
/// (docs/graph-format.md), else of its first output.
std::string computeDtype(mlir::Operation *op);

/// Estimated FLOPs of one node under its kernel's FLOP rule (the kernel
/// traits): 2*M*N*K for matmul and conv2d, one per output element for
/// elementwise ops, five per element for normalisations and softmax, none
/// for data movement and casts.
double nodeFlops(mlir::Operation *op);

PrecisionReport makeReport(mlir::ModuleOp module);
std::string reportText(const PrecisionReport &r);
std::string reportJson(const PrecisionReport &r);

} // namespace ampc

#endif
