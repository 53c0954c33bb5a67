"""Repeated density-estimation comparison for chapter 8 (latent-tree embeddings).

A 3-state hidden Markov chain with Gaussian emissions (the chapter's model, d = 5) is
sampled with 10 data seeds at three training sizes. For each data set the bandwidth of
every method is chosen on 1000 validation sequences and the average log-likelihood on
3000 test sequences is recorded for

* ``mvlib.LatentTreeEmbedding`` with ranks 2, 3, 4 (normalised Gaussian kernel),
* the product-kernel density estimate with the same kernel (scikit-learn KernelDensity),
* ``scipy.stats.gaussian_kde`` (Scott's rule),
* the true model (forward recursion),

* hmmlearn's ``GaussianHMM`` with 3 states (diagonal covariances, the structure that
  generated the data): EM (Baum–Welch) with ``n_iter=200``, from 5 starts
  (``random_state`` 0..4, hmmlearn's own initialisation), the start with the best
  training log-likelihood kept — the parametric model a practitioner would fit,

together with the fraction of test points where the low-rank density is <= 0, the total
mass of each chosen low-rank density (``box_probability`` over all of R^5; a truncated
embedding is not normalised) with the test log-likelihood after dividing by it, and the fit
times. Results go to ``chapters/data/tree_density.json``; the chapter plots them.

A second experiment (``--branching``, also run by default) fits an 8-leaf binary latent
tree with Gaussian leaves: hidden nodes of 2 states, every hidden edge keeps the parent's
state with probability 0.8, each leaf is N(3 h, 0.5²) given its parent's state h. For 10
data seeds and n = 400 and 1000 training samples, the bandwidth of each method is chosen
on 1000 validation samples among 0.4, 0.6, 0.8 and the average test log-likelihood on
2000 samples is recorded for ``LatentTreeEmbedding`` along the tree (rank 2 at every
edge), along the chain of leaves at rank 2 and at rank 4 (the prefix ranks of this tree
are 2, 2, 4, 2, 4, 2, 2), the product KDE and the true density (sum over the 2^7 hidden
configurations). Results go to ``chapters/data/tree_branching.json``.

A third part (``--only bounds``, a few seconds, also run by default) checks the error bounds
of the decomposition on random tables: 100 tensors (seed 2013; Gaussian noise, or a tensor
train plus noise) cut into a chain at random ranks (Theorem 1), and 40 random latent trees
(seed 2026; a latent tree table plus noise at its edge ranks, or a Gaussian table at random
ranks) decomposed along the tree. For each case it records the total error, the step errors
delta and the best reshaping errors epsilon, unrounded, in ``chapters/data/tree_bounds.json``;
the chapter asserts the bounds on them.

Run: ``OMP_NUM_THREADS=1 python experiments/tree_experiments.py`` (about 10 minutes on one
core); ``--only density``, ``--only branching`` or ``--only bounds`` runs one part;
``--quick`` runs the bounds part on a few cases and writes nothing.
"""
from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import tensorly as tl
from hmmlearn.hmm import GaussianHMM
from scipy.stats import gaussian_kde, norm
from sklearn.neighbors import KernelDensity
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.book import data_path, write_json
from mvlib.tree import (binary_tree, edge_errors, random_latent_tree_model, random_tree,
                        symmetric_tree_model, tree_decomposition)

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data" / "tree_density.json"
OUT_BRANCHING = OUT.with_name("tree_branching.json")
PI = np.array([0.5, 0.3, 0.2])
T = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
MU, SD, D = np.array([-2.0, 0.0, 2.0]), np.array([0.6, 0.5, 0.6]), 5
BANDWIDTHS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
RANKS = [2, 3, 4]
SIZES = [200, 400, 800]
SEEDS = range(10)
ALL_OF_R = (np.full((1, D), -np.inf), np.full((1, D), np.inf))


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
                best = (val, model.score(X_te), float(np.mean(model.density(X_te) <= 0)), s,
                        float(model.box_probability(*ALL_OF_R)[0]))
        row[f"rank{r}"] = {"test": best[1], "negative": best[2], "bandwidth": best[3],
                           "fit_seconds": float(np.median(t_fit)), "mass": best[4],
                           "test_renormalised": best[1] - float(np.log(best[4]))}
    row["kde"] = best_kde(X_tr, X_va, X_te, BANDWIDTHS)
    row["hmm"] = gaussian_hmm(X_tr, X_te)
    return row


def best_kde(X_tr, X_va, X_te, bandwidths):
    """The product KDE (scikit-learn) at the bandwidth best on validation: its test score."""
    best = None
    for s in bandwidths:
        kde = KernelDensity(bandwidth=s).fit(X_tr)
        val = kde.score_samples(X_va).mean()
        if best is None or val > best[0]:
            best = (val, float(kde.score_samples(X_te).mean()), s)
    return {"test": best[1], "bandwidth": best[2]}


def gaussian_hmm(X_tr, X_te, n_starts=5):
    """hmmlearn's GaussianHMM, 3 states, EM from 5 starts; test log-likelihood per sequence."""
    t0, best = time.perf_counter(), None
    for start in range(n_starts):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hmm = GaussianHMM(3, covariance_type="diag", n_iter=200, random_state=start)
            hmm.fit(X_tr.reshape(-1, 1), lengths=[D] * len(X_tr))
        train = hmm.score(X_tr.reshape(-1, 1), lengths=[D] * len(X_tr))
        if best is None or train > best[0]:
            best = (train, hmm)
    hmm = best[1]
    test = hmm.score(X_te.reshape(-1, 1), lengths=[D] * len(X_te)) / len(X_te)
    return {"test": float(test), "fit_seconds": time.perf_counter() - t0,
            "iterations": int(hmm.monitor_.iter), "converged": bool(hmm.monitor_.converged)}


# ------------------------------------------------------------- a tree that branches
TREE = binary_tree(8, 2)
KEEP, SPREAD, NOISE = 0.8, 3.0, 0.5
BRANCH_BANDWIDTHS = [0.4, 0.6, 0.8]
BRANCH_SIZES = [400, 1000]


def branching_model():
    """Hidden edges keep the state with probability KEEP; a leaf copies its parent's state
    (its value is then SPREAD * state + NOISE * N(0, 1))."""
    return symmetric_tree_model(TREE, KEEP)


def branching_sample(model, n, rng, seed):
    return SPREAD * model.sample(n, random_state=np.random.default_rng(seed)) \
        + NOISE * rng.standard_normal((n, 8))


def branching_loglik(model, X):
    """log p(x) of the true model: the leaf table of states times Gaussian leaf densities."""
    P = model.joint_table()                               # (2,)*8: P(states of the leaves' parents)
    cells = np.array(np.unravel_index(np.arange(P.size), P.shape)).T        # (256, 8)
    dens = norm.pdf(X[:, None, :], SPREAD * cells[None], NOISE).prod(-1)    # (n, 256)
    return np.log(dens @ P.ravel())


def one_branching_set(model, n, seed):
    rng = np.random.default_rng([n, seed, 8])
    X_tr = branching_sample(model, n, rng, [n, seed, 0])
    X_va = branching_sample(model, 1000, rng, [n, seed, 1])
    X_te = branching_sample(model, 2000, rng, [n, seed, 2])
    row = {"n": n, "seed": seed, "truth": float(branching_loglik(model, X_te).mean())}
    fits = {"tree": lambda s: mvlib.LatentTreeEmbedding(None, bandwidth=s, tree=TREE),
            "chain2": lambda s: mvlib.LatentTreeEmbedding(2, bandwidth=s),
            "chain4": lambda s: mvlib.LatentTreeEmbedding(4, bandwidth=s)}
    for name, make in fits.items():
        best = None
        for s in BRANCH_BANDWIDTHS:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mvlib.IllConditionedWarning)
                model_s = make(s).fit(X_tr)
            t = time.perf_counter() - t0
            val = model_s.score(X_va)
            if best is None or val > best[0]:
                best = (val, model_s.score(X_te), s, t)
        row[name] = {"test": best[1], "bandwidth": best[2], "fit_seconds": best[3]}
    row["kde"] = best_kde(X_tr, X_va, X_te, BRANCH_BANDWIDTHS)
    return row


def branching():
    model = branching_model()
    rows = []
    for n in BRANCH_SIZES:
        for seed in SEEDS:
            rows.append(one_branching_set(model, n, seed))
            r = rows[-1]
            print(f"branching n={n:4d} seed={seed}: truth {r['truth']:.3f} tree {r['tree']['test']:.3f} "
                  f"chain2 {r['chain2']['test']:.3f} chain4 {r['chain4']['test']:.3f} "
                  f"kde {r['kde']['test']:.3f}", flush=True)
    OUT_BRANCHING.write_text(json.dumps({
        "sizes": BRANCH_SIZES, "bandwidths": BRANCH_BANDWIDTHS, "keep": KEEP, "spread": SPREAD,
        "noise": NOISE, "tree_parent": list(TREE.parent), "rows": rows}, indent=1))
    print("wrote", OUT_BRANCHING)


def random_case(rng):
    """A random table for Theorem 1: (C, ranks, structured), drawn from ``rng`` in a fixed order.

    ``d`` in 3..6 modes of 2..4 symbols and a random rank per cut; half the tables are a tensor
    train at those ranks plus Gaussian noise of relative size 1e-4..1e-1, the others pure noise.
    """
    d = int(rng.integers(3, 7))
    shape = tuple(int(s) for s in rng.integers(2, 5, size=d))
    rows = np.cumprod(shape)[:-1]
    cols = np.prod(shape) // rows
    ranks = [int(rng.integers(1, min(r, c))) for r, c in zip(rows, cols)]
    C = rng.standard_normal(shape)
    structured = rng.random() < 0.5
    if structured:
        full = [1] + ranks + [1]
        cores = [rng.standard_normal((full[j], shape[j], full[j + 1]))
                 for j in range(d)]
        signal = tl.tt_to_tensor(tl.tt_tensor.TTTensor(cores))
        C = signal / np.linalg.norm(signal) + 10 ** rng.uniform(-4, -1) * C / np.linalg.norm(C)
    return C, ranks, structured


def chain_bound_cases(n_cases=100, seed=2013):
    """Theorem 1 on ``n_cases`` random tables: one dict per case with the number of modes
    ``d``, ``structured``, the error ``err`` of the chain decomposition, its step errors
    ``delta`` and the best reshaping errors ``eps`` (lists of d - 1 floats)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_cases):
        C, ranks, structured = random_case(rng)
        tt_c, delta_c = mvlib.tt_embedding(C, ranks, return_errors=True)
        out.append({"d": C.ndim, "structured": bool(structured),
                    "err": float(np.linalg.norm(C - tl.tt_to_tensor(tt_c))),
                    "delta": delta_c, "eps": mvlib.reshaping_errors(C, ranks)})
    return out


def tree_bound_cases(n_cases=40, seed=2026):
    """The tree version on ``n_cases`` random trees of 3..6 leaves: odd cases a latent tree
    table plus noise of size 1e-3 (true ranks), even cases a Gaussian table at random ranks.
    One dict per case: ``n_edges``, ``norm`` of the table, ``err``, ``delta`` and ``eps``
    (one per edge)."""
    rng_t = np.random.default_rng(seed)
    out = []
    for case in range(n_cases):
        tree_t = random_tree(int(rng_t.integers(3, 7)), 3, random_state=rng_t)
        shape_t = tuple(int(m) for m in rng_t.integers(2, 4, size=tree_t.n_leaves))
        if case % 2:
            C_t = random_latent_tree_model(tree_t, list(shape_t), random_state=rng_t).joint_table()
            C_t = C_t + 1e-3 * rng_t.standard_normal(shape_t) / np.sqrt(np.prod(shape_t))
            ranks_t = None
        else:
            C_t = rng_t.standard_normal(shape_t)
            ranks_t = [int(r) for r in rng_t.integers(1, 4, size=len(tree_t.edges))]
        net_t, delta_t = tree_decomposition(C_t, tree_t, ranks_t, return_errors=True)
        out.append({"n_edges": len(tree_t.edges), "norm": float(np.linalg.norm(C_t)),
                    "err": float(np.linalg.norm(C_t - net_t.contract())),
                    "delta": delta_t, "eps": edge_errors(C_t, tree_t, ranks_t)})
    return out


def bounds(quick=False):
    n_chain, n_tree = (5, 4) if quick else (100, 40)
    out = {"chain": chain_bound_cases(n_chain), "tree": tree_bound_cases(n_tree)}
    if quick:
        print(f"{len(out['chain'])} chain cases, {len(out['tree'])} tree cases (quick: nothing written)")
        return out
    print("wrote", write_json(out, data_path("tree_bounds.json"), digits=None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["density", "branching", "bounds"])
    ap.add_argument("--quick", action="store_true", help="the bounds part on a few cases, no files")
    args = ap.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        if args.quick:
            bounds(quick=True)
            return
        if args.only in (None, "density"):
            density()
        if args.only in (None, "branching"):
            branching()
        if args.only in (None, "bounds"):
            bounds()


def density():
    rows = []
    for n in SIZES:
        for seed in SEEDS:
            rows.append(one_data_set(n, seed))
            r = rows[-1]
            print(f"n={n:4d} seed={seed}: truth {r['truth']:.3f} kde {r['kde']['test']:.3f} "
                  f"hmm {r['hmm']['test']:.3f} "
                  + " ".join(f"rank{k} {r[f'rank{k}']['test']:.3f} (mass {r[f'rank{k}']['mass']:.3f})"
                             for k in RANKS), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"sizes": SIZES, "ranks": RANKS, "bandwidths": BANDWIDTHS,
                               "rows": rows}, indent=1))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
