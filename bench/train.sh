#!/usr/bin/env bash
# Training figures: 1-epoch Fashion-MNIST test accuracy of mlp and mnist_cnn
# at O0, O1 f16 and O2 f16 next to PyTorch (same network, SGD, batch 64);
# simplenet (hidden 1024, batch 256) SGD step time at O0 and O1 against
# PyTorch; planned training memory of BERT-base (seq 128, batch 8) at O0 and
# O1; the step-time share of casts, finite check and scale update at O1; the
# tiny GPT's and tiny LLaMA's AdamW steps at O0 and O1 against PyTorch; a
# LLaMA's AdamW step without and with gradient checkpointing, against
# PyTorch's torch.utils.checkpoint; ResNet-18 trained whole and from its head
# alone (--train-only fc) against PyTorch with requires_grad_(False).
# Usage: bench/train.sh [accuracy|step|memory|overhead|gpt|llama|checkpointing|freezing]... (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
ampc=build/bin/ampc
torch_python=/usr/bin/python3 # Debian's python3-torch lives with the system Python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=2
# PyTorch's GEMMs on the OpenBLAS kernels ampc's runs pick (docs/runtime.md, "Threads").
core=$($ampc --version | sed -n 's/.*set OPENBLAS_CORETYPE=\([A-Za-z0-9]*\).*/\1/p')
if [ -n "$core" ]; then export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$core}; fi
parts=${*:-accuracy step memory overhead gpt llama checkpointing freezing}
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
# lm_step MODEL TORCH-PART KEY=VALUE...: the zoo model's AdamW step at O0 and
# O1, then bench/torch_train.py's step of the same model.
lm_step() {
  local model=$1 part=$2 sets=()
  shift 2
  for kv in "$@"; do sets+=(--set "$kv"); done
  $ampc model "$model" "${sets[@]}" -o "$tmp/lm.json"
  for level in O0 O1; do
    $ampc train "$tmp/lm.json" --level $level --optimizer adamw --steps 20 \
      --metrics-json "$tmp/lm-metrics.json" > /dev/null 2>&1
    echo "ampc $level: $(field "$tmp/lm-metrics.json" step_ms_median)"
  done
  echo "torch f32: $($torch_python bench/torch_train.py "$part" | cut -d' ' -f2)"
}
# step_pairs GRAPH FLAG OPTION...: the median ms and planned peak bytes of
# the step at O0 and O1 under the options, without and with FLAG (words).
step_pairs() {
  local graph=$1 flag=$2
  shift 2
  for level in O0 O1; do
    for with in "" "$flag"; do
      # shellcheck disable=SC2086 # the flag may be two words
      $ampc train "$graph" --level $level --steps 20 "$@" $with \
        --metrics-json "$tmp/pair.json" > /dev/null 2>&1
      echo "ampc $level ${with:-(without)}: $(field "$tmp/pair.json" step_ms_median)" \
        "$(field "$tmp/pair.json" peak_bytes)"
    done
  done
}

for part in $parts; do case $part in
accuracy)
  echo "== 1 epoch of Fashion-MNIST, SGD, batch 64: test accuracy"
  for spec in "mlp 0.1" "mnist_cnn 0.05"; do
    set -- $spec
    $ampc model $1 -o "$tmp/$1.json"
    line="$1 (lr $2):"
    for level in O0 O1 O2; do
      $ampc train "$tmp/$1.json" --level $level --data fashion-mnist --epochs 1 --lr $2 \
        --metrics-json "$tmp/m.json" > /dev/null 2>&1
      line="$line $level $(field "$tmp/m.json" eval_accuracy)"
    done
    echo "$line torch-f32 $($torch_python bench/torch_train.py accuracy $1 $2 | cut -d' ' -f2)"
  done ;;
step)
  echo "== simplenet (hidden 1024, batch 256) SGD step, median ms"
  $ampc model simplenet --set hidden=1024 --set batch=256 -o "$tmp/sn.json"
  for level in O0 O1; do
    $ampc train "$tmp/sn.json" --level $level --steps 20 --metrics-json "$tmp/s.json" > /dev/null 2>&1
    echo "ampc $level: $(field "$tmp/s.json" step_ms_median)"
  done
  echo "torch f32: $($torch_python bench/torch_train.py step | cut -d' ' -f2)" ;;
gpt)
  echo "== tiny GPT (docs/gpt.md: 2 layers, 128 wide, seq 64, bytes, batch 16) AdamW step, median ms"
  lm_step gpt2 gpt layers=2 hidden=128 heads=4 seq=64 vocab=256 batch=16 ;;
llama)
  echo "== tiny LLaMA (2 layers, 128 wide, 4 heads over 2 kv heads, ffn 384, seq 64, bytes, batch 16) AdamW step, median ms"
  lm_step llama llama layers=2 hidden=128 heads=4 kv_heads=2 ffn=384 seq=64 vocab=256 batch=16 ;;
checkpointing)
  echo "== LLaMA (4 layers, 256 wide, 4 heads over 2 kv heads, ffn 768, seq 128, bytes, batch 8) AdamW step, median ms; planned peak bytes"
  $ampc model llama --set layers=4 --set hidden=256 --set heads=4 --set kv_heads=2 --set ffn=768 \
    --set seq=128 --set vocab=256 --set batch=8 -o "$tmp/lm.json"
  step_pairs "$tmp/lm.json" --gradient-checkpointing --optimizer adamw
  $torch_python bench/torch_train.py checkpointing
  echo "== planned peak bytes of the CUDA plan (ampc compile --device cuda), without and with"
  hf=tests/lit/cli/Inputs/hf-configs/tinyllama-1.1b.json
  while read -r label model sets options; do
    args=()
    [[ $model == hf ]] && args+=(--hf-config $hf) || args+=("$model")
    [[ $sets == - ]] || for kv in ${sets//,/ }; do args+=(--set "$kv"); done
    $ampc model "${args[@]}" -o "$tmp/m.json"
    line="$label:"
    for flag in "" --gradient-checkpointing; do
      # shellcheck disable=SC2086 # the options are words
      $ampc compile "$tmp/m.json" --train --device cuda $options $flag -o "$tmp/m.plan" 2>/dev/null
      line="$line $(field "$tmp/m.plan" peak_bytes)"
    done
    echo "$line"
  done <<'EOF'
resnet50-b64 resnet depth=50,batch=64 --level O1 --optimizer momentum
bert-base-s512-b32 bert batch=32,seq=512 --level O1 --optimizer adamw
bert-base-s512-b32-fused bert batch=32,seq=512,attention=fused --level O1 --optimizer adamw
gpt2-124m-b16 gpt2 - --level O1 --dtype bf16 --optimizer adamw
tinyllama-s2048-b4 hf seq=2048,batch=4 --level O2 --dtype bf16 --optimizer adamw
tinyllama-lora16-s2048-b4 hf seq=2048,batch=4,lora=16,lora_alpha=32,lora_targets=all --level O2 --dtype bf16 --optimizer adamw
EOF
  ;;
freezing)
  echo "== ResNet-18 (batch 16 of 64x64, 10 classes) SGD momentum step, median ms; planned peak bytes"
  $ampc model resnet --set depth=18 --set batch=16 --set image=64 --set classes=10 -o "$tmp/r.json"
  step_pairs "$tmp/r.json" "--train-only fc" --optimizer momentum
  $torch_python bench/torch_train.py freezing ;;
memory)
  echo "== planned training memory, BERT-base seq 128 batch 8 (bytes)"
  $ampc model bert -o "$tmp/bert.json"
  for level in O0 O1 O2; do
    $ampc compile --train "$tmp/bert.json" --level $level -o "$tmp/plan.json"
    python3 - "$tmp/plan.json" $level <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: peak {p['peak_bytes']/2**20:.1f} MiB = arena {p['arena_bytes']/2**20:.1f} MiB + persistent {p['persistent_bytes']/2**20:.1f} MiB")
PY
  done ;;
overhead)
  echo "== O1 step-time share of casts, finite check and scale update"
  $ampc model simplenet --set hidden=1024 --set batch=256 -o "$tmp/sn.json"
  $ampc model mnist_cnn -o "$tmp/cnn.json"
  $ampc model bert --set layers=2 --set batch=2 -o "$tmp/bert2.json"
  for g in sn cnn bert2; do
    steps=20; [ $g = bert2 ] && steps=5
    $ampc train "$tmp/$g.json" --steps $steps --profile --metrics-json "$tmp/o.json" > /dev/null 2>&1
    echo "$g: $(python3 -c "import json,sys; print('%.2f%%' % (100*json.load(open(sys.argv[1]))['amp_overhead_share']))" "$tmp/o.json")"
  done ;;
esac; done
