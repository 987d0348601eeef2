"""LAMB (You et al., 2019, "Large Batch Optimization for Deep Learning") in
plain PyTorch, as NVIDIA's apex FusedLAMB computes it with its defaults
(adam_w_mode, grad_averaging, bias_correction) but its built-in clipping,
which ampc's --clip-grad-norm does: the peer of ampc's --optimizer lamb
(docs/training.md, "Optimizers"). PyTorch itself has no LAMB.

Per param p with gradient g, at step t:
  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
  u = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) + weight_decay p
  r = ||p|| / ||u|| (1 where either is 0, or where the group's `adapt` is off)
  p -= lr r u
The trust ratio is per tensor, so it depends on how the model splits its
weights: `splits` maps a param that stacks k of ampc's tensors along dim 0
(nn.MultiheadAttention's in_proj, nanoGPT's c_attn: q, k and v) to k, and
each part gets its own ratio, as ampc's separate q, k and v do."""
import torch


class Lamb(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01,
                 adapt=True, splits=None):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, adapt=adapt)
        super().__init__(params, defaults)
        self.splits = {id(p): k for p, k in (splits or {}).items()}

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["m"] = torch.zeros_like(p)
                    state["v"] = torch.zeros_like(p)
                state["step"] += 1
                t, m, v = state["step"], state["m"], state["v"]
                m.mul_(b1).add_(p.grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                u = (m / (1 - b1 ** t)) / ((v / (1 - b2 ** t)).sqrt() + group["eps"])
                u.add_(p, alpha=group["weight_decay"])
                parts = self.splits.get(id(p), 1)
                for p_part, u_part in zip(p.chunk(parts), u.chunk(parts)):
                    ratio = 1.0
                    p_norm, u_norm = p_part.norm().item(), u_part.norm().item()
                    if group["adapt"] and p_norm > 0 and u_norm > 0:
                        ratio = p_norm / u_norm
                    p_part.add_(u_part, alpha=-group["lr"] * ratio)
