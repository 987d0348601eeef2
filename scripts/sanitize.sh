#!/usr/bin/env bash
# The sanitizer build: the whole project with clang-19 under ASan and UBSan,
# the fuzz targets as libFuzzer fuzzers, into build-fuzz/. With `test`
# (the default) it also runs the whole test suite there, fuzz replays
# included. Usage: scripts/sanitize.sh [build|test]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh clang-19 libclang-rt-19-dev libomp-19-dev
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1"
cmake -G Ninja -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DAMPC_FUZZ=ON -DAMPC_CUDA=OFF \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" > build-fuzz-configure.log 2>&1 || {
  cat build-fuzz-configure.log; exit 1; }
rm -f build-fuzz-configure.log
cmake --build build-fuzz
if [ "${1:-test}" = test ]; then
  cd build-fuzz
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure -j "$(nproc)"
fi
