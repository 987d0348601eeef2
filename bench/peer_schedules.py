"""The PyTorch scheduler that follows an ampc --lr-schedule, for the peers of
bench/same_init.py: PyTorch's own scheduler where one has the same rule
(OneCycleLR, StepLR, PolynomialLR, CosineAnnealingWarmRestarts), else a
LambdaLR of Hugging Face's formulas after ampc's warmup (docs/training.md)."""
import math

import torch


def schedule(args, opt):
    """--lr-schedule's scheduler, stepped after every optimizer step, or None."""
    total, warmup, lr, low = args.total_steps or args.steps, args.warmup_steps, args.lr, args.min_lr
    if args.lr_schedule == "onecycle":
        peaks = [g["lr"] for g in opt.param_groups]  # each group's own peak
        return torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=peaks, total_steps=total,
                                                   cycle_momentum=False)
    if args.lr_schedule == "step":
        return torch.optim.lr_scheduler.StepLR(opt, step_size=args.lr_step_every,
                                               gamma=args.lr_gamma)

    if args.lr_schedule == "polynomial" and warmup == 0 and low == 0:
        return torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=total, power=args.lr_power)
    cycles = args.lr_cycles
    if args.lr_schedule == "cosine_with_restarts" and warmup == 0 and total % cycles == 0:
        return torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=total // cycles,
                                                                    eta_min=low)

    def factor(s):  # ampc's warmup, then the decay as Hugging Face's schedulers have it
        if s < warmup:
            return (s + 1) / warmup
        pct = min((s - warmup) / (total - warmup), 1.0) if total > warmup else 1.0
        if args.lr_schedule == "constant":
            return 1.0
        if args.lr_schedule == "linear":
            return (lr + (low - lr) * pct) / lr
        if args.lr_schedule == "polynomial":
            return ((lr - low) * (1 - pct) ** args.lr_power + low) / lr
        if args.lr_schedule == "cosine_with_restarts":
            if pct >= 1.0:
                return low / lr
            return (low + (lr - low) * 0.5 * (1.0 + math.cos(math.pi * ((cycles * pct) % 1.0)))) / lr
        if args.lr_schedule == "inverse_sqrt":
            timescale = warmup or 10_000
            return 1.0 / math.sqrt((s + timescale - warmup) / timescale)
        if args.lr_schedule == "warmup_stable_decay":
            start = max(warmup, total - args.lr_decay_steps)
            if s < start:
                return 1.0
            progress = min((s - start) / (total - start), 1.0) if total > start else 1.0
            ratio = low / lr
            return 0.5 * (1.0 + math.cos(math.pi * progress)) * (1.0 - ratio) + ratio
        return (low + (lr - low) / 2.0 * (math.cos(math.pi * pct) + 1.0)) / lr
    if args.lr_schedule != "constant" or warmup > 0:
        return torch.optim.lr_scheduler.LambdaLR(opt, factor)
    return None
