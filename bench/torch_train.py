"""PyTorch peers of `ampc train` on this CPU (2 threads), f32:
  accuracy MODEL LR   one epoch of Fashion-MNIST (SGD, batch 64, shuffled) -> test accuracy
  step                simplenet (hidden 1024, batch 256) SGD step time, median ms
  gpt                 the tiny GPT of docs/gpt.md (2 layers, 128 wide, 4 heads,
                      seq 64, bytes, batch 16) AdamW step time, median ms
  checkpointing       the LLaMA of 4 layers, 256 wide, seq 128, batch 8 (bytes)
  freezing            torchvision's resnet18, batch 16 of 64x64, SGD with momentum: all
                      trained, then the head alone (requires_grad_(False) on the rest)
                      AdamW step time, median ms, without and with
                      torch.utils.checkpoint around each block
Usage: python3 bench/torch_train.py accuracy mlp 0.1 | step | gpt | llama | checkpointing | freezing"""
import gzip
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_models import Gpt2, Llama, MnistCnn, mlp

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


def median_step_ms(model, opt, loss_fn, steps=23):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(model).backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times[3:])


def step():
    model = mlp(1024, 1024, 1024)
    x, t = torch.randn(256, 1024), torch.randn(256, 1024)
    ms = median_step_ms(model, torch.optim.SGD(model.parameters(), lr=0.01),
                        lambda m: F.mse_loss(m(x), t))
    print(f"simplenet {ms:.3f}")


def gpt():
    model = Gpt2(layers=2, hidden=128, heads=4, seq=64, vocab=256)
    tokens = torch.randint(0, 256, (16, 65))
    x, y = tokens[:, :-1], tokens[:, 1:]
    ms = median_step_ms(model, torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1),
                        lambda m: F.cross_entropy(m(x).flatten(0, 1), y.flatten()))
    print(f"gpt {ms:.3f}")


def llama():
    model = Llama(layers=2, hidden=128, heads=4, kv_heads=2, ffn=384, seq=64, vocab=256)
    tokens = torch.randint(0, 256, (16, 65))
    x, y = tokens[:, :-1], tokens[:, 1:]
    ms = median_step_ms(model, torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1),
                        lambda m: F.cross_entropy(m(x).flatten(0, 1), y.flatten()))
    print(f"llama {ms:.3f}")


def checkpointing():
    tokens = torch.randint(0, 256, (8, 129))
    x, y = tokens[:, :-1], tokens[:, 1:]
    for on in (False, True):
        model = Llama(layers=4, hidden=256, heads=4, kv_heads=2, ffn=768, seq=128, vocab=256,
                      checkpointing=on)
        ms = median_step_ms(model, torch.optim.AdamW(model.parameters(), lr=1e-3),
                            lambda m: F.cross_entropy(m(x).flatten(0, 1), y.flatten()))
        print(f"checkpointing={int(on)} {ms:.3f}")


def freezing():
    import torchvision
    x, y = torch.randn(16, 3, 64, 64), torch.randint(0, 10, (16,))
    for head_only in (False, True):
        torch.manual_seed(0)
        model = torchvision.models.resnet18(num_classes=10)
        if head_only:  # requires_grad_(False) on all but the head
            for name, p in model.named_parameters():
                p.requires_grad_(name.startswith("fc."))
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01,
                              momentum=0.9)
        ms = median_step_ms(model, opt, lambda m: F.cross_entropy(m(x), y))
        print(f"head_only={int(head_only)} {ms:.3f}")


if sys.argv[1] == "accuracy":
    accuracy(sys.argv[2], float(sys.argv[3]))
elif sys.argv[1] == "gpt":
    gpt()
elif sys.argv[1] == "llama":
    llama()
elif sys.argv[1] == "checkpointing":
    checkpointing()
elif sys.argv[1] == "freezing":
    freezing()
else:
    step()
