#!/usr/bin/python3
"""A PyTorch model for `ampc lora` (tests/lit/onnx/lora.test): a
TransformerEncoderLayer and a Linear head over [batch, seq, d] inputs,
exported with its module names kept (no constant folding).

  lora-check.py export OUTDIR   writes OUTDIR/block.onnx, block.inputs and
                                block.train safetensors (x, and mse labels)
                                and its state_dict, block.weights
  lora-check.py check OUTDIR WEIGHTS OUTPUTS
                                loads WEIGHTS (a state_dict by PyTorch's names:
                                adapters merged) into the model and prints
                                the largest difference of its output on the
                                inputs from OUTPUTS' `y`: agree within 1e-5 of
                                the largest output (exit 0), or DIFFER (1)
  lora-check.py peft OUTDIR BASE ADAPTER OUTPUTS
                                the same, with the PEFT adapter's lora_A and
                                lora_B folded in by PEFT's rule

Exits 77 (a skip) where PyTorch is missing."""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
try:
    import torch
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)
import numpy as np
import safetensors_io


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                        dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.head(self.encoder(x))


def model():
    torch.manual_seed(0)
    return Block().eval()


def largest_difference(m, out, outputs):
    x = torch.from_numpy(np.array(safetensors_io.read(f"{out}/block.inputs.safetensors")["x"]))
    with torch.no_grad():
        y = m(x).numpy()
    theirs = safetensors_io.read(outputs)["y"]
    difference, largest = np.abs(y - theirs).max(), np.abs(y).max()
    agree = difference <= 1e-5 * largest
    print("largest difference %.3g of %.3g: %s" % (difference, largest,
                                                    "agree" if agree else "DIFFER"))
    return agree


def main():
    mode, out = sys.argv[1], sys.argv[2]
    m = model()
    if mode == "export":
        x = torch.randn(4, 16, 32)
        torch.onnx.export(m, x, f"{out}/block.onnx", input_names=["x"], output_names=["y"],
                          opset_version=13, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.PRESERVE)
        safetensors_io.write(f"{out}/block.inputs.safetensors", {"x": x.numpy()})
        safetensors_io.write(f"{out}/block.weights.safetensors",
                             {k: v.numpy() for k, v in m.state_dict().items()})
        safetensors_io.write(f"{out}/block.train.safetensors",
                             {"x": x.numpy(), "labels": torch.randn(4, 16, 8).numpy()})
        return
    state = {k: torch.from_numpy(np.array(v)) for k, v in safetensors_io.read(sys.argv[3]).items()}
    if mode == "peft":  # W + lora_alpha / r * B @ A, as PEFT's merge does
        config = json.load(open(os.path.join(os.path.dirname(sys.argv[4]),
                                             "adapter_config.json")))
        adapter = safetensors_io.read(sys.argv[4])
        for key, a in adapter.items():
            if ".lora_A." not in key:
                continue
            module = key[len("base_model.model."):key.index(".lora_A.")]
            b = adapter[key.replace("lora_A", "lora_B")]
            scale = config["lora_alpha"] / config["r"]
            state[module + ".weight"] += scale * torch.from_numpy(np.array(b)) @ torch.from_numpy(
                np.array(a))
    m.load_state_dict(state)
    sys.exit(0 if largest_difference(m, out, sys.argv[-1]) else 1)


main()
