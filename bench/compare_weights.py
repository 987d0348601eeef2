"""Whether two safetensors files hold the same weights: for every tensor of
the first, the one of its name in the second, of the same shape, with every
element within RTOL of the tensor's largest magnitude.

Usage: python3 bench/compare_weights.py OURS.safetensors THEIRS.safetensors [--rtol R]
Prints one line; exits 1 when a tensor is missing, of another shape, or
differs by more than the tolerance."""
import argparse
import json
import struct
import sys

FORMATS = {"F32": ("f", 4), "F64": ("d", 8)}


def read(path):
    """The file's float tensors: name -> (shape, values)."""
    blob = open(path, "rb").read()
    size = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + size])
    out = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] not in FORMATS:
            continue
        code, width = FORMATS[t["dtype"]]
        a, b = t["data_offsets"]
        out[name] = (t["shape"], struct.unpack("<%d%s" % ((b - a) // width, code),
                                               blob[8 + size + a:8 + size + b]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ours")
    parser.add_argument("theirs")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    ours, theirs = read(args.ours), read(args.theirs)
    worst, where = 0.0, ""
    for name, (shape, values) in sorted(theirs.items()):
        if name not in ours or ours[name][0] != shape:
            print(f"{name}: missing or of another shape in {args.ours}: DISAGREE")
            return 1
        top = max(max(abs(v) for v in values), 1e-30)
        diff = max(abs(a - b) for a, b in zip(ours[name][1], values)) / top
        if diff >= worst:
            worst, where = diff, name
    ok = worst <= args.rtol
    print(f"{len(theirs)} tensors: within {worst:.2e} of their largest value ({where}, allowed "
          f"{args.rtol:.0e}): " + ("agree" if ok else "DISAGREE"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
