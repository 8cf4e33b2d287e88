"""Leave-one-conversation-out comparison of re-ranker models on the feature rows that
`engram-bench rerank-train --conversations 26,30,43 --groups-out FILE` writes (LoCoMo dev
conversations only): the fused order, the linear pairwise model the engine uses, small
pairwise MLPs (numpy, Adam) and pointwise gradient-boosted trees (scikit-learn).

    python3 Benchmarks/rerank_models.py FILE
"""
import json, sys, numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
data = json.load(open(sys.argv[1]))
convs = [[(np.array(g['rows'], float), np.array(g['labels'], bool)) for g in c['groups']] for c in data]
def hits(groups, scorer):
    h1 = h3 = 0
    for X, y in groups:
        s = scorer(X)
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        h1 += y[order[0]]; h3 += any(y[order[:3]])
    return h1, h3, len(groups)
def pairs(groups):
    D = []
    for X, y in groups:
        P, N = X[y], X[~y]
        for p in P: D.append(p - N)
    return np.vstack(D)
def fit_linear(groups, epochs=3000, l2=1e-3, lr=0.5):
    D = pairs(groups); w = np.zeros(D.shape[1]); w[0] = 1
    for _ in range(epochs):
        m = D @ w; sl = -1/(1+np.exp(m))/len(D)
        g = D.T @ sl + 2*l2*w; w -= lr*g
    return lambda X: X @ w
def fit_mlp(groups, hidden=16, epochs=2000, l2=1e-3, lr=0.01, seed=0):
    rng = np.random.default_rng(seed)
    Pi, Ni = [], []
    Xall = []; off = 0
    for X, y in groups:
        idx = np.arange(len(X)) + off; off += len(X); Xall.append(X)
        for p in idx[y]:
            for n in idx[~y]: Pi.append(p); Ni.append(n)
    Xall = np.vstack(Xall); Pi = np.array(Pi); Ni = np.array(Ni)
    d = Xall.shape[1]
    W1 = rng.normal(0, 0.3, (d, hidden)); b1 = np.zeros(hidden); w2 = rng.normal(0, 0.3, hidden); v = np.zeros(d); v[0]=1
    params = [W1, b1, w2, v]; m = [np.zeros_like(p) for p in params]; s2 = [np.zeros_like(p) for p in params]
    for t in range(1, epochs+1):
        H = np.tanh(Xall @ W1 + b1); S = H @ w2 + Xall @ v
        marg = S[Pi] - S[Ni]; sl = -1/(1+np.exp(marg))/len(Pi)
        gS = np.zeros(len(Xall)); np.add.at(gS, Pi, sl); np.add.at(gS, Ni, -sl)
        gw2 = H.T @ gS + 2*l2*w2; gv = Xall.T @ gS + 2*l2*v
        gH = np.outer(gS, w2) * (1 - H**2)
        gW1 = Xall.T @ gH + 2*l2*W1; gb1 = gH.sum(0)
        for i, g in enumerate([gW1, gb1, gw2, gv]):
            m[i] = 0.9*m[i] + 0.1*g; s2[i] = 0.999*s2[i] + 0.001*g*g
            params[i] -= lr * (m[i]/(1-0.9**t)) / (np.sqrt(s2[i]/(1-0.999**t)) + 1e-8)
    W1, b1, w2, v = params
    return lambda X: np.tanh(X @ W1 + b1) @ w2 + X @ v
def fit_gbdt(groups, **kw):
    X = np.vstack([g[0] for g in groups]); y = np.concatenate([g[1] for g in groups])
    clf = HistGradientBoostingClassifier(random_state=0, **kw).fit(X, y)
    return lambda Z: clf.predict_proba(Z)[:, 1] + 1e-9 * (-np.arange(len(Z)))
models = {
  'fused': lambda g: (lambda X: X[:, 0]),
  'linear': fit_linear,
  'mlp8': lambda g: fit_mlp(g, hidden=8),
  'mlp16': lambda g: fit_mlp(g, hidden=16),
  'mlp16_l2': lambda g: fit_mlp(g, hidden=16, l2=1e-2),
  'gbdt': lambda g: fit_gbdt(g, max_iter=200, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40),
  'gbdt_small': lambda g: fit_gbdt(g, max_iter=100, learning_rate=0.05, max_depth=3, min_samples_leaf=80),
}
for name, fit in models.items():
    t1 = t3 = n = 0
    for i in range(len(convs)):
        train = [g for j, c in enumerate(convs) if j != i for g in c]
        f = fit(train)
        a, b, c = hits(convs[i], f); t1 += a; t3 += b; n += c
    print(f"{name:12s} cv hit@1 {t1/n:.4f} hit@3 {t3/n:.4f} (n={n})", flush=True)
