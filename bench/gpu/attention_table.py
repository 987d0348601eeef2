"""The attention table of scripts/gpu-check.sh attention (report.py attention).

For each seq (128 to 2048), head_dim (64, 128) and causal or not, at
FlashAttention's benchmark shape (16k tokens, 2048 wide), the forward and
backward in TFLOP/s:
  ampc fused     the `attention` and `attention_backward` kernels' time in
                 the profiled run attn-fused-s{seq}-d{head_dim}[-causal]
  ampc unfused   the unfused run's kernels less what the step does besides
                 attention (the casts of q, k and v, the loss, the updates),
                 which is what the fused run's kernels take besides its two
  torch flash    scaled_dot_product_attention's flash backend, and its math
  torch math     one (unfused), from attention.py sweep (attention-sweep.json)
FLOPs as FlashAttention counts them: 4 b h s^2 d forward, 2.5 times that
backward, half of both causal. Targets: fused >= 0.8x flash at seq >= 512,
and >= 2x ampc's unfused at seq 1024. Then BERT-base's O1 step at seq 128,
unfused (the zoo's default) against fused.
"""

FLASH_TARGET, UNFUSED_TARGET = 0.8, 2.0
SEQS, SIZES = (128, 512, 1024, 2048), (64, 128)


def flops(seq, size, causal):
    tokens, width = 16384, 2048  # batch * seq, heads * head_dim
    total = 3.5 * 4 * tokens * seq * width
    return total / 2 if causal else total


def kernels(run):
    """ms per step of every kernel, and of the two attention kernels."""
    profile = run["profile"] if run and "profile" in run else None
    if not profile:
        return None, None
    per = profile["kernel_ms_per_step"]
    return profile["kernels_ms_per_step"], per.get("attention", 0) + per.get("attention_backward", 0)


def tflops(ms, seq, size, causal):
    return flops(seq, size, causal) / (ms * 1e-3) / 1e12 if ms else None


def cell(value, peak=None):
    if value is None:
        return "-"
    return f"{value:.0f}" + (f" ({100 * value / peak:.0f}%)" if peak else "")


def ratio(a, b, target):
    if not a or not b:
        return "-"
    r = a / b
    return f"{r:.2f}x" + ("" if target is None else (" met" if r >= target else " missed"))


def rows(load, torch, peak_tflops):
    lines = ["| seq | head_dim | causal | ampc fused | ampc unfused | torch flash | torch math "
             "| fused / flash | fused / unfused |", "|---|---|---|---|---|---|---|---|---|"]
    for seq in SEQS:
        for size in SIZES:
            fused_total, fused_attention = kernels(load(f"attn-fused-s{seq}-d{size}"))
            unfused_total, _ = kernels(load(f"attn-unfused-s{seq}-d{size}"))
            # The step besides attention, as the fused run measures it.
            overhead = fused_total - fused_attention if fused_total is not None else None
            for causal in (False, True):
                name = f"s{seq}-d{size}" + ("-causal" if causal else "")
                _, fused_ms = kernels(load(f"attn-fused-{name}"))
                unfused_ms = (unfused_total - overhead
                              if not causal and unfused_total is not None and overhead is not None
                              else None)
                peers = torch.get(name, {})
                t = {k: tflops(ms, seq, size, causal) for k, ms in
                     (("fused", fused_ms), ("unfused", unfused_ms),
                      ("flash", peers.get("flash")), ("math", peers.get("math")))}
                lines.append(
                    f"| {seq} | {size} | {'yes' if causal else 'no'} "
                    f"| {cell(t['fused'], peak_tflops)} | {cell(t['unfused'])} "
                    f"| {cell(t['flash'], peak_tflops)} | {cell(t['math'])} "
                    f"| {ratio(t['fused'], t['flash'], FLASH_TARGET if seq >= 512 else None)} "
                    f"| {ratio(t['fused'], t['unfused'], UNFUSED_TARGET if seq == 1024 else None)} |")
    return lines


def bert_line(load):
    runs = {form: load(f"attn-bert-o1-{form}") for form in ("unfused", "fused")}
    if not all(r and "step_ms_median" in r for r in runs.values()):
        return []
    unfused, fused = (runs[f]["step_ms_median"] for f in ("unfused", "fused"))
    peak = {f: runs[f].get("device_peak_bytes") for f in runs}
    return ["", f"BERT-base O1 at seq 128 (batch 32, AdamW): {unfused:.3f} ms a step unfused, "
                f"{fused:.3f} fused ({unfused / fused:.2f}x); device peak {peak['unfused']} "
                f"against {peak['fused']} bytes"]


def report(load, torch, peak_tflops):
    """The table, as lines."""
    return ([f"Attention forward and backward, TFLOP/s (one run; f16, 16k tokens, 2048 wide; "
             f"the percentages of {peak_tflops} TFLOP/s dense):", ""]
            + rows(load, torch, peak_tflops) + bert_line(load))
