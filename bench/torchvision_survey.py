#!/usr/bin/python3
"""Every torchvision classification, video and segmentation model through `ampc import`
and `ampc run`, against PyTorch: each exported as docs/onnx.md advises
(batch norms kept, their statistics calibrated as
tests/onnx/export-torchvision.py does), run at O0 and O1, compared with PyTorch in f32; beside it, PyTorch's
own f16 error (every leaf module's operands and results rounded to f16, as
CUDA autocast would). Prints one line a model: the largest error over the
largest logit at O0 and O1, and PyTorch's f16 error (a segmentation
model's logits are its "out" map, [N, classes, H, W]).

Usage: torchvision_survey.py AMPC WORKDIR [MODEL...] (all models by default;
hours on two cores: the largest need 224 px and 20 GB)."""
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torchvision

here = os.path.dirname(os.path.abspath(__file__))
tests = os.path.join(here, "..", "tests", "onnx")
sys.path.insert(0, tests)
import safetensors_io  # noqa: E402

exporter = os.path.join(tests, "export-torchvision.py")
helpers = {"__name__": "survey", "__file__": exporter}
exec(open(exporter).read().split("out = sys.argv[1]")[0], helpers)  # MODELS, build()
M = torchvision.models


def r16(t):
    return t.half().float()


def emulate_f16(model):
    for m in model.modules():
        if len(list(m.children())) == 0:
            m.register_forward_pre_hook(lambda mod, inp: tuple(
                r16(i) if torch.is_tensor(i) and i.is_floating_point() else i for i in inp))
            m.register_forward_hook(lambda mod, inp, o: r16(o) if torch.is_tensor(o) else o)
            if isinstance(m, (torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.Linear)):
                m.weight.data = r16(m.weight.data)
                if m.bias is not None:
                    m.bias.data = r16(m.bias.data)


ampc, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
video = M.list_models(module=M.video)
segmentation = M.list_models(module=M.segmentation)


def logits(model, x):
    y = model(x)
    return y["out"] if isinstance(y, dict) else y  # segmentation: {"out", "aux"}


for name in sys.argv[3:] or M.list_models(module=M) + video + segmentation:
    size = 224 if name.startswith(("vit", "swin", "maxvit", "alexnet", "vgg")) else 64
    size = 96 if name.startswith("inception") else size
    if name in video:  # clips [T, H, W]: s3d's last pool and mvit's patches need 16 x 224²
        size = (16, 224, 224) if name.startswith(("s3d", "mvit")) else (8, 64, 64)
    kw = {"aux_logits": False, "init_weights": True} if name in ("inception_v3", "googlenet") else {}
    family = M.video if name in video else M.segmentation if name in segmentation else M
    if name in segmentation:  # no auxiliary head, no downloaded backbone
        kw = {"aux_loss": None, "weights_backbone": None}
    helpers["MODELS"][name] = (lambda name=name, kw=kw, family=family:
                               getattr(family, name)(num_classes=10, **kw), size, True)
    start, f = time.time(), os.path.join(work, name)
    try:
        torch.manual_seed(0)
        model, size = helpers["build"](name)
        x = torch.randn(2, 3, *helpers["dims"](size))
        torch.onnx.export(model, x, f + ".onnx", input_names=["x"], output_names=["y"],
                          opset_version=14, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.PRESERVE)
        with torch.no_grad():
            y = logits(model, x).numpy().astype(np.float64)
            emulate_f16(model)
            y16 = logits(model, x).numpy().astype(np.float64)
        safetensors_io.write(f + ".in.safetensors", {"x": x.numpy()})
    except Exception as e:  # PyTorch cannot export it: say so and go on
        print(name, "export failed:", str(e).split("\n")[0][:150], flush=True)
        continue
    r = subprocess.run([ampc, "import", f + ".onnx", "-o", f + ".mlir"], capture_output=True,
                       text=True)
    if r.returncode:
        print(name, "import failed:", r.stderr.strip()[:300], flush=True)
        continue
    line = [name, f"{size}px" if isinstance(size, int) else "x".join(map(str, size))]
    for level in ("O0", "O1"):
        r = subprocess.run([ampc, "run", f + ".mlir", "--level", level, "--inputs",
                            f + ".in.safetensors", "--outputs", f + ".out.safetensors"],
                           capture_output=True, text=True)
        if r.returncode:
            line.append(f"{level} failed: {r.stderr.strip()[:200]}")
            continue
        got = safetensors_io.read(f + ".out.safetensors")["y"].astype(np.float64)
        line.append(f"{level} {np.abs(got - y).max() / np.abs(y).max():.2e}")
    line.append(f"torch-f16 {np.abs(y16 - y).max() / np.abs(y).max():.2e}"
                f" ({time.time() - start:.0f} s)")
    print(*line, flush=True)
    for p in os.listdir(work):
        os.remove(os.path.join(work, p))
