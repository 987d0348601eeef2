#!/usr/bin/env bash
# Forward time per batch of simplenet (hidden 1024, batch 256), mlp and
# mnist_cnn with `ampc run` at O0 and O1 (f16), next to PyTorch on this CPU
# (Debian's python3-torch, 2 threads), and the peak planned bytes with and
# without reuse for bert and resnet. Usage: bench/forward.sh [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20}
ampc=build/bin/ampc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
torch_python=/usr/bin/python3  # Debian's python3-torch lives with the system Python
if ! $torch_python -c "import torch" 2>/dev/null; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-torch > /dev/null
fi
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
# PyTorch's GEMMs on the OpenBLAS kernels ampc's runs pick (docs/runtime.md, "Threads").
core=$($ampc --version | sed -n 's/.*set OPENBLAS_CORETYPE=\([A-Za-z0-9]*\).*/\1/p')
if [ -n "$core" ]; then export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$core}; fi

$ampc model simplenet --set hidden=1024 --set batch=256 -o "$tmp/simplenet.json"
$ampc model mlp -o "$tmp/mlp.json"
$ampc model mnist_cnn -o "$tmp/mnist_cnn.json"
ms() { python3 -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['step_ms_median'])" "$1"; }

$torch_python bench/torch_forward.py "$steps" > "$tmp/torch.txt"
printf '%-10s %12s %12s %12s %12s %12s\n' model "ampc O0 ms" "ampc O1 ms" "torch ms" "O0/torch" "O1/torch"
for m in simplenet mlp mnist_cnn; do
  for level in O0 O1; do
    $ampc run "$tmp/$m.json" --level $level --steps "$steps" --metrics-json "$tmp/$m.$level.json" > /dev/null 2>&1
  done
  t=$(awk -v m=$m '$1 == m {print $2}' "$tmp/torch.txt")
  o0=$(ms "$tmp/$m.O0.json"); o1=$(ms "$tmp/$m.O1.json")
  printf '%-10s %12s %12s %12s %12s %12s\n' $m "$o0" "$o1" "$t" \
    "$(python3 -c "print('%.2f' % ($o0 / $t))")" "$(python3 -c "print('%.2f' % ($o1 / $t))")"
done

echo
printf '%-22s %16s %16s %10s %16s\n' plan "arena (reuse)" "arena (no reuse)" ratio "persistent"
for spec in "bert" "bert --set layers=24 --set hidden=1024 --set heads=16" "resnet --set depth=50" "resnet --set depth=18"; do
  set -- $spec
  name=$1; shift
  $ampc model $name "$@" -o "$tmp/g.json"
  for level in O0 O1; do
    $ampc compile "$tmp/g.json" --level $level -o "$tmp/p.json"
    python3 - "$tmp/p.json" "$spec $level" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
a, u = p["arena_bytes"], p["unshared_bytes"]
print(f"{sys.argv[2][:22]:<22} {a/2**20:13.1f} MiB {u/2**20:13.1f} MiB {a/u:10.3f} {p['persistent_bytes']/2**20:13.1f} MiB")
PY
  done
done
