#include "runtime/core/ElementChain.h"

#include "runtime/core/Convert.h"
#include "runtime/core/StepVariants.h"

namespace ampc::rt {
namespace {

using num::BinaryFn;
using num::ChainKind;
using num::UnaryFn;

constexpr const char *kBackward = "backward:";

/// The kind, function and operand count of op `name`, or false.
bool parseOp(const std::string &name, ChainKind &kind, uint8_t &fn, int &arity) {
  if (std::optional<BinaryFn> b = binaryFnNamed(name)) {
    kind = ChainKind::Binary, fn = (uint8_t)*b, arity = 2;
    return true;
  }
  bool backward = name.rfind(kBackward, 0) == 0;
  std::optional<UnaryFn> u =
      unaryFnNamed(backward ? name.substr(std::string(kBackward).size()) : name);
  if (!u)
    return false;
  kind = backward ? ChainKind::Derivative : ChainKind::Value;
  fn = (uint8_t)*u;
  arity = backward ? 3 : 1;
  return true;
}

} // namespace

std::optional<ChainOpSpec> chainOpOf(const Step &step, const StepAttrs &attrs,
                                     std::vector<int> args) {
  for (size_t i = 0; i < args.size(); ++i)
    if (attrs.roundedInput(i) != DType::F32) // a fused cast the chain does not spell
      return std::nullopt;
  ChainOpSpec op;
  size_t arity;
  if (std::optional<BinaryFn> b = binaryFnOf(step.kernel)) {
    op.name = binaryFnName(*b);
    arity = 2;
  } else if (isUnaryKernel(step.kernel) || step.kernel == Kernel::UnaryBackward) {
    UnaryCall u = unaryCallOf(step, attrs);
    bool backward = step.kernel == Kernel::UnaryBackward;
    op.name = std::string(backward ? kBackward : "") + unaryFnName(u.fn);
    op.p0 = u.p0, op.p1 = u.p1;
    arity = backward ? 3 : 1;
  } else {
    return std::nullopt;
  }
  if (arity != args.size())
    return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i)
    op.args[i] = args[i];
  return op;
}

void writeChain(const std::vector<ChainOpSpec> &ops, const std::vector<int> &results,
                Json &attrs) {
  Json names = Json::array(), args = Json::array(), rounds = Json::array(),
       params = Json::array();
  for (const ChainOpSpec &op : ops) {
    names.push_back(op.name);
    for (int a : op.args)
      args.push_back(a);
    rounds.push_back(op.round);
    params.push_back(op.p0);
    params.push_back(op.p1);
  }
  attrs["ops"] = names;
  attrs["args"] = args;
  attrs["rounds"] = rounds;
  attrs["params"] = params;
  attrs["results"] = results;
}

num::Chain decodeChain(const StepAttrs &attrs, size_t inputs, size_t outputs) {
  std::vector<std::string> names = attrs.getStrs("ops"), rounds = attrs.getStrs("rounds");
  std::vector<int64_t> args = attrs.getInts("args"), results = attrs.getInts("results");
  std::vector<double> params = attrs.getReals("params");
  size_t n = names.size();
  if (inputs < 1 || inputs > (size_t)num::kChainInputs)
    throw PlanError("a chain reads 1 to " + std::to_string(num::kChainInputs) + " operands");
  if (outputs < 1 || outputs > (size_t)num::kChainOutputs)
    throw PlanError("a chain writes 1 to " + std::to_string(num::kChainOutputs) + " results");
  if (n < 1 || n > (size_t)num::kChainOps)
    throw PlanError("a chain has 1 to " + std::to_string(num::kChainOps) + " ops");
  if (args.size() != 3 * n || rounds.size() != n || params.size() != 2 * n)
    throw PlanError("a chain of " + std::to_string(n) +
                    " ops needs 3 args, a round and 2 params per op");
  if (results.size() != outputs)
    throw PlanError("a chain of " + std::to_string(outputs) + " results needs as many slots in " +
                    "'results'");
  num::Chain c{};
  c.inputs = (int)inputs;
  c.ops = (int)n;
  c.outputs = (int)outputs;
  for (size_t k = 0; k < outputs; ++k) {
    // Results are ops' values: a copy of an operand is no chain's work.
    if (results[k] < (int64_t)inputs || results[k] >= (int64_t)(inputs + n))
      throw PlanError("result " + std::to_string(k) + " stores a bad slot " +
                      std::to_string(results[k]));
    c.result[k] = (int8_t)results[k];
  }
  for (size_t j = 0; j < n; ++j) {
    num::ChainOp &o = c.op[j];
    int arity;
    if (!parseOp(names[j], o.kind, o.fn, arity))
      throw PlanError("unknown chain op '" + names[j] + "'");
    for (int k = 0; k < 3; ++k) {
      int64_t a = args[3 * j + k];
      bool used = k < arity;
      // An op reads operands and earlier ops' values only.
      if (used ? a < 0 || a >= (int64_t)(inputs + j) : a != -1)
        throw PlanError("op " + std::to_string(j) + " ('" + names[j] + "') has a bad slot " +
                        std::to_string(a));
      o.arg[k] = (int8_t)a;
    }
    if (rounds[j].empty())
      o.round = num::ChainRound::None;
    else if (rounds[j] == "f16")
      o.round = num::ChainRound::F16;
    else if (rounds[j] == "bf16")
      o.round = num::ChainRound::BF16;
    else
      throw PlanError("op " + std::to_string(j) + " rounds to '" + rounds[j] +
                      "', not \"\", f16 or bf16");
    o.p0 = narrow(params[2 * j]);
    o.p1 = narrow(params[2 * j + 1]);
  }
  return c;
}

} // namespace ampc::rt
