"""Forward time per batch of simplenet, mlp and mnist_cnn in PyTorch on the CPU
(2 threads, eval mode, no grad, loss included), to set next to `ampc run`.
Usage: python3 bench/torch_forward.py [STEPS]. Prints `model ms/batch` lines."""
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch_models import MnistCnn, mlp

torch.set_num_threads(2)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20


cases = {
    "simplenet": (mlp(1024, 1024, 1024), torch.randn(256, 1024), torch.randn(256, 1024),
                  F.mse_loss),
    "mlp": (mlp(512, 784, 10), torch.randn(64, 784), torch.randint(0, 10, (64,)),
            F.cross_entropy),
    "mnist_cnn": (MnistCnn(), torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,)),
                  F.cross_entropy),
}
with torch.no_grad():
    for name, (model, x, y, loss) in cases.items():
        model.eval()
        times = []
        for _ in range(steps + 3):
            t0 = time.perf_counter()
            loss(model(x), y)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"{name} {statistics.median(times[3:]):.3f}")
