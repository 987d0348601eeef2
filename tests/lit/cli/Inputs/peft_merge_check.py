"""Merges a PEFT LoRA adapter into a Hugging Face checkpoint as PEFT's
merge_and_unload does (weight += lora_B.weight @ lora_A.weight * lora_alpha
/ r, on the module that base_model.model.<module> names) and prints the
largest difference from another checkpoint: ampc's own merged export.

usage: peft_merge_check.py BASE.safetensors ADAPTER_DIR MERGED.safetensors
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
    out = {}
    for name, t in header.items():
        assert t["dtype"] == "F32", (name, t["dtype"])
        a, b = t["data_offsets"]
        raw = data[8 + size + a:8 + size + b]
        out[name] = (t["shape"], list(struct.unpack("<%df" % (len(raw) // 4), raw)))
    return out


def main():
    base, folder, merged = read(sys.argv[1]), sys.argv[2], read(sys.argv[3])
    config = json.load(open(os.path.join(folder, "adapter_config.json")))
    adapters = read(os.path.join(folder, "adapter_model.safetensors"))
    scaling = config["lora_alpha"] / config["r"]
    assert config["peft_type"] == "LORA" and config["task_type"] == "CAUSAL_LM"
    prefix = "base_model.model."
    done = 0
    for name, (shape_a, a) in adapters.items():
        if not name.endswith(".lora_A.weight"):
            continue
        module = name[len(prefix):-len(".lora_A.weight")]
        assert module.split(".")[-1] in config["target_modules"], module
        shape_b, b = adapters[module.join((prefix, ".lora_B.weight"))]
        (rank, cols), (rows, _) = shape_a, shape_b
        shape_w, w = base[module + ".weight"]
        assert shape_w == [rows, cols], (module, shape_w, rows, cols)
        for r in range(rows):
            for c in range(cols):
                w[r * cols + c] += scaling * sum(b[r * rank + k] * a[k * cols + c]
                                                 for k in range(rank))
        done += 1
    worst = max(abs(x - y) for name, (_, ours) in merged.items()
                for x, y in zip(ours, base[name][1]))
    print("%d modules merged, largest difference %s" % (done, "below 1e-6" if worst < 1e-6 else worst))


main()
