#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)"
