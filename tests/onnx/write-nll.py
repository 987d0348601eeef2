#!/usr/bin/python3
"""NegativeLogLikelihoodLoss as exporters other than PyTorch write it
(PyTorch fuses log_softmax + nll_loss into SoftmaxCrossEntropyLoss), by
tests/onnx/onnx_writer.py: `nll` (LogSoftmax over axis 1 of [N, C, H, W]
scores, then the loss with class weights and ignore_index 255, as a
segmentation loss), its inputs and PyTorch's loss on them, and `raw` (the
loss on a graph input, not log-probabilities).

Usage: write-nll.py OUTDIR. Exits 77 (a skip) where PyTorch is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_start import start

out = start()
import safetensors_io  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from onnx_writer import FLOAT, INT64, model, node  # noqa: E402

weights = [0.5, 2.0, 1.0, 1.5, 0.25]
x, y = torch.randn(2, 5, 3, 4), torch.randint(0, 5, (2, 3, 4))
y[0, 1] = 255
loss = F.nll_loss(F.log_softmax(x, 1), y, weight=torch.tensor(weights), ignore_index=255)
scores, labels = ("x", FLOAT, [2, 5, 3, 4]), ("labels", INT64, [2, 3, 4])
nodes = [node("LogSoftmax", ["x"], ["lp"], axis=1),
         node("NegativeLogLikelihoodLoss", ["lp", "labels", "w"], ["loss"], name="nll",
              reduction="mean", ignore_index=255)]
with open(f"{out}/nll.onnx", "wb") as f:
    f.write(model(nodes, [scores, labels], [("loss", FLOAT, [])], [("w", weights)]))
safetensors_io.write(f"{out}/nll.inputs.safetensors", {"x": x.numpy(), "labels": y.numpy()})
safetensors_io.write(f"{out}/nll.expected.safetensors", {"loss": loss.numpy()})
with open(f"{out}/raw.onnx", "wb") as f:
    f.write(model([node("NegativeLogLikelihoodLoss", ["x", "labels"], ["loss"], name="nll")],
                  [scores, labels], [("loss", FLOAT, [])]))
