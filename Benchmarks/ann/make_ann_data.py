#!/usr/bin/env python3
"""Generates the approximate-search benchmark data once (not in git).

Clustered synthetic vectors that behave like sentence embeddings: each row is a point of a
Gaussian mixture in a random low-dimensional subspace, plus isotropic noise in the full
space, scaled to unit length. Sentence embeddings have a low intrinsic dimension and form
topical clusters; uniform random vectors have neither, so they flatter no index and mislead
every one (all neighbours are nearly equidistant).

Recipe (fixed seed): D = 384, subspace S = 48 (a random orthonormal basis), C = 2048 mixture
components with centres ~ N(0, I_S) and weights ~ Dirichlet(1); a row is
U (centre_c + 0.35 N(0, I_S)) + 0.12 N(0, I_D), normalized. Queries are fresh draws of the
same distribution (not rows of the base). Ground truth: the exact top-100 ids per query by
inner product, in float64-accumulated numpy.

Writes, per set, DIR/NAME/{base.npy, query.npy, truth.npy, meta.json}:
  clustered-200k (200,000 x 384, 1,000 queries), clustered-1m (1,000,000 x 384, 1,000 queries),
  locomo (the all-MiniLM-L6-v2 embeddings of the LoCoMo dev turns as rows and of its
  questions as queries, embedded by `engram-bench vectors --data ... --dump`).

Usage: .venv/bin/python Benchmarks/ann/make_ann_data.py --out /work/wt/ann-data
       [--sets clustered-200k,clustered-1m,locomo] [--bin .build/release/engram-bench]
       [--locomo /work/shared/data/locomo-dev]
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
D, S, C = 384, 48, 2048
CENTRE_SPREAD, WITHIN, NOISE = 1.0, 0.35, 0.12


def mixture(seed):
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((D, S)))
    centres = CENTRE_SPREAD * rng.standard_normal((C, S))
    weights = rng.dirichlet(np.ones(C))
    return basis.astype(np.float32), centres.astype(np.float32), weights


def draw(count, model, rng):
    basis, centres, weights = model
    labels = rng.choice(C, size=count, p=weights)
    z = centres[labels] + WITHIN * rng.standard_normal((count, S), dtype=np.float32)
    x = z @ basis.T + NOISE * rng.standard_normal((count, D), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


def truth(base, queries, k=100, chunk=100_000):
    """Exact top-k ids (best first) by inner product, scanning the base in chunks."""
    best_scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, len(base), chunk):
        scores = queries @ base[start:start + chunk].T
        ids = np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)
        all_scores = np.concatenate([best_scores, scores], axis=1)
        all_ids = np.concatenate([best_ids, ids], axis=1)
        top = np.argpartition(-all_scores, k - 1, axis=1)[:, :k]
        best_scores = np.take_along_axis(all_scores, top, axis=1)
        best_ids = np.take_along_axis(all_ids, top, axis=1)
    order = np.argsort(-best_scores, axis=1, kind="stable")
    return np.take_along_axis(best_ids, order, axis=1)


def save(folder, base, queries, meta):
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "base.npy"), base)
    np.save(os.path.join(folder, "query.npy"), queries)
    np.save(os.path.join(folder, "truth.npy"), truth(base, queries))
    meta.update(n=int(base.shape[0]), dim=int(base.shape[1]), queries=int(queries.shape[0]))
    with open(os.path.join(folder, "meta.json"), "w") as out:
        json.dump(meta, out, indent=1)
    print(f"wrote {folder}: {base.shape[0]} x {base.shape[1]}, {queries.shape[0]} queries", file=sys.stderr)


def clustered(out, name, n, seed=7):
    folder = os.path.join(out, name)
    if os.path.exists(os.path.join(folder, "meta.json")):
        print(f"{folder} exists; kept", file=sys.stderr)
        return
    model = mixture(seed)
    rng = np.random.default_rng(seed + n)
    base = np.concatenate([draw(min(100_000, n - s), model, rng) for s in range(0, n, 100_000)])
    queries = draw(1000, model, rng)
    save(folder, base, queries, {
        "recipe": "gaussian-mixture-subspace", "seed": seed, "subspace": S, "components": C,
        "centre_spread": CENTRE_SPREAD, "within": WITHIN, "noise": NOISE})


def locomo(out, binary, data):
    folder = os.path.join(out, "locomo")
    if os.path.exists(os.path.join(folder, "meta.json")):
        print(f"{folder} exists; kept", file=sys.stderr)
        return
    dump = os.path.join(out, "locomo-dump")
    subprocess.run([binary, "vectors", "--data", data, "--dump", dump, "--queries", "50"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(dump, "meta.json")) as meta_file:
        meta = json.load(meta_file)
    dim = meta["dim"]
    base = np.fromfile(os.path.join(dump, "base.f32"), dtype="<f4").reshape(-1, dim)
    queries = np.fromfile(os.path.join(dump, "queries.f32"), dtype="<f4").reshape(-1, dim)
    save(folder, base, queries, {"recipe": "all-MiniLM-L6-v2 LoCoMo dev turns / questions"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/work/wt/ann-data")
    parser.add_argument("--sets", default="clustered-200k,clustered-1m,locomo")
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "engram-bench"))
    parser.add_argument("--locomo", default=os.path.join(ROOT, "..", "shared", "data", "locomo-dev"))
    args = parser.parse_args()
    for name in args.sets.split(","):
        if name == "clustered-200k":
            clustered(args.out, name, 200_000)
        elif name == "clustered-1m":
            clustered(args.out, name, 1_000_000)
        elif name == "locomo":
            locomo(args.out, args.bin, args.locomo)
        else:
            sys.exit(f"unknown set {name}")


if __name__ == "__main__":
    main()
