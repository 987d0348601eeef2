"""The start the export scripts share: PyTorch and the modules named are
imported, or the script exits 77 (a skip, for lit) where one is missing;
OUTDIR (argv[1]) is made and PyTorch seeded with 0."""
import importlib
import os
import sys


def start(*modules):
    """OUTDIR, once PyTorch and `modules` import."""
    try:
        for name in ("torch",) + modules:
            importlib.import_module(name)
    except ImportError as e:
        print(f"skipped: {e}")
        sys.exit(77)
    import torch

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    return out
