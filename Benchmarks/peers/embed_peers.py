#!/usr/bin/env python3
"""Embedding peers: sentence-transformers (torch, CPU) beside `engram-bench embed`, same texts,
same thread count, one table.

    Benchmarks/peers/setup_venv_embed.sh            # once: .venv with torch CPU + sentence-transformers
    .venv/bin/python Benchmarks/peers/embed_peers.py --threads 1 [--data DIR] [--limit M] [--json]

Both sides read the model from ENGRAM_MODEL_DIR, else $XDG_CACHE_HOME (or ~/.cache)/engram/models/
all-MiniLM-L6-v2 (installed by scripts/setup.sh); nothing is downloaded.

--level scalar|avx2|avx512 runs Engram's kernels at that SIMD level (ENGRAM_CPU_LEVEL; the run
fails if engram-bench reports another level). At avx2 both sides are held to AVX2, so an
AVX-512 host stands in for an AVX2-only one: OPENBLAS_CORETYPE=Haswell (Engram's sgemm),
ATEN_CPU_CAPABILITY=avx2, MKL_ENABLE_INSTRUCTIONS=AVX2 and ONEDNN_MAX_CPU_ISA=AVX2 (torch).
At scalar only Engram's own kernels are scalar; the BLAS libraries stay as found.

With --threads 1 both sides also time single queries and the batch-32 pass in the calling
thread's CPU time (query_cpu_p50_ms, batch32_cpu_per_s): each runs the whole pass on that thread, and on a shared host wall time
includes waiting for a core, which moves single runs by 30% or more.

--rounds R (R > 1) alternates the two sides R times in one run (the order flips every round;
the peer's model is loaded once), then prints the median and min of each figure and of the
per-round ratios with the load average; --out FILE writes the rounds and summary as JSON.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

QUERIES = [
    "When did Caroline go to the LGBTQ support group?",
    "What does Melanie like to paint?",
    "Where did they go camping?",
    "remind me to call mom",
]


LEVEL_ENVIRONMENT = {
    "scalar": {"ENGRAM_CPU_LEVEL": "scalar"},
    "avx2": {
        "ENGRAM_CPU_LEVEL": "avx2",
        "OPENBLAS_CORETYPE": "Haswell",
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    },
    "avx512": {"ENGRAM_CPU_LEVEL": "avx512"},
}


def model_dir():
    explicit = os.environ.get("ENGRAM_MODEL_DIR")
    if explicit:
        return explicit
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "engram", "models", "all-MiniLM-L6-v2")


def load_texts(directory):
    """LoCoMo turns in the order engram-bench reads them: files sorted, sessions by number."""
    texts = []
    for name in sorted(f for f in os.listdir(directory) if f.endswith(".json")):
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            root = json.load(handle)
        sessions = sorted(
            int(key[len("session_"):])
            for key, value in root.items()
            if key.startswith("session_") and key[len("session_"):].isdigit() and isinstance(value, list)
        )
        for number in sessions:
            for turn in root[f"session_{number}"]:
                text = turn.get("text") if isinstance(turn, dict) else None
                if text:
                    texts.append(text)
    return texts


def percentile(samples, q):
    ordered = sorted(samples)
    position = q * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def run_sentence_transformers(texts, threads, singles_count, rounds, loaded=None):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    start = time.perf_counter()
    model = loaded or SentenceTransformer(model_dir(), device="cpu")
    load = time.perf_counter() - start
    encode = lambda batch, size: model.encode(  # noqa: E731
        batch, batch_size=size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    encode(["warm-up sentence for the first pass"], 1)
    encode(texts[:32], 32)

    cpu_start = time.thread_time()
    start = time.perf_counter()
    encode(texts, 32)
    batch32 = len(texts) / (time.perf_counter() - start)
    batch32_cpu = len(texts) / (time.thread_time() - cpu_start)

    singles = texts[:singles_count]
    start = time.perf_counter()
    for text in singles:
        encode([text], 1)
    batch1 = len(singles) / (time.perf_counter() - start)

    latencies = []
    cpu_latencies = []
    for index in range(rounds):
        query = QUERIES[index % len(QUERIES)]
        cpu_start = time.thread_time()
        start = time.perf_counter()
        encode([query], 1)
        latencies.append((time.perf_counter() - start) * 1000)
        cpu_latencies.append((time.thread_time() - cpu_start) * 1000)
    return {
        "threads": threads,
        "texts": len(texts),
        "batch32_per_s": batch32,
        "batch32_cpu_per_s": batch32_cpu if threads == 1 else None,
        "batch1_per_s": batch1,
        "query_p50_ms": percentile(latencies, 0.5),
        "query_p95_ms": percentile(latencies, 0.95),
        # With one thread torch runs the pass on the calling thread (as engram-bench does).
        "query_cpu_p50_ms": percentile(cpu_latencies, 0.5) if threads == 1 else None,
        "load_s": load,
        "versions": f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}",
    }


def run_engram(root, threads, data, limit):
    binary = os.path.join(
        subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, text=True).strip(),
        "engram-bench",
    )
    if not os.path.exists(binary):
        subprocess.check_call(["swift", "build", "-c", "release", "--product", "engram-bench"], cwd=root)
    command = [binary, "embed", "--threads", str(threads), "--json", "--data", data]
    if limit:
        command += ["--limit", str(limit)]
    output = subprocess.check_output(command, cwd=root, text=True)
    return json.loads(output.strip().splitlines()[-1])


def summary(values):
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "min": ordered[0], "max": ordered[-1]}


def run_rounds(args, root, data, texts):
    """Engram and sentence-transformers alternately, args.rounds times; the summary as JSON."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir(), device="cpu")
    rounds = []
    for number in range(args.rounds):
        record = {"round": number + 1, "load_before": os.getloadavg()[0]}
        order = ["engram", "peer"] if number % 2 == 0 else ["peer", "engram"]
        for side in order:
            print(f"round {number + 1}: {side}", file=sys.stderr)
            if side == "engram":
                record["engram"] = run_engram(root, args.threads, data, args.limit)
                if args.level and record["engram"].get("cpu_level") != args.level:
                    sys.exit(f"embed_peers: asked for level {args.level}, engram-bench ran at"
                             f" {record['engram'].get('cpu_level')}")
            else:
                record["peer"] = run_sentence_transformers(texts, args.threads, 256, 200, loaded=model)
        record["load_after"] = os.getloadavg()[0]
        ours, theirs = record["engram"], record["peer"]
        record["ratios"] = {
            "batch32": ours["batch32_per_s"] / theirs["batch32_per_s"],
            "batch32_cpu": (ours.get("batch32_cpu_per_s") or float("nan")) / (theirs.get("batch32_cpu_per_s") or float("nan")),
            "query_wall": ours["query_p50_ms"] / theirs["query_p50_ms"],
        }
        if ours.get("query_cpu_p50_ms") and theirs.get("query_cpu_p50_ms"):
            record["ratios"]["query_cpu"] = ours["query_cpu_p50_ms"] / theirs["query_cpu_p50_ms"]
        rounds.append(record)
        print(json.dumps(record["ratios"]), file=sys.stderr)
    keys = ("batch32_per_s", "batch32_cpu_per_s", "query_p50_ms", "query_cpu_p50_ms")
    table = {
        side: {key: summary([r[side][key] for r in rounds]) for key in keys if rounds[0][side].get(key) is not None}
        for side in ("engram", "peer")
    }
    table["ratios"] = {key: summary([r["ratios"][key] for r in rounds]) for key in rounds[0]["ratios"]}
    table["load"] = summary([r["load_before"] for r in rounds] + [r["load_after"] for r in rounds])
    return {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "threads": args.threads, "texts": len(texts), "level": args.level,
        "cpu_level": rounds[0]["engram"].get("cpu_level"), "peer_versions": rounds[0]["peer"]["versions"],
        "environment": {key: os.environ.get(key) for key in sorted(LEVEL_ENVIRONMENT["avx2"])},
        "rounds": rounds, "summary": table,
    }


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--data", default=None, help="LoCoMo folder (default ../shared/data/locomo-dev)")
    parser.add_argument("--limit", type=int, default=0, help="embed at most M texts")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--level", choices=sorted(LEVEL_ENVIRONMENT),
                        help="SIMD level for Engram's kernels (and, at avx2, torch's); default: the CPU's")
    parser.add_argument("--rounds", type=int, default=1, help="alternate the two sides this many times")
    parser.add_argument("--out", help="with --rounds: write the rounds and summary as JSON here")
    args = parser.parse_args()
    if args.level:
        os.environ.update(LEVEL_ENVIRONMENT[args.level])  # before torch loads
    if args.threads == 1:
        # The fast tokenizer batches on a thread pool unless told not to: one thread means one.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    data = args.data or os.path.join(os.getcwd(), "..", "shared", "data", "locomo-dev")
    if not os.path.isdir(data):
        sys.exit(f"embed_peers: no LoCoMo folder at {data}; pass --data DIR")
    data = os.path.abspath(data)
    texts = load_texts(data)
    if args.limit:
        texts = texts[: args.limit]
    if not texts:
        sys.exit(f"embed_peers: no texts in {data}")

    if args.rounds > 1:
        result = run_rounds(args, root, data, texts)
        table = result["summary"]
        print(f"embed rounds: {args.rounds} x (engram, sentence-transformers), {len(texts)} texts,"
              f" {args.threads} thread(s); engram {result['cpu_level']}; {result['peer_versions']};"
              f" load average {table['load']['min']:.1f}-{table['load']['max']:.1f}")
        print(f"  {'figure':<30}{'median':>10}{'min':>10}{'max':>10}")
        for part in ("engram", "peer", "ratios"):
            for key, values in table[part].items():
                print(f"  {part + ' ' + key:<30}{values['median']:>10.3f}{values['min']:>10.3f}{values['max']:>10.3f}")
        if args.out:
            with open(args.out, "w") as handle:
                json.dump(result, handle, indent=1)
                handle.write("\n")
        return

    engram = run_engram(root, args.threads, data, args.limit)
    if args.level and engram.get("cpu_level") != args.level:
        sys.exit(f"embed_peers: asked for level {args.level}, engram-bench ran at {engram.get('cpu_level')}")
    singles = int(engram.get("batch1_texts", 256))
    peer = run_sentence_transformers(texts, args.threads, singles, 200)

    rows = [
        ("batch32_per_s", True),
        ("batch32_cpu_per_s", True),
        ("batch1_per_s", True),
        ("query_p50_ms", False),
        ("query_p95_ms", False),
        ("query_cpu_p50_ms", False),
        ("load_s", False),
    ]
    if args.json:
        print(json.dumps({"threads": args.threads, "texts": len(texts), "engram": engram, "sentence_transformers": peer}))
        return
    print(f"embed peers: {len(texts)} texts from {data}, {args.threads} thread(s); engram cpu_level"
          f" {engram.get('cpu_level', '-')}; {peer['versions']}")
    print(f"  {'metric':<16}{'engram':>12}{'sent-transf':>14}{'engram/peer':>14}")
    for key, higher_is_better in rows:
        ours, theirs = engram.get(key), peer.get(key)
        if ours is None or theirs is None:
            continue
        ratio = ours / theirs if theirs else float("nan")
        note = "(higher is better)" if higher_is_better else "(lower is better)"
        print(f"  {key:<16}{ours:>12.4g}{theirs:>14.4g}{ratio:>14.3g}  {note}")
    if "peak_rss_mb" in engram:
        print(f"  engram peak RSS {engram['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
