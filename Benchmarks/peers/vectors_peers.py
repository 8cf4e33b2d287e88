#!/usr/bin/env python3
"""Engram's `vectors` suite beside faiss, numpy and sqlite-vec on the very same vectors.

Runs `engram-bench vectors --dump DIR --json` (release build) for f32 and int8, loads the
dumped base/query vectors, times each peer's single-query latency (p50/p95), faiss batch
throughput, and recall@k against exact numpy results, then prints one table with the ratio
peer_p50 / engram_f32_p50 (> 1 means Engram is faster).

Set up the peers with Benchmarks/peers/setup_venv.sh and run with .venv/bin/python.

Thread counts: --threads is passed to engram-bench and applied to the peers through
OPENBLAS_NUM_THREADS / OMP_NUM_THREADS (set before numpy and faiss are imported) and
faiss.omp_set_num_threads. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are left as found and
reported: they were unset on the machine this was written on, so their effect was not
verified and the script does not change them, except under --level avx2.

--level scalar|avx2|avx512 runs Engram's kernels at that SIMD level (ENGRAM_CPU_LEVEL; the
run fails if engram-bench reports another level). At avx2 the peers are held to AVX2 too, so
an AVX-512 host stands in for an AVX2-only one: OPENBLAS_CORETYPE=Haswell (OpenBLAS in numpy,
in faiss and under Engram's batch sgemm) and FAISS_OPT_LEVEL=AVX2 (faiss wheels that ship
per-level builds; faiss >= 1.12 wheels dispatch at run time and read FAISS_SIMD_LEVEL=AVX2
instead, which is also set; the level faiss runs at is printed). At scalar only Engram's own
kernels are scalar; BLAS stays as found.

--rounds R (R > 1) alternates, R times in one run on the same vectors, `engram-bench vectors`
f32 and int8 (each single query followed by a plain read of the bytes it scans: the floor at
the same moments) with faiss IndexFlatIP single queries and batch, rotating the order every
round; --old-bin adds a second engram-bench (an older build) to the rotation, so old and new
kernels share the host's load. It prints every round, then the median and min of each figure
and of the per-round ratios, with the load average; --out FILE writes the same as JSON.
(numpy and sqlite-vec are left out of rounds.)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sqlite-queries", type=int, default=50, help="sqlite-vec is slow: time fewer queries")
    parser.add_argument("--bin", help="engram-bench binary (default: build release and use it)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines too")
    parser.add_argument("--level", choices=["scalar", "avx2", "avx512"],
                        help="SIMD level for Engram's kernels (and, at avx2, the peers'); default: the CPU's")
    parser.add_argument("--rounds", type=int, default=1, help="alternate Engram and faiss this many times")
    parser.add_argument("--old-bin", help="with --rounds: an older engram-bench to alternate with")
    parser.add_argument("--out", help="with --rounds: write the rounds and summary as JSON here")
    return parser.parse_args()


# Environment per --level, set before numpy and faiss load (subprocesses inherit it).
LEVEL_ENVIRONMENT = {
    "scalar": {"ENGRAM_CPU_LEVEL": "scalar"},
    "avx2": {"ENGRAM_CPU_LEVEL": "avx2", "OPENBLAS_CORETYPE": "Haswell", "FAISS_OPT_LEVEL": "AVX2",
             "FAISS_SIMD_LEVEL": "AVX2"},
    "avx512": {"ENGRAM_CPU_LEVEL": "avx512"},
}

ARGS = parse()
for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = str(ARGS.threads)
if ARGS.level:
    os.environ.update(LEVEL_ENVIRONMENT[ARGS.level])

import numpy as np  # noqa: E402  (after the thread settings)

try:
    import faiss  # noqa: E402
except ImportError:
    faiss = None


def engram_bench_binary():
    if ARGS.bin:
        return ARGS.bin
    subprocess.run(["swift", "build", "-c", "release", "--product", "engram-bench"], cwd=ROOT, check=True,
                   stdout=sys.stderr)
    path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    return os.path.join(path, "engram-bench")


def run_engram(binary, mode, dump=None):
    command = [binary, "vectors", "--n", str(ARGS.n), "--dim", str(ARGS.dim), "--k", str(ARGS.k),
               "--queries", str(ARGS.queries), "--threads", str(ARGS.threads), "--mode", mode, "--json"]
    if dump:
        command += ["--dump", dump]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    report = json.loads(out.strip().splitlines()[-1])
    if ARGS.level and report.get("cpu_level") != ARGS.level:
        sys.exit(f"vectors_peers: asked for level {ARGS.level}, engram-bench ran at {report.get('cpu_level')}")
    return report


def percentiles(samples):
    return float(np.percentile(samples, 50)) * 1e3, float(np.percentile(samples, 95)) * 1e3


def timed(queries, function):
    for q in queries[:5]:
        function(q)
    samples = []
    for q in queries:
        start = time.perf_counter()
        function(q)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def recall(found, truth):
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth)]))


def exact_truth(base, queries, k):
    truth = []
    for start in range(0, len(queries), 256):
        scores = queries[start:start + 256] @ base.T
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        for row, candidates in zip(scores, top):
            truth.append(candidates[np.argsort(-row[candidates], kind="stable")].tolist())
    return truth


def numpy_peer(base, queries, k):
    def search(q):
        scores = base @ q
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]
    p50, p95 = timed(queries, search)
    return {"system": "numpy matvec+argpartition", "p50_ms": p50, "p95_ms": p95,
            "recall_at_k": recall([search(q).tolist() for q in queries[:100]], TRUTH[:100])}


def faiss_peer(base, queries, batch, k):
    faiss.omp_set_num_threads(ARGS.threads)
    index = faiss.IndexFlatIP(base.shape[1])
    index.add(base)
    p50, p95 = timed(queries, lambda q: index.search(q[None, :], k))
    index.search(batch[:32], k)
    # Best of three, as engram-bench times its own batch.
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        _, found = index.search(batch, k)
        best = min(best, time.perf_counter() - start)
    qps = len(batch) / best
    return {"system": "faiss IndexFlatIP", "p50_ms": p50, "p95_ms": p95, "batch_qps": qps,
            "recall_at_k": recall(found[:len(queries)].tolist(), TRUTH)}


def sqlite_connection():
    try:
        import sqlite3
        connection = sqlite3.connect(":memory:")
        connection.enable_load_extension(True)
    except AttributeError:
        import pysqlite3 as sqlite3  # an interpreter without extension loading
        connection = sqlite3.connect(":memory:")
        connection.enable_load_extension(True)
    import sqlite_vec
    sqlite_vec.load(connection)
    return connection


def sqlite_vec_peer(base, queries, k, int8):
    connection = sqlite_connection()
    dim = base.shape[1]
    column = f"int8[{dim}]" if int8 else f"float[{dim}]"
    connection.execute(f"create virtual table v using vec0(embedding {column})")
    if int8:
        # Unit vectors: components lie in [-1, 1]; one global scale keeps int8 dot ~ cosine.
        scale = 127.0 / float(np.abs(base).max())
        encode = lambda x: np.clip(np.rint(x * scale), -127, 127).astype(np.int8).tobytes()
        wrap = "vec_int8(?)"
    else:
        encode = lambda x: x.astype(np.float32).tobytes()
        wrap = "?"
    connection.executemany(f"insert into v(rowid, embedding) values (?, {wrap})",
                           ((i, encode(row)) for i, row in enumerate(base)))
    connection.commit()
    sql = f"select rowid from v where embedding match {wrap} and k = {k} order by distance"
    search = lambda q: [r[0] for r in connection.execute(sql, (encode(q),)).fetchall()]
    subset = queries[:ARGS.sqlite_queries]
    p50, p95 = timed(subset, search)
    return {"system": "sqlite-vec vec0 " + ("int8" if int8 else "float32"), "p50_ms": p50, "p95_ms": p95,
            "recall_at_k": recall([search(q) for q in subset], TRUTH[:len(subset)])}


def faiss_level():
    """The SIMD level faiss runs its kernels at, as faiss reports it."""
    if faiss is None:
        return "-"
    config = getattr(faiss, "SIMDConfig", None)
    if config is not None and hasattr(config, "get_level_name"):
        return config.get_level_name()
    return faiss.get_compile_options()


class FloorReader:
    """engram_read_bytes (Engram's kernels, built here as a shared library with the C compiler)
    over `size` bytes of row memory: the same floor engram-bench reads beside its queries, read
    beside each faiss query, so faiss's time is measured against the floor of its own moments."""

    def __init__(self, size):
        import ctypes
        kernels = os.path.join(ROOT, "Sources", "CEngramKernels")
        library = os.path.join(ROOT, ".build", "vectors-peers", "libengramkernels.so")
        os.makedirs(os.path.dirname(library), exist_ok=True)
        sources = sorted(os.path.join(kernels, name) for name in os.listdir(kernels) if name.endswith(".c"))
        subprocess.run([os.environ.get("CC", "cc"), "-std=gnu11", "-O2", "-shared", "-fPIC",
                        "-I" + os.path.join(kernels, "include"), *sources, "-o", library, "-lpthread", "-lm"],
                       check=True)
        self.lib = ctypes.CDLL(library)
        self.lib.engram_alloc_rows.restype = ctypes.c_void_p
        self.lib.engram_alloc_rows.argtypes = [ctypes.c_size_t]
        self.lib.engram_read_bytes.restype = ctypes.c_uint64
        self.lib.engram_read_bytes.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.lib.engram_free_rows.argtypes = [ctypes.c_void_p]
        self.size = size
        self.buffer = self.lib.engram_alloc_rows(size)
        if not self.buffer:
            sys.exit("vectors_peers: out of memory for the floor read")
        ctypes.memset(self.buffer, 1, size)

    def read(self):
        start = time.perf_counter()
        self.lib.engram_read_bytes(self.buffer, self.size)
        return time.perf_counter() - start


def faiss_round(index, queries, batch, k, floor):
    for q in queries[:5]:
        index.search(q[None, :], k)
        floor.read()
    samples, floors = [], []
    for q in queries:
        start = time.perf_counter()
        index.search(q[None, :], k)
        samples.append(time.perf_counter() - start)
        floors.append(floor.read())
    p50, p95 = percentiles(samples)
    floor_p50 = float(np.percentile(floors, 50)) * 1e3
    index.search(batch[:32], k)
    best = best_cpu = float("inf")
    for _ in range(3):
        cpu_start = time.thread_time()
        start = time.perf_counter()
        index.search(batch, k)
        best = min(best, time.perf_counter() - start)
        best_cpu = min(best_cpu, time.thread_time() - cpu_start)
    result = {"p50_ms": p50, "p95_ms": p95, "min_ms": min(samples) * 1e3, "floor_p50_ms": floor_p50,
              "p50_over_floor": p50 / floor_p50, "batch_qps": len(batch) / best}
    if ARGS.threads == 1:  # faiss and its BLAS then run on this thread (one OpenMP thread)
        result["batch_cpu_qps"] = len(batch) / best_cpu
    return result


ROUND_FIELDS = ("p50_ms", "min_ms", "floor_p50_ms", "floor_min_ms", "p50_over_floor", "paired_ratio_p50",
                "bandwidth_floor_ms", "batch_qps", "batch_cpu_qps", "recall_at_k")


def rounds_main():
    """Alternates Engram (new, and old with --old-bin) and faiss ARGS.rounds times."""
    binary = engram_bench_binary()
    with tempfile.TemporaryDirectory() as dump:
        run_engram(binary, "f32", dump)
        with open(os.path.join(dump, "meta.json")) as handle:
            meta = json.load(handle)
        base = np.fromfile(os.path.join(dump, "base.f32"), dtype="<f4").reshape(meta["n"], meta["dim"])
        every = np.fromfile(os.path.join(dump, "queries.f32"), dtype="<f4").reshape(meta["queries"], meta["dim"])
    queries = np.ascontiguousarray(every[:ARGS.queries])
    batch = np.ascontiguousarray(every[:1000])
    index = None
    floor = FloorReader(base.nbytes)
    if faiss is not None:
        faiss.omp_set_num_threads(ARGS.threads)
        index = faiss.IndexFlatIP(base.shape[1])
        index.add(base)
    steps = [("engram", binary, "f32"), ("engram", binary, "int8")]
    if ARGS.old_bin:
        steps += [("old", ARGS.old_bin, "f32"), ("old", ARGS.old_bin, "int8")]
    if index is not None:
        steps.append(("faiss", None, None))
    rounds = []
    for number in range(ARGS.rounds):
        shift = number % len(steps)
        record = {"round": number + 1, "load_before": os.getloadavg()[0]}
        for who, path, mode in steps[shift:] + steps[:shift]:
            print(f"round {number + 1}: {who} {mode or ''}", file=sys.stderr)
            if who == "faiss":
                record["faiss"] = faiss_round(index, queries, batch, ARGS.k, floor)
            else:
                report = run_engram(path, mode)
                record[f"{who}_{mode}"] = {key: report[key] for key in ROUND_FIELDS if key in report}
                record["cpu_level"] = report.get("cpu_level")
        record["load_after"] = os.getloadavg()[0]
        new, new8, peer = record["engram_f32"], record["engram_int8"], record.get("faiss")
        ratios = {"f32_over_floor": new["p50_over_floor"], "int8_over_floor": new8["p50_over_floor"]}
        if peer:
            ratios["f32_over_faiss"] = new["p50_ms"] / peer["p50_ms"]
            # Each side over the floor read beside its own queries: the load of their moments cancels.
            ratios["f32_over_faiss_floor_normalized"] = new["p50_over_floor"] / peer["p50_over_floor"]
            ratios["batch_over_faiss"] = new["batch_qps"] / peer["batch_qps"]
            if "batch_cpu_qps" in new and "batch_cpu_qps" in peer:
                ratios["batch_cpu_over_faiss"] = new["batch_cpu_qps"] / peer["batch_cpu_qps"]
            ratios["f32_min_over_faiss_min"] = new["min_ms"] / peer["min_ms"]
        if ARGS.old_bin:
            ratios["f32_new_over_old"] = new["p50_ms"] / record["old_f32"]["p50_ms"]
            ratios["int8_new_over_old"] = new8["p50_ms"] / record["old_int8"]["p50_ms"]
        record["ratios"] = ratios
        rounds.append(record)
        print(json.dumps(record), file=sys.stderr)

    def summary(values):
        return {"median": float(np.median(values)), "min": float(np.min(values)), "max": float(np.max(values))}

    table = {}
    for part in ("engram_f32", "engram_int8", "old_f32", "old_int8", "faiss"):
        if part in rounds[0]:
            table[part] = {key: summary([r[part][key] for r in rounds]) for key in rounds[0][part]}
    table["ratios"] = {key: summary([r["ratios"][key] for r in rounds]) for key in rounds[0]["ratios"]}
    table["load"] = summary([r["load_before"] for r in rounds] + [r["load_after"] for r in rounds])
    result = {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "cpu": cpu_model(), "cpu_level": rounds[0].get("cpu_level"), "faiss_level": faiss_level(),
        "faiss": faiss.__version__ if faiss else None,
        "environment": {key: os.environ.get(key) for key in ("ENGRAM_CPU_LEVEL", "OPENBLAS_CORETYPE",
                                                             "FAISS_OPT_LEVEL", "FAISS_SIMD_LEVEL")},
        "n": ARGS.n, "dim": ARGS.dim, "k": ARGS.k, "queries": ARGS.queries, "threads": ARGS.threads,
        "rounds": rounds, "summary": table,
    }
    print(f"vectors rounds: {ARGS.rounds} x (engram f32, int8{', old' if ARGS.old_bin else ''}, faiss); "
          f"n={ARGS.n} dim={ARGS.dim} k={ARGS.k} queries={ARGS.queries} threads={ARGS.threads} "
          f"engram {result['cpu_level']} faiss {result['faiss_level']}; {result['cpu']}; "
          f"load average {table['load']['min']:.1f}-{table['load']['max']:.1f}")
    print(f"{'figure':<34}{'median':>10}{'min':>10}{'max':>10}")
    for part, figures in table.items():
        if part == "load":
            continue
        for key, values in figures.items():
            print(f"{part + ' ' + key:<34}{values['median']:>10.3f}{values['min']:>10.3f}{values['max']:>10.3f}")
    if ARGS.out:
        with open(ARGS.out, "w") as handle:
            json.dump(result, handle, indent=1)
            handle.write("\n")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "-"


def main():
    if ARGS.rounds > 1:
        rounds_main()
        return
    binary = engram_bench_binary()
    with tempfile.TemporaryDirectory() as dump:
        print("engram f32 ...", file=sys.stderr)
        f32 = run_engram(binary, "f32", dump)
        with open(os.path.join(dump, "meta.json")) as handle:
            meta = json.load(handle)
        base = np.fromfile(os.path.join(dump, "base.f32"), dtype="<f4").reshape(meta["n"], meta["dim"])
        every = np.fromfile(os.path.join(dump, "queries.f32"), dtype="<f4").reshape(meta["queries"], meta["dim"])
    print("engram int8 ...", file=sys.stderr)
    int8 = run_engram(binary, "int8")
    queries = np.ascontiguousarray(every[:ARGS.queries])
    batch = np.ascontiguousarray(every[:1000])
    global TRUTH
    TRUTH = exact_truth(base, queries, ARGS.k)

    rows = [
        {"system": "engram f32", "p50_ms": f32["p50_ms"], "p95_ms": f32["p95_ms"], "batch_qps": f32["batch_qps"],
         "recall_at_k": f32["recall_at_k"]},
        {"system": "engram int8", "p50_ms": int8["p50_ms"], "p95_ms": int8["p95_ms"], "batch_qps": int8["batch_qps"],
         "recall_at_k": int8["recall_at_k"]},
    ]
    print("numpy ...", file=sys.stderr)
    rows.append(numpy_peer(base, queries, ARGS.k))
    if faiss is not None:
        print("faiss ...", file=sys.stderr)
        rows.append(faiss_peer(base, queries, batch, ARGS.k))
    for int8_mode in (False, True):
        print("sqlite-vec ...", file=sys.stderr)
        try:
            rows.append(sqlite_vec_peer(base, queries, ARGS.k, int8_mode))
        except Exception as error:  # a peer that cannot run is reported, not fatal
            rows.append({"system": "sqlite-vec " + ("int8" if int8_mode else "float32"), "error": str(error)})

    engram_p50 = f32["p50_ms"]
    print(f"vectors peers: n={ARGS.n} dim={ARGS.dim} k={ARGS.k} queries={ARGS.queries} threads={ARGS.threads}"
          f" engram cpu_level={f32.get('cpu_level', '-')}"
          f" faiss={faiss.__version__ + ' ' + faiss.get_compile_options() + ' level ' + faiss_level() if faiss else '-'}"
          f" OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}"
          f" OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '-')}")
    print(f"engram: bandwidth_floor_ms={f32.get('bandwidth_floor_ms', float('nan')):.2f}"
          f" read_gb_s={f32.get('read_gb_s', float('nan')):.2f} sgemv_p50_ms={f32.get('sgemv_p50_ms', float('nan')):.2f}"
          f" open_s={f32['open_s']:.3f} index_bytes={f32['index_bytes']} int8_index_bytes={int8['index_bytes']}")
    header = f"{'system':<28}{'p50_ms':>10}{'p95_ms':>10}{'batch_qps':>11}{'recall@k':>10}{'p50/engram':>12}"
    print(header)
    print("-" * len(header))
    for row in rows:
        if "error" in row:
            print(f"{row['system']:<28}  unavailable: {row['error']}")
            continue
        qps = f"{row['batch_qps']:.0f}" if "batch_qps" in row else "-"
        print(f"{row['system']:<28}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}{qps:>11}"
              f"{row['recall_at_k']:>10.3f}{row['p50_ms'] / engram_p50:>12.2f}")
        if ARGS.json:
            print(json.dumps(row), file=sys.stderr)


if __name__ == "__main__":
    main()
