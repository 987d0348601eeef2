#!/usr/bin/env bash
# Every check that needs a GPU, behind one command (docs/cuda.md, "Checking
# it on a GPU"). Two halves, because the GPU machine has CUDA, CMake, ninja,
# g++ and PyTorch but none of our Debian packages and no MLIR:
#
#   scripts/gpu-check.sh prepare
#     here, after scripts/build.sh: fetches the Debian packages the runtime
#     builds against (nlohmann-json, OpenBLAS, zlib) and Fashion-MNIST into
#     .gpu/, and compiles the plans to run there into .gpu/plans: the plans
#     scripts/gpu-check.plans lists (scripts/compile-plans.sh), and every
#     graph the kernel tests lower
#     (AMPC_DUMP_CUDA_PLANS), and builds the runtime and its tools for
#     sm_90 into .gpu/prebuilt (build-gpu-prebuilt/, about 10 minutes on two
#     cores the first time). The plans and the prebuilt runtime go into one
#     archive, .gpu/packed.tgz (JSON packs tenfold), which every phase
#     unpacks, so that what travels stays under the device tool's 64 MiB
#     (the repository with .gpu: about 56 MB). .gpu is ignored by git; carry
#     it.
#
#   scripts/gpu-check.sh [checks|e2e|bench|profile|quick|rest|all|fp8|attention|ncu] [LOGDIR]
#   scripts/gpu-check.sh emulated [LOGDIR]
#     here, after prepare: the backend checks of `checks` on the CUDA backend
#     built for the host (--device cuda-emulated, docs/cuda.md "The CUDA
#     emulation"), every model and kernel-test plan, no GPU needed (tens
#     of minutes on two cores), again with the blocks and threads run in
#     reverse (AMPC_EMULATED_ORDER=reverse), and exact resume on it: what a
#     lease would find in the kernels' indices, barriers, dispatch and
#     graphs, found before it
#   scripts/gpu-check.sh run CMD...   (CMD after the build, e.g. under ncu)
#   AMPC_GPU_DRY_RUN=1 scripts/gpu-check.sh PHASE LOGDIR
#     writes the checks a phase would run to LOGDIR/dry-run.txt (NAME:
#     COMMAND a line), runs none and builds nothing (tests/lit/cli/gpu-check.test)
#     on the GPU machine: builds the runtime alone (AMPC_RUNTIME_ONLY, into
#     build-gpu/, kept between calls) against the unpacked packages, then
#       checks  the shared numerics over every f16 input; ampc-backend-check
#               (CUDA against the CPU, step by step and whole runs) on every
#               plan, and with an injected inf; --check-numerics finding the
#               same first op on both devices; compute-sanitizer memcheck
#               and racecheck on short training runs;
#     The training runs of e2e and bench are listed in scripts/gpu-check.runs;
#     the checks that compare (resume, --check-numerics, the same start) are
#     the functions below.
#       e2e     one epoch of Fashion-MNIST on the CPU and on the GPU (mlp at
#               O0, O1, O2, O1 bf16; mnist_cnn at O1): accuracies within 0.5
#               points; exact resume on the GPU; a GPU checkpoint resumed on
#               the CPU;
#       profile ampc's step times and profiles alone (the table without
#               its PyTorch columns), for quick turns;
#       bench   step times of simplenet, mnist_cnn, ResNet-50 and BERT-base
#               against PyTorch eager (f32, autocast with GradScaler) and
#               torch.compile (BERT), the table of docs/benchmarks/,
#               profiles (per-kernel times, the slowest launches with their
#               GB/s or TFLOP/s, AMP bookkeeping, GEMM TFLOP/s), step times
#               with one fusion left out (--no-fuse: recompute and grad
#               epilogues in BERT-base, norm activations in ResNet-50) or
#               the GEMM tuning (simplenet and BERT-base), the
#               attention core at seq 128 against PyTorch's fused kernels
#               (bench/gpu/attention.py), and
#               both sides trained 50 steps from the same start, their
#               losses compared.
#       quick   what a 15-minute lease runs first: the kernels held to the
#               CPU, one memcheck, and the O1 and O2 steps of the four
#               models with their profiles beside PyTorch's;
#       rest    what `all` runs beyond quick (into the same LOGDIR, which a
#               warm machine keeps), then the whole table;
#       fp8     FP8 against bf16: GEMM TFLOP/s at 1024³, 4096³ and 8192³,
#               and 200 steps of BERT-large and GPT-2 350M in each with
#               their loss curves (bench/gpu/report.py fp8); not in `all`;
#       attention  the attention core's TFLOP/s, fused and unfused, at seq
#               128 to 2048, head_dim 64 and 128, causal or not, against
#               PyTorch's flash and math attention, and BERT-base's step
#               with attention fused (bench/gpu/report.py attention); not
#               in `all`;
#       ncu     one step of ResNet-50, BERT-base and simplenet at O1 under
#               Nsight Compute (--profile: launches one by one), ampc's own
#               kernels only (not cuBLASLt's or cuDNN's), the first launch
#               of each launch configuration, their speed of
#               light, occupancy, launch and warp-state sections, tabulated
#               slowest first (bench/gpu/ncu_table.py, LOGDIR/ncu-MODEL.md):
#               why a kernel misses the bandwidth; not in `all`;
#     `all` (the default) runs checks, e2e and bench; each alone fits in 10
#     minutes. The runtime comes from .gpu/prebuilt where prepare built it
#     from the same sources, else it is built there (a few minutes).
#     Logs and metrics go to LOGDIR (build-gpu/logs), and with $OUT set also
#     to $OUT/gpu-check-logs.tgz.
#
# Exit status: 0 every check passed; 77 there is no GPU here; else a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
# The runtime's tools execute themselves again to set this when it is unset
# (runtime/cpu/WaitPolicy.h); set here, no tool does so under
# compute-sanitizer, ncu or nsys.
export GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-10000}

prepare() {
  set -e
  if [[ ! -x build/bin/ampc || ! -x build/bin/ampc-unittests ]]; then
    echo "gpu-check: prepare needs build/ (run scripts/build.sh first)" >&2
    exit 1
  fi
  rm -rf .gpu
  mkdir -p .gpu/debs .gpu/data .gpu/plans/unit
  (cd .gpu/debs && apt-get download -q nlohmann-json3-dev zlib1g-dev zlib1g \
     libopenblas0-openmp libopenblas-openmp-dev libgfortran5 libquadmath0 2>&1 |
     grep -v "^W: Download is performed unsandboxed" || true)
  local fmnist=/usr/share/datasets/fashion-mnist
  if [[ ! -e $fmnist/train-images-idx3-ubyte.gz ]]; then
    (cd .gpu/data && apt-get download -q dataset-fashion-mnist 2>&1 |
       grep -v "^W: Download is performed unsandboxed" || true)
    dpkg -x .gpu/data/dataset-fashion-mnist_*.deb .gpu/data/root
    fmnist=.gpu/data/root$fmnist
  fi
  mkdir -p .gpu/data/fashion-mnist
  cp "$fmnist"/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz .gpu/data/fashion-mnist/
  rm -rf .gpu/data/root .gpu/data/*.deb
  build/bin/ampc tokenize examples/gpt/shakespeare.txt -o .gpu/data/text.bin >/dev/null
  AMPC_DUMP_CUDA_PLANS="$PWD/.gpu/plans/unit" build/bin/ampc-unittests --gtest_brief=1 >/dev/null
  scripts/compile-plans.sh scripts/gpu-check.plans .gpu/plans
  prebuild
  local counts="$(ls .gpu/plans/models | wc -l) model plans, $(ls .gpu/plans/unit | wc -l)"
  counts+=" kernel-test plans, $(ls .gpu/plans/e2e | wc -l) end-to-end and"
  counts+=" $(ls .gpu/plans/bench | wc -l) bench plans, $(ls .gpu/debs | wc -l) packages"
  tar -C .gpu -czf .gpu/packed.tgz plans prebuilt
  rm -rf .gpu/plans .gpu/prebuilt
  local total=$(($(du -sb .gpu | cut -f1) + $(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)))
  echo "gpu-check: prepared .gpu ($(du -sh .gpu | cut -f1); with the repository" \
    "$((total / 1048576)) MiB of the device tool's 64): $counts"
  if ((total > 64 * 1048576)); then
    echo "gpu-check: .gpu and the repository exceed the 64 MiB that travel to the GPU" >&2
    exit 1
  fi
}

# The plans and the prebuilt runtime, from the archive prepare packed.
unpack() {
  if [[ -e .gpu/packed.tgz && ! -d .gpu/plans ]]; then
    tar -C .gpu -xzf .gpu/packed.tgz
  fi
}

# The files the runtime-only build compiles: a prebuilt runtime is used only
# where they are the ones it was built from.
sources_hash() {
  find CMakeLists.txt runtime tools tests/cuda -type f ! -name '*.pyc' | LC_ALL=C sort |
    xargs sha1sum | sha1sum | cut -d' ' -f1
}

# The runtime and its tools built here as the GPU machine builds them (the
# same CUDA 13.0; sm_90 alone; no MPI, which that machine lacks), into
# .gpu/prebuilt, so that a lease spends no minutes compiling (build()).
prebuild() {
  cmake -G Ninja -S . -B build-gpu-prebuilt -DCMAKE_BUILD_TYPE=Release -DAMPC_RUNTIME_ONLY=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
  ninja -C build-gpu-prebuilt ampc-plan-run ampc-backend-check ampc-numerics-device-check \
    ampc-tuning-check ampc-nccl-check ampc-cuda | grep -v "^\[" || true
  mkdir -p .gpu/prebuilt/lib
  cp -r build-gpu-prebuilt/bin .gpu/prebuilt/
  cp build-gpu-prebuilt/lib/*.so .gpu/prebuilt/lib/
  strip .gpu/prebuilt/bin/* .gpu/prebuilt/lib/*.so
  sources_hash >.gpu/prebuilt/sources
}

build() {
  cuda=${CUDA_HOME:-/usr/local/cuda}
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
    echo "gpu-check: nvidia-smi sees no GPU"
  "$cuda/bin/nvcc" --version | tail -1
  deps=$PWD/build-gpu/deps
  if [[ ! -e $deps/.unpacked ]]; then # never into /
    rm -rf "$deps"
    mkdir -p "$deps"
    for deb in .gpu/debs/*.deb; do dpkg -x "$deb" "$deps"; done
    touch "$deps/.unpacked"
  fi
  libs="$deps/usr/lib/x86_64-linux-gnu:$deps/lib/x86_64-linux-gnu"
  # cuDNN: the toolkit's, else the wheel PyTorch brings.
  if [[ ! -e "$cuda/include/cudnn.h" && -z "${AMPC_CUDNN_ROOT:-}" ]]; then
    AMPC_CUDNN_ROOT=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' \
      2>/dev/null) || AMPC_CUDNN_ROOT=""
    export AMPC_CUDNN_ROOT
  fi
  if [[ -n "${AMPC_CUDNN_ROOT:-}" ]]; then
    echo "gpu-check: cuDNN from $AMPC_CUDNN_ROOT"
    libs="$libs:$AMPC_CUDNN_ROOT/lib"
  fi
  # dpkg -x makes no alternatives links: OpenBLAS's OpenMP build by its folder.
  libs="$libs:$deps/usr/lib/x86_64-linux-gnu/openblas-openmp"
  if [[ -z "${AMPC_GPU_BUILD:-}" && -e .gpu/prebuilt/sources &&
    "$(cat .gpu/prebuilt/sources)" == "$(sources_hash)" ]] &&
    LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}" .gpu/prebuilt/bin/ampc-plan-run --help \
      >/dev/null 2>&1 &&
    ! LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}" ldd .gpu/prebuilt/lib/libampc-cuda.so |
      grep -q "not found"; then
    echo "== the runtime prepare built for these sources (sm_90; AMPC_GPU_BUILD=1 builds here)"
    bin=.gpu/prebuilt/bin
    return
  fi
  echo "== build (runtime only, sm_${AMPC_CUDA_ARCH:-90})"
  local start=$(date +%s)
  if [[ ! -e build-gpu/build.ninja ]] &&
    ! cmake -G Ninja -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DAMPC_RUNTIME_ONLY=ON \
      -DAMPC_DEPS_ROOT="$deps" -DCMAKE_CUDA_ARCHITECTURES="${AMPC_CUDA_ARCH:-90}" \
      >"$logs/cmake.log" 2>&1; then
    tail -n 30 "$logs/cmake.log"
    exit 1
  fi
  if ! ninja -C build-gpu >"$logs/build.log" 2>&1; then
    grep -E "error|FAILED" "$logs/build.log" | head -n 40
    exit 1
  fi
  echo "built in $(($(date +%s) - start)) s"
  bin=build-gpu/bin
}

status=0
# check NAME COMMAND...: runs one check, its output in $logs/NAME.log.
check() {
  local name=$1
  shift
  echo "== $name"
  if [[ -n ${AMPC_GPU_DRY_RUN:-} ]]; then # prints the commands, runs nothing
    echo "$name: $*" >>"$logs/dry-run.txt"
    exits[$name]=0
    return
  fi
  local t0=$(date +%s)
  # A hang must not take the whole lease: each check has its own limit.
  LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}" timeout "${AMPC_CHECK_TIMEOUT:-240}" "$@" \
    >"$logs/$name.log" 2>&1
  local rc=$? seconds=$(($(date +%s) - t0))
  exits[$name]=$rc
  # For the report's table of checks (bench/gpu/report.py).
  printf '%s\t%s\t%s\n' "$name" "$rc" "$seconds" >>"$logs/checks.tsv"
  [[ $rc -eq 124 ]] && echo "$name: timed out after ${AMPC_CHECK_TIMEOUT:-240} s"
  tail -n 25 "$logs/$name.log"
  echo "$name: exit $rc ($seconds s)"
  if [[ $rc -eq 77 && $status -eq 0 ]]; then
    status=77
  elif [[ $rc -ne 0 && $rc -ne 77 ]]; then
    status=1
    failed+=("$name")
  fi
}
failed=()
declare -A exits

# The kernels held to the CPU: the shared numerics, every kernel-test plan and
# model plan step by step and whole, with an injected inf.
checks_against_cpu() {
  if [[ $phase != emulated ]]; then
    check numerics $bin/ampc-numerics-device-check
    check gemm-tuning-choice $bin/ampc-tuning-check
    [[ $have_gpu == yes ]] && check nccl-one-rank $bin/ampc-nccl-check
  fi
  backend_check backend-models --tune-gemms .gpu/plans/models/*.json
  backend_check backend-kernels .gpu/plans/unit/*.json
  # The attention's row kernels, which the tensor-core ones replace where
  # they fit (f16/bf16, head_dim 64 or 128): held to the CPU as well.
  check backend-attention-rows env AMPC_CUDA_ATTENTION=rows $bin/ampc-backend-check \
    --candidate "${AMPC_CHECK_CANDIDATE:-cuda}" .gpu/plans/unit/Attention*.json
  backend_check backend-injected-inf --inject-inf 1 \
    .gpu/plans/models/{mlp,cnn,bert,resnet18}-o1-train*.json
  bisect_backend_failures
}

# backend_check NAME ARGS...: ampc-backend-check against the CPU, its
# arguments kept for bisect_backend_failures. AMPC_CHECK_CANDIDATE=cpu
# rehearses the checks on a machine without a GPU.
declare -A backend_args
backend_check() {
  local name=$1
  shift
  backend_args[$name]="$*"
  check "$name" $bin/ampc-backend-check --candidate "${AMPC_CHECK_CANDIDATE:-cuda}" "$@"
}

# A failed comparison runs again with each switch that puts an older path
# back (quads, the overlapped finite check, the tensor-core attention:
# docs/cuda.md, "Status"), so
# that one short lease names the part at fault (a check that timed out is
# not run again: a hang would take the lease). These runs inform; they do not
# change the verdict.
bisect_backend_failures() {
  local name kept=$status kept_failed=("${failed[@]}")
  for name in "${!backend_args[@]}"; do
    [[ " ${failed[*]} " == *" $name "* && ${exits[$name]} -ne 124 ]] || continue
    echo "== $name failed: again with AMPC_CUDA_QUADS=0, with --no-overlap-checks," \
      "with AMPC_CUDA_ATTENTION=rows"
    check "$name-no-quads" env AMPC_CUDA_QUADS=0 $bin/ampc-backend-check \
      --candidate "${AMPC_CHECK_CANDIDATE:-cuda}" ${backend_args[$name]}
    check "$name-attention-rows" env AMPC_CUDA_ATTENTION=rows $bin/ampc-backend-check \
      --candidate "${AMPC_CHECK_CANDIDATE:-cuda}" ${backend_args[$name]}
    check "$name-no-overlap-checks" $bin/ampc-backend-check \
      --candidate "${AMPC_CHECK_CANDIDATE:-cuda}" --no-overlap-checks ${backend_args[$name]}
  done
  status=$kept
  failed=("${kept_failed[@]}")
}

# The checks beyond the CPU comparison: the same --check-numerics finding on
# both devices, compute-sanitizer's memcheck and racecheck.
checks_on_gpu() {
  local p dev
  for p in overflow:4 scale:40; do
    for dev in cpu cuda; do
      check "numerics-${p%%:*}-$dev" $bin/ampc-plan-run .gpu/plans/numerics/${p%%:*}-$dev.json \
        ${p##*:} --device $dev
    done
    if diff <(grep '^check-numerics' "$logs/numerics-${p%%:*}-cpu.log") \
      <(grep '^check-numerics' "$logs/numerics-${p%%:*}-cuda.log"); then
      echo "check-numerics ${p%%:*}: the same finding on the CPU and the GPU"
    else
      status=1
      failed+=("numerics-${p%%:*}-same")
    fi
  done
  [[ ${1:-} == quick ]] || memcheck_mlp
  check memcheck-cnn $sanitizer --tool memcheck --error-exitcode 1 \
    $bin/ampc-plan-run .gpu/plans/models/cnn-o1-train-adam.json 2 --device cuda
  check racecheck-mlp $sanitizer --tool racecheck --error-exitcode 1 \
    $bin/ampc-plan-run .gpu/plans/models/mlp-o1-train.json 2 --device cuda
}

memcheck_mlp() {
  check memcheck-mlp $sanitizer --tool memcheck --error-exitcode 1 \
    $bin/ampc-plan-run .gpu/plans/models/mlp-o1-train.json 3 --device cuda
}

phase_checks() {
  checks_against_cpu
  [[ $have_gpu == yes ]] && checks_on_gpu
}

phase_e2e() {
  local data=fashion-mnist:$PWD/.gpu/data/fashion-mnist
  runs e2e
  echo "== accuracy, one epoch, CPU against GPU"
  python3 bench/gpu/report.py e2e "$logs" || { status=1; failed+=(e2e-accuracy); }
  exact_resume cuda
}

# exact_resume DEVICE: 200 steps equal 100, a checkpoint, and 100 more; and
# the checkpoint resumes on the CPU (its CPU plan: the same params).
exact_resume() {
  local device=$1 data=fashion-mnist:$PWD/.gpu/data/fashion-mnist
  local train=.gpu/plans/e2e/mlp-o1-cuda-train.json r=$logs/resume
  mkdir -p "$r"
  check resume-whole $bin/ampc-plan-run $train 200 --data "$data" --lr 0.1 --device $device \
    --checkpoint "$r/whole.st"
  check resume-half $bin/ampc-plan-run $train 100 --data "$data" --lr 0.1 --device $device \
    --checkpoint "$r/half.st"
  check resume-rest $bin/ampc-plan-run $train 100 --data "$data" --lr 0.1 --device $device \
    --resume "$r/half.st" --checkpoint "$r/rest.st"
  if cmp "$r/whole.st" "$r/rest.st"; then
    echo "exact resume on $device: the checkpoints are byte-identical"
  else
    echo "exact resume on $device: FAIL, the checkpoints differ"
    status=1
    failed+=(resume-identical)
  fi
  check resume-on-cpu $bin/ampc-plan-run .gpu/plans/e2e/mlp-o1-cpu-train.json 100 \
    --data "$data" --lr 0.1 --device cpu --resume "$r/half.st" --checkpoint "$r/cpu.st"
}

# runs GROUP: the training runs scripts/gpu-check.runs lists for GROUP (the
# format is there), each a check.
runs() {
  local group=$1 g name plan steps options p run files given
  given=$(awk '!/^#/ && NF && $2 !~ /[{]}/ {print $2}' scripts/gpu-check.runs)
  while read -r g name plan steps options <&3; do
    [[ $g == "$group" ]] || continue
    if [[ $plan == *[*?[]* ]]; then
      files=()
      for p in .gpu/plans/$plan.json; do [[ -e $p ]] && files+=("$p"); done
    else
      files=(".gpu/plans/$plan.json")
    fi
    for p in "${files[@]}"; do
      run=${name//\{\}/$(basename "$p" .json)}
      [[ $name == *{}* ]] && grep -qx -- "$run" <<<"$given" && continue
      # shellcheck disable=SC2086 # STEPS and the options are words
      options=${options//\{tokens\}/$PWD/.gpu/data/text.bin}
      check "$run" $bin/ampc-plan-run "$p" ${steps/#-/} ${options//\{data\}/${data:-}} \
        --metrics-json "$logs/$run.json"
    done
  done 3<scripts/gpu-check.runs
}

# bench_run NAME PLAN STEPS ARGS...: an ampc-plan-run on the GPU, its
# metrics in $logs/NAME.json (AdamW's rate for BERT and GPT-2, as their
# PyTorch peers').
bench_run() {
  local name=$1 plan=$2 steps=$3 lr=0.01
  shift 3
  [[ $plan == */bert* || $plan == */gpt2* ]] && lr=0.0001
  check "$name" $bin/ampc-plan-run "$plan" "$steps" --device cuda --lr $lr "$@" \
    --metrics-json "$logs/$name.json"
}

# torch_peers [MODEL...]: PyTorch's steps (all models, or those named),
# added to $logs/torch.txt.
torch_peers() {
  echo "== PyTorch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
  AMPC_TORCH_PROFILE="$logs/torch-profile.json" PYTHONPATH=bench python3 bench/gpu/torch_gpu.py 50 "$@" |
    tee -a "$logs/torch.txt"
}

# The attention core against PyTorch's fused kernels, and both sides trained
# from the same start: the losses after 50 steps agree within AMP's noise.
bench_compare() {
  echo "== attention core at seq 128 (ms per layer, per step)"
  check attention python3 bench/gpu/attention.py "$logs/attention.json"
  # The PyTorch AMP peer writes its seeded init and its batch in ampc's
  # names; ampc trains its plans from them (bench/compare_losses.py).
  local same=$logs/same-start model level p peer
  mkdir -p "$same"
  for p in simplenet:o1 simplenet:o2 mnist_cnn:o1 bert:o1 gpt2:o1; do
    IFS=: read -r model level <<<"$p"
    peer=() # GPT-2: the optimizer its bench plans compile (llm.c's)
    [[ $model == gpt2 ]] && peer=(--optimizer adamw --lr 0.0001 --betas 0.9 0.95
      --weight-decay 0.1 --no-decay-1d --clip-grad-norm 1.0)
    [[ -e $same/$model.peer.json ]] ||
      check "same-start-$model-torch" env PYTHONPATH=bench python3 bench/same_init.py "$model" \
        "$same" --steps 50 --mode amp --device cuda "${peer[@]}"
    bench_run "same-start-$model-$level" .gpu/plans/bench/$model-$level.json 50 \
      --init-from "$same/$model.init.safetensors" --data "$same/$model.data.safetensors"
    mv "$logs/same-start-$model-$level.json" "$same/$model-$level.metrics.json" 2>/dev/null
    check "same-start-$model-$level-loss" python3 bench/compare_losses.py \
      "$same/$model.peer.json" "$same/$model-$level.metrics.json" --rtol 3e-2
  done
}

# Nsight Compute over one step of each O1 bench model: where the slowest
# non-GEMM launches lose their bandwidth.
phase_ncu() {
  local ncu=ncu m
  command -v $ncu >/dev/null || ncu=$cuda/bin/ncu
  for m in resnet50 bert simplenet; do
    # The first launch of each configuration (kernel, grid, block) alone:
    # ncu replays a launch several times, and BERT's step has about 600.
    check "ncu-$m" $ncu --clock-control none --kernel-name-base mangled -k regex:ampc \
      --filter-mode per-launch-config --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats -f -o "$logs/ncu-$m" \
      $bin/ampc-plan-run .gpu/plans/bench/$m-o1.json 1 --device cuda --lr 0.01 --profile
    [[ -n ${AMPC_GPU_DRY_RUN:-} || ! -e $logs/ncu-$m.ncu-rep ]] && continue
    $ncu --import "$logs/ncu-$m.ncu-rep" --csv --page details >"$logs/ncu-$m.csv" &&
      python3 bench/gpu/ncu_table.py "$logs/ncu-$m.csv" 25 | tee "$logs/ncu-$m.md"
    gzip -f "$logs/ncu-$m.csv"
  done
}

device_name() {
  nvidia-smi --query-gpu=name --format=csv,noheader >"$logs/device.txt" 2>/dev/null || true
}

report() {
  echo "== step times (ms, median; one run)"
  device_name
  python3 bench/gpu/report.py bench "$logs"
}

phase=all
case "${1:-}" in
prepare) prepare; exit 0 ;;
run) phase=run; shift ;;
checks | e2e | bench | profile | quick | rest | all | fp8 | attention | ncu | emulated) phase=$1; shift ;;
esac
if [[ $phase == run ]]; then # run CMD...: the command, after the build, with its libraries
  logs=build-gpu/logs
else
  logs=${1:-build-gpu/logs}
fi
mkdir -p "$logs"
# The device tool brings back 8 files of $OUT at most: the logs come back as
# one archive, also when a time limit stops the run.
# Checkpoints, the same start's weights and any other file over 4 MiB stay
# behind (BERT's are hundreds of MB; the tool brings back 16 MiB a file):
# their names are in the archive's left-behind.txt.
pack_logs() {
  [[ -n ${OUT:-} && -d $OUT ]] || return 0
  (
    cd "$logs" || exit
    find . -type f \( -size +4194303c -o -name '*.st' -o -name '*.safetensors' \) >left-behind.txt
    find . -type f -size -4194304c ! -name '*.st' ! -name '*.safetensors' -print0 |
      tar czf "$OUT/gpu-check-logs.tgz" --null -T -
  ) 2>/dev/null
  return 0
}
trap pack_logs EXIT
trap 'exit 143' TERM INT
unpack
if [[ ! -d .gpu/debs || ! -d .gpu/plans ]]; then
  echo "gpu-check: no .gpu here: run 'scripts/gpu-check.sh prepare' first and carry .gpu" >&2
  exit 1
fi
# emulated: the backend checks here, on the CUDA backend built for the host.
if [[ $phase == emulated ]]; then
  bin=build/bin libs=""
  export AMPC_CHECK_CANDIDATE=cuda-emulated AMPC_CHECK_TIMEOUT=${AMPC_CHECK_TIMEOUT:-7200}
  checks_against_cpu
  check backend-reversed env AMPC_EMULATED_ORDER=reverse $bin/ampc-backend-check \
    --candidate cuda-emulated .gpu/plans/models/*.json .gpu/plans/unit/*.json
  exact_resume cuda-emulated
  [[ ${#failed[@]} -eq 0 ]] || echo "gpu-check: FAILED: ${failed[*]}"
  exit $status
fi
have_gpu=no
nvidia-smi -L 2>/dev/null | grep -q GPU && have_gpu=yes
if [[ -n ${AMPC_GPU_DRY_RUN:-} ]]; then
  have_gpu=yes bin=BIN cuda=CUDA libs=""
else
  build
fi
if [[ $phase == run ]]; then
  LD_LIBRARY_PATH="$libs:${LD_LIBRARY_PATH:-}" "$@"
  exit $?
fi
sanitizer=compute-sanitizer
command -v $sanitizer >/dev/null || sanitizer=$cuda/bin/compute-sanitizer
case $phase in
checks | all | quick) checks_against_cpu ;;
esac
if [[ $have_gpu == yes ]]; then
  case $phase in
  checks) checks_on_gpu ;;
  e2e) phase_e2e ;;
  bench) runs core; runs extra; torch_peers; bench_compare; report ;;
  profile) runs core; runs extra; report ;;
  quick) memcheck_mlp; runs core; torch_peers simplenet mnist_cnn resnet50 bert; report ;;
  rest) checks_on_gpu quick; phase_e2e; runs extra; torch_peers gpt2; bench_compare; report ;;
  all) checks_on_gpu; phase_e2e; runs core; runs extra; torch_peers; bench_compare; report ;;
  fp8) runs fp8; device_name; python3 bench/gpu/report.py fp8 "$logs" ;;
  ncu) phase_ncu ;;
  attention)
    runs attention
    check attention-torch python3 bench/gpu/attention.py sweep "$logs/attention-sweep.json"
    device_name
    python3 bench/gpu/report.py attention "$logs"
    ;;
  esac
elif [[ $phase != checks ]]; then
  echo "gpu-check: no GPU here: the end-to-end runs and benchmarks need one"
  [[ $status -eq 0 ]] && status=77
fi
[[ ${#failed[@]} -eq 0 ]] || echo "gpu-check: FAILED: ${failed[*]}"
exit $status
