#include "compiler/PrecisionReport.h"

#include <cstdio>

#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Lowering.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/JsonText.h"
#include "runtime/core/KernelTraits.h"

using namespace mlir;

namespace ampc {

std::string computeDtype(Operation *op) {
  if (auto gemm = dyn_cast<graph::Fp8MatmulOp>(op)) // FP8 tensor-core work
    return graph::dtypeName(graph::elementType(gemm.getA().getType()));
  for (Value r : op->getResults())
    if (graph::isFloatTensor(r.getType()))
      return graph::dtypeName(graph::elementType(r.getType()));
  return op->getNumResults() ? graph::dtypeName(graph::elementType(op->getResult(0).getType()))
                             : "";
}

static std::vector<int64_t> shapeOf(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return {shape.begin(), shape.end()};
}

double nodeFlops(Operation *op) {
  std::optional<rt::Kernel> kernel = kernelOf(op);
  if (!kernel) // runs no kernel (a constant becomes a buffer)
    return 0;
  const rt::KernelTraits *traits = &rt::traitsOf(*kernel);
  std::vector<std::vector<int64_t>> inputs, outputs;
  for (Value v : op->getOperands())
    inputs.push_back(shapeOf(v));
  for (Value v : op->getResults())
    outputs.push_back(shapeOf(v));
  auto flag = [&](llvm::StringRef name) {
    auto a = op->getAttrOfType<BoolAttr>(name);
    return a && a.getValue();
  };
  return rt::kernelFlops(*traits, inputs, outputs, {flag("transpose_a"), flag("causal")});
}

PrecisionReport makeReport(ModuleOp module) {
  auto g = cast<graph::GraphOp>(theGraph(module));
  PrecisionReport r;
  r.graph = g.getSymName().str();
  for (Operation &op : g.getBody().front()) {
    if (auto p = dyn_cast<graph::ParamOp>(op)) {
      int64_t n = cast<RankedTensorType>(p.getType()).getNumElements();
      (p.getTrainable().value_or(true) ? r.trainableElements : r.stateElements) += n;
    }
    if (isa<graph::ReturnOp>(op) || graph::isValueOp(&op))
      continue;
    std::string opName = op.getName().getStringRef().drop_front(6).str();
    std::string dtype = computeDtype(&op);
    ++r.nodes;
    ++r.ops[opName][dtype];
    if (isa<graph::CastOp>(op))
      ++r.casts;
    if (auto reduce = dyn_cast<graph::AllReduceOp>(op)) {
      int64_t bytes = 0;
      for (Value v : reduce.getGrads()) {
        auto t = cast<RankedTensorType>(v.getType());
        bytes += t.getNumElements() * (t.getElementType().getIntOrFloatBitWidth() / 8);
      }
      r.buckets.push_back({computeDtype(&op), bytes});
      r.worldSize = std::max<int64_t>(r.worldSize, (int64_t)reduce.getWorldSize());
    }
    double flops = nodeFlops(&op);
    r.flopsTotal += flops;
    bool fp8 = dtype == "f8e4m3" || dtype == "f8e5m2";
    if (dtype == "f16" || dtype == "bf16" || fp8)
      r.flopsLowPrecision += flops;
    if (fp8)
      r.flopsFp8 += flops;
  }
  rt::Plan plan = lowerToPlan(module);
  r.arenaBytes = plan.arenaBytes;
  r.persistentBytes = plan.persistentBytes;
  r.unsharedBytes = plan.unsharedBytes;
  return r;
}

int64_t PrecisionReport::allreduceBytes() const {
  int64_t total = 0;
  for (const auto &[dtype, bytes] : buckets)
    total += bytes;
  return total;
}

static double share(const PrecisionReport &r) {
  return r.flopsTotal > 0 ? r.flopsLowPrecision / r.flopsTotal : 0.0;
}

std::string reportText(const PrecisionReport &r) {
  char line[256];
  std::string out = "graph " + r.graph + ": " + std::to_string(r.nodes) + " nodes, " +
                    std::to_string(r.casts) + " casts\n";
  std::snprintf(line, sizeof line, "%-24s %8s %8s %8s %8s\n", "op", "f32", "f16", "bf16",
                "other");
  out += line;
  for (const auto &[op, counts] : r.ops) {
    int64_t other = 0;
    for (const auto &[dtype, n] : counts)
      if (dtype != "f32" && dtype != "f16" && dtype != "bf16")
        other += n;
    auto count = [&](const char *d) {
      auto it = counts.find(d);
      return it == counts.end() ? 0 : it->second;
    };
    std::snprintf(line, sizeof line, "%-24s %8lld %8lld %8lld %8lld\n", op.c_str(),
                  (long long)count("f32"), (long long)count("f16"),
                  (long long)count("bf16"), (long long)other);
    out += line;
  }
  std::snprintf(line, sizeof line, "parameters: %lld trainable, %lld state\n",
                (long long)r.trainableElements, (long long)r.stateElements);
  out += line;
  std::snprintf(line, sizeof line, "FLOPs: %.4g total, %.4g in low precision (%.2f%%)",
                r.flopsTotal, r.flopsLowPrecision, 100.0 * share(r));
  out += line;
  if (r.flopsFp8 > 0) {
    std::snprintf(line, sizeof line, ", %.4g in fp8 (%.2f%%)", r.flopsFp8,
                  100.0 * r.flopsFp8 / r.flopsTotal);
    out += line;
  }
  out += "\n";
  std::snprintf(line, sizeof line,
                "peak planned bytes: %lld (arena %lld, %lld without reuse; persistent %lld)\n",
                (long long)r.peakBytes(), (long long)r.arenaBytes, (long long)r.unsharedBytes,
                (long long)r.persistentBytes);
  out += line;
  if (!r.buckets.empty()) {
    std::snprintf(line, sizeof line,
                  "allreduce over %lld ranks: %zu buckets, %lld bytes per step per rank:",
                  (long long)r.worldSize, r.buckets.size(), (long long)r.allreduceBytes());
    out += line;
    for (const auto &[dtype, bytes] : r.buckets)
      out += " " + std::to_string(bytes) + " (" + dtype + ")";
    out += "\n";
  }
  return out;
}

std::string reportJson(const PrecisionReport &r) {
  Json ops = Json::object();
  for (const auto &[op, counts] : r.ops) {
    Json c = {{"f32", 0}, {"f16", 0}, {"bf16", 0}};
    for (const auto &[dtype, n] : counts)
      c[dtype] = n;
    ops[op] = c;
  }
  Json j = {{"graph", r.graph},
            {"nodes", r.nodes},
            {"casts", r.casts},
            {"trainable_parameters", r.trainableElements},
            {"state_parameters", r.stateElements},
            {"flops_total", r.flopsTotal},
            {"flops_low_precision", r.flopsLowPrecision},
            {"flops_fp8", r.flopsFp8},
            {"low_precision_flop_share", share(r)},
            {"peak_bytes", r.peakBytes()},
            {"arena_bytes", r.arenaBytes},
            {"unshared_arena_bytes", r.unsharedBytes},
            {"persistent_bytes", r.persistentBytes},
            {"ops", ops}};
  if (!r.buckets.empty()) {
    Json buckets = Json::array();
    for (const auto &[dtype, bytes] : r.buckets)
      buckets.push_back({{"dtype", dtype}, {"bytes", bytes}});
    j["allreduce"] = {{"world_size", r.worldSize},
                      {"buckets", buckets},
                      {"bytes_per_step", r.allreduceBytes()}};
  }
  return rt::dumpJson(j, 2) + "\n";
}

} // namespace ampc
