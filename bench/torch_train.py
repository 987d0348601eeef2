"""PyTorch peers of `ampc train` on this CPU (2 threads), f32:
  accuracy MODEL LR   one epoch of Fashion-MNIST (SGD, batch 64, shuffled) -> test accuracy
  step                simplenet (hidden 1024, batch 256) SGD step time, median ms
Usage: python3 bench/torch_train.py accuracy mlp 0.1 | step"""
import gzip
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_models import MnistCnn, mlp

torch.set_num_threads(2)
torch.manual_seed(0)
DATA = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def accuracy(name, lr):
    x = torch.tensor(idx(f"{DATA}/train-images-idx3-ubyte.gz"), dtype=torch.float32).view(-1, 784) / 255
    y = torch.tensor(idx(f"{DATA}/train-labels-idx1-ubyte.gz"), dtype=torch.int64)
    tx = torch.tensor(idx(f"{DATA}/t10k-images-idx3-ubyte.gz"), dtype=torch.float32).view(-1, 784) / 255
    ty = torch.tensor(idx(f"{DATA}/t10k-labels-idx1-ubyte.gz"), dtype=torch.int64)
    model = mlp(512, 784, 10) if name == "mlp" else MnistCnn()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    order = torch.randperm(len(x))
    model.train()
    for i in range(len(x) // 64):
        batch = order[i * 64:(i + 1) * 64]
        opt.zero_grad()
        F.cross_entropy(model(x[batch]), y[batch]).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(tx[i:i + 64]).argmax(1) == ty[i:i + 64]).sum().item()
                      for i in range(0, len(tx) - 63, 64))
    print(f"{name} {correct / (len(tx) // 64 * 64):.4f}")


def step():
    model = mlp(1024, 1024, 1024)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, t = torch.randn(256, 1024), torch.randn(256, 1024)
    times = []
    for _ in range(23):
        t0 = time.perf_counter()
        opt.zero_grad()
        F.mse_loss(model(x), t).backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1000)
    print(f"simplenet {statistics.median(times[3:]):.3f}")


if sys.argv[1] == "accuracy":
    accuracy(sys.argv[2], float(sys.argv[3]))
else:
    step()
