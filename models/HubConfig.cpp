// config.json to the zoo's parameters and back. Defaults are those of
// transformers' config classes (GPT2Config, LlamaConfig, Qwen2Config,
// MistralConfig) for a field the file leaves out.
#include "models/HubConfig.h"

#include <charconv>
#include <limits>

#include "compiler/Diagnostics.h"

namespace ampc {

using rt::Json;

namespace {

/// One config's fields, each checked for its type where it is read.
class Fields {
public:
  explicit Fields(const Json &config) : c_(config) {}

  const Json *find(const char *key) const {
    auto it = c_.find(key);
    return it == c_.end() || it->is_null() ? nullptr : &*it;
  }
  int64_t count(const char *key, std::optional<int64_t> fallback = std::nullopt) const {
    const Json *v = find(key);
    if (!v && fallback)
      return *fallback;
    if (!v)
      throw GraphError("no \"" + std::string(key) + "\" field");
    if (!v->is_number_integer() || v->get<int64_t>() <= 0)
      throw GraphError("\"" + std::string(key) + "\" must be a positive integer, "
                       "not " + rt::dumpJson(*v));
    return v->get<int64_t>();
  }
  double number(const char *key, std::optional<double> fallback = std::nullopt) const {
    const Json *v = find(key);
    if (!v && fallback)
      return *fallback;
    if (!v)
      throw GraphError("no \"" + std::string(key) + "\" field");
    if (!v->is_number() || !(v->get<double>() > 0))
      throw GraphError("\"" + std::string(key) + "\" must be a positive number, "
                       "not " + rt::dumpJson(*v));
    return v->get<double>();
  }
  bool flag(const char *key, bool fallback) const {
    const Json *v = find(key);
    if (!v)
      return fallback;
    if (!v->is_boolean())
      throw GraphError("\"" + std::string(key) + "\" must be true or false, not " +
                       rt::dumpJson(*v));
    return v->get<bool>();
  }
  std::string text(const char *key, const std::string &fallback) const {
    const Json *v = find(key);
    if (!v)
      return fallback;
    if (!v->is_string())
      throw GraphError("\"" + std::string(key) + "\" must be a string, not " +
                       rt::dumpJson(*v));
    return v->get<std::string>();
  }

private:
  const Json &c_;
};

[[noreturn]] void unsupported(const std::string &what) {
  throw GraphError(what);
}

/// rope_scaling: none ("default") or Llama 3.1's "llama3".
std::string ropeScalingArg(const Fields &f) {
  const Json *s = f.find("rope_scaling");
  if (!s)
    return "none";
  if (!s->is_object())
    unsupported("\"rope_scaling\" must be an object, not " + rt::dumpJson(*s));
  Fields scaling(*s);
  std::string type = scaling.text("rope_type", scaling.text("type", ""));
  if (type == "default")
    return "none";
  if (type != "llama3")
    unsupported("rope_scaling of type \"" + type + "\" is not implemented (the zoo's llama has "
                "\"llama3\", Llama 3.1's and 3.2's)");
  double factor = scaling.number("factor"), low = scaling.number("low_freq_factor"),
         high = scaling.number("high_freq_factor");
  if (!(high > low))
    unsupported("rope_scaling's high_freq_factor must exceed its low_freq_factor");
  return "llama3:" + shortestNumberText(factor) + "," + shortestNumberText(low) + "," +
         shortestNumberText(high) + "," +
         std::to_string(scaling.count("original_max_position_embeddings"));
}

HubModel llamaFamily(const Fields &f, const std::string &type) {
  if (std::string act = f.text("hidden_act", "silu"); act != "silu")
    unsupported("\"hidden_act\" is \"" + act + "\"; the zoo's llama has silu (SwiGLU)");
  if (f.flag("mlp_bias", false))
    unsupported("\"mlp_bias\": the zoo's llama has no feed-forward biases");
  if (f.flag("attention_bias", false))
    unsupported("\"attention_bias\" puts a bias on o_proj too; the zoo's llama has q, k and v "
                "biases only (Qwen 2's)");
  int64_t hidden = f.count("hidden_size"), heads = f.count("num_attention_heads");
  if (f.find("head_dim") && f.count("head_dim") * heads != hidden)
    unsupported("\"head_dim\" " + std::to_string(f.count("head_dim")) + " is not hidden_size / "
                "num_attention_heads; the zoo's llama has no separate head size");
  HubModel m{{"llama",
              {{"layers", std::to_string(f.count("num_hidden_layers"))},
               {"hidden", std::to_string(hidden)},
               {"heads", std::to_string(heads)},
               {"kv_heads", std::to_string(f.count("num_key_value_heads", heads))},
               {"ffn", std::to_string(f.count("intermediate_size"))},
               {"vocab", std::to_string(f.count("vocab_size"))},
               {"rope_theta", shortestNumberText(f.number("rope_theta", 10000))},
               {"rope_scaling", ropeScalingArg(f)},
               {"norm_eps", shortestNumberText(f.number("rms_norm_eps", 1e-6))},
               {"qkv_bias", type == "qwen2" ? "1" : "0"},
               {"tie", f.flag("tie_word_embeddings", false) ? "1" : "0"}}},
             f.count("max_position_embeddings", std::numeric_limits<int64_t>::max()),
             "max_position_embeddings"};
  // Beyond a sliding window, the Hub's model attends to the window alone.
  bool sliding = type == "qwen2" ? f.flag("use_sliding_window", false) : type == "mistral";
  if (sliding && f.find("sliding_window") && f.count("sliding_window") < m.maxSeq) {
    m.maxSeq = f.count("sliding_window");
    m.maxSeqField = "sliding_window";
  }
  return m;
}

HubModel gpt2(const Fields &f) {
  std::string act = f.text("activation_function", "gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh")
    unsupported("\"activation_function\" is \"" + act + "\"; the zoo's gpt2 has tanh GELU "
                "(gelu_new)");
  if (f.number("layer_norm_epsilon", 1e-5) != 1e-5)
    unsupported("\"layer_norm_epsilon\" is " +
                shortestNumberText(f.number("layer_norm_epsilon", 0)) +
                "; the zoo's gpt2 has GPT-2's 1e-05");
  int64_t hidden = f.count("n_embd");
  if (f.find("n_inner") && f.count("n_inner") != 4 * hidden)
    unsupported("\"n_inner\" is not 4 × n_embd; the zoo's gpt2 has GPT-2's");
  if (!f.flag("scale_attn_weights", true) || f.flag("scale_attn_by_inverse_layer_idx", false))
    unsupported("the attention scale is not GPT-2's 1/sqrt(head size) (scale_attn_weights, "
                "scale_attn_by_inverse_layer_idx)");
  if (!f.flag("tie_word_embeddings", true))
    unsupported("\"tie_word_embeddings\" is false; the zoo's gpt2 ties them");
  return {{"gpt2",
           {{"layers", std::to_string(f.count("n_layer"))},
            {"hidden", std::to_string(hidden)},
            {"heads", std::to_string(f.count("n_head"))},
            {"vocab", std::to_string(f.count("vocab_size"))}}},
          f.count("n_positions", 1024),
          "n_positions"};
}

/// Each zoo parameter that a config sets, with the config's name for it.
const std::map<std::string, std::string> &hubNames(const std::string &zooModel) {
  static const std::map<std::string, std::string> gpt2Names = {
      {"layers", "n_layer"}, {"hidden", "n_embd"}, {"heads", "n_head"}, {"vocab", "vocab_size"}};
  static const std::map<std::string, std::string> llamaNames = {
      {"layers", "num_hidden_layers"},   {"hidden", "hidden_size"},
      {"heads", "num_attention_heads"},  {"kv_heads", "num_key_value_heads"},
      {"ffn", "intermediate_size"},      {"vocab", "vocab_size"},
      {"rope_theta", "rope_theta"},      {"rope_scaling", "rope_scaling"},
      {"norm_eps", "rms_norm_eps"},      {"qkv_bias", "model_type (qwen2)"},
      {"tie", "tie_word_embeddings"}};
  return zooModel == "gpt2" ? gpt2Names : llamaNames;
}

/// Two parameter values the same: the parts between ':' and ',' equal as
/// numbers where both are ("1e-5" and "1e-05"; "llama3:32,1,4,8192" and
/// "llama3:32.0,1.0,4.0,8192").
bool sameArg(const std::string &a, const std::string &b) {
  auto parts = [](const std::string &s) {
    std::vector<std::string> out(1);
    for (char c : s) {
      if (c == ':' || c == ',')
        out.emplace_back();
      else
        out.back().push_back(c);
    }
    return out;
  };
  std::vector<std::string> pa = parts(a), pb = parts(b);
  if (pa.size() != pb.size())
    return false;
  for (size_t i = 0; i < pa.size(); ++i) {
    char *endA = nullptr, *endB = nullptr;
    double x = std::strtod(pa[i].c_str(), &endA), y = std::strtod(pb[i].c_str(), &endB);
    bool numbers = !pa[i].empty() && !pb[i].empty() && !*endA && !*endB;
    if (numbers ? x != y : pa[i] != pb[i])
      return false;
  }
  return true;
}

} // namespace

std::string shortestNumberText(double v) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

HubModel modelFromHubConfig(const Json &config) {
  if (!config.is_object())
    unsupported("not a JSON object");
  Fields f(config);
  std::string type = f.text("model_type", "");
  if (type != "gpt2" && type != "llama" && type != "qwen2" && type != "mistral")
    unsupported((type.empty() ? std::string("no \"model_type\"")
                              : "model_type \"" + type + "\" is not in the zoo") +
                "; ampc reads gpt2, llama, mistral and qwen2");
  HubModel m = type == "gpt2" ? gpt2(f) : llamaFamily(f, type);
  m.record.args["seq"] = std::to_string(std::min<int64_t>(1024, m.maxSeq));
  return m;
}

Json hubConfigOf(const ModelRecord &record, int64_t vocab, const std::string &dtype) {
  ModelArgs args(record.args);
  std::string torchDtype = dtype == "bf16" ? "bfloat16" : dtype == "f16" ? "float16" : "float32";
  std::map<std::string, Json> c; // written in key order, as save_pretrained does
  if (record.name == "gpt2") {
    int64_t seq = args.getInt("seq");
    c = {{"activation_function", "gelu_new"}, {"architectures", {"GPT2LMHeadModel"}},
         {"attn_pdrop", 0.0},                 {"embd_pdrop", 0.0},
         {"initializer_range", 0.02},         {"layer_norm_epsilon", 1e-5},
         {"model_type", "gpt2"},              {"n_ctx", seq},
         {"n_embd", args.getInt("hidden")},   {"n_head", args.getInt("heads")},
         {"n_inner", nullptr},                {"n_layer", args.getInt("layers")},
         {"n_positions", seq},                {"resid_pdrop", 0.0},
         {"tie_word_embeddings", true},       {"torch_dtype", torchDtype},
         {"use_cache", true},                 {"vocab_size", vocab}};
  } else if (record.name == "llama") {
    bool qwen = args.getFlag("qkv_bias");
    Json scaling = nullptr;
    if (args.get("rope_scaling") != "none") {
      double factor = 0, low = 0, high = 0, original = 0;
      if (std::sscanf(args.get("rope_scaling").c_str(), "llama3:%lf,%lf,%lf,%lf", &factor, &low,
                      &high, &original) != 4)
        throw GraphError("parameter 'rope_scaling' must be none or llama3:FACTOR,LOW,HIGH,"
                         "ORIGINAL, got '" + args.get("rope_scaling") + "'");
      scaling = {{"factor", factor},
                 {"high_freq_factor", high},
                 {"low_freq_factor", low},
                 {"original_max_position_embeddings", (int64_t)original},
                 {"rope_type", "llama3"}};
    }
    c = {{"architectures", {qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
         {"attention_dropout", 0.0},
         {"hidden_act", "silu"},
         {"hidden_size", args.getInt("hidden")},
         {"initializer_range", 0.02},
         {"intermediate_size", llamaFfnWidth(args)},
         {"max_position_embeddings", args.getInt("seq")},
         {"model_type", qwen ? "qwen2" : "llama"},
         {"num_attention_heads", args.getInt("heads")},
         {"num_hidden_layers", args.getInt("layers")},
         {"num_key_value_heads", args.getInt("kv_heads")},
         {"rms_norm_eps", args.getNumber("norm_eps")},
         {"rope_scaling", scaling},
         {"rope_theta", args.getNumber("rope_theta")},
         {"tie_word_embeddings", args.getFlag("tie")},
         {"torch_dtype", torchDtype},
         {"use_cache", true},
         {"vocab_size", vocab}};
    if (qwen)
      c["use_sliding_window"] = false;
    else
      c["attention_bias"] = c["mlp_bias"] = false;
  } else {
    throw GraphError("a config.json describes the zoo's gpt2 and llama, not its " + record.name);
  }
  Json out = Json::object();
  for (auto &[key, value] : c)
    out[key] = std::move(value);
  return out;
}

std::string hubConfigDifference(const Json &config, const ModelRecord &record, int64_t vocab) {
  HubModel m{};
  try {
    m = modelFromHubConfig(config);
  } catch (const GraphError &e) {
    return e.what();
  }
  if (m.record.name != record.name)
    return "it describes a " + m.record.name + ", the graph is the zoo's " + record.name;
  std::map<std::string, std::string> ours = record.args;
  ours["vocab"] = std::to_string(vocab);
  if (record.name == "llama")
    ours["ffn"] = std::to_string(llamaFfnWidth(ModelArgs(record.args)));
  ModelArgs graphArgs(ours);
  for (const auto &[key, hubName] : hubNames(record.name)) {
    const std::string &theirs = m.record.args.at(key), &mine = graphArgs.get(key);
    if (!sameArg(theirs, mine))
      return "its " + hubName + " gives " + key + "=" + theirs + ", the graph has " + key + "=" +
             mine;
  }
  return "";
}

} // namespace ampc
