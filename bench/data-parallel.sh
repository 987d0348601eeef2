#!/usr/bin/env bash
# Data-parallel training on this machine: step time (median ms) and the bytes
# each rank's allreduce moves per step, for mnist_cnn (batch 64 per rank) and
# a 2-layer BERT-base (seq 128, batch 8 per rank), at O0 and O1, with 1 rank
# and with 2 MPI ranks. On 2 cores the 2 ranks share the machine: the figures
# show the cost of the collectives and of the split, not a speed-up.
# Usage: bench/data-parallel.sh [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20}
ampc=$PWD/build/bin/ampc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
$ampc model mnist_cnn -o "$tmp/mnist_cnn.json"
$ampc model bert --set layers=2 -o "$tmp/bert2.json"
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
printf '%-10s %-6s %6s %12s %14s\n' model level ranks "step ms" "bytes/step"
for model in mnist_cnn bert2; do
  for level in O0 O1; do
    $ampc train "$tmp/$model.json" --level $level --steps "$steps" \
      --metrics-json "$tmp/m1.json" > /dev/null 2>&1
    mpirun --oversubscribe -np 2 $ampc train "$tmp/$model.json" --level $level \
      --steps "$steps" --metrics-json "$tmp/m2.json" > /dev/null 2>&1
    for ranks in 1 2; do
      m=$tmp/m$ranks.json
      printf '%-10s %-6s %6s %12.2f %14s\n' $model $level $ranks "$(field "$m" step_ms_median)" \
        "$(field "$m" allreduce_bytes_per_step)"
    done
  done
done
