#!/usr/bin/env python3
"""Engram's approximate tier beside hnswlib, usearch and faiss (IVFFlat, HNSWFlat), searches on
one thread, on the very same vectors, in the same run.

For one data set folder made by Benchmarks/ann/make_ann_data.py (base.npy, query.npy,
truth.npy), each system is built once (timed, on --build-threads threads: default 1) and
saved under --cache with its build time, threads and the load average, so a later run
measures the search curves of every system together without rebuilding; --rebuild forces
new builds (Engram is always built, and timed, in the run that reports it). Each system then
sweeps its search knob (HNSW: ef; IVF: nprobe; Engram: targetRecall via `engram-bench
vectors --mode ann --sweep`), one query at a time on one thread, and records recall@k
against the exact truth, p50 and p95 latency per point. "Tuned to the same recall": for each
target in --targets, the table shows the fastest point of each system that reaches it, so
systems are compared at equal recall.

Build settings: HNSW graphs M = 16, efConstruction = 100 for hnswlib, usearch (connectivity
16, expansion_add 100) and faiss HNSWFlat (M 16 and efConstruction 100-200 are the usual
range; the lower end builds fastest and still reaches recall 0.99 with a larger search ef);
faiss IVFFlat with the same list count as Engram (2 sqrt(n)), inner product, its default
training (up to 256 rows per list). Build threads: hnswlib and usearch take a thread count,
faiss uses OpenMP and its BLAS (both sized by --build-threads), Engram's k-means GEMMs
use `--build-threads` BLAS threads. Index bytes are each system's serialized size (Engram:
its resident rows plus the approximate lists, `index_bytes`).

Usage: .venv/bin/python Benchmarks/peers/ann_peers.py --data /work/wt/ann-data/clustered-200k
       [--systems engram,hnswlib,usearch,faiss-ivf,faiss-hnsw] [--cache DIR] [--out FILE.json]
       [--bin .build/release/engram-bench] [--queries 1000] [--k 10] [--build-threads 2]
       [--build-only] [--filter 0.01]
Set up with Benchmarks/peers/setup_venv_ann.sh.
"""

import os

# Thread pools are sized before numpy / faiss load: builds may use --build-threads (faiss's
# k-means runs on its BLAS), every search is timed on one thread (set explicitly per system).
import sys  # noqa: E402

_threads = "1"
for _i, _arg in enumerate(sys.argv):
    if _arg == "--build-threads" and _i + 1 < len(sys.argv):
        _threads = sys.argv[_i + 1]
    elif _arg.startswith("--build-threads="):
        _threads = _arg.split("=", 1)[1]
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = _threads

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HNSW_M, HNSW_EFC = 16, 100
BUILD_THREADS = 1  # set from --build-threads; searches always run on one thread
EF_SWEEP = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
NPROBE_SWEEP = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
RECALL_SWEEP = [0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.993, 0.995, 0.999]


def cpu():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def recall(found, truth, k):
    return float(np.mean([len(set(f[:k]) & set(t[:k])) / k for f, t in zip(found, truth)]))


def timed_queries(search, queries, k):
    for q in queries[:10]:
        search(q, k)
    found, times = [], []
    for q in queries:
        start = time.perf_counter()
        ids = search(q, k)
        times.append(time.perf_counter() - start)
        found.append(ids)
    times = np.array(times) * 1e3
    return found, float(np.percentile(times, 50)), float(np.percentile(times, 95))


def build_meta(build_s, n):
    return {"build_s": build_s, "n": n, "build_threads": BUILD_THREADS, "hnsw_m": HNSW_M,
            "hnsw_ef_construction": HNSW_EFC, "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load_average": os.getloadavg()}


def nlist_for(n):
    return max(1, int(round(2 * math.sqrt(n))))


class Hnswlib:
    name = "hnswlib"

    def build(self, base, path):
        import hnswlib
        index = hnswlib.Index(space="ip", dim=base.shape[1])
        index.init_index(max_elements=len(base), M=HNSW_M, ef_construction=HNSW_EFC)
        index.add_items(base, np.arange(len(base)), num_threads=BUILD_THREADS)
        index.set_num_threads(1)
        index.save_index(path)
        return index

    def load(self, base, path):
        import hnswlib
        index = hnswlib.Index(space="ip", dim=base.shape[1])
        index.load_index(path, max_elements=len(base))
        index.set_num_threads(1)
        return index

    def sweep(self, index):
        for ef in EF_SWEEP:
            index.set_ef(max(ef, 10))
            yield {"ef": ef}, lambda q, k: index.knn_query(q, k=k, num_threads=1)[0][0]


class Usearch:
    name = "usearch"

    def build(self, base, path):
        from usearch.index import Index
        index = Index(ndim=base.shape[1], metric="ip", dtype="f32", connectivity=HNSW_M,
                      expansion_add=HNSW_EFC)
        index.add(np.arange(len(base)), base, threads=BUILD_THREADS)
        index.save(path)
        return index

    def load(self, base, path):
        from usearch.index import Index
        return Index.restore(path)

    def sweep(self, index):
        for ef in EF_SWEEP:
            def search(q, k, ef=ef):
                index.expansion_search = ef
                return index.search(q, k, threads=1).keys
            yield {"ef": ef}, search


class FaissIVF:
    name = "faiss-ivf"

    def build(self, base, path):
        import faiss
        faiss.omp_set_num_threads(BUILD_THREADS)
        d = base.shape[1]
        quantizer = faiss.IndexFlatIP(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist_for(len(base)), faiss.METRIC_INNER_PRODUCT)
        index.train(base)
        index.add(base)
        faiss.omp_set_num_threads(1)
        faiss.write_index(index, path)
        return index

    def load(self, base, path):
        import faiss
        faiss.omp_set_num_threads(1)
        return faiss.read_index(path)

    def sweep(self, index):
        for nprobe in NPROBE_SWEEP:
            if nprobe > index.nlist:
                break
            index.nprobe = nprobe
            yield {"nprobe": nprobe}, lambda q, k: index.search(q.reshape(1, -1), k)[1][0]


class FaissHNSW:
    name = "faiss-hnsw"

    def build(self, base, path):
        import faiss
        faiss.omp_set_num_threads(BUILD_THREADS)
        index = faiss.IndexHNSWFlat(base.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EFC
        index.add(base)
        faiss.omp_set_num_threads(1)
        faiss.write_index(index, path)
        return index

    def load(self, base, path):
        import faiss
        faiss.omp_set_num_threads(1)
        return faiss.read_index(path)

    def sweep(self, index):
        for ef in EF_SWEEP:
            index.hnsw.efSearch = ef
            yield {"ef": ef}, lambda q, k: index.search(q.reshape(1, -1), k)[1][0]


PEERS = {p.name: p for p in (Hnswlib, Usearch, FaissIVF, FaissHNSW)}


def run_peer(cls, base, queries, truth, k, cache, rebuild):
    peer = cls()
    path = os.path.join(cache, f"{peer.name}.index")
    meta_path = path + ".json"
    if rebuild or not os.path.exists(meta_path):
        print(f"{peer.name}: building {len(base)} rows", file=sys.stderr)
        start = time.perf_counter()
        index = peer.build(base, path)
        meta = build_meta(time.perf_counter() - start, len(base))
        with open(meta_path, "w") as out:
            json.dump(meta, out)
    else:
        with open(meta_path) as meta_file:
            meta = json.load(meta_file)
        index = peer.load(base, path)
    build_s = meta["build_s"]
    curve = []
    for knob, search in peer.sweep(index):
        found, p50, p95 = timed_queries(search, queries, k)
        point = dict(knob, recall_at_k=recall(found, truth, k), p50_ms=p50, p95_ms=p95)
        curve.append(point)
        print(f"{peer.name}: {knob} recall {point['recall_at_k']:.4f} p50 {p50:.3f} ms", file=sys.stderr)
        if point["recall_at_k"] >= 0.9995:
            break
    return {"system": peer.name, "build_s": build_s, "build": meta, "index_bytes": os.path.getsize(path),
            "curve": curve}


def run_engram(binary, folder, k, queries, fraction):
    command = [binary, "vectors", "--mode", "ann", "--base", os.path.join(folder, "base.npy"),
               "--query", os.path.join(folder, "query.npy"), "--truth", os.path.join(folder, "truth.npy"),
               "--k", str(k), "--queries", str(queries), "--build-threads", str(BUILD_THREADS),
               # `--sweep=LIST`: engram-bench also knows `--sweep` as a switch (other suites).
               "--sweep=" + ",".join(str(r) for r in RECALL_SWEEP), "--json"]
    if fraction:
        command += ["--filter", str(fraction)]
    print("engram: " + " ".join(command), file=sys.stderr)
    # Engram sets its BLAS threads itself: `--build-threads` while clustering, then one.
    report = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)
    return {"system": "engram", "build_s": report["build_s"],
            "build": {"build_threads": report.get("build_threads", 1),
                      "load_average": report.get("load_average_at_build")},
            "index_bytes": report["index_bytes"],
            "ann_bytes": report.get("ann_bytes"), "curve": report["curve"], "report": report}


def fastest_at(curve, target):
    reached = [p for p in curve if p["recall_at_k"] >= target]
    return min(reached, key=lambda p: p["p50_ms"]) if reached else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--systems", default="engram,hnswlib,usearch,faiss-ivf,faiss-hnsw")
    parser.add_argument("--cache", help="where built peer indexes are kept (default DATA/cache)")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--build-only", action="store_true", help="build and save the peers, measure nothing")
    parser.add_argument("--cached-only", action="store_true",
                        help="measure only peers already built in --cache (the others are listed as not built)")
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "engram-bench"))
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--targets", default="0.9,0.95,0.99")
    parser.add_argument("--filter", type=float, help="also time Engram with a kind filter admitting this fraction")
    parser.add_argument("--build-threads", type=int, default=1, help="threads for building (searches: one)")
    parser.add_argument("--out")
    args = parser.parse_args()
    global BUILD_THREADS
    BUILD_THREADS = args.build_threads

    folder = os.path.abspath(args.data)
    cache = args.cache or os.path.join(folder, "cache")
    os.makedirs(cache, exist_ok=True)
    base = np.load(os.path.join(folder, "base.npy"), mmap_mode="r")
    base = np.ascontiguousarray(base, dtype=np.float32)
    queries = np.ascontiguousarray(np.load(os.path.join(folder, "query.npy"))[:args.queries], dtype=np.float32)
    truth = np.load(os.path.join(folder, "truth.npy"))[:args.queries, :args.k]

    results = []
    not_built = []
    for name in args.systems.split(","):
        if name == "engram":
            if not args.build_only:
                results.append(run_engram(args.bin, folder, args.k, len(queries), args.filter))
            continue
        if args.build_only:
            cls = PEERS[name]
            path = os.path.join(cache, f"{cls.name}.index")
            if args.rebuild or not os.path.exists(path + ".json"):
                start = time.perf_counter()
                cls().build(base, path)
                with open(path + ".json", "w") as out:
                    json.dump(build_meta(time.perf_counter() - start, len(base)), out)
                print(f"{name}: built in {time.perf_counter() - start:.1f} s", file=sys.stderr)
            continue
        if args.cached_only and not os.path.exists(os.path.join(cache, f"{name}.index.json")):
            print(f"{name}: not built in {cache}, left out (--cached-only)", file=sys.stderr)
            not_built.append(name)
            continue
        results.append(run_peer(PEERS[name], base, queries, truth, args.k, cache, args.rebuild))
    if args.build_only:
        return

    targets = [float(t) for t in args.targets.split(",")]
    summary = {"data": os.path.basename(folder), "n": int(base.shape[0]), "dim": int(base.shape[1]),
               "queries": int(len(queries)), "k": args.k, "threads": 1, "build_threads": args.build_threads,
               "cpu": cpu(), "load_average_at_end": os.getloadavg(), "systems": results,
               "not_built": not_built}
    print(f"{summary['data']}: {summary['n']} x {summary['dim']}, {len(queries)} queries, k {args.k}, "
          f"searches on one thread, builds on {args.build_threads}, {summary['cpu']}, "
          f"load average {summary['load_average_at_end'][0]:.1f}")
    header = f"{'system':<11} {'build s':>8} {'bytes MB':>9}" + "".join(
        f" {'p50@' + str(t):>10}" for t in targets)
    print(header)
    for result in results:
        cells = []
        for target in targets:
            point = fastest_at(result["curve"], target)
            cells.append(f" {point['p50_ms']:>10.3f}" if point else f" {'-':>10}")
        print(f"{result['system']:<11} {result['build_s']:>8.1f} {result['index_bytes'] / 1e6:>9.1f}" + "".join(cells))
    if args.out:
        with open(args.out, "w") as out:
            json.dump(summary, out, indent=1)


if __name__ == "__main__":
    main()
