"""Whether ampc and its PyTorch peer, trained from the same start
(bench/same_init.py), end at the same loss: the peer's last loss against
the final_loss of ampc's metrics (ampc-plan-run --metrics-json), both the
loss of the last step's forward.

Usage: python3 bench/compare_losses.py PEER.json METRICS.json [--rtol R]
Prints one line; exits 1 when the relative difference exceeds R (1e-4:
f32 against f32; AMP against either wants the noise of f16, about 1e-2),
or when either side's loss did not go down."""
import argparse
import json
import sys


def compare(peer, metrics, rtol):
    """(the line to print, whether they agree)."""
    torch_loss, first = peer["losses"][-1], peer["losses"][0]
    ampc_loss = metrics["final_loss"]
    diff = abs(ampc_loss - torch_loss) / max(abs(torch_loss), 1e-30)
    trained = torch_loss < first and ampc_loss < first
    ok = diff <= rtol and trained
    line = (f"{peer['model']}: {len(peer['losses'])} steps from loss {first:.6g}: "
            f"ampc {ampc_loss:.6g}, PyTorch ({peer['mode']}) {torch_loss:.6g}, "
            f"relative difference {diff:.2e} (allowed {rtol:.0e}): "
            f"{'agree' if ok else 'DISAGREE' if trained else 'NOT TRAINED'}")
    return line, ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("peer")
    parser.add_argument("metrics")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    with open(args.peer) as f:
        peer = json.loads(f.read().strip().splitlines()[-1])
    with open(args.metrics) as f:
        metrics = json.load(f)
    line, ok = compare(peer, metrics, args.rtol)
    print(line)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
