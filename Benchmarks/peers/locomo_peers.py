#!/usr/bin/env python3
"""Retrieval quality on LoCoMo: Engram beside the Python reference stack, in one run.

The reference indexes each turn as "[<session date>] <speaker>: <text>" and ranks with
rank_bm25 (English stopwords removed), SQLite FTS5 bm25() with the porter tokenizer (the
same stopwords removed from the query, terms joined with OR), sentence-transformers
all-MiniLM-L6-v2 cosine,
reciprocal-rank fusion (k=60) and min-max weighted score fusion (0.7 dense), exactly as
described in shared/data/README.md. Engram runs `engram-bench locomo --json` on the same
files. Metrics: hit@k, recall@10, MRR@10 over categories 1-4.

Usage: .venv/bin/python Benchmarks/peers/locomo_peers.py [--data DIR] [--bin PATH] [--threads N]
(set up with Benchmarks/peers/setup_venv_embed.sh, which also installs rank_bm25).
"""
import argparse
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

import numpy as np

STOPWORDS = set(
    """a an and are as at be but by for if in into is it no not of on or such that the their then
    there these they this to was will with i me my we our you your he him his she her its what which
    who whom when where why how do does did have has had am been being were would could should can may
    might shall so than too very just about after before from up down out over under again further once
    here all any both each few more most other some own same only s t don now d ll m o re ve y""".split()
)


def tokens(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    kept = [w for w in words if w not in STOPWORDS]
    return kept or words


def load(path):
    conversation = json.load(open(path))
    turns = []
    number = 1
    while f"session_{number}" in conversation:
        date = conversation.get(f"session_{number}_date_time", "")
        for turn in conversation[f"session_{number}"]:
            turns.append((turn["dia_id"], f"[{date}] {turn['speaker']}: {turn['text']}"))
        number += 1
    known = {dia for dia, _ in turns}
    questions = []
    for qa in conversation["qa"]:
        evidence = [e for e in qa.get("evidence", []) if e in known]
        if qa.get("category") in (1, 2, 3, 4) and evidence:
            questions.append((qa["question"], set(evidence)))
    return turns, questions


def minmax(x):
    low, high = x.min(), x.max()
    return (x - low) / (high - low + 1e-12)


def score(ranked_ids, evidence, tally):
    top = ranked_ids[:10]
    for k in (1, 5, 10):
        tally[f"hit@{k}"] += 1 if set(top[:k]) & evidence else 0
    tally["recall@10"] += len(set(top) & evidence) / len(evidence)
    for rank, dia in enumerate(top):
        if dia in evidence:
            tally["mrr@10"] += 1 / (rank + 1)
            break


def main():
    parser = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--data", default=os.path.join(root, "..", "shared", "data", "locomo-dev"))
    parser.add_argument("--bin", default=os.path.join(root, ".build", "release", "engram-bench"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch
    from rank_bm25 import BM25Okapi
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    model_dir = os.environ.get("ENGRAM_MODEL_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "engram", "models", "all-MiniLM-L6-v2"
    )
    model = SentenceTransformer(model_dir, device="cpu")

    names = ["bm25", "fts5_porter", "minilm", "rrf", "minmax_0.7"]
    tallies = {n: {"hit@1": 0, "hit@5": 0, "hit@10": 0, "recall@10": 0, "mrr@10": 0} for n in names}
    count = 0
    latencies = []
    for path in sorted(glob.glob(os.path.join(args.data, "*.json"))):
        turns, questions = load(path)
        ids = [dia for dia, _ in turns]
        bm25 = BM25Okapi([tokens(text) for _, text in turns])
        fts = sqlite3.connect(":memory:")
        fts.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')")
        fts.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", [(i, text) for i, (_, text) in enumerate(turns)])
        vectors = model.encode([text for _, text in turns], batch_size=32, normalize_embeddings=True)
        for question, evidence in questions:
            start = time.perf_counter()
            query = model.encode([question], normalize_embeddings=True)[0]
            dense = vectors @ query
            sparse = np.array(bm25.get_scores(tokens(question)))
            latencies.append((time.perf_counter() - start) * 1000)
            match = " OR ".join(f'"{w}"' for w in dict.fromkeys(tokens(question)))
            order_fts = [row[0] for row in fts.execute(
                "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (match,))] if match else []
            order_dense = np.argsort(-dense, kind="stable")
            order_sparse = np.argsort(-sparse, kind="stable")
            rrf = np.zeros(len(ids))
            for rank, index in enumerate(order_dense):
                rrf[index] += 1 / (60 + rank + 1)
            for rank, index in enumerate(order_sparse):
                rrf[index] += 1 / (60 + rank + 1)
            fused = 0.7 * minmax(dense) + 0.3 * minmax(sparse)
            for name, order in [
                ("bm25", order_sparse),
                ("fts5_porter", order_fts),
                ("minilm", order_dense),
                ("rrf", np.argsort(-rrf, kind="stable")),
                ("minmax_0.7", np.argsort(-fused, kind="stable")),
            ]:
                score([ids[i] for i in order[:10]], evidence, tallies[name])
            count += 1
        print(f"reference: {os.path.basename(path)} done", file=sys.stderr)

    engram = json.loads(
        subprocess.run([args.bin, "locomo", "--data", args.data, "--json"], check=True, capture_output=True, text=True).stdout
    )
    rows = []
    for name in names:
        t = tallies[name]
        rows.append([f"python {name}"] + [t[k] / count for k in ("hit@1", "hit@5", "hit@10", "recall@10", "mrr@10")])
    for mode in ("keyword", "vector", "hybrid"):
        m = engram["modes"][mode]
        rows.append([f"engram {mode}"] + [m[k] for k in ("hit@1", "hit@5", "hit@10", "recall@10", "mrr@10")])
    print(f"LoCoMo dev, categories 1-4: {count} questions (engram: {engram['questions']})")
    print(f"{'retriever':24s} {'hit@1':>6s} {'hit@5':>6s} {'hit@10':>6s} {'rec@10':>6s} {'MRR@10':>6s}")
    for row in rows:
        print(f"{row[0]:24s} " + " ".join(f"{v:6.3f}" for v in row[1:]))
    best = max(tallies["minmax_0.7"]["hit@10"], tallies["bm25"]["hit@10"]) / count
    hybrid = engram["modes"]["hybrid"]
    print(f"engram hybrid hit@10 / best python hit@10: {hybrid['hit@10'] / best:.3f}")
    print(
        f"search p50 ms: engram hybrid {hybrid['p50_ms']:.2f} (query embedding included); "
        f"python minilm+bm25 {np.percentile(latencies, 50):.2f}"
    )
    if "storage" in engram:
        s = engram["storage"]
        print(f"engram bytes on disk per turn: {s['bytes_per_turn']:.0f} " + ", ".join(
            f"{name} {value:.0f}" for name, value in s["files_bytes_per_turn"].items()))
    if "compaction" in engram:
        c = engram["compaction"]
        print(
            f"compaction: {c['bytes_before']} -> {c['bytes_after']} bytes "
            f"({100 * c['size_reduction']:.1f}% smaller), hybrid hit@10 after {c['hit@10_after']:.3f}"
        )


if __name__ == "__main__":
    main()
