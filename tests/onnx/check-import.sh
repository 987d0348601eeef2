#!/usr/bin/env bash
# Imports DIR/NAME.onnx and runs it on DIR/NAME.inputs.safetensors at O0 and
# at O1 (with any further AMP flags), comparing each with PyTorch's outputs
# (DIR/NAME.expected.safetensors): within 1e-3 of the largest logit at O0,
# within O1_TOLERANCE at O1. Usage: check-import.sh DIR NAME O1_TOLERANCE [FLAG...];
# AMPC_IMPORT_FLAGS holds flags for ampc import.
set -euo pipefail
dir=$1 name=$2 tolerance=$3
shift 3
here=$(dirname "$0")
# shellcheck disable=SC2086 # the flags are words
ampc import "$dir/$name.onnx" -o "$dir/$name.mlir" ${AMPC_IMPORT_FLAGS:-}
ampc run "$dir/$name.mlir" --level O0 --inputs "$dir/$name.inputs.safetensors" \
  --outputs "$dir/$name.o0.safetensors"
echo -n "$name O0 "
/usr/bin/python3 "$here/compare.py" "$dir/$name.o0.safetensors" \
  "$dir/$name.expected.safetensors" --of-max 1e-3
ampc run "$dir/$name.mlir" --level O1 "$@" --inputs "$dir/$name.inputs.safetensors" \
  --outputs "$dir/$name.o1.safetensors"
echo -n "$name O1 $* "
/usr/bin/python3 "$here/compare.py" "$dir/$name.o1.safetensors" \
  "$dir/$name.expected.safetensors" --of-max "$tolerance"
