"""Splits a safetensors file into N shards as transformers' save_pretrained
writes them: model-0000i-of-0000N.safetensors and
model.safetensors.index.json ({"metadata": {"total_size"}, "weight_map"}).

usage: shard_safetensors.py IN.safetensors OUTDIR N
"""
import json
import os
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    body = data[8 + size:]
    return {name: (t["dtype"], t["shape"], body[t["data_offsets"][0]:t["data_offsets"][1]])
            for name, t in header.items()}


def write(path, tensors):
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, raw in tensors.values():
            f.write(raw)


def main():
    source, folder, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tensors = read(source)
    names = sorted(tensors)
    os.makedirs(folder, exist_ok=True)
    weight_map = {}
    for i in range(count):
        shard = "model-%05d-of-%05d.safetensors" % (i + 1, count)
        part = {n: tensors[n] for n in names[i::count]}
        write(os.path.join(folder, shard), part)
        weight_map.update({n: shard for n in part})
    total = sum(len(raw) for _, _, raw in tensors.values())
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)


main()
