"""How many steps read each gradient in two plans (ampc compile --train):
prints whether every gradient is read alike, and the steps of the second
that check and measure the gradients."""
import json
import sys
from collections import Counter


def reads(path):
    plan = json.load(open(path))
    names = {b["id"]: b["name"] for b in plan["buffers"]}
    count = Counter()
    for s in plan["steps"]:
        for i in set(s["inputs"]):
            if ".grad" in names[i]:
                count[names[i]] += 1
    return count, Counter(s["kernel"] for s in plan["steps"])


plain, _ = reads(sys.argv[1])
clip, kernels = reads(sys.argv[2])
alike = "alike" if plain == clip else "DIFFERENTLY"
print(f"gradients read {alike}: {len(plain)} gradients")
print(f"check_finite_norm {kernels['check_finite_norm']}, grad_norm {kernels['grad_norm']}")
