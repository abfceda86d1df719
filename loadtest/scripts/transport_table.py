#!/usr/bin/env python3
"""Prints docs/performance.md's transport table from transport-table.sh's output directory.

    python3 loadtest/scripts/transport_table.py OUT_DIR

One row per shape x transport x server (mean, p50, p99, p99.9 in ms; server CPU per delivery; memory per
subscriber connection; the per-core find-max of that transport at seed1), then a ratio row (Laharsub /
nchan: above 1, nchan was faster or cheaper). A run that was not valid is marked, never left out.
"""
import glob
import json
import os
import sys

out = sys.argv[1]
SHAPES = ["seed1-200t", "seed3-2000t", "seed3-3900t", "broadcast-5t"]
TRANSPORTS = ["longpoll", "sse", "websocket"]


def load(pattern):
    runs = []
    for path in glob.glob(pattern):
        with open(path) as f:
            runs.append(json.load(f))
    return runs


table = {}
for run in load(os.path.join(out, "table", "*.json")):
    shape = f"{run['configuration']}-{run['topics']}t"
    table[(shape, run["transport"], run["target"])] = run

best = {}
for transport in TRANSPORTS:
    for run in load(os.path.join(out, f"findmax-{transport}", "*.json")):
        search = run.get("search")
        if search and search["holds"]:
            key = (transport, run["target"])
            best[key] = max(best.get(key, 0), run["deliveriesPerSecond"])


def cells(run, transport, target):
    if run is None:
        return None
    latency = run["latency"]
    server = run.get("server") or {}
    values = [latency["meanMs"], latency["p50Ms"], latency["p99Ms"], latency["p999Ms"],
              server.get("cpuMicrosecondsPerDelivery"), server.get("memoryPerConnectionKiB"), best.get((transport, target))]
    return values


def fmt(value, digits):
    return "n/a" if value is None else f"{value:,.{digits}f}"


DIGITS = [2, 2, 2, 1, 0, 1, 0]
print("| shape | transport | server | mean ms | p50 ms | p99 ms | p99.9 ms | CPU µs/delivery | KiB/connection | find-max per core (deliveries/s, seed1) |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
for shape in SHAPES + sorted({k[0] for k in table} - set(SHAPES)):
    for transport in TRANSPORTS:
        rows = {}
        for target in ["laharsub", "nchan"]:
            run = table.get((shape, transport, target))
            values = cells(run, transport, target)
            if values is None:
                continue
            rows[target] = values
            if run["valid"] and run["deliveriesMissing"] == 0:
                mark = ""
            elif not run["valid"] and "fell behind its own schedule" in (run.get("invalidReason") or ""):
                mark = f" (**not valid**: generator behind, publish lag p99 {run['scheduleLag']['p99Ms']:.0f} ms)"
            else:
                mark = " (**not valid**: " + (run.get("invalidReason") or f"{run['deliveriesMissing']} missing") + ")"
            print(f"| {shape} | {transport} | {target}{mark} | " + " | ".join(fmt(v, d) for v, d in zip(values, DIGITS)) + " |")
        if len(rows) == 2:
            ratios = [(a / b if a is not None and b not in (None, 0) else None) for a, b in zip(rows["laharsub"], rows["nchan"])]
            print(f"| | | **ratio** | " + " | ".join(f"**{fmt(r, 2)}**" for r in ratios) + " |")

floor = {t: best.get((t, "floor")) for t in TRANSPORTS}
if any(floor.values()):
    print()
    print("| find-max per core (deliveries/s, seed1) | " + " | ".join(TRANSPORTS) + " |")
    print("|---|" + "---:|" * len(TRANSPORTS))
    for target in ["laharsub", "floor", "nchan"]:
        print(f"| {target} | " + " | ".join(fmt(best.get((t, target)), 0) for t in TRANSPORTS) + " |")
