"""ampc's reduce_lr_on_plateau against PyTorch's ReduceLROnPlateau fed the
same evaluations: the rate of every step after each evaluation.

  compare_plateau.py METRICS.json --lr LR [--metric val_loss] [--factor F]
      [--patience N] [--threshold T] [--cooldown N] [--min-lr M]

METRICS.json is `ampc train --metrics-json` of a run with
`--lr-schedule reduce_lr_on_plateau`: its evaluations ("evals") go one by one
into a ReduceLROnPlateau with the same settings (mode max for accuracies),
and each step's rate in its history must be the scheduler's after the last
evaluation before that step, within 1e-6. Prints one line; exits 1 where
they differ, or where no rate was cut (the run tested nothing).
"""
import argparse
import json
import sys

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("metrics")
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--metric", default="val_loss")
    p.add_argument("--factor", type=float, default=0.1)
    p.add_argument("--patience", type=int, default=10)
    p.add_argument("--threshold", type=float, default=1e-4)
    p.add_argument("--cooldown", type=int, default=0)
    p.add_argument("--min-lr", type=float, default=0.0)
    a = p.parse_args()
    run = json.load(open(a.metrics))
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=a.lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="max" if a.metric.endswith("accuracy") else "min", factor=a.factor,
        patience=a.patience, threshold=a.threshold, cooldown=a.cooldown, min_lr=a.min_lr)
    rates = []  # (the step an evaluation followed, the rate after it)
    for e in run["evals"]:
        sched.step(e[a.metric])
        rates.append((e["step"], opt.param_groups[0]["lr"]))
    worst, cuts = 0.0, 0
    for h in run["history"]:
        expected = a.lr
        for step, rate in rates:
            if step < h["step"]:
                expected = rate
        worst = max(worst, abs(h["lr"] - expected) / expected)
    cuts = len({rate for _, rate in rates} - {a.lr})
    ok = worst <= 1e-6 and cuts > 0
    print(f"{len(rates)} evaluations, {cuts} cuts, rates within {worst:.2g}: "
          f"{'agree' if ok else 'DISAGREE' if cuts else 'NO CUT'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
