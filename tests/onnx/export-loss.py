#!/usr/bin/python3
"""Exports models whose ONNX graph ends in PyTorch's own loss,
F.cross_entropy (SoftmaxCrossEntropyLoss with ignore_index -100, PyTorch's
default), each with a batch whose labels include ignored rows and PyTorch's
loss on it: `classifier` ([N, C] scores), `tagger` (a Conv1d tagging
each position: [N, C, T] scores, the classes on axis 1 as ONNX and PyTorch
read them, and ignore_index 0 for padding) and `tokens` (a Transformer
encoder layer tagging tokens, its scores flattened to [N T, C] as token
classifiers write them, the padding's labels -100), with PyTorch's losses
over 10 AdamW steps from its start (`tokens.peer.json`), and `weighted`
(the classifier with class weights, a buffer: cross_entropy's weight=),
`fed` (its weights a graph input instead) and `summed` (the weighted
classifier with reduction="sum"), with PyTorch's losses over 10 SGD steps
from its start (`summed.peer.json`), and `unreduced` (reduction="none":
the weighted classifier's row losses, each times its sample's weight, a
graph input, then their mean), with PyTorch's losses over 10 SGD steps
(`unreduced.peer.json`), `tag_rows` (the tagger's loss at each
position, [N, T], unreduced), and `multilabel` (a binary cross entropy of
logits against five labels a row, which PyTorch writes as ops) with
PyTorch's losses over 10 SGD steps (`multilabel.peer.json`), its logits
in the tens, and `multilabel_zeros`, the same zero-initialised: its first
logits are 0.

Usage: export-loss.py OUTDIR. Exits 77 (a skip) where PyTorch is missing."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_start import start

out = start()
import safetensors_io  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x, labels):
        return F.cross_entropy(self.fc(x), labels)


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(8, 6, 3, padding=1)

    def forward(self, x, labels):
        return F.cross_entropy(self.conv(x), labels, ignore_index=0)


class Weighted(Classifier):
    def __init__(self):
        super().__init__()
        self.register_buffer("class_weight", torch.linspace(0.25, 2.5, 10))

    def forward(self, x, labels):
        return F.cross_entropy(self.fc(x), labels, weight=self.class_weight)


class Summed(Weighted):
    def forward(self, x, labels):
        return F.cross_entropy(self.fc(x), labels, weight=self.class_weight, reduction="sum")


class Unreduced(Weighted):
    def forward(self, x, labels, sample_weight):
        rows = F.cross_entropy(self.fc(x), labels, weight=self.class_weight, reduction="none")
        return (rows * sample_weight).mean()


class TagRows(Tagger):
    def forward(self, x, labels):
        return F.cross_entropy(self.conv(x), labels, ignore_index=0, reduction="none")


class MultiLabel(torch.nn.Module):
    def __init__(self, zeros=False):
        super().__init__()
        self.fc = torch.nn.Linear(16, 5)
        if zeros:
            torch.nn.init.zeros_(self.fc.weight)
            torch.nn.init.zeros_(self.fc.bias)

    def forward(self, x, labels):
        return F.binary_cross_entropy_with_logits(self.fc(x), labels)


def export(name, model, x, labels, **more):
    inputs = {"x": x, "labels": labels, **more}
    torch.onnx.export(model, tuple(inputs.values()), f"{out}/{name}.onnx",
                      input_names=list(inputs), output_names=["loss"], opset_version=13)
    with torch.no_grad():
        loss = model(*inputs.values())
    safetensors_io.write(f"{out}/{name}.inputs.safetensors",
                         {k: v.numpy() for k, v in inputs.items()})
    safetensors_io.write(f"{out}/{name}.expected.safetensors", {"loss": loss.numpy()})


def peer_losses(name, model, opt, *inputs):
    """10 steps of `opt` on one batch from the exported start: NAME.peer.json."""
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = model(*inputs)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with open(f"{out}/{name}.peer.json", "w") as f:
        f.write(json.dumps({"losses": losses}) + "\n")


class Tokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 32)
        self.enc = torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, ids, labels):
        logits = self.head(self.enc(self.emb(ids)))
        return F.cross_entropy(logits.view(-1, 5), labels.view(-1))


labels = torch.randint(0, 10, (32,))
labels[::3] = -100
export("classifier", Classifier(), torch.randn(32, 16), labels)
export("weighted", Weighted(), torch.randn(32, 16), labels)


class Fed(Classifier):
    def forward(self, x, labels, weight):
        return F.cross_entropy(self.fc(x), labels, weight=weight)


export("fed", Fed(), torch.randn(32, 16), labels, weight=torch.linspace(2.0, 0.2, 10))
tags = torch.randint(0, 6, (4, 12))  # 0 is padding: about a sixth of the positions
export("tagger", Tagger(), torch.randn(4, 8, 12), tags)
export("tag_rows", TagRows(), torch.randn(4, 8, 12), tags)
tokens = Tokens()
ids, tags = torch.randint(0, 100, (8, 12)), torch.randint(0, 5, (8, 12))
tags[:, 9:] = -100  # padding
torch.onnx.export(tokens, (ids, tags), f"{out}/tokens.onnx", input_names=["ids", "labels"],
                  output_names=["loss"], opset_version=13, do_constant_folding=False)
safetensors_io.write(f"{out}/tokens.data.safetensors", {"ids": ids.numpy(), "labels": tags.numpy()})
peer_losses("tokens", tokens, torch.optim.AdamW(tokens.parameters(), lr=1e-3, weight_decay=0.01),
            ids, tags)
unreduced, x, sample_weight = Unreduced(), torch.randn(32, 16), torch.rand(32) * 2
export("unreduced", unreduced, x, labels, sample_weight=sample_weight)
peer_losses("unreduced", unreduced, torch.optim.SGD(unreduced.parameters(), lr=0.05), x, labels,
            sample_weight)
summed, x = Summed(), torch.randn(32, 16)
export("summed", summed, x, labels)
peer_losses("summed", summed, torch.optim.SGD(summed.parameters(), lr=0.002), x, labels)
x, on = torch.randn(32, 16) * 40, (torch.rand(32, 5) > 0.5).float()
for name, zeros, lr in ("multilabel", False, 0.002), ("multilabel_zeros", True, 0.01):
    multilabel = MultiLabel(zeros)
    export(name, multilabel, x, on)
    peer_losses(name, multilabel, torch.optim.SGD(multilabel.parameters(), lr=lr), x, on)
