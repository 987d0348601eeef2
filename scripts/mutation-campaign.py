#!/usr/bin/env python3
"""Mutation campaign over the CLI: damages valid files (graphs as JSON and
.mlir, forward and training plans, checkpoints, configs, IDX data) with byte
and structure-aware mutations, runs them through every command that reads
them, and holds each run to the error contract: exit status 0 or 1 (no
signal, no abort), no hang (60 s), exactly one 'error:' line on stderr when it
fails, and output files untouched by a failed run.

Usage: scripts/mutation-campaign.py [--inputs N] [--seed S] [--jobs J] [--tools DIR]
Prints counts per reader and every broken case; exits 1 if any."""
import argparse
import concurrent.futures
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("--inputs", type=int, default=10000)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
parser.add_argument("--tools", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
args = parser.parse_args()
ampc = os.path.abspath(os.path.join(args.tools, "ampc"))
plan_run = os.path.abspath(os.path.join(args.tools, "ampc-plan-run"))
work = tempfile.mkdtemp(prefix="ampc-mutate-")
seeds = os.path.join(work, "seeds")
os.makedirs(seeds)


def run(*argv):
    subprocess.run(list(argv), check=True, capture_output=True, cwd=seeds)


# Valid seeds, one per reader.
for model, sets in (("mlp", ["batch=4", "hidden=8"]), ("mnist_cnn", ["batch=2"]),
                    ("bert", ["layers=1", "hidden=16", "heads=2", "seq=4", "vocab=32", "batch=1"])):
    sets = [x for s in sets for x in ("--set", s)]
    run(ampc, "model", model, *sets, "-o", f"{model}.json")
    run(ampc, "model", model, *sets, "-o", f"{model}.mlir")
    run(ampc, "compile", f"{model}.json", "-o", f"{model}.plan.json")
    run(ampc, "compile", f"{model}.json", "--train", "-o", f"{model}.train.plan.json")
run(ampc, "train", "mlp.json", "--steps", "1", "--checkpoint", "mlp.safetensors")
with open(os.path.join(seeds, "config.json"), "w") as f:
    json.dump({"level": "O2", "dtype": "bf16", "custom_black_list": ["exp"]}, f)
os.makedirs(os.path.join(seeds, "idx"))
for name, dims in (("t10k-images-idx3-ubyte.gz", [8, 28, 28]), ("t10k-labels-idx1-ubyte.gz", [8])):
    n = 1
    for d in dims:
        n *= d
    with gzip.open(os.path.join(seeds, "idx", name), "wb") as f:
        f.write(bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) +
                bytes(i % 10 for i in range(n)))

EXTREMES = [0, -1, 1, 2**31, 2**63 - 1, -2**63, 2**64, 1e308, 1e400, -1e-300, 0.5, "", "x",
            "\xff", "a\nb", True, False, None, [], {}, [[[]]], [1] * 3, {"kind": 5}]


def mutate_json(value, rng):
    """One structure-aware change somewhere in a JSON document."""
    paths = []

    def walk(v, path):
        paths.append(path)
        if isinstance(v, dict):
            for k in v:
                walk(v[k], path + [k])
        elif isinstance(v, list):
            for i in range(min(len(v), 50)):
                walk(v[i], path + [i])

    walk(value, [])
    path = rng.choice(paths)
    if not path:
        return rng.choice(EXTREMES)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    action = rng.randrange(5)
    if action == 0:
        parent[key] = rng.choice(EXTREMES)
    elif action == 1 and isinstance(parent, list):
        del parent[key]
    elif action == 1:
        parent.pop(key)
    elif action == 2 and isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
        parent[key] = parent[key] * rng.choice([-1, 2, 1000, 2**40]) + rng.choice([0, 1, -1])
    elif action == 3 and isinstance(parent[key], list):
        parent[key] = parent[key] + parent[key]
    else:
        parent[key] = rng.choice(EXTREMES)
    return value


def mutate_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(4)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif op == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2:
            del data[at:at + rng.randint(1, 64)]
        else:
            data = data[:at]
    return bytes(data)


def json_text(value):
    text = json.dumps(value, allow_nan=True)
    return text.replace("Infinity", "1e400")


READERS = ["graph-json", "graph-mlir", "plan", "train-plan", "checkpoint", "config", "idx"]


def make_case(index, rng, folder):
    reader = READERS[index % len(READERS)]
    model = rng.choice(["mlp", "mnist_cnn", "bert"])
    structured = rng.random() < 0.6
    out = os.path.join(folder, "out.json")
    if reader == "graph-json":
        src = os.path.join(seeds, f"{model}.json")
        data = (json_text(mutate_json(json.load(open(src)), rng)).encode() if structured
                else mutate_bytes(open(src, "rb").read(), rng))
        path = os.path.join(folder, "in.json")
        cmd = rng.choice([["rewrite", path, "-o", out], ["report", path, "--json"],
                          ["dot", path, "-o", os.path.join(folder, "out.dot")],
                          ["compile", path, "-o", out], ["run", path, "--steps", "1"],
                          ["rewrite", path, "-o", os.path.join(folder, "out.mlir")]])
    elif reader == "graph-mlir":
        data = mutate_bytes(open(os.path.join(seeds, f"{model}.mlir"), "rb").read(), rng)
        path = os.path.join(folder, "in.mlir")
        cmd = rng.choice([["rewrite", path, "-o", out], ["report", path],
                          ["compile", path, "-o", out]])
    elif reader in ("plan", "train-plan"):
        src = os.path.join(seeds, f"{model}.{'train.' if reader == 'train-plan' else ''}plan.json")
        data = (json_text(mutate_json(json.load(open(src)), rng)).encode() if structured
                else mutate_bytes(open(src, "rb").read(), rng))
        path = os.path.join(folder, "in.plan.json")
        cmd = rng.choice([["run", path, "--steps", "1"], [plan_run, path, "1"]])
    elif reader == "checkpoint":
        raw = open(os.path.join(seeds, "mlp.safetensors"), "rb").read()
        size = struct.unpack("<Q", raw[:8])[0]
        if structured:
            header = mutate_json(json.loads(raw[8:8 + size]), rng)
            text = json_text(header).encode()
            data = struct.pack("<Q", len(text)) + text + raw[8 + size:]
        else:
            data = mutate_bytes(raw, rng)
        path = os.path.join(folder, "in.safetensors")
        cmd = ["train", os.path.join(seeds, "mlp.json"), "--steps", "1", "--resume", path,
               "--checkpoint", os.path.join(folder, "out.safetensors")]
    elif reader == "config":
        src = os.path.join(seeds, "config.json")
        data = (json_text(mutate_json(json.load(open(src)), rng)).encode() if structured
                else mutate_bytes(open(src, "rb").read(), rng))
        path = os.path.join(folder, "config.json")
        cmd = ["rewrite", os.path.join(seeds, "mlp.json"), "-o", out, "--config", path]
    else:
        name = rng.choice(["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"])
        raw = gzip.decompress(open(os.path.join(seeds, "idx", name), "rb").read())
        data = gzip.compress(mutate_bytes(raw, rng)) if structured else mutate_bytes(
            open(os.path.join(seeds, "idx", name), "rb").read(), rng)
        shutil.copytree(os.path.join(seeds, "idx"), os.path.join(folder, "idx"))
        path = os.path.join(folder, "idx", name)
        cmd = ["run", os.path.join(seeds, "mlp.json"), "--data",
               "fashion-mnist:" + os.path.join(folder, "idx")]
    with open(path, "wb") as f:
        f.write(data)
    if cmd[0] != plan_run:
        cmd = [ampc] + cmd
    return reader, cmd


def check(index):
    rng = random.Random(args.seed * 1000003 + index)
    folder = os.path.join(work, f"case{index}")
    os.makedirs(folder)
    reader, cmd = make_case(index, rng, folder)
    outputs = [a for a in cmd if a.startswith(folder) and "out." in a]
    with open(os.path.join(folder, "out.json"), "w") as f:
        f.write("old")  # a file a failed run must leave alone
    before = {o: open(o, "rb").read() if os.path.exists(o) else None for o in outputs}
    problem = None
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=60, cwd=folder,
                           env=dict(os.environ, OMP_NUM_THREADS="1"))
        lines = p.stderr.decode("utf-8", "replace").splitlines()
        errors = [l for l in lines if "error:" in l]
        if p.returncode not in (0, 1):
            problem = f"exit status {p.returncode}: {lines[-3:]}"
        elif p.returncode == 1 and (len(errors) != 1 or errors[-1] != lines[-1]):
            problem = f"not one error line: {lines[-3:]}"
        elif p.returncode == 1:
            for o, data in before.items():
                if (open(o, "rb").read() if os.path.exists(o) else None) != data:
                    problem = f"{o} changed by a failed run"
    except subprocess.TimeoutExpired:
        problem = "hung"
        p = None
    status = "hang" if p is None else "ok" if p.returncode == 0 else "error"
    if problem is None:
        shutil.rmtree(folder, ignore_errors=True)
    return reader, status, problem, " ".join(cmd)


counts = {}
broken = []
with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
    for reader, status, problem, cmd in pool.map(check, range(args.inputs)):
        c = counts.setdefault(reader, {"inputs": 0, "ok": 0, "error": 0, "hang": 0})
        c["inputs"] += 1
        c[status] += 1
        if problem:
            broken.append(f"{reader}: {problem}\n    {cmd}")
print(f"{'reader':<12} {'inputs':>7} {'exit 0':>7} {'exit 1':>7} {'hangs':>6}")
for reader in READERS:
    c = counts.get(reader, {"inputs": 0, "ok": 0, "error": 0, "hang": 0})
    print(f"{reader:<12} {c['inputs']:>7} {c['ok']:>7} {c['error']:>7} {c['hang']:>6}")
print(f"broken: {len(broken)} (kept in {work})")
for b in broken[:40]:
    print(b)
if not broken:
    shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if broken else 0)
