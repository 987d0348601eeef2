// Hugging Face `config.json` and the zoo's language models (docs/gpt.md,
// "A checkpoint's config.json"): the zoo's gpt2 or llama parameters that
// build the model a config describes (GPT2LMHeadModel, LlamaForCausalLM,
// Qwen2ForCausalLM, MistralForCausalLM), and the config that describes a
// zoo model. A field that would make the Hub's model compute something the
// zoo's does not is an error naming it, never ignored.
#ifndef AMPC_MODELS_HUBCONFIG_H
#define AMPC_MODELS_HUBCONFIG_H

#include "models/Models.h"
#include "runtime/core/JsonText.h"

namespace ampc {

/// The zoo model a config.json describes, and the longest `seq` it allows
/// (GPT-2's position rows, a model's max_position_embeddings, an active
/// sliding window: beyond it the Hub's model attends otherwise).
struct HubModel {
  ModelRecord record;
  int64_t maxSeq;
  std::string maxSeqField;
};

/// The shortest text that reads back as `v` ("1e-06", "500000"): how the
/// configs' numbers become zoo parameters.
std::string shortestNumberText(double v);

/// Reads a config.json; throws GraphError naming the field on anything the
/// zoo cannot build. `record.args` holds the parameters the config sets
/// (and `seq`: the zoo's default, or maxSeq when shorter).
HubModel modelFromHubConfig(const rt::Json &config);

/// The config.json that describes a zoo gpt2 or llama model, with its
/// vocabulary as written (`vocab`) and its weights' dtype (f32, f16 or
/// bf16). Throws GraphError for other zoo models.
rt::Json hubConfigOf(const ModelRecord &record, int64_t vocab, const std::string &dtype);

/// Whether a config.json describes the model of `record` (the parameters
/// that shape its computation; not batch, seq or the vocabulary's padding):
/// an empty string if it does, else the first difference, in words.
std::string hubConfigDifference(const rt::Json &config, const ModelRecord &record,
                                int64_t vocab);

} // namespace ampc

#endif
