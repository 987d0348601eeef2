"""close.py A.json B.json TOL: the final_loss of two metrics files agree within TOL (relative)."""
import json
import sys

a = json.load(open(sys.argv[1]))["final_loss"]
b = json.load(open(sys.argv[2]))["final_loss"]
tol = float(sys.argv[3])
gap = abs(a - b) / max(abs(a), 1e-12)
print(f"final_loss {a} vs {b}: relative gap {gap:.2e} (tolerance {tol})")
sys.exit(0 if gap <= tol else 1)
