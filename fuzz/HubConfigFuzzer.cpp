// Fuzz target: a Hugging Face config.json (`ampc model --hf-config`), read
// into the zoo's parameters, written back, and compared with itself.
#include "compiler/Diagnostics.h"
#include "fuzz/FuzzUtil.h"
#include "models/HubConfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::optional<ampc::rt::Json> config = ampc::rt::parseJson(ampc::fuzz::text(data, size), error);
  if (!config)
    return 0;
  try {
    ampc::HubModel m = ampc::modelFromHubConfig(*config);
    int64_t vocab = std::stoll(m.record.args.at("vocab"));
    ampc::rt::Json back = ampc::hubConfigOf(m.record, vocab, "bf16");
    if (!ampc::hubConfigDifference(back, m.record, vocab).empty())
      __builtin_trap(); // the config written for a model must describe it
  } catch (const ampc::GraphError &) {
  }
  return 0;
}
