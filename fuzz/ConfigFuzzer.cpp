// Fuzz target: an AMP config file (`--config`).
#include "fuzz/FuzzUtil.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ampc::AmpSettings options;
  try {
    ampc::cli::applyConfig(ampc::fuzz::text(data, size), "fuzz.json", options);
  } catch (const ampc::cli::CliError &) {
  }
  return 0;
}
