#include "runtime/core/StepAttrs.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/Convert.h"

namespace ampc::rt {

namespace {

/// A JSON number as an integer: its value where it is one, a real's
/// truncation where that fits in 64 bits, else 0 (a kernel that reads the
/// attribute as an integer checks its range; the real is kept apart).
int64_t integerOf(const Json &v) {
  if (v.is_number_integer())
    return v.get<int64_t>();
  double real = v.get<double>();
  return std::isfinite(real) && std::fabs(real) < 9.2e18 ? (int64_t)real : 0;
}

} // namespace

StepAttrs::StepAttrs(const Step &step) : step_(step.name) {
  if (!step.attrs.is_object())
    throw PlanError("step '" + step.name + "': \"attrs\" must be an object");
  for (auto it = step.attrs.begin(); it != step.attrs.end(); ++it) {
    const Json &v = it.value();
    Entry e;
    e.name = it.key();
    if (v.is_boolean()) {
      e.kind = Kind::Bool;
      e.boolean = v.get<bool>();
    } else if (v.is_number()) {
      e.kind = Kind::Number;
      e.integer = integerOf(v);
      e.real = v.get<double>();
    } else if (v.is_string()) {
      e.kind = Kind::String;
      e.text = v.get<std::string>();
    } else if (v.is_array() && std::all_of(v.begin(), v.end(),
                                           [](const Json &x) { return x.is_number(); })) {
      e.kind = Kind::Ints;
      for (const Json &x : v) {
        e.ints.push_back(integerOf(x));
        e.reals.push_back(x.get<double>());
      }
    } else if (v.is_array() && std::all_of(v.begin(), v.end(),
                                           [](const Json &x) { return x.is_string(); })) {
      e.kind = Kind::Strings;
      for (const Json &x : v)
        e.strings.push_back(x.get<std::string>());
    } else {
      throw PlanError("step '" + step.name + "': attribute '" + e.name +
                      "' is of no type a kernel reads");
    }
    entries_.push_back(std::move(e));
  }
  if (const Entry *p = find("phase")) {
    if (p->kind != Kind::String || (p->text != "apply" && p->text != "first"))
      wrongType("phase", "\"apply\" or \"first\"");
    phase_ = p->text == "apply" ? Phase::Apply : Phase::First;
  }
  if (const Entry *r = find("round_inputs")) {
    if (r->kind != Kind::Strings && !(r->kind == Kind::Ints && r->ints.empty()))
      wrongType("round_inputs", "a list of dtype names");
    for (const std::string &name : r->strings)
      rounded_.push_back(name.empty() ? DType::F32 : parseDType(name).value_or(DType::F32));
  }
}

FoldedScale StepAttrs::foldedScale(const std::string &prefix) const {
  std::string scale = prefix + "_scale", bias = prefix + "_bias", round = prefix + "_round";
  FoldedScale f;
  f.present = find(scale.c_str()) || find(bias.c_str()) || find(round.c_str());
  f.scale = narrow(getF64(scale.c_str(), 1.0));
  f.bias = narrow(getF64(bias.c_str(), 0.0));
  std::string name = getStr(round.c_str(), "");
  std::optional<DType> d = name.empty() ? DType::F32 : parseDType(name);
  if (!d || !isComputeFloat(*d))
    wrongType(round.c_str(), "f16, bf16, f32 or \"\"");
  f.round = *d;
  return f;
}

const StepAttrs::Entry *StepAttrs::find(const char *name) const {
  for (const Entry &e : entries_)
    if (e.name == name)
      return &e;
  return nullptr;
}

void StepAttrs::wrongType(const char *name, const char *wanted) const {
  throw PlanError("step '" + step_ + "': attribute '" + name + "' must be " + wanted);
}

bool StepAttrs::getBool(const char *name, bool dflt) const {
  const Entry *e = find(name);
  if (!e)
    return dflt;
  if (e->kind != Kind::Bool)
    wrongType(name, "a boolean");
  return e->boolean;
}

int64_t StepAttrs::getInt(const char *name, int64_t dflt) const {
  const Entry *e = find(name);
  if (!e)
    return dflt;
  if (e->kind != Kind::Number)
    wrongType(name, "a number");
  return e->integer;
}

double StepAttrs::getF64(const char *name, double dflt) const {
  const Entry *e = find(name);
  if (!e)
    return dflt;
  if (e->kind != Kind::Number)
    wrongType(name, "a number");
  return e->real;
}

std::string StepAttrs::getStr(const char *name, const std::string &dflt) const {
  const Entry *e = find(name);
  if (!e)
    return dflt;
  if (e->kind != Kind::String)
    wrongType(name, "a string");
  return e->text;
}

std::vector<int64_t> StepAttrs::getInts(const char *name, std::vector<int64_t> dflt) const {
  const Entry *e = find(name);
  if (!e)
    return dflt;
  if (e->kind == Kind::Ints)
    return e->ints;
  if (e->kind == Kind::Strings && e->strings.empty())
    return {};
  wrongType(name, "a list of integers");
}

std::vector<double> StepAttrs::getReals(const char *name) const {
  const Entry *e = find(name);
  if (!e || (e->kind == Kind::Strings && e->strings.empty()))
    return {};
  if (e->kind != Kind::Ints)
    wrongType(name, "a list of numbers");
  return e->reals;
}

std::vector<std::string> StepAttrs::getStrs(const char *name) const {
  const Entry *e = find(name);
  if (!e || (e->kind == Kind::Ints && e->ints.empty()))
    return {};
  if (e->kind != Kind::Strings)
    wrongType(name, "a list of strings");
  return e->strings;
}

DType StepAttrs::roundedInput(size_t i) const {
  return i < rounded_.size() ? rounded_[i] : DType::F32;
}

} // namespace ampc::rt
