#!/usr/bin/env bash
# Fuzzes every reader of user files: builds the fuzz targets (fuzz/) with
# clang-19, libFuzzer, ASan and UBSan into build-fuzz/, then runs each for
# SECONDS (60) over its corpus: the seeds and past findings in
# tests/fuzz/<target>/, grown in build-fuzz/corpus/<target>/. A crash is kept
# in build-fuzz/crashes/<target>/: fix it, then add the input to
# tests/fuzz/<target>/, where ctest replays it in every build.
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]; exit 1 if a target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=${*:-graph-json graph-mlir plan checkpoint config idx args onnx metrics token-shard tokenizer hub-config}
bash scripts/sanitize.sh build
mkdir -p build-fuzz/crashes
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 OMP_NUM_THREADS=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
printf '%-12s %12s %10s %8s\n' target executions "exec/s" crashes
for t in $targets; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/crashes/$t"
  log=build-fuzz/fuzz-$t.log
  build-fuzz/bin/ampc-fuzz-$t -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$t/" \
    "build-fuzz/corpus/$t" "tests/fuzz/$t" > "$log" 2>&1 || status=1
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  crashes=$(find "build-fuzz/crashes/$t" -type f | wc -l)
  if [ "$runs" = 0 ]; then
    # A replayer, not a fuzzer: build-fuzz/ lost -DAMPC_FUZZ=ON (delete it and rerun).
    echo "$t: not a libFuzzer fuzzer: check AMPC_FUZZ in build-fuzz/CMakeCache.txt" >&2
    status=1
  fi
  printf '%-12s %12s %10s %8s\n' "$t" "$runs" "$rate" "$crashes"
  [ "$crashes" -eq 0 ] || status=1
done
exit $status
