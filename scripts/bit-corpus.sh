#!/usr/bin/env bash
# Writes the no-bit-change corpus: the zoo's models at small sizes, O0/O1/O2 x
# f16/bf16, as CPU and CUDA plans (forward; training with Adam, with
# --check-numerics, with --accumulate 2; the CUDA training plan with each
# --no-fuse name left out) and the checkpoint of two Adam training steps on
# the CPU. A refactor that must not change bits writes the corpus with the
# binary before and after and compares:
#   scripts/bit-corpus.sh OLD/bin/ampc /tmp/before
#   scripts/bit-corpus.sh build/bin/ampc /tmp/after
#   diff -r /tmp/before /tmp/after && echo identical
# Usage: bit-corpus.sh AMPC OUTDIR [MODEL...]
set -euo pipefail
ampc=$(realpath "$1")
out=$2
shift 2
mkdir -p "$out"
cd "$out"

declare -A sets=(
  [mlp]="--set batch=16"
  [simplenet]="--set batch=16 --set hidden=64"
  [mnist_cnn]="--set batch=4"
  [resnet18]="--set depth=18 --set batch=2 --set image=32 --set classes=10"
  [resnet50]="--set depth=50 --set batch=2 --set image=32 --set classes=10"
  [bert]="--set layers=2 --set hidden=64 --set heads=2 --set seq=16 --set vocab=128 --set batch=2"
)
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp simplenet mnist_cnn resnet18 resnet50 bert)
fusions=$("$ampc" compile --help 2>&1 | sed -n 's/.*fusions left out, a,b,...: *//p' | tr ',' ' ')

for m in "${models[@]}"; do
  zoo=$m
  [[ $m == resnet* ]] && zoo=resnet
  # shellcheck disable=SC2086
  "$ampc" model "$zoo" ${sets[$m]} -o "$m.json"
  for level in O0 O1 O2; do
    for dtype in f16 bf16; do
      [ $level = O0 ] && [ $dtype = bf16 ] && continue
      amp="--level $level --dtype $dtype"
      tag=$m-$level-$dtype
      for device in cpu cuda; do
        c() { "$ampc" compile "$m.json" $amp --device $device "$@"; }
        c -o "$tag-$device-forward.plan.json"
        c --train --optimizer adam -o "$tag-$device-adam.plan.json"
        c --train --check-numerics -o "$tag-$device-numerics.plan.json"
        c --train --accumulate 2 -o "$tag-$device-accumulate.plan.json"
      done
      for f in $fusions; do
        "$ampc" compile "$m.json" $amp --device cuda --train --no-fuse "$f" \
          -o "$tag-cuda-no-$f.plan.json"
      done
      "$ampc" train "$m.json" $amp --steps 2 --lr 0.01 --optimizer adam \
        --checkpoint "$tag.ckpt" > /dev/null
    done
  done
done
echo "$(ls | wc -l) files in $out"
