"""Checks that each table of a doctor report (argv[1]) keeps its columns in
line: each row's op starts where the header's `op` does."""
import sys

lines = open(sys.argv[1]).read().split("\n")
for title in ("closest to overflow", "gradients lost to underflow"):
    at = next(i for i, l in enumerate(lines) if l.startswith(title))
    header, rows = lines[at + 1], []
    for line in lines[at + 2:]:
        if not line.strip():
            break
        rows.append(line)
    op = header.index(" op ") + 1
    bad = [r for r in rows if r[op - 1] != " " or r[op:].split()[0] != r.split()[1]]
    longest = max(len(r.split()[0]) for r in rows)
    print(f"{title}: {len(rows)} rows {'in line' if not bad else 'out of line: ' + bad[0]}, "
          f"the longest name {longest} characters")
