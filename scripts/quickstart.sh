#!/usr/bin/env bash
# The main job end to end on the CPU: build, write a model, rewrite it with
# AMP, report it, and train it on Fashion-MNIST with the CPU runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
out=${1:-quickstart}
mkdir -p "$out"
ampc=build/bin/ampc
$ampc model mlp -o "$out/mlp.json"
$ampc rewrite "$out/mlp.json" -o "$out/mlp.mlir"
$ampc report "$out/mlp.mlir"
$ampc train "$out/mlp.json" --data fashion-mnist --epochs 1 --lr 0.1 \
  --checkpoint "$out/mlp.safetensors" --metrics-json "$out/train.json"
echo "quickstart: wrote $out/mlp.json, $out/mlp.mlir, $out/mlp.safetensors and $out/train.json"
