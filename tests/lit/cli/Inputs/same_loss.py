"""Whether two training runs' final losses agree within a relative
tolerance: same_loss.py A.json B.json TOLERANCE (metrics files)."""
import json
import sys

a, b = (json.load(open(p))["final_loss"] for p in sys.argv[1:3])
tolerance = float(sys.argv[3])
if abs(a - b) <= tolerance * abs(b):
    print(f"final losses agree: {a} and {b}")
else:
    print(f"final losses DIFFER: {a} and {b} (tolerance {tolerance})")
    sys.exit(1)
