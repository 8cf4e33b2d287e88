"""Scores a re-ranker fitted on LoCoMo dev conversations on the conversations held aside,
with and without a second embedder's cosine (and its z-score among the question's
candidates) as two extra columns, to decide whether a signal is worth building:

    engram-bench rerank-train --conversations 26,30,43 --groups-out dev.json --second-model e5-small
    engram-bench rerank-train --conversations 41,42 --groups-out held.json --second-model e5-small
    python3 Benchmarks/rerank_heldaside.py dev.json held.json [QUESTIONS]

The fit is the engine's (pairwise logistic, every evidence turn above every other
candidate); only the held-aside file's groups are scored, and QUESTIONS (default 351, the
category 1-4 questions of 41 and 42) is the denominator of hit@k, as `engram-bench locomo`
counts it (a question without its evidence among the candidates is a miss).
"""
import json, sys, numpy as np
def load(path, extra):
    data = json.load(open(path)); out = []
    for c in data:
        for g in c['groups']:
            X = np.array(g['rows'], float); y = np.array(g['labels'], bool)
            if extra:
                e = np.array([r[0] for r in g['extra']], float)
                z = (e - e.mean()) / (e.std() + 1e-6)
                X = np.hstack([X, e[:, None], z[:, None]])
            out.append((X, y))
    return out
def pairs(groups):
    D = []
    for X, y in groups:
        for p in X[y]: D.append(p - X[~y])
    return np.vstack(D)
def fit(groups, epochs=3000, l2=1e-3, lr=0.5):
    D = pairs(groups); w = np.zeros(D.shape[1]); w[0] = 1
    for _ in range(epochs):
        m = D @ w; sl = -1/(1+np.exp(m))/len(D)
        w -= lr*(D.T @ sl + 2*l2*w)
    return w
def hits(groups, w):
    h1 = h3 = 0
    for X, y in groups:
        s = X @ w; order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        h1 += y[order[0]]; h3 += any(y[order[:3]])
    return h1, h3
total = int(sys.argv[3]) if len(sys.argv) > 3 else 351
for extra in (False, True):
    dev = load(sys.argv[1], extra); held = load(sys.argv[2], extra)
    w = fit(dev)
    h1, h3 = hits(held, w)
    print('e5' if extra else 'base', 'held groups', len(held), 'hit1', h1, 'hit3', h3, 'of', total, '->', round(h3/total, 4), round(h1/total, 4))
    if extra: print('weights', np.round(w, 4).tolist())
