#!/usr/bin/python3
"""Exports the models of the ONNX import tests with PyTorch: resnet18 from
torchvision (random weights), one nn.TransformerEncoderLayer, and two
Linear layers with GELU in its tanh and erf forms, each with
an input batch and PyTorch's outputs on it as safetensors files.

Usage: export-torch.py OUTDIR. Exits 77 (a skip) where PyTorch or
torchvision is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import torch
    import torchvision
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)
import safetensors_io

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)


def export(name, model, x, batch_labels):
    model.eval()
    torch.onnx.export(model, x, f"{out}/{name}.onnx", input_names=["x"],
                      output_names=["y"], opset_version=13)
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
print(f"exported resnet18, encoder and gelus to {out}")
