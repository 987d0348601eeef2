"""Lion (Chen et al., 2023, "Symbolic Discovery of Optimization
Algorithms") in plain PyTorch, as the paper's Algorithm 2 and
lion-pytorch compute it: the peer of ampc's --optimizer lion
(docs/training.md, "Optimizers"). PyTorch itself has no Lion.

Per param p with gradient g:
  p -= lr * weight_decay * p
  p -= lr * sign(b1 m + (1 - b1) g)
  m = b2 m + (1 - b2) g"""
import torch


class Lion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                m = self.state[p].setdefault("m", torch.zeros_like(p))
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_((m * b1 + p.grad * (1 - b1)).sign_(), alpha=-group["lr"])
                m.mul_(b2).add_(p.grad, alpha=1 - b2)
