#!/usr/bin/env bash
# The main job end to end on the CPU: build, write a model, rewrite it with
# AMP, report it, and run it on Fashion-MNIST with the CPU runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
out=${1:-quickstart}
mkdir -p "$out"
ampc=build/bin/ampc
$ampc model mlp -o "$out/mlp.json"
$ampc rewrite "$out/mlp.json" -o "$out/mlp.mlir"
$ampc report "$out/mlp.mlir"
$ampc run "$out/mlp.json" --data fashion-mnist --steps 100 --metrics-json "$out/run.json"
echo "quickstart: wrote $out/mlp.json, $out/mlp.mlir and $out/run.json"
