#!/usr/bin/env bash
# The main job end to end on the CPU: build, write a model, rewrite it, report it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
out=${1:-quickstart}
mkdir -p "$out"
ampc=build/bin/ampc
$ampc model mlp -o "$out/mlp.json"
$ampc rewrite "$out/mlp.json" -o "$out/mlp.mlir"
$ampc report "$out/mlp.mlir"
echo "quickstart: wrote $out/mlp.json and $out/mlp.mlir"
