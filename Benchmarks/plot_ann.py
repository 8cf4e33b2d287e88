#!/usr/bin/env python3
"""Plots Benchmarks/peers/ann_peers.py results: recall@10 against single-query p50, one line
per system, one panel per data set (all from the same run).

usage: .venv/bin/python Benchmarks/plot_ann.py [RESULT.json ...] [-o OUT.svg] [--table]

Reads Benchmarks/results/ann-*.json by default and writes Benchmarks/results/ann.svg and
ann.png (matplotlib, installed by Benchmarks/peers/setup_venv_ann.sh). `--table` prints the
docs/benchmarks.md's Markdown table: per data set and system, build seconds and threads, index MB, and
the p50 of the fastest point reaching each recall target.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = (0.9, 0.95, 0.99)
ORDER = {"clustered-200k": 0, "clustered-1m": 1, "locomo": 2}


def load(paths):
    results = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            results.append(json.load(handle))
    return sorted(results, key=lambda r: ORDER.get(r["data"], 9))


def fastest_at(curve, target):
    reached = [p for p in curve if p["recall_at_k"] >= target]
    return min(reached, key=lambda p: p["p50_ms"]) if reached else None


def table(results):
    lines = []
    for result in results:
        load = result.get("load_average_at_end")
        lines.append(f"\n{result['data']}: {result['n']:,} x {result['dim']}, {result['queries']} queries, "
                     f"k {result['k']}, searches on one thread, builds on {result.get('build_threads', 1)}, "
                     f"{result['cpu']}" + (f", load average {load[0]:.1f} at the end" if load else "") + "\n")
        lines.append("| system | build s | build threads | index MB | "
                     + " | ".join(f"p50 ms @ {t}" for t in TARGETS) + " |")
        lines.append("| --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in TARGETS) + " |")
        for system in result["systems"]:
            cells = []
            for target in TARGETS:
                point = fastest_at(system["curve"], target)
                cells.append(f"{point['p50_ms']:.3f}" if point else "—")
            threads = (system.get("build") or {}).get("build_threads", 1)
            lines.append(f"| {system['system']} | {system['build_s']:.1f} | {threads} | "
                         f"{system['index_bytes'] / 1e6:.0f} | " + " | ".join(cells) + " |")
        for name in result.get("not_built", []):
            lines.append(f"| {name} | not built | | | " + " | ".join("" for _ in TARGETS) + " |")
    return "\n".join(lines)


def plot(results, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 4.2), squeeze=False)
    for axis, result in zip(axes[0], results):
        for system in result["systems"]:
            curve = sorted(system["curve"], key=lambda p: p["recall_at_k"])
            axis.plot([p["recall_at_k"] for p in curve], [p["p50_ms"] for p in curve], marker="o",
                      markersize=3, label=system["system"], linewidth=2.2 if system["system"] == "engram" else 1.2)
        axis.set_yscale("log")
        axis.set_xlim(left=max(0.5, min(p["recall_at_k"] for s in result["systems"] for p in s["curve"]) - 0.02),
                      right=1.001)
        axis.set_xlabel("recall@10")
        axis.set_ylabel("p50 ms per query (one thread, log)")
        axis.set_title(f"{result['data']} ({result['n']:,} x {result['dim']})")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(out)
    figure.savefig(os.path.splitext(out)[0] + ".png", dpi=110)


def main(argv):
    out = os.path.join(HERE, "results", "ann.svg")
    paths = []
    want_table = False
    arguments = iter(argv)
    for argument in arguments:
        if argument == "-o":
            out = next(arguments)
        elif argument == "--table":
            want_table = True
        else:
            paths.append(argument)
    results = load(paths or sorted(glob.glob(os.path.join(HERE, "results", "ann-*.json"))))
    if not results:
        sys.exit("no ann-*.json results")
    plot(results, out)
    if want_table:
        print(table(results))


if __name__ == "__main__":
    main(sys.argv[1:])
