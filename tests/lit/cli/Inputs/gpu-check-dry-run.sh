#!/usr/bin/env bash
# Rehearses scripts/gpu-check.sh without a GPU: copies scripts/ and bench/
# into OUT/repo, fills its .gpu with an empty file for every plan
# scripts/gpu-check.plans lists (and one kernel-test plan), and runs each
# PHASE with AMPC_GPU_DRY_RUN, its checks listed in OUT/PHASE/dry-run.txt.
# Usage: gpu-check-dry-run.sh SCRIPTS BENCH OUT PHASE...
set -euo pipefail
scripts=$1 bench=$2 out=$3
shift 3
mkdir -p "$out/repo/.gpu/debs" "$out/repo/.gpu/plans/unit"
cp -r "$scripts" "$bench" "$out/repo/"
grep -v '^#' "$scripts/gpu-check.plans" | awk 'NF {print $1}' | while read -r p; do
  mkdir -p "$out/repo/.gpu/plans/$(dirname "$p")"
  touch "$out/repo/.gpu/plans/$p.json"
done
touch "$out/repo/.gpu/plans/unit/k.json"
for phase in "$@"; do
  # The phase's own reports fail on empty logs; the list is what is checked.
  AMPC_GPU_DRY_RUN=1 bash "$out/repo/scripts/gpu-check.sh" "$phase" "$out/$phase" \
    >/dev/null 2>&1 || true
  [[ -s $out/$phase/dry-run.txt ]] || { echo "gpu-check $phase: no checks listed" >&2; exit 1; }
done
