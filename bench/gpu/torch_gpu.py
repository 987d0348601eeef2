"""PyTorch peers of ampc's training step on the GPU, for scripts/gpu-check.sh bench.

Eager PyTorch, SGD, the zoo's models at the benchmark shapes:
  f32  true f32 (TF32 off for matmul and cuDNN), as ampc's O0
  amp  autocast f16 with GradScaler, as ampc's O1
Each step is timed with CUDA events (forward, backward, optimizer), median
over STEPS after 10 warm-up steps, as ampc-plan-run times its steps.
Usage: python3 bench/gpu/torch_gpu.py [STEPS]; prints `model mode ms` lines."""
import math
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from torch_models import MnistCnn, mlp  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True


class Bert(nn.Module):
    """The zoo's bert: post-norm encoder layers, erf GELU, no dropout, an MLM
    head tied to the word embeddings, cross entropy over every token."""

    def __init__(self, layers=12, hidden=768, heads=12, seq=128, vocab=30528):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Parameter(torch.randn(seq, hidden) * 0.02)
        self.norm = nn.LayerNorm(hidden)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0,
                                       activation="gelu", batch_first=True),
            layers, enable_nested_tensor=False)
        self.transform = nn.Linear(hidden, hidden)
        self.head_norm = nn.LayerNorm(hidden)
        self.decoder_b = nn.Parameter(torch.zeros(vocab))

    def forward(self, ids):
        h = self.norm(self.word(ids) + self.position)
        h = self.head_norm(F.gelu(self.transform(self.encoder(h))))
        return h @ self.word.weight.t() + self.decoder_b


def cases():
    cuda = torch.device("cuda")
    x = torch.randn(512, 4096, device=cuda)
    yield "simplenet", mlp(4096, 4096, 4096), x, torch.randn(512, 4096, device=cuda), F.mse_loss
    yield ("mnist_cnn", MnistCnn().to(memory_format=torch.channels_last),
           torch.randn(64, 784, device=cuda), torch.randint(0, 10, (64,), device=cuda),
           F.cross_entropy)
    ids = torch.randint(0, 30528, (32, 128), device=cuda)
    yield ("bert", Bert(), ids, torch.randint(0, 30528, (32, 128), device=cuda),
           lambda logits, y: F.cross_entropy(logits.flatten(0, 1), y.flatten()))


def step_ms(model, x, y, loss_fn, amp, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda", enabled=amp)
    times = []
    for i in range(steps + 10):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        stop.record()
        times.append((start, stop))
    torch.cuda.synchronize()
    ms = [a.elapsed_time(b) for a, b in times[10:]]
    assert all(math.isfinite(v) for v in ms)
    return statistics.median(ms)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    torch.manual_seed(0)
    for name, model, x, y, loss_fn in cases():
        model = model.cuda()
        for mode in ("f32", "amp"):
            print(f"{name} {mode} {step_ms(model, x, y, loss_fn, mode == 'amp', steps):.3f}",
                  flush=True)
        del model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
