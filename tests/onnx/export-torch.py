#!/usr/bin/python3
"""Exports the models of the ONNX import tests with PyTorch: resnet18 from
torchvision (random weights), one nn.TransformerEncoderLayer, two
Linear layers with GELU in its tanh and erf forms, and a small GPT as
nanoGPT writes it (bench/torch_models.py: c_attn split in three, a causal
masked_fill, opset 17 for its triu), an attention with a mask that is
not causal and one with an additive padding mask, each with
an input batch and PyTorch's outputs on it as safetensors files.

Usage: export-torch.py OUTDIR. Exits 77 (a skip) where PyTorch or
torchvision is missing."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "bench"))
from export_start import start

out = start("torchvision")
import safetensors_io  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402


def export(name, model, x, batch_labels, opset=13):
    model.eval()
    torch.onnx.export(model, x, f"{out}/{name}.onnx", input_names=["x"],
                      output_names=["y"], opset_version=opset)
    with torch.no_grad():
        y = model(x)
    safetensors_io.write(f"{out}/{name}.inputs.safetensors", {"x": x.numpy()})
    safetensors_io.write(f"{out}/{name}.expected.safetensors", {"y": y.numpy()})
    safetensors_io.write(f"{out}/{name}.train.safetensors",
                         {"x": x.numpy(), "labels": batch_labels})


resnet = torchvision.models.resnet18(num_classes=10)
export("resnet18", resnet, torch.randn(8, 3, 64, 64),
       torch.randint(0, 10, (8,)).numpy())
layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                         batch_first=True)
export("encoder", layer, torch.randn(4, 16, 64), torch.randn(4, 16, 64).numpy())
gelus = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(approximate="tanh"),
                            torch.nn.Linear(32, 8), torch.nn.GELU())
export("gelus", gelus, torch.randn(4, 16), torch.randint(0, 8, (4,)).numpy())
from torch_models import Gpt2  # noqa: E402

gpt = Gpt2(layers=2, hidden=64, heads=4, seq=16, vocab=128)
export("gpt", gpt, torch.randint(0, 128, (2, 16)), torch.randint(0, 128, (2, 16)).numpy(),
       opset=17)


class OffsetMask(torch.nn.Module):
    """Attention over x as q, k and v with a masked_fill that is not causal:
    each query also sees the next key."""

    def forward(self, x):
        att = (x @ x.transpose(-2, -1)) / 8 ** 0.5
        mask = torch.ones(16, 16, dtype=torch.bool).triu(2)
        return att.masked_fill(mask, float("-inf")).softmax(-1) @ x


export("offset-mask", OffsetMask(), torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8).numpy(),
       opset=17)


class PaddedAttention(torch.nn.Module):
    """Attention over x as q, k and v with an additive padding mask as
    Hugging Face's BERT adds it: (1 - keep) * -10000 over [b, 1, 1, s_k]; the
    first sequence's last five keys are padding."""

    def forward(self, x):
        keep = torch.ones(2, 16)
        keep[0, -5:] = 0
        bias = (1.0 - keep)[:, None, None, :] * -10000.0
        att = (x @ x.transpose(-2, -1)) / 8 ** 0.5 + bias
        return att.softmax(-1) @ x


export("padded", PaddedAttention(), torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8).numpy())


class LearnedBias(torch.nn.Module):
    """Attention over x with a learned bias of the scores (swin's relative
    positions, here a plain parameter)."""

    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(1, 4, 16, 16))

    def forward(self, x):
        return ((x @ x.transpose(-2, -1)) / 8 ** 0.5 + self.bias).softmax(-1) @ x


export("learned-bias", LearnedBias(), torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8).numpy())
print(f"exported resnet18, encoder, gelus, gpt, offset-mask, padded and learned-bias to {out}")
