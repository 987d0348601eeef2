"""Would a fused attention kernel pay at seq 128? Figures for the question
(docs/performance.md, "Fusions": the attention question), for scripts/gpu-check.sh bench.

Times BERT-base's attention core, forward and backward, f16 on the GPU:
batch 32, 12 heads, seq 128, head size 64, from Q, K and V as the
projections leave them ([batch, seq, 768]) to the context in that layout:
  unfused    what ampc's plan runs, as PyTorch eager kernels: the heads
             transposed out, Q.K^T, the scale, softmax, P.V, the heads
             merged back
  flash, efficient, cudnn, math
             torch's scaled_dot_product_attention with that backend alone
Median over 50 runs after 10 warm-up runs, CUDA events, per layer and per
step (12 layers). Usage: python3 bench/gpu/attention.py [OUT.json]; prints
`name ms_per_layer ms_per_step` lines (or `name unavailable: why`).

python3 bench/gpu/attention.py sweep OUT.json: the peers of gpu-check.sh's
attention phase (bench/gpu/attention_table.py): forward and backward in f16
at FlashAttention's benchmark shape (16k tokens, 2048 wide) for each seq,
head_dim and causal of SWEEP, with the flash backend and with the math one
(PyTorch's unfused attention), q, k and v in ampc's [batch, seq, heads,
head_dim] layout; writes {"s1024-d64-causal": {"flash": ms, "math": ms}, ...}."""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BATCH, HEADS, SEQ, SIZE, LAYERS = 32, 12, 128, 64, 12


def heads(t):
    return t.view(BATCH, SEQ, HEADS, SIZE).transpose(1, 2)


def merged(t):
    return t.transpose(1, 2).reshape(BATCH, SEQ, HEADS * SIZE)


def unfused(q, k, v):
    scores = heads(q).contiguous() @ heads(k).contiguous().transpose(-1, -2)
    probs = torch.softmax(scores * SIZE ** -0.5, dim=-1)
    return merged(probs @ heads(v).contiguous()).contiguous()


def fused(backend):
    def core(q, k, v):
        with sdpa_kernel(backend):
            return merged(F.scaled_dot_product_attention(heads(q), heads(k), heads(v)))
    return core


def time_ms(core, runs=50, warmup=10, shape=(BATCH, SEQ, HEADS * SIZE)):
    make = lambda: torch.randn(*shape, device="cuda", dtype=torch.float16, requires_grad=True)
    q, k, v = make(), make(), make()
    dout = torch.randn(*shape, device="cuda", dtype=torch.float16)
    times = []
    for i in range(warmup + runs):
        q.grad = k.grad = v.grad = None
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        core(q, k, v).backward(dout)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    results = {}
    cores = [("unfused", unfused), ("flash", fused(SDPBackend.FLASH_ATTENTION)),
             ("efficient", fused(SDPBackend.EFFICIENT_ATTENTION)),
             ("cudnn", fused(SDPBackend.CUDNN_ATTENTION)), ("math", fused(SDPBackend.MATH))]
    for name, core in cores:
        try:
            ms = time_ms(core)
        except RuntimeError as e:  # a backend this GPU or build lacks
            print(f"{name} unavailable: {str(e).splitlines()[0]}")
            continue
        results[name] = {"ms_per_layer": ms, "ms_per_step": ms * LAYERS}
        print(f"{name} {ms:.4f} {ms * LAYERS:.3f}")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump(results, f, indent=1)


SWEEP = [(seq, size, causal) for seq in (128, 512, 1024, 2048) for size in (64, 128)
         for causal in (False, True)]


def sweep_name(seq, size, causal):
    return f"s{seq}-d{size}" + ("-causal" if causal else "")


def sweep(out):
    results = {}
    for seq, size, causal in SWEEP:
        batch, heads = 16384 // seq, 2048 // size
        name, row = sweep_name(seq, size, causal), {}
        for backend, key in ((SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.MATH, "math")):
            def core(q, k, v):  # [batch, seq, heads, size] in and out
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(
                        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                        is_causal=causal).transpose(1, 2)
            try:
                row[key] = time_ms(core, runs=30, shape=(batch, seq, heads, size))
            except RuntimeError as e:  # a backend this GPU or build lacks, or memory
                print(f"{name} {key} unavailable: {str(e).splitlines()[0]}")
                continue
            print(f"{name} {key} {row[key]:.4f} ms")
        results[name] = row
        torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "sweep":
        sweep(sys.argv[2])
    else:
        main()
