#!/usr/bin/env python3
"""Plots `engram-bench scale --json` results: query wall time and peak memory against N.

usage: python3 Benchmarks/plot_scale.py [RESULT.json ...] [-o OUT.svg] [--table]

Reads Benchmarks/results/scale-*.json by default and writes Benchmarks/results/scale.svg,
a hand-written SVG (no plotting library needed): query p50 and p95 wall time (one
`engram query` process each) on the left, peak resident memory of `engram query`,
`export` and `import` on the right, both on log-log axes. `--table` also prints the
docs/benchmarks.md's Markdown table of the same results.
"""
import glob
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(paths):
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read().strip()
        if text:  # a run still in progress leaves an empty file
            rows.append(json.loads(text))
    return sorted(rows, key=lambda row: row["n"])


def ticks(low, high):
    """Powers of ten (and 2x, 5x) covering [low, high]."""
    values = []
    exponent = math.floor(math.log10(low))
    while 10**exponent <= high * 1.0001:
        for factor in (1, 2, 5):
            value = factor * 10**exponent
            if low * 0.9999 <= value <= high * 1.0001:
                values.append(value)
        exponent += 1
    return values


def label(value):
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def panel(x0, title, unit, rows, series, width=420, height=300):
    """One log-log panel; `series` is [(key, name, colour)]."""
    left, right, top, bottom = 60, 20, 30, 45
    xs = [row["n"] for row in rows]
    ys = [row[key] for row in rows for key, _, _ in series if row.get(key) is not None]
    x_low, x_high = min(xs) / 1.5, max(xs) * 1.5
    y_low = 10 ** math.floor(math.log10(max(min(ys), 1e-3)))
    y_high = 10 ** math.ceil(math.log10(max(ys)))

    def px(x):
        return x0 + left + (math.log10(x) - math.log10(x_low)) / (
            math.log10(x_high) - math.log10(x_low)) * (width - left - right)

    def py(y):
        return top + (1 - (math.log10(y) - math.log10(y_low)) / (
            math.log10(y_high) - math.log10(y_low))) * (height - top - bottom)

    out = [f'<text x="{x0 + width / 2}" y="18" text-anchor="middle" font-weight="bold">{title}</text>']
    out.append(f'<rect x="{x0 + left}" y="{top}" width="{width - left - right}" '
               f'height="{height - top - bottom}" fill="none" stroke="#888"/>')
    for y in ticks(y_low, y_high):
        out.append(f'<line x1="{x0 + left}" x2="{x0 + width - right}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                   'stroke="#eee"/>')
        out.append(f'<text x="{x0 + left - 4}" y="{py(y) + 4:.1f}" text-anchor="end" font-size="11">'
                   f'{label(y)}</text>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="11">'
                   f'{label(x)}</text>')
    out.append(f'<text x="{x0 + width / 2}" y="{height - 8}" text-anchor="middle" font-size="12">'
               'turns in the memory (N)</text>')
    out.append(f'<text x="{x0 + 14}" y="{top + (height - top - bottom) / 2}" font-size="12" '
               f'transform="rotate(-90 {x0 + 14} {top + (height - top - bottom) / 2})" '
               f'text-anchor="middle">{unit}</text>')
    for index, (key, name, colour) in enumerate(series):
        points = [(row["n"], row[key]) for row in rows if row.get(key) is not None]
        if not points:
            continue
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in points:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>')
        ly = top + 14 + 16 * index
        out.append(f'<line x1="{x0 + left + 10}" x2="{x0 + left + 30}" y1="{ly - 4}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{x0 + left + 35}" y="{ly}" font-size="11">{name}</text>')
    return out


TABLE_ROWS = [
    ("host load average at the start", "load_average_at_start", "{:.1f}"),
    ("ingest (turns/s)", "ingest_per_s", "{:,.0f}"),
    ("`query` wall p50 / p95 (ms)", ("query_p50_ms", "query_p95_ms"), "{:,.0f} / {:,.0f}"),
    ("`query` CPU p50 (ms)", "query_cpu_p50_ms", "{:,.0f}"),
    ("bytes written by one `query`: dirtied / net of cancelled", ("query_bytes_written", "query_bytes_written_net"),
     "{:,} / {:,}"),
    ("`query` peak memory (MB)", "query_peak_mb", "{:,.0f}"),
    ("open in-process, read-only (ms)", "open_ms", "{:,.1f}"),
    ("`stats` wall / CPU (ms)", ("stats_ms", "stats_cpu_ms"), "{:,.0f} / {:,.0f}"),
    ("`doctor` (s)", "doctor_s", "{:,.2f}"),
    ("`export` (rows/s; s; CPU s)", ("export_rows_per_s", "export_s", "export_cpu_s"),
     "{:,.0f}; {:,.2f}; {:,.2f}"),
    ("`export` peak memory (MB)", "export_peak_mb", "{:,.0f}"),
    ("`import` (rows/s; s; CPU s)", ("import_rows_per_s", "import_s", "import_cpu_s"),
     "{:,.0f}; {:,.1f}; {:,.1f}"),
    ("`import` peak memory (MB)", "import_peak_mb", "{:,.0f}"),
    ("`compact --dry-run` (s)", "compact_dry_run_s", "{:,.2f}"),
    ("bytes written by `stats` / `compact --dry-run`: dirtied (net)",
     ("stats_bytes_written", "stats_bytes_written_net", "compact_dry_run_bytes_written",
      "compact_dry_run_bytes_written_net"), "{:,} ({:,}) / {:,} ({:,})"),
    ("`compact` (s; CPU s)", ("compact_s", "compact_cpu_s"), "{:,.1f}; {:,.1f}"),
    ("`compact` peak memory (MB)", "compact_peak_mb", "{:,.0f}"),
    ("database / snapshot (MB)", ("db_bytes", "snapshot_bytes"), "{:,.0f} / {:,.0f}"),
    ("bench's own peak, a floor under every child's (MB)", "peak_floor_mb", "{:,.0f}"),
]


def table(rows):
    lines = ["| N | " + " | ".join(label(row["n"]) for row in rows) + " |",
             "| --- |" + " --- |" * len(rows)]
    for name, keys, pattern in TABLE_ROWS:
        keys = keys if isinstance(keys, tuple) else (keys,)
        cells = []
        for row in rows:
            values = [row.get(key) for key in keys]
            if any(value is None for value in values):
                cells.append("–")
                continue
            values = [value / 1_048_576 if key.endswith("_bytes") and "written" not in key else value
                      for key, value in zip(keys, values)]
            cells.append(pattern.format(*values))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    output = os.path.join(HERE, "results", "scale.svg")
    paths = []
    print_table = False
    arguments = iter(argv)
    for argument in arguments:
        if argument == "--table":
            print_table = True
        elif argument == "-o":
            output = next(arguments)
        else:
            paths.append(argument)
    paths = paths or sorted(glob.glob(os.path.join(HERE, "results", "scale-*.json")))
    if not paths:
        sys.exit("no scale results (run engram-bench scale --json > Benchmarks/results/scale-N.json)")
    rows = load(paths)
    parts = panel(0, "engram query wall time", "milliseconds", rows, [
        ("query_p50_ms", "p50", "#1f77b4"), ("query_p95_ms", "p95", "#ff7f0e"),
        ("query_cpu_p50_ms", "CPU time p50", "#2ca02c")])
    parts += panel(440, "peak memory of one command", "MB (max RSS)", rows, [
        ("query_peak_mb", "query", "#1f77b4"), ("export_peak_mb", "export", "#2ca02c"),
        ("import_peak_mb", "import", "#d62728")])
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="880" height="300" '
           'font-family="sans-serif" font-size="12">', '<rect width="880" height="300" fill="white"/>']
    svg += parts + ["</svg>"]
    with open(output, "w", encoding="utf-8") as handle:
        handle.write("\n".join(svg) + "\n")
    print(f"wrote {output} from {len(rows)} results")
    if print_table:
        print(table(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
