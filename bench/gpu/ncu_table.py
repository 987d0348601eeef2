"""The slowest kernels of an Nsight Compute run, one line each: what
scripts/gpu-check.sh ncu brings back from the GPU machine, small enough to
read in the lease's output.

  ncu_table.py DETAILS.csv [N]

DETAILS.csv is `ncu --import REPORT --csv --page details`: a row per
kernel launch, section and metric ("ID", "Kernel Name", "Block Size",
"Grid Size", "Section Name", "Metric Name", "Metric Unit", "Metric Value").
The table sums each kernel name's launches and lists the N (20) names that
took longest, with the mean of their DRAM and SM throughput, achieved and
theoretical occupancy, registers a thread and the warp cycles between
issued instructions, each weighted by its launches' durations: whether a
kernel is bound by memory, by arithmetic, or by neither (too few warps in
flight, or latency). A metric a section did not give is '-'.
"""
import csv
import sys
from collections import defaultdict

# (column, the details page's metric name)
COLUMNS = [
    ("dram %", "DRAM Throughput"),
    ("sm %", "Compute (SM) Throughput"),
    ("occupancy %", "Achieved Occupancy"),
    ("theoretical %", "Theoretical Occupancy"),
    ("registers", "Registers Per Thread"),
    ("cycles/issue", "Warp Cycles Per Issued Instruction"),
]
TIME_UNITS = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0,
              "msecond": 1.0, "s": 1e3, "second": 1e3}


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def launches(rows):
    """{launch id: (kernel name, block, grid, {metric: value}, ms)}."""
    by_id = {}
    for row in rows:
        launch = by_id.setdefault(row["ID"], [row["Kernel Name"], row.get("Block Size", ""),
                                              row.get("Grid Size", ""), {}, None])
        value = number(row["Metric Value"])
        if value is None:
            continue
        if row["Metric Name"] == "Duration":
            scale = TIME_UNITS.get(row["Metric Unit"].strip().lower())
            if scale is not None:
                launch[4] = value * scale
        else:
            launch[3][row["Metric Name"]] = value
    return by_id


def short(name):
    """A demangled kernel name without its namespaces, return type and
    parameters: columnChunks<4, 4, ShiftedMoments<4, 4>>."""
    for noise in ("ampc::rt::cuda::", "(anonymous namespace)::", "rows::"):
        name = name.replace(noise, "")
    if name.startswith("void "):
        name = name[5:]
    depth = 0
    for i, ch in enumerate(name):  # the parameters: the first '(' outside <>
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0 and i > 0:
            name = name[:i]
            break
    return name if len(name) <= 70 else name[:67] + "..."


def table(rows, top=20):
    kernels = defaultdict(lambda: {"ms": 0.0, "count": 0, "shape": "", "weighted": defaultdict(
        float), "weight": defaultdict(float)})
    for name, block, grid, metrics, ms in launches(rows).values():
        if ms is None:
            continue
        k = kernels[name]
        k["ms"] += ms
        k["count"] += 1
        k["shape"] = k["shape"] or f"{grid} x {block}"
        for _, metric in COLUMNS:
            if metric in metrics:
                k["weighted"][metric] += metrics[metric] * ms
                k["weight"][metric] += ms
    lines = ["| kernel | launches | ms | grid x block | "
             + " | ".join(c for c, _ in COLUMNS) + " |",
             "|---|---|---|---|" + "---|" * len(COLUMNS)]
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["ms"])[:top]:
        cells = []
        for _, metric in COLUMNS:
            w = k["weight"].get(metric, 0.0)
            cells.append(f"{k['weighted'][metric] / w:.1f}" if w > 0 else "-")
        lines.append(f"| {short(name)} | {k['count']} | {k['ms']:.3f} | {k['shape']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


NEEDED = {"ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"}


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and not sys.argv[2].isdigit()):
        sys.exit(__doc__)
    path = sys.argv[1]
    try:
        with open(path, newline="") as f:
            # ncu prints its own lines (==PROF==) before the header.
            lines = [line for line in f if line.startswith('"')]
    except OSError as e:
        sys.exit(f"ncu_table.py: error: {path}: {e.strerror}")
    rows = csv.DictReader(lines)
    if not NEEDED <= set(rows.fieldnames or []):
        sys.exit(f"ncu_table.py: error: {path}: not the CSV of `ncu --import REPORT --csv "
                 "--page details` (no ID, Kernel Name and Metric columns)")
    print(table(list(rows), int(sys.argv[2]) if len(sys.argv) == 3 else 20))


if __name__ == "__main__":
    main()
