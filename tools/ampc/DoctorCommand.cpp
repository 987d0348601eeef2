// `ampc doctor` (docs/precision-doctor.md): trains N steps with range
// probes on every float value, then reports each value's magnitudes against
// the range of L, the ops closest to overflow, the gradients lost to
// underflow, and a verdict with the command line to train with.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "compiler/GraphDot.h"
#include "compiler/GraphIO.h"
#include "mlir/IR/MLIRContext.h"
#include "ops/GraphNames.h"
#include "runtime/core/Files.h"
#include "runtime/driver/Doctor.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/NumericsAdvice.h"

using namespace mlir;

namespace ampc::cli {
namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

/// A limit's share as written (1%, 0.01%).
std::string limit(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", 100 * fraction);
  return text;
}

/// Up to `count` rows, the most urgent first.
std::vector<const rt::ValueRange *> worst(const std::vector<rt::ValueRange> &values,
                                         bool backward, bool byFlush, size_t count) {
  std::vector<const rt::ValueRange *> rows;
  for (const rt::ValueRange &v : values)
    if (v.low() && v.backward == backward && v.elements > 0)
      rows.push_back(&v);
  std::stable_sort(rows.begin(), rows.end(), [&](const rt::ValueRange *a, const rt::ValueRange *b) {
    return byFlush ? a->subnormalFraction > b->subnormalFraction
                   : a->headroomLog2 < b->headroomLog2;
  });
  if (rows.size() > count)
    rows.resize(count);
  return rows;
}

using Rows = std::vector<std::vector<std::string>>;

/// `rows` as a table: the first `left` columns left-aligned and as wide as
/// their longest entry (ONNX value names run long), at least `widths`; the
/// others right-aligned in theirs.
std::string columns(const Rows &rows, std::vector<size_t> widths, size_t left) {
  for (const std::vector<std::string> &r : rows)
    for (size_t i = 0; i < left; ++i)
      widths[i] = std::max(widths[i], r[i].size());
  std::string out;
  for (const std::vector<std::string> &r : rows) {
    out += " ";
    for (size_t i = 0; i < r.size(); ++i) {
      std::string pad(widths[i] > r[i].size() ? widths[i] - r[i].size() : 0, ' ');
      out += " " + (i < left ? r[i] + pad : pad + r[i]);
    }
    out += "\n";
  }
  return out;
}

/// The value tables: value, op and three figures.
std::string valueTable(const Rows &rows) { return columns(rows, {28, 30, 10, 13, 10}, 2); }

/// The verdict's black varnames: the user's values behind the overflowing
/// forward values (a value the user cannot name is left out).
std::vector<std::string> blackVarnames(const rt::DoctorVerdict &d, const TrainJob &job) {
  std::vector<std::string> names;
  for (const std::string &v : d.overflowing)
    if (std::string user = userNameOf(v, job.userValues);
        !user.empty() && std::find(names.begin(), names.end(), user) == names.end())
      names.push_back(user);
  return names;
}

/// The GEMM whose FP8 operand `codes` is (docs/amp-policy.md, "FP8": graph-fp8
/// names a GEMM N's operands N.fp8_a and N.fp8_b; its backward quantizes
/// the gradient as N.grad_fp8).
std::string fp8GemmOf(const std::string &codes) {
  for (const char *suffix : {".fp8_a", ".fp8_b", ".grad_fp8.0"})
    if (llvm::StringRef(codes).ends_with(suffix))
      return codes.substr(0, codes.size() - strlen(suffix));
  return codes;
}

/// The verdict's --fp8-exclude: the GEMMs of the operands that flush.
std::vector<std::string> fp8Excluded(const rt::DoctorVerdict &d) {
  std::vector<std::string> gemms;
  for (const std::string &v : d.fp8Flushing)
    if (std::string g = fp8GemmOf(v); std::find(gemms.begin(), gemms.end(), g) == gemms.end())
      gemms.push_back(g);
  return gemms;
}

/// The FP8 operands' rows and verdict lines ("" without FP8 GEMMs).
std::string fp8Report(const std::vector<rt::ValueRange> &values, const rt::DoctorVerdict &d,
                      const TrainJob &job, std::string &verdict) {
  std::vector<const rt::ValueRange *> rows;
  for (const rt::ValueRange &v : values)
    if (v.fp8() && v.elements > 0)
      rows.push_back(&v);
  if (rows.empty())
    return "";
  std::stable_sort(rows.begin(), rows.end(), [](const rt::ValueRange *a, const rt::ValueRange *b) {
    return a->headroomLog2 < b->headroomLog2;
  });
  Rows table{{"value", "max |x*s|", "headroom 2^k", "saturated", "flushed"}};
  for (const rt::ValueRange *v : rows)
    table.push_back({v->name + " (" + (v->dtype == rt::DType::F8E4M3 ? "e4m3" : "e5m2") + ")",
                     num(v->maxAbs), num(v->headroomLog2), percent(v->nearMaxFraction),
                     percent(v->flushFraction)});
  std::string out = "\nFP8 operands (x * scale as their codes hold it: E4M3 up to 448, E5M2 up to "
                    "57344; saturated: above it; flushed: rounded to 0):\n" +
                    columns(table, {34, 10, 13, 10, 10}, 1);
  if (d.fp8Margin > 0)
    verdict += "  FP8 operands saturate more than " + limit(rt::kFp8SaturateLimit) +
               " of their elements (up to 2^" + std::to_string(d.fp8Margin) +
               " above their format's largest): train with --fp8-margin " +
               std::to_string(job.amp.fp8.margin + d.fp8Margin) + "\n";
  if (!d.fp8Flushing.empty())
    verdict += "  " + std::to_string(d.fp8Flushing.size()) + " FP8 operand" +
               (d.fp8Flushing.size() == 1 ? " flushes" : "s flush") + " more than " +
               limit(rt::kFp8FlushLimit) + " of its elements to 0: keep " +
               (fp8Excluded(d).size() == 1 ? "its GEMM" : "their GEMMs") + " in bf16\n";
  if (d.fp8Margin == 0 && d.fp8Flushing.empty())
    verdict += "  no FP8 operand saturates more than " + limit(rt::kFp8SaturateLimit) +
               " or flushes more than " + limit(rt::kFp8FlushLimit) + " of its elements\n";
  return out;
}

/// The attentions' scores rows and verdict line ("" without attention).
std::string scoresReport(const std::vector<rt::ValueRange> &values, const rt::DoctorVerdict &d,
                         const std::string &lowName, std::string &verdict) {
  Rows table{{"value", "op", "max |s|", "headroom 2^k", "near max"}};
  for (const rt::ValueRange &v : values)
    if (v.scores && v.elements > 0)
      table.push_back({v.name, v.kernel, num(v.maxAbs), num(v.headroomLog2),
                       percent(v.nearMaxFraction)});
  if (table.size() == 1)
    return "";
  if (!d.scoresBeyondLow.empty())
    verdict += "  " + std::to_string(d.scoresBeyondLow.size()) + " attention" +
               (d.scoresBeyondLow.size() == 1 ? "'s scores exceed " : "s' scores exceed ") +
               lowName + "'s range: the fused op holds them in f32, so nothing overflows; "
               "written unfused (matmul, scale, softmax) they would: keep attention fused\n";
  return "\nattention scores (q k^T scale, computed in f32 inside the fused op and never "
         "stored; headroom against " + lowName + "):\n" + valueTable(table);
}

/// The command line the verdict recommends: train with the doctor's
/// options, plus the fixes.
std::vector<std::string> verdictTokens(const Args &args, const std::vector<std::string> &black,
                                       const rt::DoctorVerdict &d, const TrainJob &job) {
  std::vector<std::string> tokens = withoutOption(args.tokens(), "json", true);
  tokens = withoutOption(tokens, "dot", true);
  std::string joined;
  for (const std::string &b : black)
    joined += (joined.empty() ? "" : ",") + b;
  if (!joined.empty())
    tokens = withOption(tokens, "custom-black-varnames", joined, true);
  if (d.fp8Margin > 0)
    tokens = withOption(tokens, "fp8-margin", std::to_string(job.amp.fp8.margin + d.fp8Margin));
  std::string gemms;
  for (const std::string &g : fp8Excluded(d))
    gemms += (gemms.empty() ? "" : ",") + g;
  if (!gemms.empty())
    tokens = withOption(tokens, "fp8-exclude", gemms, true);
  if (job.amp.dtype == "f16" && d.initLossScale > 0) {
    if (lossScalingMode(job.amp, job.settings) == "none")
      tokens = withOption(tokens, "loss-scaling", "dynamic");
    tokens = withOption(tokens, "init-loss-scaling", exact(d.initLossScale));
  }
  return tokens;
}

DotOverlay headroomOverlay(const std::vector<rt::ValueRange> &values) {
  DotOverlay o;
  o.title = "headroom before overflow in L (powers of 2)";
  o.legend = {{"overflows L", "#de2d26"},
              {"under 2", "#fc9272"},
              {"2 to 8", "#fee0d2"},
              {"8 or more", "#c7e9c0"},
              {"not measured", "#ffffff"}};
  std::map<std::string, const rt::ValueRange *> least; // per node, its least headroom
  for (const rt::ValueRange &v : values)
    if (!v.backward && !v.scores && !v.step.empty() &&
        (!least.count(v.step) || v.headroomLog2 < least[v.step]->headroomLog2))
      least[v.step] = &v;
  for (auto [node, v] : least) {
    double h = v->headroomLog2;
    std::string fill = h < 0 ? "#de2d26" : h < 2 ? "#fc9272" : h < 8 ? "#fee0d2" : "#c7e9c0";
    o.nodes[node] = {fill, "max |x| " + num(v->maxAbs) + ", 2^" + num(h)};
  }
  return o;
}

rt::Json valueJson(const rt::ValueRange &v) {
  auto number = [](double x) { return std::isfinite(x) ? rt::Json(x) : rt::Json(nullptr); };
  return {{"name", v.name},
          {"op", v.step},
          {"kernel", v.kernel},
          {"phase", v.backward ? "backward" : "forward"},
          {"dtype", rt::dtypeName(v.dtype)},
          {"max_abs", number(v.maxAbs)},
          {"min_nonzero_abs", v.minNonzeroAbs},
          {"elements", v.elements},
          {"flush_fraction", v.flushFraction},
          {"subnormal_fraction", v.subnormalFraction},
          {"near_max_fraction", v.nearMaxFraction},
          {"headroom_log2", number(v.headroomLog2)},
          {"max_abs_unscaled", v.maxAbsUnscaled},
          {"attention_scores", v.scores}};
}

} // namespace

int runDoctor(const Args &args) {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> forward;
  checkInput(args);
  checkOutput(args, "json");
  checkOutput(args, "dot");
  TrainJob job = compileTraining(args, ProbeOptions::Mode::Ranges, ctx, &forward);
  const AmpSettings &amp = job.amp;
  if (job.options.steps == 0 && !args.has("epochs"))
    job.options.steps = 20;
  rt::TrainResult result = runTraining(job, "doctor");
  const std::string lowName = amp.lowDtype(); // bf16 outside fp8's GEMMs
  std::vector<rt::ValueRange> values = onFile(
      job.in, [&] { return rt::valueRanges(job.trainPlan, result.ranges, lowName); });
  rt::DoctorVerdict d = rt::diagnose(values, lowName);
  rt::LowRange low = rt::lowRange(lowName);
  std::string mode = lossScalingMode(amp, job.settings);
  std::vector<std::string> black = blackVarnames(d, job);
  std::vector<std::string> tokens = verdictTokens(args, black, d, job);

  std::string out = "doctor: " + job.trainPlan.name + " at " + amp.level + " (" + amp.dtype +
                    "), " + std::to_string(result.steps) + " steps: loss scale " +
                    num(result.lossScale) + " (" + mode + "), " + std::to_string(result.skipped) +
                    " skipped\n";
  out += lowName + " holds magnitudes from " + num(low.min) + " (smaller ones flush to 0) to " +
         exact(low.max) + "\n";
  std::vector<const rt::ValueRange *> close = worst(values, false, false, 8);
  std::vector<const rt::ValueRange *> flushed = worst(values, true, true, 8);
  if (close.empty() && flushed.empty())
    out += "no value is stored in " + lowName + " at " + amp.level + "\n";
  if (!close.empty()) {
    Rows table{{"value", "op", "max |x|", "headroom 2^k", "near max"}};
    for (const rt::ValueRange *v : close)
      table.push_back({v->name, v->kernel, num(v->maxAbs), num(v->headroomLog2),
                       percent(v->nearMaxFraction)});
    out += "\nclosest to overflow (forward values in " + lowName + "):\n" + valueTable(table);
  }
  if (!flushed.empty()) {
    Rows table{{"value", "op", "flushed", "subnormal", "max |x|/S"}};
    for (const rt::ValueRange *v : flushed)
      table.push_back({v->name, v->kernel, percent(v->flushFraction),
                       percent(v->subnormalFraction), num(v->maxAbsUnscaled)});
    out += "\ngradients lost to underflow at the loss scale (backward values in " + lowName +
           "; flushed: below " + num(low.min) + ", subnormal: below " + num(low.normal) +
           "):\n" + valueTable(table);
  }
  std::string fp8Verdict, scoresVerdict;
  out += fp8Report(values, d, job, fp8Verdict);
  out += scoresReport(values, d, lowName, scoresVerdict);
  out += "\nverdict:\n" + fp8Verdict + scoresVerdict;
  if (!d.overflowing.empty())
    out += "  " + std::to_string(d.overflowing.size()) + " forward value" +
           (d.overflowing.size() == 1 ? " overflows " : "s overflow ") + lowName +
           (black.empty() ? "" : d.overflowing.size() == 1 ? ": keep it in f32" : ": keep them in f32") +
           "; the run's gradients say little until then: run the doctor again with the fix\n";
  else if (!close.empty())
    out += "  no forward value overflows " + lowName + "\n";
  if (lowName == "f16" && d.initLossScale > 0)
    out += "  the largest gradient is " + num(d.maxGradient) + ": start the loss scale at " +
           exact(d.initLossScale) + "\n  at this run's loss scale, the gradient " +
           d.worstUnderflow + " has " + percent(d.worstSubnormalFraction) +
           " of its elements below " + lowName + "'s normal range (" +
           percent(d.worstFlushFraction) + " flushed to 0)\n";
  out += "  train with:\n    " + shellLine([&] {
    std::vector<std::string> w = {"ampc", "train"};
    w.insert(w.end(), tokens.begin(), tokens.end());
    return w;
  }()) + "\n";
  if (!d.overflowing.empty() && lowName == "f16") {
    AdviceContext c{"train", withoutOption(withoutOption(args.tokens(), "json", true), "dot", true),
                    job.userValues, lowName, mode};
    out += "  or in bf16, which has f32's range:\n" + suggest(c, "dtype", "bf16");
  }
  std::printf("%s", out.c_str());

  if (auto file = args.get("json")) {
    rt::Json j = {{"format", "ampc.doctor"},
                  {"version", 1},
                  {"graph", job.trainPlan.name},
                  {"level", amp.level},
                  {"dtype", amp.dtype},
                  {"steps", result.steps},
                  {"loss_scaling", mode},
                  {"loss_scale", result.lossScale},
                  {"skipped_steps", result.skipped},
                  {"low", {{"max", low.max}, {"min", low.min}, {"min_normal", low.normal}}},
                  {"values", rt::Json::array()}};
    for (const rt::ValueRange &v : values)
      j["values"].push_back(valueJson(v));
    std::vector<std::string> cmd = {"ampc", "train"};
    cmd.insert(cmd.end(), tokens.begin(), tokens.end());
    j["verdict"] = {{"overflowing", d.overflowing},
                    {"custom_black_varnames", black},
                    {"max_gradient", d.maxGradient},
                    {"init_loss_scaling", d.initLossScale},
                    {"worst_underflow", d.worstUnderflow},
                    {"worst_underflow_subnormal_fraction", d.worstSubnormalFraction},
                    {"worst_underflow_flush_fraction", d.worstFlushFraction},
                    {"fp8_margin", d.fp8Margin},
                    {"fp8_flushing", d.fp8Flushing},
                    {"fp8_exclude", fp8Excluded(d)},
                    {"attention_scores_beyond_low", d.scoresBeyondLow},
                    {"command", shellLine(cmd)}};
    onFile(*file, [&] { writeFileAtomically(*file, rt::dumpJson(j, 2) + "\n"); });
  }
  if (auto file = args.get("dot")) {
    DotOverlay overlay = headroomOverlay(values);
    onFile(*file, [&] { writeFileAtomically(*file, exportDot(*forward, &overlay)); });
  }
  return 0;
}

} // namespace ampc::cli
