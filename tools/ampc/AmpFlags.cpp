#include "tools/ampc/AmpFlags.h"

#include <algorithm>
#include <cctype>

#include "compiler/GraphJson.h"
#include "llvm/ADT/ArrayRef.h"
#include "compiler/plan/PlanPass.h"
#include "runtime/core/Files.h"
#include "runtime/core/JsonText.h"
#include "tools/ampc/Commands.h"

namespace ampc::cli {
namespace {

struct ListKey {
  const char *flag, *key;
  std::vector<std::string> AmpSettings::*field;
};

const ListKey kLists[] = {
    {"custom-white-list", "custom_white_list", &AmpSettings::customWhiteList},
    {"custom-black-list", "custom_black_list", &AmpSettings::customBlackList},
    {"custom-gray-list", "custom_gray_list", &AmpSettings::customGrayList},
    {"custom-black-varnames", "custom_black_varnames", &AmpSettings::customBlackVarnames},
};

/// The training options a config file may set, by key: each the flag of
/// the key's name with dashes.
const char *const kTrainingKeys[] = {
    "optimizer",  "weight_decay", "momentum",      "nesterov", "adam_betas",
    "adam_eps",   "eps",          "rmsprop_alpha", "rmsprop_centered", "adagrad_init",
    "no_decay_1d",  "lr_schedule",   "warmup_steps",
    "min_lr",     "lr_step_every", "lr_gamma",     "lr_power",       "lr_cycles",
    "lr_decay_steps", "plateau_patience", "plateau_factor", "plateau_threshold",
    "plateau_cooldown", "clip_grad_norm", "gradient_checkpointing",
    "freeze",     "train_only",   "lr_scale",      "label_smoothing", "ignore_index",
    "class_weights", "ema_decay", "ema_warmup"};

/// The FP8 options a config file may set, the same way.
const char *const kFp8Keys[] = {"fp8_format", "fp8_margin",   "fp8_amax_history",
                                "fp8_amax_compute", "fp8_min_size", "fp8_exclude"};

template <size_t N> bool isOneOf(const std::string &key, const char *const (&keys)[N]) {
  for (const char *k : keys)
    if (key == k)
      return true;
  return false;
}

std::string flagOf(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

/// The --fp8-* flags, checked (docs/amp-policy.md, "FP8"); only at --dtype
/// fp8. `args` has the config's fp8_* keys as defaults; `given` is the
/// command line alone.
void readFp8Flags(const Args &args, const Args &given, AmpSettings &options) {
  Fp8Settings &fp8 = options.fp8;
  const char *flags[] = {"fp8-format", "fp8-amax-history", "fp8-amax-compute", "fp8-margin",
                         "fp8-min-size", "fp8-exclude"};
  for (const char *flag : flags) {
    if (!args.has(flag) || options.dtype == "fp8")
      continue;
    if (given.has(flag))
      throw UsageError(std::string("--") + flag + " applies at --dtype fp8; add --dtype fp8");
    std::string key = std::string(flag);
    std::replace(key.begin(), key.end(), '-', '_');
    throw CliError(*given.get("config"),
                   "\"" + key + "\" applies at dtype fp8; add \"dtype\": \"fp8\"");
  }
  if (auto format = args.get("fp8-format")) {
    if (*format != "hybrid" && *format != "e4m3")
      throw UsageError("--fp8-format must be hybrid or e4m3, got '" + *format + "'");
    fp8.format = *format;
  }
  if (auto compute = args.get("fp8-amax-compute")) {
    if (*compute != "max" && *compute != "most_recent")
      throw UsageError("--fp8-amax-compute must be max or most_recent, got '" + *compute + "'");
    fp8.amaxCompute = *compute;
  }
  fp8.amaxHistory = args.getInt("fp8-amax-history", fp8.amaxHistory, 1, 1 << 20);
  fp8.margin = args.getInt("fp8-margin", fp8.margin, 0, 64);
  fp8.minSize = args.getInt("fp8-min-size", fp8.minSize, 0, int64_t(1) << 62);
  for (const std::string &value : args.getAll("fp8-exclude"))
    for (std::string &name : splitCommas(value))
      fp8.exclude.push_back(std::move(name));
}

void readConfig(const std::string &path, AmpSettings &options) {
  std::string error;
  std::optional<std::string> text = rt::readFile(path, error);
  if (!text)
    throw CliError(path, "cannot read the config file: " + error);
  applyConfig(*text, path, options);
}

} // namespace

void applyConfig(const std::string &text, const std::string &path, AmpSettings &options) {
  std::string error;
  std::optional<Json> parsed = rt::parseJson(text, error);
  if (!parsed)
    throw CliError(path, error);
  const Json &config = *parsed;
  if (!config.is_object())
    throw CliError(path, "the config must be a JSON object");
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string &key = it.key();
    if (key == "level" || key == "dtype") {
      if (!it.value().is_string())
        throw CliError(path, "\"" + key + "\" must be a string");
      (key == "level" ? options.level : options.dtype) = it.value().get<std::string>();
      continue;
    }
    if (isOneOf(key, kTrainingKeys) || isOneOf(key, kFp8Keys))
      continue; // flags' defaults: withConfigFlags
    const ListKey *list = nullptr;
    for (const ListKey &l : kLists)
      if (key == l.key)
        list = &l;
    if (!list) {
      std::vector<std::string> keys = {"level", "dtype"};
      for (const ListKey &l : kLists)
        keys.push_back(l.key);
      keys.insert(keys.end(), std::begin(kTrainingKeys), std::end(kTrainingKeys));
      keys.insert(keys.end(), std::begin(kFp8Keys), std::end(kFp8Keys));
      std::string near = nearestName(key, keys);
      throw CliError(path, "unknown config key \"" + key + "\"" +
                               (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
    std::vector<std::string> names;
    if (!it.value().is_array())
      throw CliError(path, "\"" + key + "\" must be a list of names");
    for (const Json &n : it.value()) {
      if (!n.is_string())
        throw CliError(path, "\"" + key + "\" must be a list of names");
      names.push_back(n.get<std::string>());
    }
    options.*(list->field) = names;
  }
}

namespace {

/// `args` with the config's values of `keys` as the defaults of the flags
/// of their names: flags given override the config. A flag that `specs`
/// says takes no value (a switch) takes true or false.
template <size_t N>
Args withConfigFlags(const Args &args, const char *const (&keys)[N],
                     const std::vector<OptionSpec> &specs) {
  Args out = args;
  std::optional<std::string> path = args.get("config");
  if (!path)
    return out;
  std::string error;
  std::optional<std::string> text = rt::readFile(*path, error);
  if (!text)
    throw CliError(*path, "cannot read the config file: " + error);
  std::optional<Json> config = rt::parseJson(*text, error);
  if (!config || !config->is_object())
    throw CliError(*path, config ? "the config must be a JSON object" : error);
  auto all = [](const Json &v, bool (Json::*is)() const) {
    return v.is_array() && std::all_of(v.begin(), v.end(), [&](const Json &x) { return (x.*is)(); });
  };
  for (const char *key : keys) {
    if (!config->contains(key))
      continue;
    const Json &v = (*config)[key];
    std::string flag = flagOf(key);
    bool isSwitch = std::any_of(specs.begin(), specs.end(), [&](const OptionSpec &s) {
      return s.name == flag && !s.takesValue;
    });
    if (isSwitch && !v.is_boolean())
      throw CliError(*path, "\"" + std::string(key) + "\" must be true or false");
    if (v.is_boolean()) {
      if (v.get<bool>())
        out.setDefault(flag, "");
    } else if (v.is_string()) {
      out.setDefault(flag, v.get<std::string>());
    } else if (v.is_number()) {
      out.setDefault(flag, v.dump());
    } else if (all(v, &Json::is_number) || all(v, &Json::is_string)) {
      std::string list;
      for (const Json &x : v)
        list += (list.empty() ? "" : ",") + (x.is_string() ? x.get<std::string>() : x.dump());
      out.setDefault(flag, list);
    } else {
      throw CliError(*path, "\"" + std::string(key) + "\" must be a string, a number, true or "
                            "false, or a list of numbers or names");
    }
  }
  return out;
}

} // namespace

Args withTrainingConfig(const Args &args) {
  return withConfigFlags(args, kTrainingKeys, trainingOptionSpecs());
}

/// Whether `message` names option `--flag` (not a longer one it begins).
static bool namesFlag(const std::string &message, const std::string &flag) {
  std::string dashed = "--" + flag;
  for (size_t at = message.find(dashed); at != std::string::npos;
       at = message.find(dashed, at + 1)) {
    size_t end = at + dashed.size();
    if (end == message.size() || !(std::isalnum((unsigned char)message[end]) || message[end] == '-'))
      return true;
  }
  return false;
}

void rethrowNamingConfig(const UsageError &e, const Args &given, const Args &merged) {
  std::optional<std::string> path = given.get("config");
  auto fromConfig = [&](const char *key) {
    std::string flag = flagOf(key);
    return !given.has(flag) && merged.has(flag) && namesFlag(e.what(), flag);
  };
  if (path)
    for (auto keys : {llvm::ArrayRef(kTrainingKeys), llvm::ArrayRef(kFp8Keys)})
      for (const char *key : keys)
        if (fromConfig(key))
          throw CliError(*path, "\"" + std::string(key) + "\": " + e.what());
  throw e;
}

std::vector<OptionSpec> ampOptionSpecs() {
  return {{"level", true, false, "O0, O1 (default), O2 or O3"},
          {"dtype", true, false,
           "low-precision dtype: f16 (default), bf16, or fp8 (bf16 with the GEMMs in FP8)"},
          {"fp8-format", true, false, "at fp8: hybrid (default: E4M3 forward, E5M2 gradients) or e4m3"},
          {"fp8-amax-history", true, false, "at fp8: steps of amax history (1024)"},
          {"fp8-amax-compute", true, false, "at fp8: max (default) or most_recent"},
          {"fp8-margin", true, false, "at fp8: scales are divided by 2^margin (0)"},
          {"fp8-min-size", true, false, "at fp8: GEMMs with M*N*K below it stay bf16 (0)"},
          {"fp8-exclude", true, true,
           "at fp8: GEMMs kept in bf16, by node name or a value they read or write, a,b,..."},
          {"custom-white-list", true, true, "ops moved to the white list, a,b,..."},
          {"custom-black-list", true, true, "ops moved to the black list, a,b,..."},
          {"custom-gray-list", true, true, "ops moved to the gray list, a,b,..."},
          {"custom-black-varnames", true, true, "values whose nodes stay f32, v,w,..."},
          {"config", true, false,
           "a JSON object with the keys level, dtype, fp8_*, custom_* and the training options "
           "(optimizer, lr_schedule, clip_grad_norm, ...)"}};
}

AmpSettings ampOptionsFrom(const Args &args) {
  AmpSettings options;
  if (auto config = args.get("config"))
    readConfig(*config, options);
  if (auto level = args.get("level"))
    options.level = *level;
  if (auto dtype = args.get("dtype"))
    options.dtype = *dtype;
  Args fp8 = withConfigFlags(args, kFp8Keys, ampOptionSpecs());
  try {
    readFp8Flags(fp8, args, options);
  } catch (const UsageError &e) {
    rethrowNamingConfig(e, args, fp8);
  }
  for (const ListKey &l : kLists)
    if (args.has(l.flag)) {
      std::vector<std::string> names;
      for (const std::string &value : args.getAll(l.flag))
        for (std::string &n : splitCommas(value))
          names.push_back(std::move(n));
      options.*(l.field) = names;
    }
  return options;
}

namespace {

std::string commaList(const std::vector<std::string> &names) {
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ",") + n;
  return list;
}

} // namespace

OptionSpec noFuseOptionSpec() {
  return {"no-fuse", true, true, "fusions left out, a,b,...: " + commaList(plan::fusionNames())};
}

FusionSet fusionsFrom(const Args &args, TrainSettings *training) {
  FusionSet fusions;
  for (const std::string &value : args.getAll("no-fuse"))
    for (const std::string &name : splitCommas(value)) {
      const plan::PlanPass *pass = plan::findFusion(name);
      if (!pass) {
        std::string near = nearestName(name, plan::fusionNames());
        throw UsageError("--no-fuse: unknown fusion '" + name + "'" +
                         (near.empty() ? "; the" : "; did you mean '" + near + "'? The") +
                         " fusions are " + commaList(plan::fusionNames()));
      }
      fusions.disable(*pass);
    }
  if (training && !fusions.enabled(plan::recompute))
    training->recompute = false;
  return fusions;
}

} // namespace ampc::cli
