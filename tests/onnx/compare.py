#!/usr/bin/python3
"""Compares two safetensors files tensor by tensor:
|a - b| <= atol + rtol * |b| everywhere, and with --top1 the same argmax of
each row; with --of-max F, |a - b| <= F * max|b| (a tolerance relative to
the largest value, as for logits). Usage: compare.py GOT EXPECTED [--rtol R]
[--atol A] [--top1] [--of-max F]."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np
import safetensors_io

p = argparse.ArgumentParser()
p.add_argument("got")
p.add_argument("expected")
p.add_argument("--rtol", type=float, default=1e-4)
p.add_argument("--atol", type=float, default=1e-5)
p.add_argument("--top1", action="store_true")
p.add_argument("--of-max", type=float)
a = p.parse_args()
got, want = safetensors_io.read(a.got), safetensors_io.read(a.expected)
ok = True
for name, w in want.items():
    g = got[name].astype(np.float64)
    w = w.astype(np.float64)
    if a.top1:
        same = (g.argmax(-1) == w.argmax(-1)).mean()
        print(f"{name}: top-1 agreement {same:.3f}")
        ok &= same == 1.0
        continue
    err = np.abs(g - w)
    if a.of_max is not None:
        largest = np.abs(w).max()
        within = err.max() <= a.of_max * largest
        print(f"{name}: max abs error {err.max() / largest:.2g} of the largest |value| "
              f"{largest:.3g}: {'within' if within else 'OUTSIDE'} {a.of_max:g}")
        ok &= bool(within)
        continue
    bad = err > a.atol + a.rtol * np.abs(w)
    print(f"{name}: max abs error {err.max():.3g}, {bad.sum()} of {w.size} outside tolerance")
    ok &= not bad.any()
sys.exit(0 if ok else 1)
