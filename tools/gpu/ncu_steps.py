#!/usr/bin/env python3
"""Where a decode step's GPU time goes, from `ncu --csv --page raw --print-units base --metrics
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum` over a window of whole steps.

Prints one row per kernel and grid: launches per step, microseconds per step, the DRAM bytes it moved and its rate;
then the GPU time per step, which beside the step's wall time says how much of it the kernels fill.
A step runs from a launch of MARKER (a kernel every step runs once, first; default embed_kernel) to the next one:
the kernels before the first and from the last are left out. With GRID (e.g. "(16, 1, 1)") only the steps whose
marker had that grid count, the embedding's grid being the step's rows: a batch's decode steps among its prompts.
Usage: ncu_steps.py CSV [MARKER [GRID]]"""
import csv
import re
import sys
from collections import defaultdict


def short(name):
    name = re.sub(r"\(anonymous namespace\)::|<unnamed>::|zse::", "", name)
    name = re.sub(r"^void\s+", "", name)
    return name.split("(")[0]  # the parameters


def main():
    path = sys.argv[1]
    marker = sys.argv[2] if len(sys.argv) > 2 else "embed_kernel"
    grid = sys.argv[3] if len(sys.argv) > 3 else None
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own notes are not CSV
    launches = sorted((r for r in csv.DictReader(lines) if r.get("ID", "").isdigit()), key=lambda r: int(r["ID"]))
    rows, step = [], None
    for r in launches:
        if marker in short(r["Kernel Name"]):
            rows.extend(step or [])  # the step before this marker is whole
            step = [r] if grid is None or r.get("Grid Size", "") == grid else None
        elif step is not None:
            step.append(r)
    if not rows:
        print("no whole step in", path, f"(marker {marker}" + (f", grid {grid})" if grid else ")"))
        return
    totals = defaultdict(lambda: [0, 0.0, 0.0])
    for r in rows:
        key = (short(r["Kernel Name"]), r.get("Grid Size", ""))
        t = totals[key]
        t[0] += 1
        t[1] += float(r["gpu__time_duration.sum"].replace(",", "")) / 1e3  # ns -> us
        t[2] += float(r.get("dram__bytes_read.sum", "0").replace(",", "")) \
            + float(r.get("dram__bytes_write.sum", "0").replace(",", ""))
    steps = sum(t[0] for (name, _), t in totals.items() if marker in name)
    steps = max(steps, 1)
    print(f"{len(rows)} kernels profiled, {steps} steps (launches of {marker})")
    print(f"{'kernel':58} {'grid':>16} {'per step':>8} {'us/step':>9} {'MB/step':>9} {'GB/s':>7}")
    for (name, grid), (count, us, moved) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(f"{name[:58]:58} {grid:>16} {count / steps:8.1f} {us / steps:9.1f} {moved / steps / 1e6:9.2f} "
              f"{moved / (us * 1e3) if us else 0:7.0f}")
    gpu = sum(t[1] for t in totals.values()) / steps
    moved = sum(t[2] for t in totals.values()) / steps
    print(f"GPU time per step: {gpu:.1f} us, {moved / 1e6:.1f} MB moved ({moved / (gpu * 1e3):.0f} GB/s while "
          f"kernels run; gaps between kernels not counted)")


main()
