#!/usr/bin/env bash
# Compiles the plans a manifest lists (scripts/gpu-check.plans gives the
# format) with build/bin/ampc: compile-plans.sh MANIFEST OUTDIR. Each plan
# lands in OUTDIR/FOLDER/NAME.json; a line that fails stops the run with its
# line number.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=$1 out=$2 ampc=${AMPC:-build/bin/ampc}
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
n=0 count=0
while read -r target model sets options; do
  n=$((n + 1))
  [[ -z $target || $target == \#* ]] && continue
  mkdir -p "$out/$(dirname "$target")"
  if [[ $model == file:* ]]; then
    graph=${model#file:}
  elif [[ $model == onnx:* ]]; then
    args=()
    [[ $sets == loss=* ]] && args+=(--loss "${sets#loss=}")
    graph=$graphs/$(basename "$target").json
    "$ampc" import "${model#onnx:}" "${args[@]}" -o "$graph"
  else
    args=()
    [[ $sets == - ]] || for kv in ${sets//,/ }; do args+=(--set "$kv"); done
    graph=$graphs/$(basename "$target").json
    "$ampc" model "$model" "${args[@]}" -o "$graph"
  fi
  # shellcheck disable=SC2086 # the options are words
  "$ampc" compile "$graph" -o "$out/$target.json" $options ||
    { echo "compile-plans: $manifest:$n: $target failed" >&2; exit 1; }
  count=$((count + 1))
done <"$manifest"
echo "compile-plans: $count plans from $manifest"
