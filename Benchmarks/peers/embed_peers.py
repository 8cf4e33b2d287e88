#!/usr/bin/env python3
"""Embedding peers: sentence-transformers (torch, CPU) and ONNX Runtime beside `engram-bench embed`,
same texts, same thread count, one table.

    Benchmarks/peers/setup_venv_embed.sh            # once: .venv with torch CPU + sentence-transformers
    .venv/bin/python -m pip install onnxruntime onnx # for --onnx
    .venv/bin/python Benchmarks/peers/embed_peers.py --threads 1[,2] [--onnx] [--data DIR] [--limit M] [--json]

Engram's side runs both precisions in one process (`engram-bench embed` without --precision:
the int8 path, the default, and the float path as `f32_*`). With --onnx, all-MiniLM-L6-v2 is
exported from the same model folder to ONNX (torch.onnx.export of the BERT encoder, opset 17,
mean pooling and normalization in numpy as fastembed does) into .build/embed-peers-onnx, and
ONNX Runtime runs it in float and after onnxruntime.quantization.quantize_dynamic (int8 weights,
per-tensor, the library's defaults), each with intra_op_num_threads = threads. Every side's
batch-32 vectors are compared with sentence-transformers': mean and min cosine (`cos_mean`,
`cos_min`). --threads 1,2 runs the whole table once per thread count.

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


def st_vectors(texts, threads, loaded):
    import torch

    torch.set_num_threads(threads)
    return loaded.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)


def cosines(vectors, reference):
    import numpy

    vectors = numpy.asarray(vectors, dtype=numpy.float64)
    reference = numpy.asarray(reference, dtype=numpy.float64)
    dots = (vectors * reference).sum(axis=1)
    norms = numpy.linalg.norm(vectors, axis=1) * numpy.linalg.norm(reference, axis=1)
    values = dots / numpy.maximum(norms, 1e-12)
    return {"cos_mean": float(values.mean()), "cos_min": float(values.min())}


def onnx_models(root):
    """The float export and its dynamic int8 quantization, made once under .build/."""
    folder = os.path.join(root, ".build", "embed-peers-onnx")
    float_path = os.path.join(folder, "minilm-f32.onnx")
    int8_path = os.path.join(folder, "minilm-int8-dynamic.onnx")
    if os.path.exists(float_path) and os.path.exists(int8_path):
        return float_path, int8_path
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    os.makedirs(folder, exist_ok=True)
    model = AutoModel.from_pretrained(model_dir()).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir())
    sample = tokenizer(["an example sentence to trace", "two"], padding=True, return_tensors="pt")

    class Encoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            Encoder(model), (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]), float_path,
            input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "last_hidden_state": axes}, opset_version=17, dynamo=False)
    quantize_dynamic(float_path, int8_path, weight_type=QuantType.QInt8)
    return float_path, int8_path


def run_onnx(path, texts, threads, singles_count, rounds):
    import numpy
    import onnxruntime
    from transformers import AutoTokenizer

    start = time.perf_counter()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    tokenizer = AutoTokenizer.from_pretrained(model_dir())
    load = time.perf_counter() - start

    def encode(batch):
        tokens = tokenizer(batch, padding=True, truncation=True, max_length=256, return_tensors="np")
        feed = {name: tokens[name].astype(numpy.int64) for name in ("input_ids", "attention_mask", "token_type_ids")}
        hidden = session.run(None, feed)[0]
        mask = feed["attention_mask"][:, :, None].astype(numpy.float32)
        pooled = (hidden * mask).sum(axis=1) / numpy.maximum(mask.sum(axis=1), 1e-9)
        return pooled / numpy.maximum(numpy.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    encode(["warm-up sentence for the first pass"])
    encode(texts[:32])
    vectors = []
    cpu_start = time.thread_time()
    start = time.perf_counter()
    for index in range(0, len(texts), 32):
        vectors.append(encode(texts[index:index + 32]))
    batch32 = len(texts) / (time.perf_counter() - start)
    batch32_cpu = len(texts) / (time.thread_time() - cpu_start)
    singles = texts[:singles_count]
    start = time.perf_counter()
    for text in singles:
        encode([text])
    batch1 = len(singles) / (time.perf_counter() - start)
    latencies = []
    for index in range(rounds):
        start = time.perf_counter()
        encode([QUERIES[index % len(QUERIES)]])
        latencies.append((time.perf_counter() - start) * 1000)
    return {
        "threads": threads, "texts": len(texts), "batch32_per_s": batch32,
        # ONNX Runtime runs its first intra-op thread on the caller; with one thread, all of it.
        "batch32_cpu_per_s": batch32_cpu if threads == 1 else None,
        "batch1_per_s": batch1, "query_p50_ms": percentile(latencies, 0.5),
        "query_p95_ms": percentile(latencies, 0.95), "load_s": load,
        "versions": f"onnxruntime {onnxruntime.__version__}",
    }, numpy.concatenate(vectors)


def read_vectors(path, dim=384):
    import numpy

    return numpy.fromfile(path, dtype="<f4").reshape(-1, dim)


def run_engram(root, threads, data, limit, vectors=None, quick=False):
    binary = os.path.join(
        subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, text=True).strip(),
        "engram-bench",
    )
    if not os.path.exists(binary):
        subprocess.check_call(["swift", "build", "-c", "release", "--product", "engram-bench"], cwd=root)
    command = [binary, "embed", "--threads", str(threads), "--json", "--data", data]
    if vectors:
        command += ["--vectors", vectors]
    if quick:
        command += ["--quick"]
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
    parser.add_argument("--threads", required=True, help="a thread count, or several: 1,2")
    parser.add_argument("--onnx", action="store_true", help="also ONNX Runtime, float and dynamic int8")
    parser.add_argument("--quick", action="store_true",
                        help="engram-bench embed --quick: 256 texts, 64 single texts, 50 queries (every side)")
    parser.add_argument("--data", default=None, help="LoCoMo folder (default ../shared/data/locomo-dev)")
    parser.add_argument("--limit", type=int, default=0, help="embed at most M texts")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--level", choices=sorted(LEVEL_ENVIRONMENT),
                        help="SIMD level for Engram's kernels (and, at avx2, torch's); default: the CPU's")
    parser.add_argument("--rounds", type=int, default=1, help="alternate the two sides this many times")
    parser.add_argument("--out", help="with --rounds: write the rounds and summary as JSON here")
    args = parser.parse_args()
    try:
        args.thread_counts = [int(part) for part in str(args.threads).split(",")]
    except ValueError:
        sys.exit(f"embed_peers: --threads takes counts separated by commas, not {args.threads}")
    args.threads = args.thread_counts[0]
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
    if args.quick:
        texts = texts[:256]
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

    results = [run_table(args, root, data, texts, threads) for threads in args.thread_counts]
    if args.json:
        print(json.dumps(results if len(results) > 1 else results[0]))


def run_table(args, root, data, texts, threads):
    """Engram (int8 and f32), sentence-transformers and, with --onnx, ONNX Runtime float and
    dynamic int8 at `threads` threads; prints the table unless --json."""
    import tempfile

    from sentence_transformers import SentenceTransformer

    with tempfile.TemporaryDirectory() as scratch:
        print(f"embed_peers: engram-bench embed, {threads} thread(s)", file=sys.stderr, flush=True)
        prefix = os.path.join(scratch, "engram")
        engram = run_engram(root, threads, data, args.limit, vectors=prefix, quick=args.quick)
        if args.level and engram.get("cpu_level") != args.level:
            sys.exit(f"embed_peers: asked for level {args.level}, engram-bench ran at {engram.get('cpu_level')}")
        engram_vectors = {name: read_vectors(f"{prefix}-{name}.f32") for name in ("int8", "f32")
                          if os.path.exists(f"{prefix}-{name}.f32")}
    print(f"embed_peers: sentence-transformers, {threads} thread(s)", file=sys.stderr, flush=True)
    singles = int(engram.get("batch1_texts", 256))
    rounds = 50 if args.quick else 200
    peer = run_sentence_transformers(texts, threads, singles, rounds)
    reference = st_vectors(texts, threads, SentenceTransformer(model_dir(), device="cpu"))
    sides = {}
    engram_int8 = {key: engram.get(key) for key in ("batch32_per_s", "batch32_cpu_per_s", "batch1_per_s",
                                                      "query_p50_ms", "query_p95_ms", "query_cpu_p50_ms", "load_s")}
    engram_f32 = {key: engram.get("f32_" + key) for key in engram_int8}
    for name, figures in (("engram int8", engram_int8), ("engram f32", engram_f32)):
        vectors = engram_vectors.get(name.split()[1])
        if vectors is not None and len(vectors) == len(reference):
            figures.update(cosines(vectors, reference))
        sides[name] = figures
    sides["sentence-transformers"] = dict(peer, cos_mean=1.0, cos_min=1.0)
    if args.onnx:
        float_path, int8_path = onnx_models(root)
        for name, path in (("onnxruntime f32", float_path), ("onnxruntime int8", int8_path)):
            print(f"embed_peers: {name}, {threads} thread(s)", file=sys.stderr, flush=True)
            figures, vectors = run_onnx(path, texts, threads, singles, rounds)
            figures.update(cosines(vectors, reference))
            sides[name] = figures
    result = {"threads": threads, "texts": len(texts), "cpu_level": engram.get("cpu_level"),
              "engram": engram, "sides": sides,
              "versions": [peer["versions"]] + [s["versions"] for s in sides.values() if "versions" in s][1:]}
    if args.json:
        return result
    print(f"embed peers: {len(texts)} texts from {data}, {threads} thread(s); engram cpu_level"
          f" {engram.get('cpu_level', '-')}; {peer['versions']}"
          + (f"; {sides['onnxruntime f32']['versions']}" if args.onnx else ""))
    keys = ("batch32_per_s", "batch32_cpu_per_s", "batch1_per_s", "query_p50_ms", "query_cpu_p50_ms", "load_s",
            "cos_mean", "cos_min")
    print(f"  {'side':<22}" + "".join(f"{key:>18}" for key in keys))
    for name, figures in sides.items():
        cells = "".join(f"{'-' if figures.get(key) is None else format(figures[key], '.4g'):>18}" for key in keys)
        print(f"  {name:<22}{cells}")
    base = sides["sentence-transformers"]
    for name, figures in sides.items():
        if name == "sentence-transformers":
            continue
        ratio = figures["batch32_per_s"] / base["batch32_per_s"]
        print(f"  {name}: batch32 {ratio:.2f}x sentence-transformers, query p50"
              f" {figures['query_p50_ms'] / base['query_p50_ms']:.2f}x")
    if "peak_rss_mb" in engram:
        print(f"  engram peak RSS {engram['peak_rss_mb']:.0f} MB (both precisions loaded in one process)")
    return result


if __name__ == "__main__":
    main()
