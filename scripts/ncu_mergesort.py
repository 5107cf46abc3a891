#!/usr/bin/env python3
"""Per-sort kernel times of the mergesort benchmark's profile mode, from an Nsight Compute CSV.

Usage (on the GPU machine, .gpu/ filled by scripts/device.sh):
  ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      .gpu/bench_gpu_mergesort --profile > ncu.csv
  python3 .gpu/ncu_mergesort.py ncu.csv

Every sort starts with the block sort kernel, so the kernel sequence is split there; each sort
prints its time per kernel kind (sum over its launches, in microseconds) and its launch count.
The benchmark prints the configurations in the same order (each sorts twice: the second counts).
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
    for row in csv.DictReader(lines[start:]):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        kind = kind_of(row["Kernel Name"])
        if kind is None:
            continue
        us = float(row["Metric Value"].replace(",", "")) * UNITS[row["Metric Unit"]]
        if kind == "blocksort":
            sorts.append(OrderedDict((k, [0.0, 0]) for _, k in KINDS))
        if not sorts:
            continue
        sorts[-1][kind][0] += us
        sorts[-1][kind][1] += 1
    header = ["sort", "total us"] + [k for _, k in KINDS]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for i, s in enumerate(sorts):
        total = sum(v[0] for v in s.values())
        cells = [f"{v[0]:.0f} ({v[1]})" if v[1] else "-" for v in s.values()]
        print(f"| {i} | {total:.0f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
