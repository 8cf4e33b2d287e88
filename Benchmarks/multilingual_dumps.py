#!/usr/bin/env python3
"""Compares two `engram-bench multilingual --dump DIR` runs (say f32 and int8) question by question.

    python3 Benchmarks/multilingual_dumps.py REF_DIR OTHER_DIR [--lang zh|en] [--k 3]

Prints, for one language: how close the two runs' vectors are (cosine per text, and the part of
their difference all texts share); the spread of the change of every question-memory cosine; whether
the change favours a question's own memory or its ten best rivals (mean and standard error); how
many questions sit within a given cosine of the recall@k boundary in REF; and every question whose
result differs per mode, with its rank and scores in both runs (score / cosine / BM25; nan where a
retriever did not find it). For diagnosis only: the evaluation set is frozen and is never tuned on.
"""
import argparse
import json

import numpy as np


def load(directory, lang):
    with open(f"{directory}/{lang}.json") as f:
        dump = json.load(f)
    hits = {mode: [[[float(v) for v in hit] for hit in question] for question in questions]
            for mode, questions in dump["hits"].items()}
    vectors = [np.fromfile(f"{directory}/{lang}-{part}.f32", dtype="<f4").astype(np.float64)
               for part in ("queries", "memories")]
    width = vectors[0].size // len(dump["targets"])
    return dump["targets"], hits, [v.reshape(-1, width) for v in vectors]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ref")
    parser.add_argument("other")
    parser.add_argument("--lang", default="zh")
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    targets, ref_hits, (ref_q, ref_m) = load(args.ref, args.lang)
    _, other_hits, (other_q, other_m) = load(args.other, args.lang)
    k, n = args.k, len(targets)
    own = np.array(targets) - 1  # memory ids are the storing order, pairs first
    rows = np.arange(n)

    for name, a, b in (("queries", ref_q, other_q), ("memories", ref_m, other_m)):
        cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        difference = b - a
        print(f"{args.lang} {name}: cosine of the two runs' vectors min {cosine.min():.5f} mean {cosine.mean():.5f}; "
              f"difference rms {np.sqrt((difference ** 2).sum(1).mean()):.2e}, "
              f"of which shared by all texts {np.linalg.norm(difference.mean(0)):.2e}")

    ref_cos, other_cos = ref_q @ ref_m.T, other_q @ other_m.T
    change = other_cos - ref_cos
    print(f"change of every question-memory cosine: sd {change.std():.2e}, |change| p50 {np.median(abs(change)):.2e} "
          f"p95 {np.percentile(abs(change), 95):.2e}")
    best = np.argsort(-ref_cos, axis=1)
    bias = np.array([change[i, own[i]] - change[i, [j for j in best[i, :11] if j != own[i]][:10]].mean()
                     for i in range(n)])
    print(f"own memory's cosine change minus its 10 best rivals': mean {bias.mean():+.2e} "
          f"(standard error {bias.std() / np.sqrt(n):.1e}), sd {bias.std():.2e}")
    ranks = 1 + (ref_cos > ref_cos[rows, own][:, None]).sum(1)
    ordered = np.sort(ref_cos, 1)
    gap = np.where(ranks <= k, ref_cos[rows, own] - ordered[:, -(k + 1)], ordered[:, -k] - ref_cos[rows, own])
    print("vector questions within a cosine of the recall@%d boundary in REF: " % k + ", ".join(
        f"{x:.0e}: {np.sum(gap < x)} ({np.sum((gap < x) & (ranks <= k))} found)" for x in (5e-4, 1e-3, 2e-3)))

    for mode in ("vector", "hybrid", "keyword"):
        def found(hits, i):
            return targets[i] in [int(hit[0]) for hit in hits[mode][i][:k]]

        def describe(hits, i):
            ids = [int(hit[0]) for hit in hits[mode][i]]
            rank = ids.index(targets[i]) + 1 if targets[i] in ids else None
            top = " ".join(f"{int(h[0])}:{h[1]:.4f}/{h[2]:.4f}/{h[3]:.2f}" for h in hits[mode][i][:k + 1])
            return f"rank {rank}", top

        ref_found = [found(ref_hits, i) for i in range(n)]
        other_found = [found(other_hits, i) for i in range(n)]
        print(f"{mode}: found {sum(ref_found)} in REF, {sum(other_found)} in OTHER")
        for i in range(n):
            if ref_found[i] == other_found[i]:
                continue
            (ref_rank, ref_top), (other_rank, other_top) = describe(ref_hits, i), describe(other_hits, i)
            print(f"  question {i} (own memory {targets[i]}) {'lost' if ref_found[i] else 'gained'}: "
                  f"REF {ref_rank}, OTHER {other_rank}\n    REF   {ref_top}\n    OTHER {other_top}")


if __name__ == "__main__":
    main()
