"""metric_gap.py A.txt B.txt KEY TOL [relative]: the last `KEY: value` line of two
`ampc train` outputs agree within TOL (absolute, or relative to B's)."""
import re
import sys


def last(path, key):
    values = [float(m.group(1)) for line in open(path)
              if (m := re.match(re.escape(key) + r": ([-+0-9.eE]+)", line))]
    if not values:
        sys.exit(f"{path}: no '{key}:' line")
    return values[-1]


a, b = last(sys.argv[1], sys.argv[3]), last(sys.argv[2], sys.argv[3])
tol = float(sys.argv[4])
relative = len(sys.argv) > 5 and sys.argv[5] == "relative"
gap = abs(a - b) / abs(b) if relative else abs(a - b)
print(f"{sys.argv[3]} {a} vs {b}: {'relative ' if relative else ''}gap {gap:.4f} "
      f"({'within' if gap <= tol else 'above'} {tol})")
sys.exit(0 if gap <= tol else 1)
