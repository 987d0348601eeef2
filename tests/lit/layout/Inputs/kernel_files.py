"""Checks that runtime/cuda/kernels mirrors runtime/cpu/kernels file for file
(docs/architecture.md, "One backend skeleton"): each CPU kernel file X.cpp
has X.cu, and each CUDA kernel file is X.cu or a part of X, XPart.cu.
Prints one line per fault, or "mirrored: N families"."""
import os
import sys

runtime = sys.argv[1]
cpu = sorted(f[:-4] for f in os.listdir(os.path.join(runtime, "cpu", "kernels")) if f.endswith(".cpp"))
cuda = sorted(f[:-3] for f in os.listdir(os.path.join(runtime, "cuda", "kernels")) if f.endswith(".cu"))
faults = [f"cpu/kernels/{x}.cpp has no cuda/kernels/{x}.cu" for x in cpu if x not in cuda]
faults += [f"cuda/kernels/{x}.cu is no CPU family's file or part"
           for x in cuda if not any(x.startswith(c) for c in cpu)]
print("\n".join(faults) if faults else f"mirrored: {len(cpu)} families")
