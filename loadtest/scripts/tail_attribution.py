#!/usr/bin/env python3
"""Attributes a run's slow deliveries to causes, by time.

    loadtest/scripts/tail_attribution.py --slow SLOW.csv [--server-gc PAUSES.csv] [--client-gc PAUSES.csv]
        [--counters COUNTERS.csv] [--queue-threshold N] [--clusters N] [--cluster-gap-ms MS] [--csv OUT.csv]

SLOW.csv is the LoadTestClient's --slow-log (created_utc_us, received_utc_us, latency_us, topic, transport,
client); the pauses are HeapSampler pauses --csv for the server and the LoadTestClient's SLOW.client-gc.csv
for itself (start_utc_us, end_utc_us, pause_us, generation, type, promoted_bytes); the counters are HeapSampler
pauses --counters (sample_utc_us, interval_us, threadpool-queue-length, ...). loadtest/scripts/tail.sh records
them all in one run and runs this.

Each slow delivery gets the first cause that holds over [created, received]:
  server-gc         a server GC pause overlaps it
  client-gc         a pause of the generator's own GC overlaps it
  threadpool-queue  a counter sample whose interval overlaps it saw the server's thread-pool queue above the threshold
  unattributed      none of these
Overlap on one machine's clocks is a coincidence in time, not proof of cause (docs/performance.md, "Attributing the tail").
"""
import argparse
import bisect
import csv
import datetime
import math
import statistics
import sys

CAUSES = ["server-gc", "client-gc", "threadpool-queue", "unattributed"]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_pauses(path):
    """Pauses sorted by start; a process's pauses never overlap, so their ends are sorted too."""
    if path is None:
        return None
    pauses = [dict(start=int(r["start_utc_us"]), end=int(r["end_utc_us"]), generation=r["generation"], type=r["type"],
                   promoted=int(r["promoted_bytes"] or 0)) for r in read_rows(path)]
    pauses.sort(key=lambda p: p["start"])
    return pauses


def read_counters(path):
    if path is None:
        return None
    samples = []
    for r in read_rows(path):
        queue = r.get("threadpool-queue-length", "")
        if queue == "":
            continue
        t = int(r["sample_utc_us"])
        interval = int(float(r["interval_us"])) if r.get("interval_us") not in (None, "", "nan", "NaN") else 0
        samples.append(dict(start=t - interval, end=t, queue=float(queue)))
    samples.sort(key=lambda s: s["end"])
    return samples


def overlapping_pause(pauses, created, received):
    """The pause overlapping [created, received] that started last, or None: the last pause to start before
    received is also the last to end, so it is the only one to check."""
    if not pauses:
        return None
    i = bisect.bisect_left(pauses, received, key=lambda p: p["start"]) - 1
    return pauses[i] if i >= 0 and pauses[i]["end"] > created else None


def busiest_queue(samples, created, received):
    """The highest thread-pool queue length of the samples whose interval overlaps [created, received], or None."""
    if not samples:
        return None
    # A sample's interval (end - interval, end] overlaps when it ends after created and starts before received.
    i = bisect.bisect_right(samples, created, key=lambda s: s["end"])
    best = None
    while i < len(samples) and samples[i]["start"] < received:
        best = samples[i]["queue"] if best is None else max(best, samples[i]["queue"])
        i += 1
    return best


def describe_pause(p):
    generation = "gen" + p["generation"] if p["generation"] != "" else "gen2"
    return f"{generation} {p['type']} {(p['end'] - p['start']) / 1000:.1f} ms at {clock(p['start'])}"


def attribute(delivery, server_gc, client_gc, counters, queue_threshold):
    created, received = delivery["created"], delivery["received"]
    pause = overlapping_pause(server_gc, created, received)
    if pause is not None:
        return "server-gc", describe_pause(pause)
    pause = overlapping_pause(client_gc, created, received)
    if pause is not None:
        return "client-gc", describe_pause(pause)
    queue = busiest_queue(counters, created, received)
    if queue is not None and queue > queue_threshold:
        return "threadpool-queue", f"queue {queue:g}"
    return "unattributed", ""


def clock(us):
    """Time of day, UTC, to the microsecond."""
    return datetime.datetime.fromtimestamp(us / 1e6, datetime.timezone.utc).strftime("%H:%M:%S.%f")


def clusters_of(deliveries, gap_us):
    """Deliveries whose intervals overlap or lie within gap_us of each other, largest first."""
    ordered = sorted(deliveries, key=lambda d: d["created"])
    groups, current, end = [], [], None
    for d in ordered:
        if current and d["created"] > end + gap_us:
            groups.append(current)
            current = []
        if not current:
            end = d["received"]
        current.append(d)
        end = max(end, d["received"])
    if current:
        groups.append(current)
    groups.sort(key=lambda g: (-len(g), -max(d["latency"] for d in g)))
    return groups


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def main(argv):
    parser = argparse.ArgumentParser(description="Attribute a run's slow deliveries to GC pauses and thread-pool queueing, by time.")
    parser.add_argument("--slow", required=True, help="the LoadTestClient's --slow-log CSV")
    parser.add_argument("--server-gc", help="HeapSampler pauses --csv of the server")
    parser.add_argument("--client-gc", help="the LoadTestClient's .client-gc.csv")
    parser.add_argument("--counters", help="HeapSampler pauses --counters of the server")
    parser.add_argument("--queue-threshold", type=float, default=10,
                        help="thread-pool queue length above which a sample counts as queueing (default 10)")
    parser.add_argument("--clusters", type=int, default=10, help="how many clusters to print (default 10)")
    parser.add_argument("--cluster-gap-ms", type=float, default=10, help="slow deliveries this close in time form one cluster (default 10)")
    parser.add_argument("--csv", help="also write each slow delivery with its cause to this CSV")
    args = parser.parse_args(argv)

    deliveries = [dict(created=int(r["created_utc_us"]), received=int(r["received_utc_us"]), latency=int(r["latency_us"]),
                       topic=r["topic"], transport=r["transport"], client=r["client"]) for r in read_rows(args.slow)]
    server_gc, client_gc, counters = read_pauses(args.server_gc), read_pauses(args.client_gc), read_counters(args.counters)
    if not deliveries:
        print(f"{args.slow} holds no slow deliveries: nothing to attribute.")
        return 0
    for d in deliveries:
        d["cause"], d["detail"] = attribute(d, server_gc, client_gc, counters, args.queue_threshold)

    first, last = min(d["created"] for d in deliveries), max(d["received"] for d in deliveries)
    print(f"{len(deliveries)} slow deliveries (from {min(d['latency'] for d in deliveries) / 1000:.3f} ms), "
          f"created {clock(first)} to received {clock(last)} UTC")
    for name, pauses in (("server", server_gc), ("client", client_gc)):
        if pauses is None:
            print(f"  {name} GC pauses: not given, so no delivery is put down to them")
        else:
            inside = [p for p in pauses if p["end"] > first and p["start"] < last]
            longest = max((p["end"] - p["start"] for p in inside), default=0)
            print(f"  {name} GC pauses in that span: {len(inside)}, {sum(p['end'] - p['start'] for p in inside) / 1000:.1f} ms in all, longest {longest / 1000:.1f} ms")
    if counters is None:
        print("  thread-pool queue: no counters given, so no delivery is put down to it")
    elif counters:
        queues = [s["queue"] for s in counters if s["end"] > first and s["start"] < last] or [s["queue"] for s in counters]
        print(f"  thread-pool queue length over {len(queues)} samples: p50 {percentile(queues, 0.5):g}, p90 {percentile(queues, 0.9):g}, "
              f"p99 {percentile(queues, 0.99):g}, max {max(queues):g} (threshold {args.queue_threshold:g})")
    print()
    print(f"{'cause':<18} {'count':>7} {'share':>7} {'median ms':>10} {'max ms':>9}")
    for cause in CAUSES:
        latencies = [d["latency"] for d in deliveries if d["cause"] == cause]
        if latencies:
            print(f"{cause:<18} {len(latencies):>7} {100 * len(latencies) / len(deliveries):>6.1f}% "
                  f"{statistics.median(latencies) / 1000:>10.3f} {max(latencies) / 1000:>9.3f}")
        else:
            print(f"{cause:<18} {0:>7} {0:>6.1f}% {'-':>10} {'-':>9}")

    groups = clusters_of(deliveries, args.cluster_gap_ms * 1000)
    print()
    print(f"top clusters (slow deliveries within {args.cluster_gap_ms:g} ms of each other), UTC:")
    for g in groups[:args.clusters]:
        start, end = min(d["created"] for d in g), max(d["received"] for d in g)
        causes = {}
        for d in g:
            causes[d["cause"]] = causes.get(d["cause"], 0) + 1
        details = sorted({d["detail"] for d in g if d["detail"]})
        transports = sorted({d["transport"] for d in g})
        print(f"  {clock(start)} to {clock(end)}  {len(g):>5} deliveries, max {max(d['latency'] for d in g) / 1000:.3f} ms, "
              f"{', '.join(f'{c} {n}' for c, n in sorted(causes.items(), key=lambda item: -item[1]))}; {'/'.join(transports)}"
              + (f"; {'; '.join(details[:3])}" + (f" (+{len(details) - 3} more)" if len(details) > 3 else "") if details else ""))

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["created_utc_us", "received_utc_us", "latency_us", "topic", "transport", "client", "cause", "detail"])
            for d in sorted(deliveries, key=lambda d: d["created"]):
                writer.writerow([d["created"], d["received"], d["latency"], d["topic"], d["transport"], d["client"], d["cause"], d["detail"]])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
