"""contract.py TOOLS WORKDIR SUITE: runs the bad-input cases of SUITE (plans,
graphs, checkpoints, options, outputs, data) and holds each to the error
contract of docs/cli.md: exit status 1 within a minute (no crash, no hang),
exactly one line on stderr beginning with the tool's 'error:' prefix, and the
output file untouched (its old bytes, or still absent). Prints
'<case>: <error line>' for FileCheck; exits 1 if a case breaks the contract."""
import gzip
import json
import os
import struct
import subprocess
import sys

tools, work, suite = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
ampc = os.path.join(tools, "ampc")
plan_run = os.path.join(tools, "ampc-plan-run")
broken = []


def path(name):
    return os.path.join(work, name)


def run(*argv):
    subprocess.run(list(argv), check=True, capture_output=True)


def write(name, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path(name), mode) as f:
        f.write(data)
    return path(name)


def dump(name, obj):
    return write(name, json.dumps(obj))


def case(name, argv, output=None):
    """Runs argv and checks the contract; `output` must stay as it was."""
    before = open(output, "rb").read() if output and os.path.isfile(output) else None
    try:
        p = subprocess.run(argv, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        broken.append(f"{name}: hung")
        return
    lines = p.stderr.decode("utf-8", "replace").splitlines()
    line = lines[0] if lines else "(nothing on stderr)"
    print(f"{name}: {line}")
    prefix = "ampc-plan-run: error: " if argv[0] == plan_run else "ampc: error: "
    if p.returncode != 1:
        broken.append(f"{name}: exit status {p.returncode}")
    if len(lines) != 1 or not line.startswith(prefix):
        broken.append(f"{name}: stderr is not one error line: {lines[:3]}")
    if output:
        after = open(output, "rb").read() if os.path.isfile(output) else None
        if after != before:
            broken.append(f"{name}: {output} was changed")


def plans():
    mlp = path("mlp.json")
    run(ampc, "model", "mlp", "--set", "batch=4", "--set", "hidden=8", "-o", mlp)
    run(ampc, "compile", mlp, "-o", path("p.json"))
    run(ampc, "compile", mlp, "--train", "-o", path("t.json"))
    base = json.load(open(path("p.json")))
    train = json.load(open(path("t.json")))

    def mutant(name, change, source=base):
        p = json.loads(json.dumps(source))
        change(p)
        return dump(name + ".plan.json", p)

    def step(p, kernel):
        return next(s for s in p["steps"] if s["kernel"] == kernel)

    cases = {
        "version-string": lambda p: p.update(version="2"),
        "attrs-array": lambda p: p["steps"][0].update(attrs=[]),
        "trainable-string": lambda p: p["buffers"][2].update(trainable="no"),
        "init-kind-number": lambda p: p["buffers"][2].update(init={"kind": 5}),
        "init-std-bool": lambda p: p["buffers"][2].update(init={"kind": "normal", "std": True}),
        "phase-number": lambda p: p["steps"][0]["attrs"].update(phase=5),
        "huge-shape": lambda p: p["buffers"][0].update(shape=[4611686018427387905, 4], bytes=64),
        "overflowing-shape": lambda p: p["buffers"][0].update(shape=[2**31, 2**31, 2**31]),
        "id-not-integer": lambda p: p["steps"][0].update(inputs=[0.5, 2]),
        "id-out-of-range": lambda p: p["steps"][0].update(inputs=[0, 10**20]),
        "missing-input": lambda p: p["steps"][0].update(inputs=p["steps"][0]["inputs"][:1]),
        "shape-mismatch": lambda p: p["steps"][0].update(inputs=[0, 0]),
        "bad-perm": lambda p: p["steps"][0].update(kernel="transpose", inputs=[0],
                                                   attrs={"perm": [0, 0]}),
        "loss-out-of-range": lambda p: p.update(loss=-7),
        "offset-beyond-arena": lambda p: p["buffers"][0].update(offset=2**40),
    }
    for name, change in cases.items():
        case(name, [ampc, "run", mutant(name, change), "--steps", "1"])

    def overlap(p):  # the matmul writes over its own input
        s = p["steps"][0]
        p["buffers"][s["outputs"][0]]["offset"] = p["buffers"][s["inputs"][0]]["offset"]

    case("overlap", [ampc, "run", mutant("overlap", overlap), "--steps", "1"])
    text = open(path("p.json")).read()
    case("number-overflow", [ampc, "run", write("big.plan.json", text.replace(
        '"name": "mlp"', '"name": "mlp", "big": 1e400')), "--steps", "1"])
    case("deep-nesting", [ampc, "run", write("deep.plan.json", text.replace(
        '"attrs":{}', '"attrs":{"x":' + "[" * 5000 + "]" * 5000 + "}", 1)), "--steps", "1"])
    case("runner", [plan_run, mutant("runner", cases["shape-mismatch"])])
    case("runner-steps", [plan_run, path("p.json"), "-5"])
    os.makedirs(path("plans.json"), exist_ok=True)
    case("directory", [ampc, "run", path("plans.json"), "--steps", "1"])
    sgd = mutant("sgd-grad", lambda p: step(p, "sgd").update(
        inputs=[step(p, "sgd")["inputs"][0], 0] + step(p, "sgd")["inputs"][2:]), train)
    case("update-shapes", [plan_run, sgd])


def succeeds(name, argv, output=None):
    """Runs argv, which must succeed; a JSON `output` must parse."""
    p = subprocess.run(argv, capture_output=True, timeout=60)
    ok = p.returncode == 0
    if ok and output:
        try:
            json.load(open(output, encoding="utf-8"))
        except ValueError as e:
            ok = False
    print(f"{name}: {'ok' if ok else 'FAILED'}")
    if not ok:
        broken.append(f"{name}: exit {p.returncode}: {p.stderr.decode('utf-8', 'replace')[:300]}")


def graphs():
    tiny = json.load(open(os.path.join(os.path.dirname(__file__), "..", "..", "cli", "Inputs",
                                       "tiny.json")))

    def mutant(name, change):
        g = json.loads(json.dumps(tiny))
        change(g)
        return dump(name + ".json", g)

    out = write("out.json", "keep")
    cases = {
        "wrong-input-count": lambda g: g["nodes"][1].update(inputs=["x"]),
        "output-twice": lambda g: g["nodes"][1].update(outputs=["fc.out", "fc.out"]),
        "newline-in-name": lambda g: g["nodes"][1].update(op="nonsense", name="f\nc"),
        "attr-wrong-type": lambda g: g["values"][2].update(init={"kind": "normal", "std": True}),
    }
    for name, change in cases.items():
        case(name, [ampc, "rewrite", mutant(name, change), "-o", out], out)
    text = json.dumps(tiny)
    case("number-overflow", [ampc, "rewrite", write("big.json", text.replace("0.02", "1e400")),
                             "-o", out], out)
    deep = text.replace('"attrs": {}', '"attrs": {"x": ' + "[" * 100000 + "]" * 100000 + "}", 1)
    case("deep-json", [ampc, "rewrite", write("deep.json", deep), "-o", out], out)
    mlir = ('graph.graph @g {\n  %x = graph.input "x" {a = ' + "[" * 9000 + "]" * 9000 +
            '} : tensor<4xf32>\n  graph.return %x : tensor<4xf32>\n}\n')
    case("deep-mlir", [ampc, "report", write("deep.mlir", mlir)])
    case("matmul-k0", [ampc, "rewrite", mutant("k0", lambda g: g["values"].__setitem__(
        0, {"name": "x", "kind": "input", "dtype": "f32", "shape": [32, 0]})), "-o", out], out)

    def huge(g):
        g["values"][0]["shape"] = [2**40, 2**40]
        g["values"][1]["shape"] = [2**40]
        g["values"][2]["shape"] = [2**40, 10]
    case("huge-shape", [ampc, "report", mutant("huge", huge)])
    # A name that is not UTF-8 (an MLIR escape) is refused where it enters,
    # by every command, with one line and no output written.
    odd = write("odd.mlir",
                'graph.graph @g attributes {loss = "l"} {\n'
                '  %x = graph.input "x\\FF" : tensor<2x3xf32>\n'
                '  %w = graph.param "w" {init = {kind = "zeros"}} : tensor<3x2xf32>\n'
                '  %y = graph.matmul "mm\\FF"(%x, %w) {outs = ["y"]} : '
                '(tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n'
                '  %l = graph.reduce_mean "l"(%y) : (tensor<2x2xf32>) -> tensor<f32>\n'
                '  graph.return %l : tensor<f32>\n}\n')
    case("odd-name-rewrite", [ampc, "rewrite", odd, "-o", path("odd.json")], path("odd.json"))
    case("odd-name-compile", [ampc, "compile", odd, "-o", path("odd.plan.json")],
         path("odd.plan.json"))
    case("odd-name-dot", [ampc, "dot", odd, "-o", path("odd.dot")], path("odd.dot"))
    case("odd-name-report", [ampc, "report", odd, "--json"])
    # Values used across the graph's boundary: an op before the graph reading
    # a value inside it (by name, by result number, with another type), a
    # graph reading one of another graph's. MLIR 19's parser was reported to
    # corrupt its heap on such a file; each is one line under ASan too.
    relu = '%r = graph.relu "r"({}) : (tensor<4xf32>) -> tensor<4xf32>\n'
    graph = ('graph.graph @g {{\n  %x = graph.input "x" : tensor<4x{}>\n'
             '  graph.return {} : tensor<4x{}>\n}}\n')
    for name, text in [
            ("before-graph", relu.format("%x") + graph.format("f32", "%x", "f32")),
            ("before-graph-result", relu.format("%x#1") + graph.format("f32", "%x", "f32")),
            ("before-graph-type", relu.format("%x") + graph.format("f16", "%x", "f16")),
            ("after-graph", graph.format("f32", "%r", "f32") + relu.format("%x")),
            ("other-graph", graph.replace("@g", "@a").format("f32", "%y", "f32") +
             graph.format("f32", "%x", "f32").replace("%x", "%y"))]:
        case(name, [ampc, "report", write(name + ".mlir", text)])


def checkpoints():
    mlp = path("mlp.json")
    run(ampc, "model", "mlp", "--set", "batch=4", "--set", "hidden=8", "-o", mlp)
    good = path("good.safetensors")
    run(ampc, "train", mlp, "--steps", "1", "--checkpoint", good)
    data = open(good, "rb").read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])

    def mutant(name, change):
        h = json.loads(json.dumps(header))
        change(h)
        text = json.dumps(h).encode()
        return write(name + ".safetensors", struct.pack("<Q", len(text)) + text + data[8 + size:])

    cases = {
        "entry-number": lambda h: h.update({"fc1.w": 5}),
        "shape-string": lambda h: h["fc1.w"].update(shape="784,8"),
        "metadata-array": lambda h: h.update(__metadata__=[1, 2]),
        "micro-batch-text": lambda h: h["__metadata__"].update(micro_batch="abc"),
        "iteration-range": lambda h: h["__metadata__"].update(iteration="99999999999999999999999"),
        "offsets-outside": lambda h: h["fc1.w"].update(data_offsets=[0, 10**12]),
        "unknown-dtype": lambda h: h["fc1.w"].update(dtype="F8"),
    }
    for name, change in cases.items():
        case(name, [ampc, "train", mlp, "--steps", "1", "--resume", mutant(name, change)])
    case("header-1e400", [ampc, "train", mlp, "--steps", "1", "--resume", write(
        "big.safetensors", struct.pack("<Q", 16) + b'{"a":1e400}     ')])
    case("truncated", [ampc, "train", mlp, "--steps", "1", "--resume",
                       write("short.safetensors", data[:100])])


def options():
    mlp = path("mlp.json")
    run(ampc, "model", "mlp", "--set", "batch=4", "--set", "hidden=8", "-o", mlp)
    train = [ampc, "train", mlp, "--steps", "1"]
    case("config-directory", [ampc, "rewrite", mlp, "-o", path("o.json"), "--config", work])
    case("config-1e400", [ampc, "rewrite", mlp, "-o", path("o.json"), "--config",
                          write("c.json", '{"level": "O1", "x": 1e400}')])
    case("lr-empty", train + ["--lr", ""])
    case("lr-infinite", train + ["--lr", "inf"])
    case("checkpoint-empty", train + ["--checkpoint", ""])
    case("resume-empty", train + ["--resume", ""])
    case("incr-ratio-zero", train + ["--incr-ratio", "0"])
    case("init-loss-scaling-1e39", train + ["--init-loss-scaling", "1e39"])
    case("steps-huge", [ampc, "train", mlp, "--steps", "4611686018427387904", "--accumulate", "2"])
    case("seed-negative", train + ["--seed", "-1"])
    case("no-command", [ampc])
    case("plan-run-word", [plan_run, mlp, "abc"])
    case("plan-run-zero", [plan_run, mlp, "0"])
    case("device-unknown", train + ["--device", "tpu"])


def outputs():
    mlp = path("mlp.json")
    run(ampc, "model", "mlp", "--set", "batch=4", "--set", "hidden=8", "-o", mlp)
    fifo = path("fifo.json")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    case("fifo", [ampc, "compile", mlp, "-o", fifo])
    case("device", [ampc, "compile", mlp, "-o", "/dev/null"])
    os.makedirs(path("dir.json"), exist_ok=True)
    case("directory", [ampc, "compile", mlp, "-o", path("dir.json")])
    case("missing-directory", [ampc, "train", mlp, "--steps", "1", "--checkpoint",
                               path("no/such/c.safetensors")])
    case("metrics-device", [ampc, "train", mlp, "--steps", "1", "--metrics-json", "/dev/null"])
    case("checkpoint-fifo", [ampc, "train", mlp, "--steps", "1", "--checkpoint", fifo])
    case("doctor-json-device", [ampc, "doctor", mlp, "--steps", "1", "--json", "/dev/null"])
    case("doctor-dot-fifo", [ampc, "doctor", mlp, "--steps", "1", "--dot", fifo])
    for kind in ("fifo", "character device"):
        print(f"still a {kind}: " + str(
            os.path.exists(fifo if kind == "fifo" else "/dev/null")))


def data():
    mlp = path("mlp.json")
    run(ampc, "model", "mlp", "--set", "batch=4", "--set", "hidden=8", "-o", mlp)

    def idx(name, dims, payload):
        header = bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)
        with gzip.open(path(name), "wb") as f:
            f.write(header + payload)

    for name, images, rows in (("small", 20, 10), ("large", 20, 100), ("empty", 0, 28)):
        os.makedirs(path(name), exist_ok=True)
        idx(f"{name}/t10k-images-idx3-ubyte.gz", [images, rows, rows], bytes(images * rows * rows))
        idx(f"{name}/t10k-labels-idx1-ubyte.gz", [images], bytes(images))
        case(f"images-{name}", [ampc, "run", mlp, "--data", f"fashion-mnist:{path(name)}"])
    os.makedirs(path("short"), exist_ok=True)
    idx("short/t10k-images-idx3-ubyte.gz", [20, 28, 28], bytes(100))
    idx("short/t10k-labels-idx1-ubyte.gz", [20], bytes(20))
    case("images-truncated", [ampc, "run", mlp, "--data", f"fashion-mnist:{path('short')}"])
    # A header that claims 2 GiB of images in a file of a hundred bytes.
    os.makedirs(path("claims"), exist_ok=True)
    idx("claims/t10k-images-idx3-ubyte.gz", [2739000, 28, 28], bytes(100))
    idx("claims/t10k-labels-idx1-ubyte.gz", [2739000], bytes(20))
    case("images-claim-2gib", [ampc, "run", mlp, "--data", f"fashion-mnist:{path('claims')}"])


{"plans": plans, "graphs": graphs, "checkpoints": checkpoints, "options": options,
 "outputs": outputs, "data": data}[suite]()
for b in broken:
    print("BROKEN " + b)
sys.exit(1 if broken else 0)
