#include "runtime/core/Plan.h"

#include <algorithm>
#include <climits>

#include "runtime/core/Files.h"
#include "runtime/core/JsonFields.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/StepAttrs.h"

namespace ampc::rt {

const char *kindName(BufferKind k) {
  switch (k) {
  case BufferKind::Input: return "input";
  case BufferKind::Param: return "param";
  case BufferKind::Const: return "const";
  case BufferKind::Temp: return "temp";
  case BufferKind::State: return "state";
  }
  return "?";
}

int Plan::addBuffer(const std::string &name, BufferKind kind, DType dtype,
                    std::vector<int64_t> shape) {
  Buffer b;
  b.id = (int)buffers.size();
  b.name = name;
  b.kind = kind;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.bytes = numElements(b.shape) * (int64_t)dtypeSize(dtype);
  buffers.push_back(std::move(b));
  return buffers.back().id;
}

int Plan::find(const std::string &name) const {
  for (const Buffer &b : buffers)
    if (b.name == name)
      return b.id;
  return -1;
}

/// Whether a buffer's JSON carries its values ("data"): consts, and params
/// of given values (init "data"). The writer and the reader agree on it.
static bool carriesData(const Buffer &b) {
  return b.kind == BufferKind::Const ||
         (b.kind == BufferKind::Param && b.init.value("kind", "") == "data");
}

std::string planToJson(const Plan &plan) {
  std::string out = "{\n  \"format\": \"ampc.plan\",\n  \"version\": " +
                    std::to_string(kPlanVersion) + ",\n";
  out += "  \"name\": " + dumpJson(Json(plan.name)) + ",\n";
  Json target = {{"name", plan.target.name},
                 {"alignment", plan.target.alignment},
                 {"fused_casts", plan.target.fusedCasts},
                 {"in_order_lists", plan.target.inOrderLists},
                 {"gemm_epilogues", plan.target.gemmEpilogues},
                 {"elementwise_chains", plan.target.elementwiseChains},
                 {"max_attention_head_dim", plan.target.maxAttentionHeadDim},
                 {"fp8_gemms_tn", plan.target.fp8GemmsTN}};
  out += "  \"target\": " + dumpJson(target) + ",\n";
  out += "  \"arena_bytes\": " + std::to_string(plan.arenaBytes) + ",\n";
  out += "  \"persistent_bytes\": " + std::to_string(plan.persistentBytes) + ",\n";
  out += "  \"unshared_bytes\": " + std::to_string(plan.unsharedBytes) + ",\n";
  out += "  \"peak_bytes\": " + std::to_string(plan.peakBytes()) + ",\n";
  out += "  \"buffers\": [";
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const Buffer &b = plan.buffers[i];
    Json j = {{"id", b.id}, {"name", b.name}, {"kind", kindName(b.kind)},
              {"dtype", dtypeName(b.dtype)}, {"shape", b.shape},
              {"offset", b.offset}, {"bytes", b.bytes}};
    if (b.kind == BufferKind::Param) {
      j["init"] = b.init;
      if (!b.trainable)
        j["trainable"] = false;
      if (!b.masterDtype.empty())
        j["master_dtype"] = b.masterDtype;
      if (b.copyOf >= 0)
        j["copy_of"] = b.copyOf;
    }
    if (carriesData(b)) // an empty one too: the reader requires it
      j["data"] = tensorDataToJson(b.data, isStoredFloat(b.dtype) && b.dtype != DType::F64);
    out += (i ? ",\n    " : "\n    ") + dumpJson(j);
  }
  out += "\n  ],\n  \"steps\": [";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    Json j = {{"name", s.name}, {"kernel", kernelName(s.kernel)}, {"inputs", s.inputs},
              {"outputs", s.outputs}, {"attrs", s.attrs}};
    out += (i ? ",\n    " : "\n    ") + dumpJson(j);
  }
  out += "\n  ],\n  \"inputs\": " + dumpJson(Json(plan.inputs)) +
         ",\n  \"outputs\": " + dumpJson(Json(plan.outputs)) +
         ",\n  \"loss\": " + std::to_string(plan.loss) +
         ",\n  \"iteration\": " + std::to_string(plan.iteration) +
         ",\n  \"skipped_steps\": " + std::to_string(plan.skippedSteps) + "\n}\n";
  return out;
}

namespace {

using Fields = JsonFields<PlanError>;

/// Dimensions and byte counts stay below 2^62, so their products are checked
/// without overflow.
constexpr int64_t kMaxSize = int64_t(1) << 62;

std::vector<int> ids(const Fields &f, const char *key, size_t count) {
  std::vector<int> out;
  for (const Json &id : f.array(key)) {
    if (!id.is_number_integer())
      f.fail("\"" + std::string(key) + "\" must be a list of buffer ids");
    if (id.is_number_unsigned() ? id.get<uint64_t>() >= count
                                : id.get<int64_t>() < 0 || id.get<int64_t>() >= (int64_t)count)
      f.fail("buffer id " + id.dump() + " does not exist");
    out.push_back(id.get<int>());
  }
  return out;
}

/// A param's init spec: an object with a known kind and numeric fields.
Json initSpec(const Fields &f, const std::string &where) {
  if (!f.has("init"))
    return Json{{"kind", "zeros"}};
  Fields init(f.object("init"), where + ": init");
  std::string kind = init.str("kind", "zeros");
  static const char *kinds[] = {"zeros", "ones",           "constant",      "normal",
                                "uniform", "xavier_uniform", "kaiming_normal", "data"};
  if (std::find(std::begin(kinds), std::end(kinds), kind) == std::end(kinds))
    init.fail("unknown kind '" + kind + "'");
  for (const char *field : {"value", "mean", "std", "low", "high"})
    init.number(field, 0.0);
  return f.object("init");
}

Buffer readBuffer(const Json &jb, const Plan &plan) {
  Buffer b;
  Fields f(jb, "buffer " + std::to_string(plan.buffers.size()));
  b.id = (int)f.integer("id", 0, INT32_MAX);
  if (b.id != (int)plan.buffers.size())
    f.fail("ids must count up from 0");
  b.name = f.str("name");
  std::string where = "buffer " + std::to_string(b.id) + " ('" + b.name + "')";
  Fields g(jb, where);
  std::string kind = g.str("kind");
  bool known = false;
  for (BufferKind k : {BufferKind::Input, BufferKind::Param, BufferKind::Const,
                       BufferKind::Temp, BufferKind::State})
    if (kind == kindName(k)) {
      b.kind = k;
      known = true;
    }
  if (!known)
    g.fail("unknown kind '" + kind + "'");
  auto dtype = parseDType(g.str("dtype"));
  if (!dtype)
    g.fail("unknown dtype");
  b.dtype = *dtype;
  b.shape = g.integers("shape", 0, kMaxSize);
  int64_t elements = 1;
  for (int64_t d : b.shape)
    if (d != 0 && elements > kMaxSize / d / 8)
      g.fail("the shape has too many elements");
    else
      elements *= d;
  b.offset = g.integer("offset", 0, kMaxSize);
  b.bytes = g.integer("bytes", 0, kMaxSize);
  if (b.bytes != elements * (int64_t)dtypeSize(b.dtype))
    g.fail("bytes do not match dtype and shape");
  int64_t region = b.isPersistent() ? plan.persistentBytes : plan.arenaBytes;
  if (b.offset % plan.target.alignment || b.offset + b.bytes > region)
    g.fail("offset out of its region");
  if (b.kind == BufferKind::Param) {
    b.init = initSpec(g, where);
    b.trainable = g.boolean("trainable", true);
    b.masterDtype = g.str("master_dtype", "");
    if (!b.masterDtype.empty() && !parseDType(b.masterDtype))
      g.fail("unknown master_dtype");
    b.copyOf = g.has("copy_of") ? (int)g.integer("copy_of", 0, INT32_MAX) : -1;
  }
  if (carriesData(b)) {
    if ((int64_t)g.array("data").size() != elements)
      g.fail("data does not fill the shape");
    b.data = g.numbers("data");
  }
  return b;
}

/// A weight copy names another float param of its shape that is no copy.
void checkCopy(const Plan &plan, const Buffer &b) {
  if (b.copyOf < 0)
    return;
  auto bad = [&](const std::string &why) {
    return PlanError("buffer " + std::to_string(b.id) + " ('" + b.name + "'): copy_of " + why);
  };
  if (b.copyOf >= (int)plan.buffers.size() || b.copyOf == b.id)
    throw bad("names no other buffer");
  const Buffer &source = plan.buffers[b.copyOf];
  if (source.kind != BufferKind::Param || source.copyOf >= 0 || !isFloat(source.dtype) ||
      !isFloat(b.dtype) || b.trainable || source.shape != b.shape)
    throw bad("must name a float param of its shape that is no copy, for an untrainable float "
              "param");
}

Step readStep(const Json &js, const Plan &plan) {
  Fields f(js, "step " + std::to_string(plan.steps.size()));
  Step s;
  s.name = f.str("name");
  Fields g(js, "step '" + s.name + "'");
  std::string kernel = g.str("kernel");
  std::optional<Kernel> known = kernelNamed(kernel);
  if (!known)
    throw PlanError("step '" + s.name + "': unknown kernel '" + kernel + "'");
  s.kernel = *known;
  s.inputs = ids(g, "inputs", plan.buffers.size());
  s.outputs = ids(g, "outputs", plan.buffers.size());
  s.attrs = g.has("attrs") ? g.object("attrs") : Json::object();
  return s;
}

} // namespace

Plan planFromJson(const std::string &text) {
  std::string error;
  std::optional<Json> parsed = parseJson(text, error);
  if (!parsed)
    throw PlanError(error);
  const Json &root = *parsed;
  if (!root.is_object() || !root.contains("format") || root["format"] != "ampc.plan")
    throw PlanError("not an ampc plan: \"format\" must be \"ampc.plan\"");
  if (!root.contains("version") || root["version"] != kPlanVersion)
    throw PlanError("unsupported plan version; this ampc reads version " +
                    std::to_string(kPlanVersion) + " (recompile the graph with ampc compile)");
  Fields f(root, "plan");
  Plan plan;
  plan.name = f.str("name");
  Fields target(f.object("target"), "target");
  plan.target.name = target.str("name");
  plan.target.alignment = target.integer("alignment", 1, 4096);
  plan.target.fusedCasts = target.boolean("fused_casts");
  plan.target.inOrderLists = target.boolean("in_order_lists");
  plan.target.gemmEpilogues = target.boolean("gemm_epilogues", false);
  plan.target.elementwiseChains = target.boolean("elementwise_chains", false);
  plan.target.maxAttentionHeadDim =
      target.has("max_attention_head_dim") ? target.integer("max_attention_head_dim", 0, 1 << 20)
                                           : 0;
  plan.target.fp8GemmsTN = target.boolean("fp8_gemms_tn", false);
  int64_t alignment = plan.target.alignment;
  if (alignment & (alignment - 1))
    target.fail("alignment must be a power of two up to 4096");
  plan.arenaBytes = f.integer("arena_bytes", 0, kMaxSize);
  plan.persistentBytes = f.integer("persistent_bytes", 0, kMaxSize);
  plan.unsharedBytes = f.integer("unshared_bytes", 0, kMaxSize);
  for (const Json &jb : f.array("buffers"))
    plan.buffers.push_back(readBuffer(jb, plan));
  for (const Buffer &b : plan.buffers)
    checkCopy(plan, b);
  for (const Json &js : f.array("steps"))
    plan.steps.push_back(readStep(js, plan));
  plan.inputs = ids(f, "inputs", plan.buffers.size());
  plan.outputs = ids(f, "outputs", plan.buffers.size());
  int64_t last = (int64_t)plan.buffers.size() - 1;
  plan.loss = (int)f.integer("loss", -1, last);
  plan.iteration = (int)f.integer("iteration", -1, last);
  plan.skippedSteps = (int)f.integer("skipped_steps", -1, last);
  for (auto [id, what] : {std::pair{plan.iteration, "iteration"},
                          std::pair{plan.skippedSteps, "skipped_steps"}}) {
    if (id < 0)
      continue;
    const Buffer &b = plan.buffers[id];
    if (b.kind != BufferKind::State || b.dtype != DType::I64 || !b.shape.empty())
      throw PlanError(std::string(what) + ": not an i64 scalar state buffer");
  }
  return plan;
}

Plan loadPlan(const std::string &path) {
  std::string error;
  std::optional<std::string> text = readFile(path, error);
  if (!text)
    throw PlanError("cannot read the file: " + error);
  return planFromJson(*text);
}

/// Whether `s` is a collective's bucket (all_reduce).
static bool isCollective(const Step &s) { return traitsOf(s.kernel).has(kPacksList); }

std::string stateOwner(const std::string &name, std::string_view suffix) {
  size_t stem = name.size() - suffix.size();
  bool owned = name.size() > suffix.size() && name.compare(stem, suffix.size(), suffix) == 0;
  return owned ? name.substr(0, stem) : "";
}

std::string initialValuesOwner(const Plan &plan, const std::string &name) {
  for (std::string_view suffix : {kMasterSuffix, kAverageSuffix})
    if (std::string owner = stateOwner(name, suffix); !owner.empty() && plan.find(owner) >= 0)
      return owner;
  return name;
}

bool buffersOverlap(const Plan &plan, int a, int b) {
  const Buffer &x = plan.buffers.at(a), &y = plan.buffers.at(b);
  return x.isPersistent() == y.isPersistent() && x.offset < y.offset + y.bytes &&
         y.offset < x.offset + x.bytes;
}

int64_t planWorldSize(const Plan &plan) {
  int64_t ranks = 1;
  for (const Step &s : plan.steps)
    if (isCollective(s))
      ranks = std::max<int64_t>(ranks, StepAttrs(s).getInt("world_size", 1));
  return ranks;
}

int64_t allreduceBytes(const Plan &plan) {
  int64_t bytes = 0;
  for (const Step &s : plan.steps)
    if (isCollective(s))
      for (int id : s.inputs)
        bytes += plan.buffers.at(id).bytes;
  return bytes;
}

} // namespace ampc::rt
