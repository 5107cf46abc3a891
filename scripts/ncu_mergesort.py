#!/usr/bin/env python3
"""Per-sort kernel times of the mergesort benchmark's profile mode, from an Nsight Compute CSV.

Usage (on the GPU machine, .gpu/ filled by scripts/device.sh):
  ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      .gpu/bench_gpu_mergesort --profile > ncu.csv
  python3 .gpu/ncu_mergesort.py ncu.csv

Every sort starts with the block sort kernel, so the kernel sequence is split there; each sort
prints its time per kernel kind (sum over its launches, in microseconds) and its launch count.
The benchmark prints the configurations in the same order (each sorts twice: the second counts).

With the per-SM counters in the same CSV (add
`--metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max`), each sort also
prints, per kernel kind, the largest share of a launch's time that its busiest SM ran past the
average SM: one slow block started last shows here (docs/tuning.md, "The partial tile first").
A launch of fewer blocks than SMs leaves SMs idle and shows a large share by construction.
"""
import csv
import sys
from collections import OrderedDict

UNITS = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}
KINDS = [
    ("twophase_blocksort", "blocksort"),
    ("twophase_mergesort_quad_partition", "quad_part"),
    ("twophase_mergesort_quad_tile", "quad_tile"),
    ("twophase_mergesort_partition", "partition"),
    ("twophase_mergesort_tile", "tile"),
    ("twophase_mergesort_oct_partition", "oct_part"),
    ("twophase_mergesort_oct_tile", "oct_tile"),
]


def kind_of(name):
    for prefix, kind in KINDS:
        if name.startswith(prefix):
            return kind
    return None


def main(path):
    lines = open(path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    sorts = []
    rows = list(csv.DictReader(lines[start:]))
    # Per launch ID: the SMs' average and largest active cycles, where the CSV has them.
    active = {}
    for row in rows:
        metric = row.get("Metric Name")
        if metric in ("sm__cycles_active.avg", "sm__cycles_active.max"):
            value = float(row["Metric Value"].replace(",", ""))
            active.setdefault(row["ID"], {})[metric.rsplit(".", 1)[1]] = value
    excess = []  # per sort: kind -> the largest (max - avg) / max over its launches
    for row in rows:
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        kind = kind_of(row["Kernel Name"])
        if kind is None:
            continue
        us = float(row["Metric Value"].replace(",", "")) * UNITS[row["Metric Unit"]]
        if kind == "blocksort":
            sorts.append(OrderedDict((k, [0.0, 0]) for _, k in KINDS))
            excess.append({})
        if not sorts:
            continue
        sorts[-1][kind][0] += us
        sorts[-1][kind][1] += 1
        sm = active.get(row["ID"], {})
        if sm.get("max"):
            share = (sm["max"] - sm["avg"]) / sm["max"]
            excess[-1][kind] = max(excess[-1].get(kind, 0.0), share)
    header = ["sort", "total us"] + [k for _, k in KINDS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for i, s in enumerate(sorts):
        total = sum(v[0] for v in s.values())
        cells = [f"{v[0]:.0f} ({v[1]})" if v[1] else "-" for v in s.values()]
        print(f"| {i} | {total:.0f} | " + " | ".join(cells) + " |")
    if any(excess):
        print()
        print("Busiest SM past the average one, largest share of a launch (per kind):")
        print("| sort | " + " | ".join(k for _, k in KINDS) + " |")
        print("|" + "---|" * (len(KINDS) + 1))
        for i, e in enumerate(excess):
            cells = [f"{100 * e[k]:.0f}%" if k in e else "-" for _, k in KINDS]
            print(f"| {i} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
