#!/usr/bin/python3
"""Exports, with PyTorch, the modules whose ONNX ops ampc imports as
compositions of graph ops (docs/onnx.md, "Ops"): activations (LeakyReLU,
PReLU, ELU, SELU, CELU, Softplus, Mish, Softsign), GroupNorm and
InstanceNorm2d, Upsample and interpolate in every mode, ConvTranspose2d
(strided, padded, grouped, dilated), PixelShuffle (DepthToSpace), repeat
(Tile), amax and amin (ReduceMax, ReduceMin), F.normalize, sums and
reciprocals, the 1-D forms (Conv1d, ConvTranspose1d, the 1-D pools,
BatchNorm1d), the 3-D forms (Conv3d, the 3-D pools, BatchNorm3d), the
recurrent layers (LSTM, GRU, RNN); and nine models made of them: a small
U-Net, a DCGAN-style generator, PointNet's core, a 1-D CNN over audio, an
MLP with BatchNorm1d, a small video classifier, a 3-D U-Net, an LSTM text
classifier and a GRU forecaster. Each as NAME.onnx with an input batch and PyTorch's outputs
(NAME.inputs/.expected.safetensors); the nine models
also with a target (NAME.train.safetensors) and PyTorch's losses over 5
SGD steps from the exported weights (NAME.peer.json, as
bench/compare_losses.py reads it), to hold ampc's gradients to PyTorch's.

Usage: export-composed.py OUTDIR. Exits 77 (a skip) where PyTorch is missing."""
import copy
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from export_start import start

out = start()
import safetensors_io  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Lambda(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)


def export(name, model, x, opset=14):
    model.eval()
    torch.onnx.export(model, x, f"{out}/{name}.onnx", input_names=["x"], output_names=["y"],
                      opset_version=opset, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE)  # keeps BatchNorm a node
    with torch.no_grad():
        y = model(x)
    safetensors_io.write(f"{out}/{name}.inputs.safetensors", {"x": x.numpy()})
    safetensors_io.write(f"{out}/{name}.expected.safetensors", {"y": y.numpy()})
    return y


x = torch.randn(2, 8, 6, 5)
ops = {
    "leaky_relu": nn.LeakyReLU(0.2),
    "prelu": nn.PReLU(8, init=0.3),
    "elu": nn.ELU(0.7),
    "selu": nn.SELU(),
    "celu": nn.CELU(1.5),
    "softplus": nn.Softplus(),
    "mish": nn.Mish(),
    "group_norm": nn.GroupNorm(2, 8),
    "instance_norm": nn.InstanceNorm2d(8, affine=True),
    "upsample_nearest": nn.Upsample(scale_factor=2, mode="nearest"),
    "upsample_nearest_size": nn.Upsample(size=(9, 7), mode="nearest"),
    "upsample_bilinear": nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
    "upsample_bilinear_corners": nn.Upsample(scale_factor=2, mode="bilinear",
                                             align_corners=True),
    "upsample_bicubic": nn.Upsample(size=(11, 8), mode="bicubic", align_corners=False),
    "downsample_bilinear": Lambda(lambda t: F.interpolate(t, size=(4, 3), mode="bilinear")),
    "conv_transpose": nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1),
    "conv_transpose_odd": nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1,
                                             bias=False),
    "conv_transpose_grouped": nn.ConvTranspose2d(8, 4, 3, stride=(1, 2), padding=(2, 0),
                                                 dilation=2, groups=2),
    "conv_transpose_1x1": nn.ConvTranspose2d(8, 3, 1, stride=2),
    "conv_transpose_phases_grouped": nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1,
                                                        output_padding=1, groups=2),
    "conv_transpose_phases_mixed": nn.ConvTranspose2d(8, 6, (4, 3), stride=(2, 1),
                                                      padding=(2, 1), output_padding=(1, 0)),
    "pixel_shuffle": nn.PixelShuffle(2),
    "softsign": nn.Softsign(),
    "tile": Lambda(lambda t: t.repeat(1, 2, 1, 3)),
    "amax": Lambda(lambda t: t.amax(dim=(2, 3))),
    "amin_channels": Lambda(lambda t: t.amin(dim=1, keepdim=True)),
    "normalize": Lambda(lambda t: F.normalize(t, dim=1)),
    "sums": Lambda(lambda t: t.sum(dim=(2, 3)) + 1 / (t.pow(2).mean(dim=(2, 3)) + 1)),
}
for name, m in ops.items():
    with torch.no_grad():  # biases and slopes that are not their defaults
        for p in m.parameters():
            p.add_(0.1 * torch.randn_like(p))
    export(name, m, x)

def export_perturbed(modules, x):
    """Exports each module on x with its params moved off their defaults
    and its buffers (batch norms' statistics) in [0.5, 1.5)."""
    for name, m in modules.items():
        with torch.no_grad():
            for p in m.parameters():
                p.add_(0.1 * torch.randn_like(p))
            for b in m.buffers():
                if b.is_floating_point():
                    b.copy_(0.5 + torch.rand_like(b))
        export(name, m, x)
        ops[name] = m


# The 1-D forms (Conv1d, ConvTranspose1d, the 1-D pools, BatchNorm1d), on
# [N, C, L] and BatchNorm1d also on [N, C].
x1 = torch.randn(2, 8, 20)
ops1d = {
    "conv1d": nn.Conv1d(8, 6, 5, stride=2, padding=2),
    "conv1d_dilated_grouped": nn.Conv1d(8, 4, 3, padding=2, dilation=2, groups=2),
    "conv_transpose1d": nn.ConvTranspose1d(8, 4, 4, stride=2, padding=1),
    "conv_transpose1d_odd": nn.ConvTranspose1d(8, 4, 3, stride=2, padding=1, output_padding=1),
    "max_pool1d": nn.MaxPool1d(3, stride=2, padding=1),
    "avg_pool1d": nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False),
    "adaptive_avg_pool1d": nn.AdaptiveAvgPool1d(1),
    "adaptive_max_pool1d": nn.AdaptiveMaxPool1d(1),
    "batch_norm1d": nn.BatchNorm1d(8),
}
export_perturbed(ops1d, x1)
with torch.no_grad():
    flat = nn.BatchNorm1d(8)
    flat.running_mean.copy_(torch.randn(8))
    flat.running_var.copy_(0.5 + torch.rand(8))
export("batch_norm1d_flat", flat, torch.randn(4, 8))
ops["batch_norm1d_flat"] = flat

class Inception3d(nn.Module):
    """An S3D-style block: three branches of 3-D convolutions and a max pool,
    concatenated on the channels, batch-normed."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv3d(4, 3, 1)
        self.b = nn.Sequential(nn.Conv3d(4, 2, 1), nn.ReLU(),
                               nn.Conv3d(2, 3, (3, 1, 1), padding=(1, 0, 0)))
        self.c = nn.Sequential(nn.MaxPool3d(3, 1, 1), nn.Conv3d(4, 2, 1))
        self.norm = nn.BatchNorm3d(8)

    def forward(self, v):
        return F.relu(self.norm(torch.cat([self.a(v), self.b(v), self.c(v)], dim=1)))


# The 3-D forms (Conv3d, MaxPool3d, AvgPool3d, BatchNorm3d, the global
# pools), on [N, C, D, H, W]: r3d's stem, r(2+1)d's temporal and spatial
# convolutions, s3d's pools, nnU-Net's ConvTranspose3d (window = stride) and
# MONAI's (k 3, s 2, p 1, output_padding 1).
x3 = torch.randn(2, 4, 5, 6, 7)
ops3d = {
    "conv3d": nn.Conv3d(4, 6, 3, stride=(1, 2, 2), padding=1),
    "conv3d_temporal": nn.Conv3d(4, 6, (3, 1, 1), padding=(1, 0, 0), bias=False),
    "conv3d_strided_grouped": nn.Conv3d(4, 4, 3, stride=2, padding=(2, 1, 0),
                                        dilation=(2, 1, 1), groups=2),
    "conv3d_even": nn.Conv3d(4, 3, (2, 3, 4), padding=(1, 1, 2)),
    "max_pool3d": nn.MaxPool3d(3, stride=2, padding=1),
    "max_pool3d_ceil": nn.MaxPool3d((2, 3, 3), stride=(2, 2, 2), ceil_mode=True),
    "avg_pool3d": nn.AvgPool3d(3, stride=2, padding=1, count_include_pad=False),
    "avg_pool3d_counted": nn.AvgPool3d((2, 3, 3), stride=1, padding=1),
    "adaptive_avg_pool3d": nn.AdaptiveAvgPool3d(1),
    "batch_norm3d": nn.BatchNorm3d(4),
    "inception3d": Inception3d(),
    "conv_transpose3d": nn.ConvTranspose3d(4, 2, 2, stride=2),
    "conv_transpose3d_cropped": nn.ConvTranspose3d(4, 3, (2, 3, 2), stride=(2, 3, 2),
                                                   padding=(1, 0, 0), output_padding=(1, 0, 1),
                                                   bias=False),
    "conv_transpose3d_overlapping": nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1,
                                                       output_padding=1),
    "conv_transpose3d_grouped": nn.ConvTranspose3d(4, 4, (3, 2, 3), stride=(2, 1, 2),
                                                   padding=(1, 0, 2), dilation=(1, 2, 1),
                                                   groups=2),
}
export_perturbed(ops3d, x3)


class Recurrent(nn.Module):
    """An nn.LSTM, nn.GRU or nn.RNN and what is read of its results."""

    def __init__(self, rnn, pick):
        super().__init__()
        self.rnn, self.pick = rnn, pick

    def forward(self, t):
        y, state = self.rnn(t)
        return self.pick(y, state)


# The recurrent layers (LSTM, GRU, RNN), on [B, T, I] (batch_first) or
# [T, B, I], reading their outputs Y or their last states.
xs = torch.randn(3, 6, 8)
recurrent = {
    "lstm": Recurrent(nn.LSTM(8, 12), lambda y, s: y),
    "lstm_stacked_bidirectional": Recurrent(
        nn.LSTM(8, 12, num_layers=2, batch_first=True, bidirectional=True), lambda y, s: y),
    "lstm_last_states": Recurrent(nn.LSTM(8, 12, batch_first=True),
                                  lambda y, s: s[0] + 2 * s[1]),
    "gru_bidirectional": Recurrent(nn.GRU(8, 12, batch_first=True, bidirectional=True),
                                   lambda y, s: y),
    "rnn_relu": Recurrent(nn.RNN(8, 12, nonlinearity="relu"), lambda y, s: s),
}
for name, m in recurrent.items():
    export(name, m, xs)
    ops[name] = m


class UNet(nn.Module):
    """Two levels: GroupNorm, SiLU, a strided conv down, a ConvTranspose2d
    up, a skip concat, and nearest upsampling on the way out."""

    def __init__(self):
        super().__init__()
        block = lambda i, o: nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.GroupNorm(2, o),
                                           nn.SiLU())
        self.inc, self.down = block(3, 8), nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.mid = block(16, 16)
        self.up = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
        self.dec = block(16, 8)
        self.out = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 3, 1))

    def forward(self, t):
        skip = self.inc(t)
        h = self.mid(self.down(skip))
        return self.out(self.dec(torch.cat([self.up(h), skip], 1)))


class Generator(nn.Module):
    """DCGAN's generator, small: ConvTranspose2d, InstanceNorm, LeakyReLU,
    bilinear upsampling, Tanh."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(16, 16, 4, 1, 0), nn.InstanceNorm2d(16, affine=True),
            nn.LeakyReLU(0.2), nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.LeakyReLU(0.2),
            nn.Upsample(scale_factor=2, mode="bilinear"), nn.Conv2d(8, 3, 3, padding=1),
            nn.Tanh())

    def forward(self, z):
        return self.net(z)


class AudioNet(nn.Module):
    """A 1-D CNN over a waveform, M5-style: Conv1d, BatchNorm1d, ReLU,
    MaxPool1d, a global average over time, a Linear head."""

    def __init__(self):
        super().__init__()
        block = lambda i, o, k, s: nn.Sequential(nn.Conv1d(i, o, k, s, k // 2),
                                                 nn.BatchNorm1d(o), nn.ReLU())
        self.net = nn.Sequential(block(1, 8, 9, 2), nn.MaxPool1d(2), block(8, 16, 3, 1),
                                 nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 4))

    def forward(self, w):
        return self.net(w)


class TabularMLP(nn.Module):
    """An MLP with BatchNorm1d over features ([N, C])."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(),
                                 nn.Linear(32, 3))

    def forward(self, t):
        return self.net(t)


class Sentiment(nn.Module):
    """A text classifier: embeddings, a bidirectional LSTM, a Linear head
    on its last step."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 24, batch_first=True, bidirectional=True)
        self.head = nn.Linear(48, 3)

    def forward(self, tokens):
        y, _ = self.lstm(self.embed(tokens))
        return self.head(y[:, -1])


class Forecast(nn.Module):
    """A two-layer GRU over a series, a Linear prediction at each step."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, series):
        return self.head(self.gru(series)[0])


class VideoNet(nn.Module):
    """A small video classifier in torchvision's VideoResNet style: an r3d
    stem (Conv3d 3 x 7 x 7, stride 1 x 2 x 2), an r(2+1)d block (a spatial
    1 x 3 x 3 and a temporal 3 x 1 x 1 convolution), BatchNorm3d, ReLU,
    MaxPool3d, AdaptiveAvgPool3d, a Linear head."""

    def __init__(self):
        super().__init__()
        block = lambda i, o, k, s, p: nn.Sequential(nn.Conv3d(i, o, k, s, p, bias=False),
                                                    nn.BatchNorm3d(o), nn.ReLU())
        self.net = nn.Sequential(block(3, 8, (3, 7, 7), (1, 2, 2), (1, 3, 3)),
                                 block(8, 8, (1, 3, 3), 1, (0, 1, 1)),
                                 block(8, 16, (3, 1, 1), (2, 1, 1), (1, 0, 0)),
                                 nn.MaxPool3d(2), nn.AdaptiveAvgPool3d(1), nn.Flatten(),
                                 nn.Linear(16, 5))

    def forward(self, clip):
        return self.net(clip)


class UNet3d(nn.Module):
    """A 3-D U-Net for volume segmentation, nnU-Net style: Conv3d,
    InstanceNorm3d, LeakyReLU, a strided Conv3d down, ConvTranspose3d with
    its window as its stride up, the skip concatenated, 2 classes a voxel."""

    def __init__(self):
        super().__init__()
        block = lambda i, o, s: nn.Sequential(nn.Conv3d(i, o, 3, s, 1), nn.InstanceNorm3d(o, affine=True),
                                              nn.LeakyReLU(0.01))
        self.down1, self.down2 = block(1, 4, 1), block(4, 8, 2)
        self.up = nn.ConvTranspose3d(8, 4, 2, stride=2)
        self.fuse, self.head = block(8, 4, 1), nn.Conv3d(4, 2, 1)

    def forward(self, v):
        skip = self.down1(v)
        return self.head(self.fuse(torch.cat([self.up(self.down2(skip)), skip], dim=1)))


class PointNet(nn.Module):
    """PointNet's core: a shared MLP over each point, a max over the points
    (ReduceMax), an MLP head."""

    def __init__(self):
        super().__init__()
        self.point = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 32))
        self.head = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, p):
        return self.head(self.point(p).amax(dim=1))


def train_peer(name, kind, model, x, target, loss_fn):
    """PyTorch's losses over 5 SGD steps from the model's weights
    (NAME.KIND.peer.json), with the batch as NAME.KIND.safetensors, for
    ampc train --data and bench/compare_losses.py."""
    safetensors_io.write(f"{out}/{name}.{kind}.safetensors",
                         {"x": x.numpy(), "labels": target.numpy()})
    model.train()
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(5):
        loss = loss_fn(model(x), target)
        losses.append(loss.item())
        sgd.zero_grad()
        loss.backward()
        sgd.step()
    with open(f"{out}/{name}.{kind}.peer.json", "w") as f:
        json.dump({"model": name, "mode": "f32", "losses": losses}, f)


for name, model, x in (("unet", UNet(), torch.randn(2, 3, 16, 16)),
                       ("generator", Generator(), torch.randn(4, 16, 1, 1)),
                       ("pointnet", PointNet(), torch.randn(4, 64, 3)),
                       ("audionet", AudioNet(), torch.randn(4, 1, 64)),
                       ("tabular", TabularMLP(), torch.randn(8, 10))):
    y = export(name, model, x)
    if name == "unet":  # as a segmentation: the classes on axis 1 of [N, C, H, W]
        classes = torch.randint(0, y.shape[1], (y.shape[0],) + tuple(y.shape[2:]))
        train_peer(name, "seg", copy.deepcopy(model), x, classes, F.cross_entropy)
    train_peer(name, "train", model, x, torch.randn_like(y), F.mse_loss)

video = VideoNet()
clips = torch.randn(2, 3, 4, 16, 16)
export("videonet", video, clips)
train_peer("videonet", "train", video, clips, torch.randint(0, 5, (2,)), F.cross_entropy)
# A classifier ending in LogSoftmax, trained by PyTorch with NLLLoss: ampc
# trains it with --loss softmax_cross_entropy (the same loss).
nll = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3), nn.LogSoftmax(dim=1))
features = torch.randn(8, 10)
export("nll_classifier", nll, features)
train_peer("nll_classifier", "train", nll, features, torch.randint(0, 3, (8,)), F.nll_loss)
unet3d = UNet3d()
volumes = torch.randn(2, 1, 4, 8, 8)
y = export("unet3d", unet3d, volumes)
train_peer("unet3d", "seg", unet3d, volumes, torch.randint(0, 2, (2, 4, 8, 8)), F.cross_entropy)
sentiment = Sentiment()
tokens = torch.randint(0, 50, (4, 10))
export("sentiment", sentiment, tokens)
train_peer("sentiment", "train", sentiment, tokens, torch.randint(0, 3, (4,)), F.cross_entropy)
forecast = Forecast()
series = torch.randn(4, 12, 4)
y = export("forecast", forecast, series)
train_peer("forecast", "train", forecast, series, torch.randn_like(y), F.mse_loss)


def export_training(name, model, x):
    """Exported in training mode (TrainingMode.TRAINING): BatchNormalization
    with its moved running statistics as two more outputs, Dropout with
    training_mode true. The batch norms' momentum is 0, so the export's own
    training-mode pass leaves their statistics as they were, and the
    eval-mode outputs (NAME.expected.safetensors) are those of the file."""
    model.train()
    torch.onnx.export(model, x, f"{out}/{name}.onnx", input_names=["x"], output_names=["y"],
                      opset_version=14, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING)
    model.eval()
    with torch.no_grad():
        y = model(x)
    safetensors_io.write(f"{out}/{name}.inputs.safetensors", {"x": x.numpy()})
    safetensors_io.write(f"{out}/{name}.expected.safetensors", {"y": y.numpy()})
    return y


def conv_bn(i, o, k):
    return [nn.Conv2d(i, o, k, padding=k // 2), nn.BatchNorm2d(o, momentum=0.0)]


images = torch.randn(2, 3, 6, 6)
export_training("trainmode", nn.Sequential(*conv_bn(3, 8, 3), nn.ReLU(), nn.Dropout(0.3),
                                           *conv_bn(8, 4, 1)), images)
trainmode_bn = nn.Sequential(*conv_bn(3, 8, 3), nn.ReLU(), *conv_bn(8, 4, 1))
y = export_training("trainmode_bn", trainmode_bn, images)
train_peer("trainmode_bn", "seg", trainmode_bn, images, torch.randint(0, 4, (2, 6, 6)),
           F.cross_entropy)
print("exported", len(ops) + 12, "models to", out)
