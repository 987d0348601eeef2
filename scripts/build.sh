#!/usr/bin/env bash
# Configures and builds ampc into build/ (ninja, ccache when present).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release > build-configure.log 2>&1 || {
  cat build-configure.log; exit 1; }
rm -f build-configure.log
cmake --build build
