"""PyTorch peers of ampc's training step on the GPU, for scripts/gpu-check.sh bench.

The zoo's models at the benchmark shapes, written as a user would write
them: SGD (lr 0.01) for simplenet, mnist_cnn and resnet50 (batch 64,
channels_last), fused AdamW (lr 1e-4) for BERT-base (seq 128, batch 32),
fused AdamW with llm.c's settings for GPT-2 124M (batch 16, seq 1024,
scaled_dot_product_attention):
  f32           eager, true f32 (TF32 off for matmul and cuDNN), as ampc's O0
  amp           eager, autocast f16 with GradScaler (init scale 65536, ampc's
                default), as ampc's O1 and O2
  compile       torch.compile of the amp step's model (BERT, GPT-2)
  bf16          eager, autocast bf16, no scaler (GPT-2), as ampc's O1 bf16
  compile-bf16  torch.compile of the bf16 step's model (GPT-2)
  bf16-checkpointing  the bf16 step with torch.utils.checkpoint around each
                block (GPT-2), as ampc's --gradient-checkpointing
Each step is timed with CUDA events (forward, backward, optimizer), median
over STEPS after 10 warm-up steps, as ampc-plan-run times its steps; the
loss after the last step and torch.cuda.max_memory_allocated are printed
with it.
Usage: python3 bench/gpu/torch_gpu.py [STEPS] [MODEL...]; prints
`model mode ms final_loss peak_bytes` lines. With AMPC_TORCH_PROFILE=FILE it
also writes the CUDA kernel times per step of the simplenet and BERT amp
steps (torch.profiler) for the step-time breakdown (breakdown.py)."""
import json
import math
import os
import statistics
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from torch_models import Bert, Gpt2, MnistCnn, ResNet50, mlp  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True


def cases():
    """(name, model factory, x, y, loss, optimizer factory, modes)."""
    cuda = torch.device("cuda")
    sgd = lambda params: torch.optim.SGD(params, lr=0.01)
    x = torch.randn(512, 4096, device=cuda)
    yield ("simplenet", lambda: mlp(4096, 4096, 4096), x, torch.randn(512, 4096, device=cuda),
           F.mse_loss, sgd, ("f32", "amp"))
    yield ("mnist_cnn", lambda: MnistCnn().to(memory_format=torch.channels_last),
           torch.randn(64, 784, device=cuda), torch.randint(0, 10, (64,), device=cuda),
           F.cross_entropy, sgd, ("f32", "amp"))
    images = torch.randn(64, 8, 224, 224, device=cuda).to(memory_format=torch.channels_last)
    yield ("resnet50", lambda: ResNet50().to(memory_format=torch.channels_last), images,
           torch.randint(0, 1000, (64,), device=cuda), F.cross_entropy, sgd, ("amp",))
    ids = torch.randint(0, 30528, (32, 128), device=cuda)
    yield ("bert", Bert, ids, torch.randint(0, 30528, (32, 128), device=cuda),
           lambda logits, y: F.cross_entropy(logits.flatten(0, 1), y.flatten()),
           lambda params: torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, fused=True),
           ("f32", "amp", "compile"))
    tokens = torch.randint(0, 50257, (16, 1025), device=cuda)
    yield ("gpt2", Gpt2, tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous(),
           lambda logits, y: F.cross_entropy(logits.flatten(0, 1), y.flatten()),
           lambda params: torch.optim.AdamW(params, lr=6e-4, betas=(0.9, 0.95),
                                            weight_decay=0.1, fused=True),
           ("amp", "compile", "bf16", "compile-bf16", "bf16-checkpointing"))


def trainer(model, x, y, loss_fn, make_opt, mode):
    """One training step as a user writes it; returns its loss tensor."""
    amp, bf16 = mode != "f32", "bf16" in mode
    opt = make_opt(model.parameters())
    scaler = torch.amp.GradScaler("cuda", init_scale=65536.0, enabled=amp and not bf16)
    forward = torch.compile(model) if mode.startswith("compile") else model
    dtype = torch.bfloat16 if bf16 else torch.float16

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=amp):
            loss = loss_fn(forward(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss
    return step


def step_ms(step, steps):
    torch.cuda.reset_peak_memory_stats()
    times = []
    for i in range(steps + 10):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        stop.record()
        times.append((start, stop))
    torch.cuda.synchronize()
    ms = [a.elapsed_time(b) for a, b in times[10:]]
    assert all(math.isfinite(v) for v in ms)
    return statistics.median(ms), loss.item(), torch.cuda.max_memory_allocated()


def kernel_profile(step, steps=5):
    """CUDA kernel ms per step by kernel name (torch.profiler), and the
    profiled step's ms: for the step-time breakdown (breakdown.py)."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        start.record()
        for _ in range(steps):
            step()
        stop.record()
        torch.cuda.synchronize()
    kernels = {}
    for e in prof.key_averages():
        if str(e.device_type).endswith("CUDA"):
            us = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
            kernels[e.key] = kernels.get(e.key, 0.0) + us / 1000 / steps
    return {"kernel_ms_per_step": kernels, "step_ms": start.elapsed_time(stop) / steps}


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    only = set(sys.argv[2:])
    profiles = {}
    for name, make, x, y, loss_fn, make_opt, modes in cases():
        if only and name not in only:
            continue
        for mode in modes:
            torch.manual_seed(0)
            model = make().cuda()
            model.checkpointing = mode.endswith("checkpointing")
            step = trainer(model, x, y, loss_fn, make_opt, mode)
            ms, loss, peak = step_ms(step, steps)
            print(f"{name} {mode} {ms:.3f} {loss:.6g} {peak}", flush=True)
            if mode == "amp" and name in ("simplenet", "bert"):
                profiles[name] = kernel_profile(step)
            del model, step
            torch.cuda.empty_cache()
    if os.environ.get("AMPC_TORCH_PROFILE") and profiles:
        with open(os.environ["AMPC_TORCH_PROFILE"], "w") as f:
            json.dump(profiles, f)


if __name__ == "__main__":
    main()
