#!/usr/bin/python3
"""Compares two safetensors files tensor by tensor:
|a - b| <= atol + rtol * |b| everywhere, and with --top1 the same argmax of
each row. Usage: compare.py GOT EXPECTED [--rtol R] [--atol A] [--top1]."""
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
    bad = err > a.atol + a.rtol * np.abs(w)
    print(f"{name}: max abs error {err.max():.3g}, {bad.sum()} of {w.size} outside tolerance")
    ok &= not bad.any()
sys.exit(0 if ok else 1)
