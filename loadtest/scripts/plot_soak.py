#!/usr/bin/env python3
"""Plots a soak's memory and fits its slope.

    python3 loadtest/scripts/plot_soak.py SOAK_DIR START_UNIX END_UNIX OUT.png [FIT_SECONDS=1500]

SOAK_DIR holds rss.csv (soak.sh: unix_time, VmRSS KiB, load) and counters.csv (HeapSampler: unix_time and
System.Runtime counters in MB). Plots RSS, GC heap size and GC committed bytes in MiB over the run
[START, END] and prints each one's least-squares slope in MiB per hour over the last FIT_SECONDS.
Uses matplotlib when it is installed (apt-get install python3-matplotlib), else writes an SVG by hand
(OUT with .svg).
"""
import csv, os, sys, time

soak, start, end, png = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
fit_seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 1500
MIB, MB = 1024 * 1024, 1_000_000

def load(path, column, scale):
    rows = []
    for row in csv.DictReader(open(path)):
        t = int(row["unix_time"])
        if start <= t <= end and row[column]:
            rows.append((t, float(row[column]) * scale / MIB))
    return rows

series = {
    "RSS (VmRSS)": load(f"{soak}/rss.csv", "vmrss_kib", 1024),
    "GC heap size (GC.GetTotalMemory)": load(f"{soak}/counters.csv", "gc-heap-size", MB),
    "GC committed": load(f"{soak}/counters.csv", "gc-committed", MB),
}

# GC.GetTotalMemory between collections is a sawtooth of garbage; what a leak raises is the level the heap
# falls back to. The first sample after each drop is that level (plus at most one interval's allocations).
if os.path.exists(f"{soak}/gcs.csv"):
    # HeapSampler gcs: the heap right after every collection, from the runtime's GCHeapStats event.
    series["GC heap after each collection (GCHeapStats)"] = [
        (int(row["unix_ms"]) // 1000, int(row["total_bytes"]) / MIB) for row in csv.DictReader(open(f"{soak}/gcs.csv"))
        if start <= int(row["unix_ms"]) // 1000 <= end]
heap = series["GC heap size (GC.GetTotalMemory)"]
series["GC heap after collections (sawtooth lows)"] = [heap[i] for i in range(1, len(heap)) if heap[i][1] < heap[i - 1][1]]

def slope(points):
    points = [(t, v) for t, v in points if t >= end - fit_seconds]
    n = len(points)
    if n < 2:
        return float("nan"), n
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    b = sum((t - mt) * (v - mv) for t, v in points) / sum((t - mt) ** 2 for t, _ in points)
    return b * 3600, n

series = {name: points for name, points in series.items() if points}
for name, points in series.items():
    values = [v for _, v in points]
    s, n = slope(points)
    last = [v for t, v in points if t >= end - fit_seconds]
    mean = f"{sum(last) / len(last):.1f}" if last else "n/a"
    print(f"{name}: {len(points)} samples, min {min(values):.1f} MiB, max {max(values):.1f} MiB, "
          f"last {fit_seconds // 60} min: mean {mean} MiB, slope {s:+.2f} MiB/h ({n} samples)")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 6))
    for name, points in series.items():
        s, _ = slope(points)
        style = {"marker": "o", "linestyle": "none", "markersize": 3} if "lows" in name else \
            {"marker": "x", "linestyle": "none", "markersize": 4, "color": "black"} if "GCHeapStats" in name else {}
        ax.plot([(t - start) / 60 for t, _ in points], [v for _, v in points], label=f"{name}, slope {s:+.1f} MiB/h", **style)
    ax.axvline((end - fit_seconds - start) / 60, color="grey", linestyle=":", label=f"fit window: last {fit_seconds // 60} min")
    ax.set_xlabel(f"minutes since {time.strftime('%H:%M:%S', time.gmtime(start))} UTC")
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.set_title("Soak: seed1-400 (800 clients, 800 publishes/s) against the Release server")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
except ImportError:
    # No matplotlib: a plain SVG polyline chart.
    svg = png.rsplit(".", 1)[0] + ".svg"
    w, h, pad = 900, 420, 50
    top = max(v for pts in series.values() for _, v in pts) * 1.1
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#000000"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - 10}" y2="{h - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="10" x2="{pad}" y2="{h - pad}" stroke="black"/>',
             f'<text x="{w / 2}" y="{h - 10}">minutes since the load started (0 to {(end - start) / 60:.0f})</text>',
             f'<text x="5" y="20">{top:.0f} MiB</text>']
    for i, (name, points) in enumerate(series.items()):
        xy = " ".join(f"{pad + (t - start) / (end - start) * (w - pad - 10):.1f},{h - pad - v / top * (h - pad - 10):.1f}" for t, v in points)
        parts.append(f'<polyline fill="none" stroke="{colours[i]}" points="{xy}"/>')
        parts.append(f'<text x="{pad + 10}" y="{30 + 16 * i}" fill="{colours[i]}">{name}, slope {slope(points)[0]:+.1f} MiB/h</text>')
    parts.append("</svg>")
    open(svg, "w").write("\n".join(parts))
