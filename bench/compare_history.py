"""Whether ampc's run and its PyTorch peer (bench/same_init.py) took the same
steps: each step's loss, with a schedule each step's learning rate, and with
clipping each step's gradient norm (to the loss tolerance),
against the "history" of ampc's metrics (ampc train --metrics-json).

Usage: python3 bench/compare_history.py PEER.json METRICS.json
           [--loss-rtol R] [--lr-rtol R]
Prints one line; exits 1 when a step's relative difference exceeds its
tolerance, when the step counts differ, or when the loss did not go down."""
import argparse
import json
import sys


def worst(ours, theirs):
    """The largest relative difference and its step (from 1)."""
    diffs = [abs(a - b) / max(abs(b), 1e-30) for a, b in zip(ours, theirs)]
    at = max(range(len(diffs)), key=diffs.__getitem__) if diffs else 0
    return (diffs[at] if diffs else 0.0), at + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("peer")
    parser.add_argument("metrics")
    parser.add_argument("--loss-rtol", type=float, default=1e-5)
    parser.add_argument("--lr-rtol", type=float, default=1e-6)
    args = parser.parse_args()
    with open(args.peer) as f:
        peer = json.loads(f.read().strip().splitlines()[-1])
    with open(args.metrics) as f:
        history = json.load(f)["history"]
    losses = [h["loss"] for h in history]
    ok = len(losses) == len(peer["losses"]) and losses[-1] < losses[0]
    loss, at = worst(losses, peer["losses"])
    ok = ok and loss <= args.loss_rtol
    line = f"{len(losses)} steps: losses within {loss:.2e} (step {at}, allowed {args.loss_rtol:.0e})"
    if "lrs" in peer:
        lr, at = worst([h["lr"] for h in history], peer["lrs"])
        ok = ok and lr <= args.lr_rtol
        line += f", rates within {lr:.2e} (step {at}, allowed {args.lr_rtol:.0e})"
    if "grad_norms" in peer:
        ours = [h.get("grad_norm", float("nan")) for h in history]
        norm, at = worst(ours, peer["grad_norms"])
        ok = ok and norm <= args.loss_rtol
        line += f", norms within {norm:.2e} (step {at}, allowed {args.loss_rtol:.0e})"
    print(line + (": agree" if ok else ": DISAGREE"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
