"""Split the test files into N shards of about equal running time: ``python tests/shard.py K N`` prints the files
of shard K (0-based), space-separated. ``make test`` runs the shards as parallel pytest processes.

The times are ``tests/durations.json`` (seconds per file, measured on the 2-core CI machine with both shards
running; refresh it with ``make durations`` when files grow); a file missing there counts as the median. Files
go largest first to the shard with the least time so far, so the shards end within seconds of each other (the
alternating split they replace left one shard 95 s behind the other).
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def shards(n: int) -> list:
    files = sorted(str(p.relative_to(HERE.parent)) for d in ("parity", "unit") for p in (HERE / d).glob("test_*.py"))
    table = HERE / "durations.json"
    times = json.loads(table.read_text()) if table.exists() else {}
    default = statistics.median(times.values()) if times else 1.0
    cost = {f: times.get(f, default) for f in files}
    out: list = [[] for _ in range(n)]
    load = [0.0] * n
    for f in sorted(files, key=lambda f: (-cost[f], f)):
        k = load.index(min(load))
        out[k].append(f)
        load[k] += cost[f]
    return [sorted(s) for s in out]


if __name__ == "__main__":
    k, n = int(sys.argv[1]), int(sys.argv[2])
    print(" ".join(shards(n)[k]))
