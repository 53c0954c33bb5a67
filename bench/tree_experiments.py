"""Repeated density-estimation comparison for chapter 8 (latent-tree embeddings).

A 3-state hidden Markov chain with Gaussian emissions (the chapter's model, d = 5) is
sampled with 10 data seeds at three training sizes. For each data set the bandwidth of
every method is chosen on 1000 validation sequences and the average log-likelihood on
3000 test sequences is recorded for

* ``mvlib.LatentTreeEmbedding`` with ranks 2, 3, 4 (normalised Gaussian kernel),
* the product-kernel density estimate with the same kernel (scikit-learn KernelDensity),
* ``scipy.stats.gaussian_kde`` (Scott's rule),
* the true model (forward recursion),

together with the fraction of test points where the low-rank density is <= 0 and the
fit times. Results go to ``chapters/data/tree_density.json``; the chapter plots them.

Run: ``OMP_NUM_THREADS=1 python bench/tree_experiments.py`` (about 3 minutes).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import gaussian_kde, norm
from sklearn.neighbors import KernelDensity
from threadpoolctl import threadpool_limits

import mvlib

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data" / "tree_density.json"
PI = np.array([0.5, 0.3, 0.2])
T = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
MU, SD, D = np.array([-2.0, 0.0, 2.0]), np.array([0.6, 0.5, 0.6]), 5
BANDWIDTHS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
RANKS = [2, 3, 4]
SIZES = [200, 400, 800]
SEEDS = range(10)


def sample(n, rng):
    h = rng.choice(3, size=n, p=PI)
    X = np.empty((n, D))
    for j in range(D):
        X[:, j] = MU[h] + SD[h] * rng.standard_normal(n)
        h = (rng.random(n)[:, None] > np.cumsum(T[h], 1)).sum(1)
    return X


def true_loglik(X):
    alpha = PI * norm.pdf(X[:, [0]], MU, SD)
    for j in range(1, D):
        alpha = (alpha @ T) * norm.pdf(X[:, [j]], MU, SD)
    return np.log(alpha.sum(1))


def one_data_set(n, seed):
    rng = np.random.default_rng([n, seed])
    X_tr, X_va, X_te = sample(n, rng), sample(1000, rng), sample(3000, rng)
    row = {"n": n, "seed": seed, "truth": float(true_loglik(X_te).mean()),
           "scott": float(gaussian_kde(X_tr.T).logpdf(X_te.T).mean())}
    for r in RANKS:
        best, t_fit = None, []
        for s in BANDWIDTHS:
            t0 = time.perf_counter()
            model = mvlib.LatentTreeEmbedding(r, bandwidth=s).fit(X_tr)
            t_fit.append(time.perf_counter() - t0)
            val = model.score(X_va)
            if best is None or val > best[0]:
                best = (val, model.score(X_te), float(np.mean(model.density(X_te) <= 0)), s)
        row[f"rank{r}"] = {"test": best[1], "negative": best[2], "bandwidth": best[3],
                           "fit_seconds": float(np.median(t_fit))}
    best = None
    for s in BANDWIDTHS:
        kde = KernelDensity(bandwidth=s).fit(X_tr)
        val = kde.score_samples(X_va).mean()
        if best is None or val > best[0]:
            best = (val, float(kde.score_samples(X_te).mean()), s)
    row["kde"] = {"test": best[1], "bandwidth": best[2]}
    return row


def main():
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for n in SIZES:
            for seed in SEEDS:
                rows.append(one_data_set(n, seed))
                r = rows[-1]
                print(f"n={n:4d} seed={seed}: truth {r['truth']:.3f} kde {r['kde']['test']:.3f} "
                      + " ".join(f"rank{k} {r[f'rank{k}']['test']:.3f}" for k in RANKS), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"sizes": SIZES, "ranks": RANKS, "bandwidths": BANDWIDTHS,
                               "rows": rows}, indent=1))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
