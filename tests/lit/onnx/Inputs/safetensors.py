"""Writes and prints small safetensors files with the standard library only.

  safetensors.py write OUT NAME=DTYPE:SHAPE:V,V,... [...]   (SHAPE as 2x4;
                 VALUES "random" for uniform values in [-1, 1], seeded)
  safetensors.py print FILE
"""
import json
import random
import struct
import sys

FORMATS = {"F32": "f", "F64": "d", "I64": "q", "I32": "i"}


def write(out, specs):
    header, blobs, offset = {}, [], 0
    for spec in specs:
        name, rest = spec.split("=", 1)
        dtype, shape, values = rest.split(":")
        dims = [int(d) for d in shape.split("x")] if shape else []
        cast = float if dtype[0] == "F" else int
        count = 1
        for d in dims:
            count *= d
        if values == "random":
            rng = random.Random(len(header))
            vals = [round(rng.uniform(-1, 1), 3) for _ in range(count)]
        else:
            vals = [cast(v) for v in values.split(",")] if values else []
        blob = struct.pack("<%d%s" % (len(vals), FORMATS[dtype]), *vals)
        header[name] = {"dtype": dtype, "shape": dims, "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def show(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    for name in sorted(k for k in header if k != "__metadata__"):
        t = header[name]
        begin, end = t["data_offsets"]
        fmt = {"F16": "e", **FORMATS}[t["dtype"]]
        n = (end - begin) // struct.calcsize(fmt)
        vals = struct.unpack("<%d%s" % (n, fmt), data[8 + size + begin:8 + size + end])
        print(name, t["dtype"], t["shape"], " ".join("%.6g" % v for v in vals))


if sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3:])
else:
    show(sys.argv[2])
