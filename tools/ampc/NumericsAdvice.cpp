#include "tools/ampc/NumericsAdvice.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "ops/GraphNames.h"
#include "tools/ampc/Args.h"

namespace ampc::cli {
namespace {

std::string quotedList(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

/// L's largest finite value.
std::string lowMax(const std::string &dtype) { return dtype == "bf16" ? "3.39e+38" : "65504"; }

bool lowPrecisionCaused(rt::NonFiniteCause cause) {
  return cause == rt::NonFiniteCause::ForwardOverflowInL ||
         cause == rt::NonFiniteCause::BackwardOverflowInL;
}

std::string causeKey(rt::NonFiniteCause cause) {
  switch (cause) {
  case rt::NonFiniteCause::ForwardOverflowInL:
    return "forward_overflow_in_l";
  case rt::NonFiniteCause::LossScaleOverflow:
    return "gradient_overflow_from_loss_scale";
  case rt::NonFiniteCause::BackwardOverflowInL:
    return "backward_overflow_in_l";
  case rt::NonFiniteCause::NonFiniteInF32:
    return "non_finite_in_f32";
  }
  return "";
}

/// How to fix an overflow that low precision caused.
std::string keepInF32(const rt::NonFiniteFinding &f, const AdviceContext &c) {
  std::string out;
  std::string name = blackVarnameFor(f, c.values);
  if (!name.empty())
    out += "  keep it in f32:\n" + suggest(c, "custom-black-varnames", name, true);
  if (c.lowDtype != "bf16")
    out += std::string(name.empty() ? "  train" : "  or train") + " in bf16, which has f32's range:\n" +
           suggest(c, "dtype", "bf16");
  return out;
}

/// An attention's scores, which the fused op computes in f32 and never
/// stores: their largest magnitude (`ampc doctor` says whether L holds it).
std::string scoresLine(const rt::NonFiniteFinding &f) {
  if (f.scoresMaxAbs < 0)
    return "";
  return "  its scores q.k^T.scale reach |s| = " + num(f.scoresMaxAbs) +
         ", computed in f32 inside the fused op\n";
}

std::string firstFinding(const rt::NonFiniteFinding &f, const AdviceContext &c) {
  std::string out = "check-numerics: step " + std::to_string(f.step);
  if (f.microBatch + 1 != f.step) // with --accumulate
    out += " (micro-batch " + std::to_string(f.microBatch + 1) + ")";
  out += " produced a non-finite value\n";
  out += "  first op: '" + f.op + "' (" + f.kernel + ", " + (f.backward ? "backward" : "forward") +
         ", computes in " + f.dtype + "): ";
  bool rounding = !f.input.empty() && f.cause != rt::NonFiniteCause::NonFiniteInF32;
  if (rounding)
    out += "its fused cast of '" + f.input + "' to " + c.lowDtype + " overflows\n";
  else if (!f.input.empty())
    out += "its input '" + f.input + "' is not finite\n";
  else
    out += "its inputs " + quotedList(f.inputs) + " are finite (the largest |x| " +
           num(f.maxInputAbs) + "), its output '" + f.output + "' is not\n";
  out += scoresLine(f);
  out += "  cause: " + causeLabel(f.cause, c.lowDtype) + ": ";
  switch (f.cause) {
  case rt::NonFiniteCause::ForwardOverflowInL:
    out += std::string(rounding ? "the largest |" + f.input + "| is " : "in f32 the op is finite, "
                                                                        "its largest |output| ") +
           num(f.f32MaxAbs) + ", above " + c.lowDtype + "'s largest " + lowMax(c.lowDtype) +
           "\n  low precision caused it, and loss scaling cannot fix it (it is not a gradient)\n" +
           keepInF32(f, c);
    break;
  case rt::NonFiniteCause::LossScaleOverflow:
    out += "only the backward overflowed, at S = " + exact(f.lossScale) + "; at S = " +
           exact(f.lossScale / std::ldexp(1.0, f.halvings)) + " the step is finite\n";
    if (c.lossScaling == "dynamic")
      out += "  dynamic loss scaling handles this: the step is skipped and S lowered; no change is "
             "needed\n";
    else
      out += "  static loss scaling keeps S, so every such step is skipped; start lower:\n" +
             suggest(c, "init-loss-scaling", exact(f.lossScale / std::ldexp(1.0, f.halvings + 1)));
    break;
  case rt::NonFiniteCause::BackwardOverflowInL:
    out += "a gradient overflows " + c.lowDtype + " even at S = 1, and is finite in f32 (its " +
           "largest |value| " + num(f.f32MaxAbs) + ")\n" + keepInF32(f, c);
    break;
  case rt::NonFiniteCause::NonFiniteInF32:
    if (!f.input.empty())
      out += "'" + f.input + "' brought an inf or a NaN into the step from outside it (data or a " +
             "param): a data or model bug, not AMP\n";
    else
      out += std::string(f.dtype == "f32" || f.dtype == "f64"
                             ? "the op computes in f32 and its output is not finite"
                             : "replayed in f32 from the same inputs it is still not finite") +
             ": a model or data bug (log of 0, division by 0, a NaN in the data), not AMP\n";
    break;
  }
  return out;
}

} // namespace

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v == std::floor(v) && std::fabs(v) < 1e15 ? "%.0f" : "%.6g", v);
  return text;
}

std::set<std::string> userValueNames(mlir::ModuleOp module) {
  std::set<std::string> names;
  module.walk([&](mlir::Operation *op) {
    for (mlir::Value v : op->getResults())
      names.insert(graph::valueName(v).str());
  });
  return names;
}

std::string userNameOf(const std::string &name, const std::set<std::string> &values) {
  auto endsWith = [&](const std::string &suffix) {
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), std::string::npos, suffix) == 0;
  };
  std::vector<std::string> candidates = {name};
  for (const char *suffix : {".cast_f16", ".cast_bf16", ".f16", ".bf16"})
    if (endsWith(suffix))
      candidates.push_back(name.substr(0, name.size() - std::strlen(suffix)));
  if (size_t grad = name.find(".grad"); grad != std::string::npos && grad > 0)
    candidates.push_back(name.substr(0, grad)); // a gradient: its forward value
  for (const std::string &c : candidates)
    if (values.count(c))
      return c;
  return "";
}

std::string blackVarnameFor(const rt::NonFiniteFinding &f, const std::set<std::string> &values) {
  for (const std::string &name : {f.input, f.output, f.op})
    if (std::string user = name.empty() ? "" : userNameOf(name, values); !user.empty())
      return user;
  return "";
}

std::string suggest(const AdviceContext &c, const std::string &option, const std::string &value,
                    bool append) {
  std::vector<std::string> words = {"ampc", c.command};
  for (const std::string &t : withOption(c.tokens, option, value, append))
    words.push_back(t);
  return "    " + shellLine(words) + "\n";
}

std::string causeLabel(rt::NonFiniteCause cause, const std::string &lowDtype) {
  std::string label = rt::causeName(cause);
  if (label.size() > 2 && label.compare(label.size() - 2, 2, " L") == 0)
    label = label.substr(0, label.size() - 1) + lowDtype;
  return label;
}

std::string numericsText(const rt::NumericsReport &report, const AdviceContext &c) {
  if (!report.first)
    return "check-numerics: every value was finite\n";
  std::string out = firstFinding(*report.first, c);
  out += "check-numerics: " + std::to_string(report.total()) +
         (report.total() == 1 ? " run" : " runs") + " with a non-finite value:";
  bool firstCause = true;
  for (int k = 0; k < rt::kNonFiniteCauses; ++k)
    if (report.counts[k]) {
      out += std::string(firstCause ? " " : ", ") + std::to_string(report.counts[k]) + " " +
             causeLabel((rt::NonFiniteCause)k, c.lowDtype);
      firstCause = false;
    }
  return out + "\n";
}

rt::Json numericsJson(const rt::NumericsReport &report, const AdviceContext &c) {
  rt::Json byCause = rt::Json::object();
  for (int k = 0; k < rt::kNonFiniteCauses; ++k)
    byCause[causeKey((rt::NonFiniteCause)k)] = report.counts[k];
  rt::Json j = {{"non_finite_runs", report.total()}, {"by_cause", byCause}, {"first", nullptr}};
  if (const auto &f = report.first) {
    auto number = [](double v) { return std::isfinite(v) ? rt::Json(v) : rt::Json(nullptr); };
    j["first"] = {{"step", f->step},
                  {"run", f->microBatch},
                  {"cause", causeKey(f->cause)},
                  {"op", f->op},
                  {"kernel", f->kernel},
                  {"phase", f->backward ? "backward" : "forward"},
                  {"dtype", f->dtype},
                  {"output", f->output},
                  {"input", f->input},
                  {"max_input_abs", number(f->maxInputAbs)},
                  {"f32_max_abs", number(f->f32MaxAbs)},
                  {"loss_scale", number(f->lossScale)},
                  {"scale_halvings", f->halvings},
                  {"scores_max_abs", f->scoresMaxAbs < 0 ? rt::Json(nullptr)
                                                         : number(f->scoresMaxAbs)},
                  {"black_varname", lowPrecisionCaused(f->cause) ? blackVarnameFor(*f, c.values)
                                                                 : std::string()}};
  }
  return j;
}

} // namespace ampc::cli
