"""The FP8 against bf16 tables of scripts/gpu-check.sh fp8 (report.py fp8).

GEMMs: the profiled runs of three layers of N (fp8-gemmN-{bf16,fp8}-profile),
their GEMM TFLOP/s (kernels timed one by one) and the FP8 speedup (target:
at least 1.6x at 8192^3). Steps: BERT-large and GPT-2 350M, 200 steps each
(fp8-{model}-{bf16,fp8}), the median step times (target: BERT-large at least
1.15x faster in FP8) and the loss curves side by side: the mean of each
block of 20 steps, and the relative difference of the last block's means.
"""

GEMM_TARGET = {8192: 1.6}
STEP_TARGET = {"bert-large": 1.15}
FP8_PEAK_TFLOPS = 1979


def gemm_rows(load, peak_tflops):
    lines = ["| GEMMs (3 layers of N, trained) | bf16 TFLOP/s | fp8 TFLOP/s | speedup | target |",
             "|---|---|---|---|---|"]
    for n in (1024, 4096, 8192):
        runs = {d: load(f"fp8-gemm{n}-{d}-profile") for d in ("bf16", "fp8")}
        tflops = {d: r["profile"]["gemm_tflops"] if r and "profile" in r else None
                  for d, r in runs.items()}
        cell = lambda d, peak: (f"{tflops[d]:.0f} ({100 * tflops[d] / peak:.0f}% of {peak})"
                                if tflops[d] else "-")
        speedup = tflops["fp8"] / tflops["bf16"] if tflops["fp8"] and tflops["bf16"] else None
        target = GEMM_TARGET.get(n)
        verdict = "" if not (speedup and target) else (" met" if speedup >= target else " missed")
        lines.append(f"| {n}³ | {cell('bf16', peak_tflops)} | {cell('fp8', FP8_PEAK_TFLOPS)} "
                     f"| {f'{speedup:.2f}x' if speedup else '-'}{verdict} "
                     f"| {f'>= {target}x' if target else '-'} |")
    return lines


def block_means(history, block=20):
    losses = [row["loss"] for row in history if not row.get("skipped")]
    return [sum(losses[i:i + block]) / len(losses[i:i + block])
            for i in range(0, len(losses), block)]


def step_rows(load):
    lines = ["| model | bf16 ms | fp8 ms | speedup | target | bf16 peak bytes | fp8 peak bytes |",
             "|---|---|---|---|---|---|---|"]
    curves = []
    for model in ("bert-large", "gpt2-350m"):
        runs = {d: load(f"fp8-{model}-{d}") for d in ("bf16", "fp8")}
        if not all(runs.values()):
            lines.append(f"| {model} | - | - | - | - | - | - |")
            continue
        ms = {d: r["step_ms_median"] for d, r in runs.items()}
        speedup, target = ms["bf16"] / ms["fp8"], STEP_TARGET.get(model)
        verdict = "" if not target else (" met" if speedup >= target else " missed")
        lines.append(f"| {model} | {ms['bf16']:.3f} | {ms['fp8']:.3f} | {speedup:.2f}x{verdict} "
                     f"| {f'>= {target}x' if target else '-'} "
                     f"| {runs['bf16']['device_peak_bytes']} | {runs['fp8']['device_peak_bytes']} |")
        means = {d: block_means(r.get("history", [])) for d, r in runs.items()}
        if means["bf16"] and means["fp8"]:
            last = abs(means["fp8"][-1] - means["bf16"][-1]) / abs(means["bf16"][-1])
            curves.append(f"{model}, loss per 20 steps (bf16 / fp8): " +
                          ", ".join(f"{a:.4g}/{b:.4g}" for a, b in zip(means["bf16"], means["fp8"])) +
                          f"; last block {100 * last:.2f}% apart")
    return lines, curves


def report(load, peak_tflops):
    """The tables, as lines; whether any run was there."""
    lines = ["FP8 against bf16 (one run; FP8 peak 1979 TFLOP/s dense, bf16 "
             f"{peak_tflops}):", ""] + gemm_rows(load, peak_tflops) + [""]
    steps, curves = step_rows(load)
    lines += steps + [""] + curves
    profile = load("fp8-gpt2-350m-fp8-profile")
    if profile and "profile" in profile:
        top = sorted(profile["profile"]["kernel_ms_per_step"].items(), key=lambda kv: -kv[1])[:10]
        lines += ["", "GPT-2 350M at fp8, the kernels' time (profiled, ms per step):"]
        lines += [f"  {kernel:32s} {ms:9.3f}" for kernel, ms in top]
    return lines
