"""Checks the `profile` of a metrics file against its plan: the slowest
launches are sorted, hold each step's distinct operands and results once,
and give GB/s from those bytes, and TFLOP/s for GEMMs and convolutions
(their gradients too) alone."""
import json
import sys

plan, metrics = (json.load(open(path)) for path in sys.argv[1:3])
profile = metrics["profile"]
rows = profile["slowest_launches"]
steps = {s["name"]: s for s in plan["steps"]}
size = {b["id"]: b["bytes"] for b in plan["buffers"]}
assert 0 < len(rows) <= 24, len(rows)
assert all(a["ms"] >= b["ms"] for a, b in zip(rows, rows[1:])), "not sorted"
assert abs(sum(r["ms"] for r in rows) - profile["kernels_ms_per_step"]) < 1e-9 or len(rows) == 24
launches = profile["launch_ms_per_step"]
assert abs(sum(launches.values()) - profile["kernels_ms_per_step"]) < 1e-9, "launches"
assert all(launches[r["step"]] == r["ms"] for r in rows), "slowest launches"
gemms, convs = 0, set()
for r in rows:
    s = steps[r["step"]]
    assert r["kernel"] == s["kernel"] and r["steps"] >= 1, r
    want = sum(size[i] for i in set(s["inputs"])) + sum(size[i] for i in set(s["outputs"]))
    if r["steps"] == 1:
        assert r["bytes"] == want, (r, want)
    assert abs(r["gb_per_s"] - r["bytes"] / (r["ms"] * 1e6)) <= 1e-6 * r["gb_per_s"], r
    conv = s["kernel"].startswith("conv2d")
    assert ("tflops" in r) == (s["kernel"].startswith("matmul") or conv), r
    gemms += "tflops" in r and not conv
    if conv:
        convs.add(s["kernel"])
assert gemms >= 2, "no GEMM rows"
print(f"profile: {len(rows)} launches checked, {gemms} GEMMs, convolutions: "
      + (", ".join(sorted(convs)) or "none"))
