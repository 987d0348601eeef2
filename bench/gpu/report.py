"""Tables of scripts/gpu-check.sh from the metrics files it wrote.

  report.py e2e LOGDIR     accuracy on the CPU and the GPU per configuration;
                           exit 1 when one differs by more than 0.5 points
  report.py bench LOGDIR   step times of ampc and PyTorch (LOGDIR/torch.txt),
                           also written as the dated benchmark page
                           LOGDIR/DATE-GPU.md, for docs/benchmarks/
  report.py fp8 LOGDIR     FP8 against bf16 (fp8.py), as LOGDIR/DATE-GPU-fp8.md
  report.py attention LOGDIR
                           attention's TFLOP/s against PyTorch's
                           (attention_table.py), as LOGDIR/DATE-GPU-attention.md

The GPU is the one LOGDIR/device.txt names (nvidia-smi's name); its peaks
scale the percentages.
"""
import contextlib
import datetime
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from compare_losses import compare  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention_table  # noqa: E402
import breakdown  # noqa: E402
import fp8  # noqa: E402

E2E = ["mlp-o0", "mlp-o1", "mlp-o2", "mlp-o1-bf16", "cnn-o1"]
TOLERANCE = 0.005
# f16 dense tensor-core peak (TFLOP/s) and memory bandwidth (TB/s) of the
# GPUs the check runs on (SXM parts).
GPUS = {"h100": (989, 3.35), "h200": (989, 4.8)}
GPU, PEAK_TFLOPS, HBM_TBPS = "h100", *GPUS["h100"]


def use_gpu(logs):
    """The GPU of the run (LOGDIR/device.txt, nvidia-smi's name), or H100."""
    global GPU, PEAK_TFLOPS, HBM_TBPS
    path = os.path.join(logs, "device.txt")
    name = open(path).read().lower() if os.path.exists(path) else ""
    GPU = next((g for g in GPUS if g in name), "h100")
    PEAK_TFLOPS, HBM_TBPS = GPUS[GPU]


# The steps of BERT-base's attention core in ampc's plan, forward and
# backward: what a fused attention kernel would replace.
ATTENTION_CORE = re.compile(r"encoder\.layer\d+\.attn\.((q|k|v)\.(heads|split)|scores|scaled|probs"
                            r"|context|context\.merge|context\.flat)(\.recompute|\.grad(_\d)?)?$")


def attention(logs):
    """ampc's attention core (profiled BERT-base O1) against PyTorch's
    unfused core and scaled_dot_product_attention's backends (attention.py)."""
    torch, prof = load(logs, "attention"), load(logs, "bench-bert-o1-profile")
    if not torch or not prof or "launch_ms_per_step" not in prof.get("profile", {}):
        return
    steps = prof["profile"]["launch_ms_per_step"]
    ours = sum(ms for name, ms in steps.items() if ATTENTION_CORE.match(name))
    print(f"\nAttention core at seq 128 (12 layers, forward and backward, ms per step): "
          f"ampc {ours:.3f} (profiled, {sum(1 for n in steps if ATTENTION_CORE.match(n))} "
          "launches); PyTorch " +
          ", ".join(f"{name} {r['ms_per_step']:.3f}" for name, r in torch.items()))


def load(logs, name):
    path = os.path.join(logs, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def e2e(logs):
    ok = True
    print("| config | cpu accuracy | cuda accuracy | difference | cuda ms/step | cuda host syncs/step |")
    print("|---|---|---|---|---|---|")
    for cfg in E2E:
        cpu, gpu = load(logs, f"e2e-{cfg}-cpu"), load(logs, f"e2e-{cfg}-cuda")
        if not cpu or not gpu or "eval_accuracy" not in cpu or "eval_accuracy" not in gpu:
            print(f"| {cfg} | missing | | | | |")
            ok = False
            continue
        diff = gpu["eval_accuracy"] - cpu["eval_accuracy"]
        verdict = "" if abs(diff) <= TOLERANCE else " FAIL"
        ok = ok and not verdict
        print(f"| {cfg} | {100 * cpu['eval_accuracy']:.2f}% | {100 * gpu['eval_accuracy']:.2f}% "
              f"| {100 * diff:+.2f}{verdict} | {gpu['step_ms_median']:.3f} "
              f"| {gpu['host_syncs_per_step']:.2f} |")
    return ok


# The targets: (row, ampc metrics, PyTorch mode, model, target ratio).
TARGETS = [
    ("simplenet O2 step", "bench-simplenet-o2", "amp", "simplenet", 0.75),
    ("simplenet O1 step", "bench-simplenet-o1", "amp", "simplenet", 0.80),
    ("BERT-base O1 step (AdamW)", "bench-bert-o1", "amp", "bert", 0.77),
    ("BERT-base O1 step vs torch.compile", "bench-bert-o1", "compile", "bert", 0.90),
    ("mnist_cnn O1 step", "bench-mnist_cnn-o1", "amp", "mnist_cnn", 0.80),
    ("resnet50 O1 step (batch 64, NHWC)", "bench-resnet50-o1", "amp", "resnet50", 0.80),
    ("GPT-2 124M O1 bf16 step vs torch.compile", "bench-gpt2-o1-bf16", "compile-bf16", "gpt2",
     0.90),
    ("GPT-2 124M O1 f16 step vs torch.compile", "bench-gpt2-o1", "compile", "gpt2", 0.90),
]

# GPT-2 124M as llm.c counts it: parameters, layers, width, context, and the
# FLOPs of a token (6 per parameter, and attention's 6 * L * C * T).
GPT2 = {"params": 124475904, "layers": 12, "hidden": 768, "seq": 1024, "batch": 16}


def gpt2_lines(logs, torch):
    """Tokens/s, MFU against the dense peak and peak memory of the GPT-2 runs."""
    g = GPT2
    flops = 6 * g["params"] + 6 * g["layers"] * g["hidden"] * g["seq"]
    tokens = g["batch"] * g["seq"]
    for name, mode in [("gpt2-o1-bf16", "bf16"),
                       ("gpt2-o1-bf16-checkpointing", "bf16-checkpointing"), ("gpt2-o1", "amp")]:
        m, t = load(logs, f"bench-{name}"), torch.get(("gpt2", mode))
        if not m:
            continue
        per_s = tokens / (m["step_ms_median"] / 1000)
        line = (f"  {name}: {per_s:.0f} tokens/s, MFU {100 * per_s * flops / (PEAK_TFLOPS * 1e12):.1f}% "
                f"(target >= 50%), peak {m['device_peak_bytes']} bytes")
        if t:
            line += (f", {m['device_peak_bytes'] / t[2]:.2f}x PyTorch eager's {t[2]} "
                     f"(target <= 0.8); step {m['step_ms_median']:.3f} ms, "
                     f"{m['step_ms_median'] / t[0]:.2f}x PyTorch eager {mode}'s {t[0]:.3f}")
        print(line)


def torch_results(logs):
    """(model, mode) -> (ms, final loss, peak bytes) from torch.txt."""
    out = {}
    path = os.path.join(logs, "torch.txt")
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) == 5:
                out[(parts[0], parts[1])] = (float(parts[2]), float(parts[3]), int(parts[4]))
    return out


def exposed_bookkeeping(logs, name, prof):
    """The bookkeeping left on the step's path once the finite check runs
    beside the backward: its kernel time less what overlapping saves (the
    step with --no-overlap-checks against the step), as a share of the step."""
    on, off = load(logs, f"bench-{name}"), load(logs, f"fusion-{name}-no-overlap-checks")
    if not on or not off:
        return None
    saved = off["step_ms_median"] - on["step_ms_median"]
    kernel_ms = prof["amp_bookkeeping_share"] * prof["kernels_ms_per_step"]
    left = max(kernel_ms - saved, 0.0)
    return (f"  overlapped finite check: {saved:.3f} ms/step saved (step {on['step_ms_median']:.3f}"
            f" ms, {off['step_ms_median']:.3f} checked after the backward); bookkeeping on the "
            f"step's path {left:.3f} ms = {100 * left / on['step_ms_median']:.2f}% of the step "
            "(target <= 2%)")


# The line of a check's log that sums it up, by the first pattern found.
SUMMARIES = [re.compile(p) for p in (r"\d+ plans: .*", r"ERROR SUMMARY: .*",
                                     r"eval accuracy: .*", r"^final loss: .*")]


def summary(logs, name):
    """The summing-up line of LOGDIR/NAME.log, or ''."""
    try:
        with open(os.path.join(logs, name + ".log"), errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return ""
    for pattern in SUMMARIES:
        for line in reversed(lines):
            m = pattern.search(line)
            if m:
                return m.group(0).strip().replace("|", "/")
    return ""


def checks(logs):
    """Each check gpu-check.sh ran (LOGDIR/checks.tsv: name, exit status,
    seconds; the last run of a name counts) with its verdict and its log's
    summing-up line."""
    path = os.path.join(logs, "checks.tsv")
    if not os.path.exists(path):
        return
    runs = {}
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 3:
                runs[fields[0]] = fields[1:]
    print("| check | verdict | s | summary |")
    print("|---|---|---|---|")
    for name, (rc, seconds) in runs.items():
        verdict = {"0": "pass", "77": "skipped", "124": "TIMED OUT"}.get(rc, f"FAIL (exit {rc})")
        print(f"| {name} | {verdict} | {seconds} | {summary(logs, name)} |")
    print()


def bench(logs):
    checks(logs)
    torch = torch_results(logs)
    print("| workload | ampc ms | PyTorch ms | ratio | target | ampc loss | PyTorch loss |")
    print("|---|---|---|---|---|---|---|")
    for row, metrics, mode, model, target in TARGETS:
        m, t = load(logs, metrics), torch.get((model, mode))
        ms = f"{m['step_ms_median']:.3f}" if m else "-"
        ratio = f"{m['step_ms_median'] / t[0]:.2f}" if m and t else "-"
        verdict = "" if not (m and t) else (" met" if m["step_ms_median"] / t[0] <= target
                                              else " missed")
        print(f"| {row} | {ms} | {t[0] if t else '-'} | {ratio}{verdict} | <= {target} "
              f"| {m['final_loss']:.4g} | {t[1] if t else '-'} |" if m else
              f"| {row} | - | {t[0] if t else '-'} | - | <= {target} | - | {t[1] if t else '-'} |")
    print("\nampc's loss is its last step's, on a fresh random batch each step; PyTorch's is of"
          " one batch trained again each step: the same-start runs below compare the two.")
    for name in ["simplenet-o1", "simplenet-o1-no-gemm-tuning", "bert-o1", "resnet50-o1"]:
        p = load(logs, f"bench-{name}-profile")
        if not p or "profile" not in p:
            continue
        prof = p["profile"]
        share = 100 * prof["amp_bookkeeping_share"]
        print(f"\n{name} (profiled run): AMP bookkeeping {share:.2f}% of kernel time "
              f"(target <= 2%); GEMMs {prof['gemm_ms_per_step']:.3f} ms/step at "
              f"{prof['gemm_tflops']:.0f} TFLOP/s = {100 * prof['gemm_tflops'] / PEAK_TFLOPS:.0f}% of "
              f"the {GPU.upper()}'s {PEAK_TFLOPS} TFLOP/s f16 dense peak; between kernels "
              f"{prof['run_ms_per_step'] - prof['kernels_ms_per_step']:.3f} ms/step")
        exposed = exposed_bookkeeping(logs, name, prof)
        if exposed:
            print(exposed)
        top = sorted(prof["kernel_ms_per_step"].items(), key=lambda kv: -kv[1])[:12]
        for kernel, ms in top:
            print(f"  {kernel:32s} {ms:9.3f} ms/step")
        print("  slowest launches (bytes: each operand and result once; "
              f"% of {HBM_TBPS} TB/s, or of {PEAK_TFLOPS} TFLOP/s):")
        for r in prof.get("slowest_launches", [])[:12]:
            rate = (f"{r['tflops']:6.0f} TFLOP/s {100 * r['tflops'] / PEAK_TFLOPS:3.0f}%"
                    if "tflops" in r else
                    f"{r['gb_per_s']:6.0f} GB/s    {r['gb_per_s'] / (10 * HBM_TBPS):3.0f}%")
            print(f"    {r['step'][:44]:44s} {r['kernel'][:24]:24s} {r['ms']:7.3f} ms "
                  f"{r['bytes'] / 2**20:8.1f} MiB {rate}")
    print("\nGPT-2 124M (batch 16 x 1024 tokens, llm.c's FLOP count):")
    gpt2_lines(logs, torch)
    bert, peak = load(logs, "bench-bert-o1"), torch.get(("bert", "amp"))
    if bert and peak:
        print(f"\nBERT-base O1 peak device memory: ampc {bert['device_peak_bytes']} bytes, "
              f"PyTorch max_memory_allocated {peak[2]}: "
              f"{bert['device_peak_bytes'] / peak[2]:.2f}x (target <= 0.7)")
    print("\n| model | ampc O0 | ampc O1 | ampc O2 | PyTorch f32 | PyTorch amp | host syncs/step (O1) |")
    print("|---|---|---|---|---|---|---|")
    for model in ["simplenet", "mnist_cnn", "resnet50", "bert"]:
        ms = {lvl: load(logs, f"bench-{model}-{lvl}") for lvl in ["o0", "o1", "o2"]}
        cell = lambda m: f"{m['step_ms_median']:.3f}" if m else "-"
        f32, amp = torch.get((model, "f32")), torch.get((model, "amp"))
        syncs = f"{ms['o1']['host_syncs_per_step']:.2f}" if ms["o1"] else "-"
        print(f"| {model} | {cell(ms['o0'])} | {cell(ms['o1'])} | {cell(ms['o2'])} "
              f"| {f32[0] if f32 else '-'} | {amp[0] if amp else '-'} | {syncs} |")
    fusions = sorted(f[len("fusion-"):-len(".json")] for f in os.listdir(logs)
                     if f.startswith("fusion-") and f.endswith(".json"))
    if fusions:
        print("\nOne fusion left out (ampc compile --no-fuse NAME; no-gemm-tuning: "
              "ampc-plan-run without --tune-gemms; no-overlap-checks: with "
              "--no-overlap-checks), against the whole step:")
        print("| plan | ms | fused ms | ratio | device peak bytes | fused peak |")
        print("|---|---|---|---|---|---|")
    for name in fusions:
        off, on = load(logs, "fusion-" + name), load(logs, "bench-" + name.split("-no-")[0])
        if off and on:
            print(f"| {name} | {off['step_ms_median']:.3f} | {on['step_ms_median']:.3f} "
                  f"| {off['step_ms_median'] / on['step_ms_median']:.2f} "
                  f"| {off['device_peak_bytes']} | {on['device_peak_bytes']} |")
    attention(logs)
    nograph = load(logs, "bench-simplenet-o1-no-graph")
    if nograph:
        print(f"\nsimplenet O1 without CUDA graphs: {nograph['step_ms_median']:.3f} ms/step")
    print("\nSame start (bench/same_init.py; ampc's level, then the loss comparison):")
    same = os.path.join(logs, "same-start")
    for name in ["simplenet-o1", "simplenet-o2", "mnist_cnn-o1", "bert-o1"]:
        model = name.rsplit("-", 1)[0]
        peer, metrics = load(same, model + ".peer"), load(same, name + ".metrics")
        print(f"  {name}: " + (compare(peer, metrics, 3e-2)[0] if peer and metrics else "missing"))
    plot(logs)
    return True


def plot(logs):
    """LOGDIR/step-breakdown.svg: ampc's profiled O1 steps and PyTorch's AMP
    steps, per category (breakdown.py)."""
    torch = load(logs, "torch-profile") or {}
    rows = []
    for model in ["simplenet", "bert"]:
        ampc = load(logs, f"bench-{model}-o1-profile")
        if ampc and "profile" in ampc:
            rows.append((f"{model}: ampc O1", breakdown.ampc_split(ampc["profile"])))
        if model in torch:
            rows.append((f"{model}: PyTorch AMP", breakdown.torch_split(torch[model])))
    if not rows:
        return
    path = os.path.join(logs, "step-breakdown.svg")
    with open(path, "w") as f:
        f.write(breakdown.svg(rows, "Step time per category (ms, profiled runs)"))
    print(f"\nstep-time breakdown: {path}")
    for label, ms in rows:
        parts = ", ".join(f"{name} {v:.3f}" for (name, _), v in zip(breakdown.CATEGORIES, ms))
        print(f"  {label}: {parts}")


def dated_page(logs, text, today=None, suffix=""):
    """LOGDIR/DATE-GPU[suffix].md: the report as a page of docs/benchmarks/."""
    day = today or datetime.date.today().isoformat()
    path = os.path.join(logs, f"{day}-{GPU}{suffix}.md")
    with open(path, "w") as f:
        f.write(f"# Benchmarks of {day} on an {GPU.upper()}\n\n"
                f"Measured by `scripts/gpu-check.sh` (bench/gpu/report.py; one run, medians of "
                f"the step times; PyTorch as bench/gpu/torch_gpu.py runs it). Peaks: "
                f"{PEAK_TFLOPS} TFLOP/s f16 dense, {HBM_TBPS} TB/s.\n\n{text}")
    return path


if __name__ == "__main__":
    what, logs = sys.argv[1], sys.argv[2]
    use_gpu(logs)
    if what == "e2e":
        sys.exit(0 if e2e(logs) else 1)
    if what in ("fp8", "attention"):
        loader = lambda name: load(logs, name)
        if what == "fp8":
            lines = fp8.report(loader, PEAK_TFLOPS)
        else:
            sweep = os.path.join(logs, "attention-sweep.json")
            torch = json.load(open(sweep)) if os.path.exists(sweep) else {}
            lines = attention_table.report(loader, torch, PEAK_TFLOPS)
        text = "\n".join(lines) + "\n"
        print(text, end="")
        print(f"benchmark page: "
              f"{dated_page(logs, text, os.environ.get('AMPC_REPORT_DATE'), '-' + what)}")
        sys.exit(0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = bench(logs)
    print(out.getvalue(), end="")
    print(f"benchmark page: {dated_page(logs, out.getvalue(), os.environ.get('AMPC_REPORT_DATE'))}")
    sys.exit(0 if ok else 1)
