#!/usr/bin/env bash
# Times building + verifying + saving BERT-large with `ampc model`, and loading +
# verifying + re-emitting it with `ampc rewrite` (JSON and MLIR). Prints the
# median of N runs (default 5) in milliseconds. Usage: bench/graph_io.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
ampc=build/bin/ampc
runs=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
large=(--set layers=24 --set hidden=1024 --set heads=16)

median_ms() {
  local times=()
  for _ in $(seq "$runs"); do
    local t0=$(date +%s%N)
    "$@" > /dev/null
    local t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

$ampc model bert "${large[@]}" -o "$tmp/bert.json"
$ampc model bert "${large[@]}" -o "$tmp/bert.mlir"
nodes=$($ampc report "$tmp/bert.json" --json | sed -n 's/.*"nodes": \([0-9]*\).*/\1/p')
echo "BERT-large: $nodes nodes, $(wc -c < "$tmp/bert.json") bytes of JSON"
echo "ampc model bert (large) -o .json: $(median_ms $ampc model bert "${large[@]}" -o "$tmp/a.json") ms"
echo "ampc model bert (large) -o .mlir: $(median_ms $ampc model bert "${large[@]}" -o "$tmp/a.mlir") ms"
echo "ampc rewrite .json -> .json:      $(median_ms $ampc rewrite "$tmp/bert.json" -o "$tmp/b.json") ms"
echo "ampc rewrite .mlir -> .mlir:      $(median_ms $ampc rewrite "$tmp/bert.mlir" -o "$tmp/b.mlir") ms"
