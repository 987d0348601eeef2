#!/usr/bin/env bash
# The installed package, tried as a user's project would use it
# (docs/builder.md, "Using ampc from another project"):
#   install-test.sh install|headers|build-model|train-plan|custom-layer|readme BUILD SOURCE WORK
# `install` installs BUILD into WORK/prefix; the others configure and build
# a project against that prefix alone (no path into the source or build
# tree), run what it built and check what it printed or wrote.
set -euo pipefail
stage=$1 build=$2 source=$3 work=$4
prefix=$work/prefix
ampc=$prefix/bin/ampc

fail() { echo "install-test $stage: $*" >&2; exit 1; }

# Configures and builds project $1 into $work/$2 against the prefix.
build_project() {
  local launcher=()
  if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  rm -rf "$work/$2"
  cmake -G Ninja -S "$1" -B "$work/$2" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" > "$work/$2.log" 2>&1 ||
    { cat "$work/$2.log"; fail "configuring $1 against $prefix failed"; }
  cmake --build "$work/$2" >> "$work/$2.log" 2>&1 ||
    { cat "$work/$2.log"; fail "building $1 against $prefix failed"; }
}

case $stage in
install)
  rm -rf "$work"
  mkdir -p "$work"
  cmake --install "$build" --prefix "$prefix" > "$work/install.log" ||
    { cat "$work/install.log"; fail "cmake --install failed"; }
  for f in bin/ampc bin/ampc-opt bin/ampc-plan-run lib/cmake/ampc/ampcConfig.cmake \
           lib/cmake/ampc/ampcConfigVersion.cmake lib/cmake/ampc/ampcTargets.cmake \
           include/ampc/Builder.h include/ampc/Runtime.h \
           include/ampc/compiler/GraphBuilder.h include/ampc/ops/GraphOps.h.inc \
           include/ampc/runtime/core/Version.h lib/libAmpcRuntime.a; do
    [ -e "$prefix/$f" ] || fail "$f is not installed"
  done
  # Installed headers include each other as "ampc/...", never from the
  # repository's root.
  if grep -rnE '#include "(compiler|models|ops|passes|runtime)/' "$prefix/include"; then
    fail "an installed header includes a path outside include/ampc"
  fi
  # The installed tools run from the prefix (rpaths, no LD_LIBRARY_PATH).
  "$ampc" --version | grep -q "^ampc [0-9]" || fail "the installed ampc does not run"
  "$prefix/bin/ampc-plan-run" --help > /dev/null || fail "the installed ampc-plan-run does not run"
  ;;
headers)
  build_project "$source/tests/install/headers" headers
  grep -o "installed headers: [0-9]*" "$work/headers.log"
  ;;
build-model)
  build_project "$source/examples/build-model" build-model
  cd "$work/build-model"
  ./build_model mlp.json
  # The README calls it the zoo's mlp: the same graph, byte for byte, but
  # for the zoo's model record (docs/graph-format.md, "Model record").
  "$ampc" model mlp -o zoo-mlp.json
  sed -e '/^  "model": /d' -e 's/^\(  "loss": .*\),$/\1/' zoo-mlp.json > zoo-body.json
  cmp mlp.json zoo-body.json || fail "build_model's graph differs from \`ampc model mlp\`"
  # The installed ampc trains it and scores its marked output.
  "$ampc" train mlp.json --data fashion-mnist --steps 30 --lr 0.1 | tee train.log
  grep -q "^eval accuracy: 0\.[1-9]" train.log || fail "the trained mlp was not scored"
  ;;
train-plan)
  build_project "$source/examples/train-plan" train-plan
  cd "$work/train-plan"
  # ampc::runtime brings no MLIR.
  if ldd ./train_plan | grep -i mlir; then fail "train_plan links MLIR"; fi
  # Where the CUDA plugin is installed, programs find it through their rpath.
  if [ -e "$prefix/lib/libampc-cuda.so" ]; then
    readelf -d ./train_plan | grep -q "RUNPATH.*$prefix/lib" ||
      fail "train_plan's rpath does not hold $prefix/lib, where the CUDA plugin is"
  fi
  "$ampc" model mlp -o mlp.json
  "$ampc" compile mlp.json --train -o mlp.train.plan.json
  ./train_plan mlp.train.plan.json mlp.ckpt.safetensors 60 | tee train.log
  grep -q "matches, bit for bit" train.log || fail "the resumed step differs"
  # The checkpoint is a regular one: `ampc-plan-run --resume` continues it.
  "$prefix/bin/ampc-plan-run" mlp.train.plan.json 2 --resume mlp.ckpt.safetensors > resume.log ||
    { cat resume.log; fail "ampc-plan-run cannot resume train_plan's checkpoint"; }
  # The installed CUDA backend built for the host runs a CUDA plan.
  if [ -e "$prefix/lib/libampc-cuda-emulated.so" ]; then
    "$ampc" compile mlp.json --train --device cuda -o mlp.cuda.plan.json
    "$prefix/bin/ampc-plan-run" mlp.cuda.plan.json 2 --device cuda-emulated > emulated.log ||
      { cat emulated.log; fail "the installed ampc-plan-run cannot run --device cuda-emulated"; }
  fi
  ;;
custom-layer)
  build_project "$source/examples/custom-layer" custom-layer
  cd "$work/custom-layer"
  ./custom_layer swiglu.json swiglu.train.plan.json | tee run.log
  grep -q "^training plan: [0-9]* steps" run.log || fail "no training plan"
  grep -q "casts" run.log || fail "no precision report"
  "$ampc" train swiglu.json --dtype bf16 --custom-black-list sigmoid --optimizer adam \
    --data fashion-mnist --steps 30 --lr 0.002 | tee train.log
  grep -q "^eval accuracy: 0\.[1-9]" train.log || fail "the custom layers did not train"
  "$prefix/bin/ampc-plan-run" swiglu.train.plan.json 5 > plan-run.log ||
    { cat plan-run.log; fail "the custom layer's plan does not run"; }
  ;;
readme)
  # The README's samples cannot rot. Its builder snippet is build_model.cpp
  # verbatim: the first C++ block after the line that names the file.
  python3 - "$source/README.md" "$source/examples/build-model/build_model.cpp" <<'PY' ||
import sys
readme, example = open(sys.argv[1]).read(), open(sys.argv[2]).read()
named = readme.find("examples/build-model/build_model.cpp")
start = readme.find("```cpp\n", named) + len("```cpp\n")
sys.exit(0 if named >= 0 and readme[start:readme.find("```", start)] == example else 1)
PY
    fail "README.md's builder snippet is not examples/build-model/build_model.cpp"
  # Its IR sample is what `ampc rewrite` prints: every line but "...", in
  # order, in the rewritten mlp.
  mkdir -p "$work/readme"
  "$build/bin/ampc" model mlp -o "$work/readme/mlp.json"
  "$build/bin/ampc" rewrite "$work/readme/mlp.json" -o "$work/readme/mlp.amp.mlir"
  python3 - "$source/README.md" "$work/readme/mlp.amp.mlir" <<'PY' ||
import sys
readme, printed = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
start = readme.find("```mlir\n") + len("```mlir\n")
sample = [l.strip() for l in readme[start:readme.find("```", start)].splitlines()]
lines, at = [l.strip() for l in printed], 0
for line in (l for l in sample if l != "..."):
    while at < len(lines) and lines[at] != line:
        at += 1
    if at == len(lines):
        sys.exit("not printed by ampc rewrite, or out of order: " + line)
PY
    fail "README.md's IR sample is not what \`ampc rewrite\` prints"
  ;;
*)
  fail "unknown stage"
  ;;
esac
echo "install-test $stage: ok"
