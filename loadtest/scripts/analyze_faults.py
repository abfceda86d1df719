#!/usr/bin/env python3
"""Relates the FaultClient's outages and timeline to the fault times faults.sh recorded.

    python3 loadtest/scripts/analyze_faults.py OUT_DIR

For each fault: how long the process took to go and to answer /health again; how many clients had a
stretch without a delivery (or a successful publish) spanning the fault, and when they were served
again, counted from the signal; the first second whose deliveries were back at 90 % of the 10 s before;
the publish failures and poll retries until the next fault. Then the client's totals (summary.json).
"""
import csv, json, os, statistics, sys

out = sys.argv[1]
faults = list(csv.DictReader(open(os.path.join(out, "faults.csv"))))
outages = list(csv.DictReader(open(os.path.join(out, "outages.csv"))))
timeline = [{k: int(v) for k, v in row.items()} for row in csv.DictReader(open(os.path.join(out, "timeline.csv")))]
summary = json.load(open(os.path.join(out, "summary.json")))
by_second = {row["unix_time"]: row for row in timeline}
clients = summary["clients"]

def served_again(kind, t0):
    ends = [int(o["end_ms"]) - t0 for o in outages
            if o["kind"] == kind and int(o["start_ms"]) <= t0 + 1000 and int(o["end_ms"]) >= t0]
    return sorted(ends)

def describe(values):
    if not values:
        return "none"
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"{len(values)}/{clients} clients, median {statistics.median(values)/1000:.1f} s, p95 {p95/1000:.1f} s, max {values[-1]/1000:.1f} s"

rows = []
for i, f in enumerate(faults):
    t0, gone, healthy = int(f["fault_ms"]), int(f["gone_ms"]), int(f["healthy_ms"])
    t_next = int(faults[i + 1]["fault_ms"]) if i + 1 < len(faults) else t0 + 20_000
    s0 = t0 // 1000
    before = [by_second[s]["deliveries"] for s in range(s0 - 10, s0) if s in by_second]
    baseline = statistics.mean(before) if before else 0
    back = next((s for s in range(s0 + 1, t_next // 1000) if s in by_second and by_second[s]["deliveries"] >= 0.9 * baseline), None)
    window = [by_second[s] for s in range(s0, t_next // 1000) if s in by_second]
    deliveries = served_again("delivery", t0)
    publishes = served_again("publish", t0)
    rows.append((f["kind"], f["instance"], gone - t0, healthy - t0, deliveries, publishes, back - s0 if back else None,
                 sum(r["publish_fail"] for r in window), sum(r["poll_retries"] for r in window)))
    print(f"SIG{f['kind']} instance {f['instance']}: gone after {gone - t0} ms, /health again after {healthy - t0} ms")
    print(f"  no delivery across the fault: {describe(deliveries)}")
    print(f"  no successful publish across the fault: {describe(publishes)}")
    print(f"  deliveries/s back to 90% of the {baseline:.0f}/s before: {'after ~%d s' % (back - s0) if back else 'not before the next fault'}")
    print(f"  until the next fault: {rows[-1][7]} publish failures, {rows[-1][8]} poll retries")

print()
print("by kind (signal, instance): faults | /health again after (s) | all clients receiving again after (s, max over faults of the slowest client) | deliveries/s back after (s)")
for key in sorted({(r[0], r[1]) for r in rows}):
    group = [r for r in rows if (r[0], r[1]) == key]
    healthy = [r[3] / 1000 for r in group]
    slowest = [r[4][-1] / 1000 for r in group if r[4]]
    back = [r[6] for r in group if r[6] is not None]
    print(f"  SIG{key[0]} {key[1]}: {len(group)} | {min(healthy):.1f}-{max(healthy):.1f} | "
          f"{(('%.1f-%.1f' % (min(slowest), max(slowest))) if slowest else 'within the outage threshold')} | "
          f"{(('%d-%d' % (min(back), max(back))) if back else 'n/a')}")
print()
print("client totals:", json.dumps({k: summary[k] for k in summary if k not in ("urls",)}, sort_keys=True))
