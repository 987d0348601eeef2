"""Tables of scripts/gpu-check.sh from the metrics files it wrote.

  report.py e2e LOGDIR     accuracy on the CPU and the GPU per configuration;
                           exit 1 when one differs by more than 0.5 points
  report.py bench LOGDIR   step times of ampc and PyTorch (LOGDIR/torch.txt)
"""
import json
import os
import sys

E2E = ["mlp-o0", "mlp-o1", "mlp-o2", "mlp-o1-bf16", "cnn-o1"]
TOLERANCE = 0.005


def load(logs, name):
    path = os.path.join(logs, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def e2e(logs):
    ok = True
    print("| config | cpu accuracy | cuda accuracy | difference | cuda ms/step | cuda host syncs/step |")
    print("|---|---|---|---|---|---|")
    for cfg in E2E:
        cpu, gpu = load(logs, f"e2e-{cfg}-cpu"), load(logs, f"e2e-{cfg}-cuda")
        if not cpu or not gpu or "eval_accuracy" not in cpu or "eval_accuracy" not in gpu:
            print(f"| {cfg} | missing | | | | |")
            ok = False
            continue
        diff = gpu["eval_accuracy"] - cpu["eval_accuracy"]
        verdict = "" if abs(diff) <= TOLERANCE else " FAIL"
        ok = ok and not verdict
        print(f"| {cfg} | {100 * cpu['eval_accuracy']:.2f}% | {100 * gpu['eval_accuracy']:.2f}% "
              f"| {100 * diff:+.2f}{verdict} | {gpu['step_ms_median']:.3f} "
              f"| {gpu['host_syncs_per_step']:.2f} |")
    return ok


def bench(logs):
    torch = {}
    path = os.path.join(logs, "torch.txt")
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) == 3:
                torch[(parts[0], parts[1])] = float(parts[2])
    print("| model | ampc O0 | ampc O1 | ampc O2 | PyTorch f32 | PyTorch amp | O0 / f32 | O1 / amp "
          "| host syncs/step (O1) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model in ["simplenet", "mnist_cnn", "bert"]:
        ms = {lvl: load(logs, f"bench-{model}-{lvl}") for lvl in ["o0", "o1", "o2"]}
        cell = lambda m: f"{m['step_ms_median']:.3f}" if m else "-"
        f32, amp = torch.get((model, "f32")), torch.get((model, "amp"))
        r0 = f"{ms['o0']['step_ms_median'] / f32:.2f}" if ms["o0"] and f32 else "-"
        r1 = f"{ms['o1']['step_ms_median'] / amp:.2f}" if ms["o1"] and amp else "-"
        syncs = f"{ms['o1']['host_syncs_per_step']:.2f}" if ms["o1"] else "-"
        print(f"| {model} | {cell(ms['o0'])} | {cell(ms['o1'])} | {cell(ms['o2'])} "
              f"| {f32 if f32 else '-'} | {amp if amp else '-'} | {r0} | {r1} | {syncs} |")
    nograph = load(logs, "bench-simplenet-o1-no-graph")
    if nograph:
        print(f"\nsimplenet O1 without CUDA graphs: {nograph['step_ms_median']:.3f} ms/step")
    return True


if __name__ == "__main__":
    what, logs = sys.argv[1], sys.argv[2]
    sys.exit(0 if {"e2e": e2e, "bench": bench}[what](logs) else 1)
