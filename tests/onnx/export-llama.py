#!/usr/bin/python3
"""Exports a tiny decoder as LLaMA writes it (RMSNorm, rotary position
embeddings, grouped-query attention, SwiGLU, no biases, a causal
masked_fill, untied head) with
PyTorch, twice: `llama`, whose rotary angles come from an arange of the
sequence (constants at import: ampc folds their sin and cos), and
`llama-positions`, which reads the positions as an input as Hugging Face's
exports do (sin and cos run in the graph). Writes each with an input batch,
PyTorch's logits on it, and a training batch (next-token targets); and
PyTorch's losses over 5 SGD steps of llama-positions from the exported
weights (llama-positions.peer.json, for bench/compare_losses.py).

Usage: export-llama.py OUTDIR. Exits 77 (a skip) where PyTorch is missing."""
import json
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from export_start import start

out = start()
import safetensors_io  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
VOCAB, HIDDEN, HEADS, KV_HEADS, LAYERS, FF, SEQ, BATCH = 128, 64, 4, 2, 2, 172, 32, 2


class RMSNorm(torch.nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x):
    """Grouped-query attention: each k and v head serves HEADS / KV_HEADS
    query heads (Hugging Face's repeat_kv)."""
    b, kv, s, d = x.shape
    rep = HEADS // KV_HEADS
    return x[:, :, None, :, :].expand(b, kv, rep, s, d).reshape(b, kv * rep, s, d)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.mlp_norm = RMSNorm(HIDDEN), RMSNorm(HIDDEN)
        linear = lambda i, o: torch.nn.Linear(i, o, bias=False)  # noqa: E731
        kv = HIDDEN // HEADS * KV_HEADS
        self.q, self.o = linear(HIDDEN, HIDDEN), linear(HIDDEN, HIDDEN)
        self.k, self.v = linear(HIDDEN, kv), linear(HIDDEN, kv)
        self.gate, self.up, self.down = linear(HIDDEN, FF), linear(HIDDEN, FF), linear(FF, HIDDEN)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        hd = d // HEADS
        y = self.attn_norm(x)
        q = self.q(y).view(b, t, HEADS, hd).transpose(1, 2)
        k, v = (repeat_kv(p(y).view(b, t, KV_HEADS, hd).transpose(1, 2)) for p in (self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        att = att.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
        a = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(a)
        y = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(torch.nn.Module):
    def __init__(self):
        super().__init__()
        hd = HIDDEN // HEADS
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        self.register_buffer("inv_freq", inv, persistent=False)
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(LAYERS)])
        self.norm = RMSNorm(HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids, positions=None):
        if positions is None:  # the angles as an outer product by einsum
            positions = torch.arange(ids.shape[1])
            freqs = torch.einsum("i,j->ij", positions.float(), self.inv_freq)[None]
        else:  # Hugging Face's form: a batched matmul of [B, hd/2, 1] by [B, 1, T]
            inv = self.inv_freq[None, :, None].expand(positions.shape[0], -1, 1)
            freqs = (inv @ positions[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


model = Llama().eval()
ids = torch.randint(0, VOCAB, (BATCH, SEQ))
targets = torch.randint(0, VOCAB, (BATCH, SEQ))
# Positions offset by 1000, as a window deep in a long document: the angles
# reach 1031 rad, where f16 values are 1 apart.
positions = torch.arange(1000, 1000 + SEQ).expand(BATCH, SEQ).contiguous()
for name, args, names in [("llama", (ids,), ["ids"]),
                          ("llama-positions", (ids, positions), ["ids", "positions"])]:
    torch.onnx.export(model, args, f"{out}/{name}.onnx", input_names=names,
                      output_names=["logits"], opset_version=14)
    with torch.no_grad():
        logits = model(*args)
    feeds = {n: a.numpy() for n, a in zip(names, args)}
    safetensors_io.write(f"{out}/{name}.inputs.safetensors", feeds)
    safetensors_io.write(f"{out}/{name}.expected.safetensors", {"logits": logits.numpy()})
    safetensors_io.write(f"{out}/{name}.train.safetensors", {**feeds, "labels": targets.numpy()})

sgd = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
model.train()
for _ in range(5):
    loss = F.cross_entropy(model(ids, positions).reshape(-1, VOCAB), targets.reshape(-1))
    losses.append(loss.item())
    sgd.zero_grad()
    loss.backward()
    sgd.step()
with open(f"{out}/llama-positions.peer.json", "w") as f:
    json.dump({"model": "llama-positions", "mode": "f32", "losses": losses}, f)
