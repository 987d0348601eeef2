"""underflow.py NONE.json DYNAMIC.json: the doctor's JSON of the mlp without
and with loss scaling, summarised for FileCheck."""
import json
import math
import sys

none, dynamic = (json.load(open(p)) for p in sys.argv[1:3])


def fraction(report, name):
    return [v for v in report["values"] if v["name"] == name][0]["subnormal_fraction"]


print("none: fc1.matmul.grad subnormal above 5%:", fraction(none, "fc1.matmul.grad") > 0.05)
print("dynamic: fc1.matmul.grad subnormal below 0.1%:", fraction(dynamic, "fc1.matmul.grad") < 0.001)
s = dynamic["verdict"]["init_loss_scaling"]
print("dynamic: scale %d, init_loss_scaling a power of two:" % dynamic["loss_scale"],
      s >= 1 and math.log2(s) == int(math.log2(s)))
