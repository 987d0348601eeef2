// Fuzz target: a metrics file that `ampc plot` draws.
#include "fuzz/FuzzUtil.h"
#include "tools/ampc/Commands.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    ampc::cli::plotMetrics(ampc::fuzz::text(data, size), "fuzz.json");
  } catch (const ampc::cli::CliError &) {
  }
  return 0;
}
