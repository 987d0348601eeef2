// Hugging Face checkpoints of GPT-2 and LLaMA as the zoo's gpt2 and llama
// name and lay out their params (`--init-layout hf`, docs/gpt.md,
// "Pretrained weights"), so that a model.safetensors from the Hub starts a
// fine-tuning run; and back (`ampc weights --layout hf`), so that the
// fine-tuned weights load into transformers.
#ifndef AMPC_RUNTIME_DRIVER_HUGGINGFACENAMES_H
#define AMPC_RUNTIME_DRIVER_HUGGINGFACENAMES_H

#include <set>

#include "runtime/driver/Checkpoint.h"

namespace ampc::rt {

/// The tensors of `hf` (GPT2LMHeadModel's or LlamaForCausalLM's names, with
/// or without the `transformer.`/`model.` prefix) renamed and laid out as
/// the zoo's params, in f32:
/// - GPT-2's Conv1D weights are [in, out] already; `c_attn` is split into
///   q, k and v (columns, and its bias);
/// - LLaMA's Linear weights [out, in] are transposed; a missing `lm_head`
///   (tied embeddings) is the token table transposed;
/// - the token table (and LLaMA's output projection) is padded with zero
///   rows (columns) to the graph's padded vocabulary, and GPT-2's 1024
///   positions are cut to the graph's seq; nothing else is fitted (the
///   loader then names a mismatch).
/// - A PEFT adapter's LLaMA tensors (`base_model.model.model.layers.N.
///   <module>.lora_A.weight` [rank, in], `lora_B.weight` [out, rank]) are
///   the layer's `lora_a` and `lora_b`, transposed.
/// Buffers (`attn.bias`, `rotary_emb.inv_freq`) are left out; a name neither
/// model has is an error. `plan` gives the params' shapes.
Safetensors fromHuggingFace(const Safetensors &hf, const Plan &plan);

/// The inverse, for `ampc weights --layout hf`: the zoo's gpt2 or llama
/// params (`ours`, by name, any float dtype) in the names and layouts that
/// Hugging Face's GPT2LMHeadModel (`transformer.` names, q, k and v joined
/// into c_attn, no lm_head: tied) or LlamaForCausalLM (`model.` names,
/// Linear weights [out, in], lm_head unless tied) loads, in f32. With
/// `vocab` > 0 the token table (and lm_head) keep their first `vocab` rows:
/// the zoo's padding cut off. A param of neither model is an error naming it.
Safetensors toHuggingFace(const Safetensors &ours, int64_t vocab);

/// The LoRA adapters of the zoo's llama params `ours` as PEFT saves them
/// (adapter_model.safetensors): `base_model.model.model.layers.N.<module>.
/// lora_A.weight` [rank, in] and `lora_B.weight` [out, rank], in f32; the
/// other params are left out. `modules` receives the adapted modules'
/// names (q_proj, v_proj, ...: PEFT's target_modules). Throws RuntimeError
/// for a file without adapters or with adapters of another model. With
/// `asNamed`, each `<layer>.lora_a` keeps its layer's name as the module's
/// path (`base_model.model.<layer>.lora_A.weight`): an imported PyTorch
/// model's, whose names are its modules'.
Safetensors toPeftAdapters(const Safetensors &ours, std::set<std::string> &modules,
                           bool asNamed = false);

} // namespace ampc::rt

#endif
