#!/usr/bin/env python3
"""Draws the benchmark chart for docs/benchmarks.md from `boxwood-bench --json` output.

    python3 scripts/bench_chart.py bench.json docs/benchmarks.svg

One group of bars per workload, one bar per engine, on a log scale of operations per second, so that
workloads whose rates differ by orders of magnitude share one chart. Plain SVG, no dependencies.
"""
import json
import math
import sys

ENGINES = ["boxwood", "sqlite", "lmdb", "mmap"]
COLORS = {"boxwood": "#2e7d32", "sqlite": "#1565c0", "lmdb": "#ef6c00", "mmap": "#757575"}


def load(path):
    with open(path) as f:
        rows = json.load(f)
    workloads = []
    rates = {}
    for row in rows:
        workload, engine, rate = row["workload"], row["engine"], row.get("ops_per_sec")
        if rate is None or rate <= 0:
            continue
        if workload not in rates:
            workloads.append(workload)
            rates[workload] = {}
        rates[workload][engine] = rate
    return workloads, rates


def svg(workloads, rates):
    bar, gap, left, top = 14, 18, 260, 40
    group = bar * len(ENGINES) + gap
    height = top + group * len(workloads) + 60
    width = 900
    high = max(max(r.values()) for r in rates.values())
    low = min(min(r.values()) for r in rates.values())
    decades = range(int(math.floor(math.log10(low))), int(math.ceil(math.log10(high))) + 1)
    span = width - left - 40

    def x(rate):
        lo, hi = decades[0], decades[-1]
        return left + span * (math.log10(rate) - lo) / max(1, hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="13">operations per second (log scale), higher is better</text>']
    for d in decades:
        out.append(f'<line x1="{x(10 ** d):.1f}" y1="{top - 8}" x2="{x(10 ** d):.1f}" y2="{height - 50}" stroke="#ddd"/>')
        out.append(f'<text x="{x(10 ** d):.1f}" y="{height - 36}" text-anchor="middle">1e{d}</text>')
    for i, workload in enumerate(workloads):
        y0 = top + i * group
        out.append(f'<text x="{left - 8}" y="{y0 + group / 2:.1f}" text-anchor="end">{workload}</text>')
        for j, engine in enumerate(ENGINES):
            rate = rates[workload].get(engine)
            if rate is None:
                continue
            y = y0 + j * bar
            out.append(f'<rect x="{left}" y="{y}" width="{max(1.0, x(rate) - left):.1f}" height="{bar - 2}" fill="{COLORS[engine]}"/>')
            out.append(f'<text x="{x(rate) + 4:.1f}" y="{y + bar - 4}" font-size="9">{rate:,.0f}</text>')
    for j, engine in enumerate(ENGINES):
        out.append(f'<rect x="{left + j * 110}" y="{height - 12}" width="10" height="10" fill="{COLORS[engine]}"/>')
        out.append(f'<text x="{left + j * 110 + 14}" y="{height - 3}">{engine}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench_chart.py BENCH.json OUT.svg")
    workloads, rates = load(sys.argv[1])
    if not workloads:
        sys.exit("no rows with ops_per_sec in " + sys.argv[1])
    with open(sys.argv[2], "w") as f:
        f.write(svg(workloads, rates))


if __name__ == "__main__":
    main()
