r"""The latent-tree chapter's density example on one data set; writes ``chapters/data/tree_bandwidth.json``.

Run ``OMP_NUM_THREADS=1 python experiments/tree_bandwidth.py`` (under a minute on one BLAS
thread) or add ``--quick`` (small samples, two bandwidths, one HMM start; prints, writes
nothing). The chapter ``chapters/08_latent_trees.ipynb`` (section "Application: density of a
hidden Markov chain with continuous observations") loads the file, picks the bandwidths,
prints the tables, plots the curves and asserts the orderings; ``experiments/tree_experiments.py``
repeats the comparison over many data sets.

Model: a hidden chain of d = 5 steps with 3 states, start law (0.5, 0.3, 0.2), row-stochastic
transition matrix [[.8, .15, .05], [.1, .8, .1], [.1, .2, .7]] and Gaussian emissions
N(mu_h, sd_h^2), mu = (-2, 0, 2), sd = (0.6, 0.5, 0.6). One generator
``numpy.random.default_rng(42)`` draws, in this order, 600 training, 1,000 validation and
3,000 test sequences, each sample as ``mvlib.tree.sample_hidden_chain`` (identity emissions:
the hidden states) followed by one standard normal matrix.

Recorded, for every bandwidth s in 0.3, 0.4, ..., 0.8:
``LatentTreeEmbedding(r, bandwidth=s)`` for r = 2, 3, 4 (average validation and test
log-likelihood, ``score``, and the share of test points where the density is <= 0) and the
product KDE ``sklearn.neighbors.KernelDensity(bandwidth=s)`` (validation and test); the test
log-likelihood of ``scipy.stats.gaussian_kde`` (Scott's rule) and of the true model (forward
recursion). Then, at the bandwidth of each rank that is best on validation (the first best
in grid order), the total mass ``box_probability`` over all of R^5 of that fit; and hmmlearn's
``GaussianHMM(3, covariance_type="diag", n_iter=200)`` from ``random_state`` 0..4, the start
with the best training log-likelihood kept, with its test log-likelihood per sequence.
``seconds`` is the run time on the machine that ran it.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from hmmlearn.hmm import GaussianHMM
from scipy.stats import gaussian_kde, norm
from sklearn.neighbors import KernelDensity
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.book import data_path, write_json
from mvlib.tree import sample_hidden_chain

PI = np.array([0.5, 0.3, 0.2])
T = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
MU, SD, D = np.array([-2.0, 0.0, 2.0]), np.array([0.6, 0.5, 0.6]), 5
SIZES = (600, 1000, 3000)                    # training, validation, test
BANDWIDTHS = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
RANKS = (2, 3, 4)
SEED = 42


def sample_gauss_chain(n, rng):
    """``n`` sequences (n, D) of the Gaussian chain: hidden states, then their emissions."""
    H = sample_hidden_chain(PI, T, np.eye(3), n, D, rng)
    return MU[H] + SD[H] * rng.standard_normal(H.shape)


def true_loglik(X):
    """log p(x) of every row of ``X`` under the true model (forward recursion over the states)."""
    alpha = PI * norm.pdf(X[:, [0]], MU, SD)
    for j in range(1, D):
        alpha = (alpha @ T) * norm.pdf(X[:, [j]], MU, SD)
    return np.log(alpha.sum(1))


def data(sizes=SIZES, seed=SEED):
    """The training, validation and test samples, drawn in that order from one generator."""
    rng = np.random.default_rng(seed)
    return tuple(sample_gauss_chain(n, rng) for n in sizes)


def bandwidth_scores(X_tr, X_va, X_te, bandwidths=BANDWIDTHS):
    """One record per (method, bandwidth): validation and test log-likelihood, share of density <= 0."""
    rows = []
    for s in bandwidths:
        for r in RANKS:
            fit = mvlib.LatentTreeEmbedding(r, bandwidth=s).fit(X_tr)
            rows.append({"method": f"tree, rank {r}", "bandwidth": s, "validation": fit.score(X_va),
                         "test": fit.score(X_te), "negative": np.mean(fit.density(X_te) <= 0)})
        kde = KernelDensity(bandwidth=s).fit(X_tr)
        rows.append({"method": "product KDE", "bandwidth": s,
                     "validation": kde.score_samples(X_va).mean(),
                     "test": kde.score_samples(X_te).mean(), "negative": 0.0})
    return rows


def best_bandwidths(rows, bandwidths=BANDWIDTHS):
    """method -> the bandwidth best on validation (the first best in grid order)."""
    val = {(r["method"], r["bandwidth"]): r["validation"] for r in rows}
    return {mt: max(bandwidths, key=lambda s: val[(mt, s)]) for mt in dict.fromkeys(r["method"] for r in rows)}


def masses(X_tr, best):
    """rank -> {bandwidth, mass}: total mass over R^D of the fit at the rank's chosen bandwidth."""
    all_of_r = (np.full((1, D), -np.inf), np.full((1, D), np.inf))
    out = {}
    for r in RANKS:
        s = best[f"tree, rank {r}"]
        fit = mvlib.LatentTreeEmbedding(r, bandwidth=s).fit(X_tr)
        out[str(r)] = {"bandwidth": s, "mass": fit.box_probability(*all_of_r)[0]}
    return out


def gaussian_hmm(X_tr, X_te, n_starts=5):
    """GaussianHMM (3 states, EM) from ``n_starts`` starts, best on training: test log-lik per sequence."""
    seq = dict(lengths=[D] * len(X_tr))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # hmmlearn reports non-monotone EM steps near convergence
        hmms = [GaussianHMM(3, covariance_type="diag", n_iter=200, random_state=s0)
                .fit(X_tr.reshape(-1, 1), **seq) for s0 in range(n_starts)]
    hmm_best = max(hmms, key=lambda g: g.score(X_tr.reshape(-1, 1), **seq))
    test = hmm_best.score(X_te.reshape(-1, 1), lengths=[D] * len(X_te)) / len(X_te)
    return {"test": test, "n_starts": n_starts, "iterations": int(hmm_best.monitor_.iter),
            "converged": bool(hmm_best.monitor_.converged)}


def run(sizes=SIZES, bandwidths=BANDWIDTHS, n_starts=5):
    """Everything the chapter reads, as one dict."""
    t0 = time.perf_counter()
    X_tr, X_va, X_te = data(sizes)
    rows = bandwidth_scores(X_tr, X_va, X_te, bandwidths)
    best = best_bandwidths(rows, bandwidths)
    return {"seed": SEED, "sizes": dict(zip(("train", "validation", "test"), sizes)),
            "bandwidths": bandwidths, "scores": rows,
            "scott": gaussian_kde(X_tr.T).logpdf(X_te.T).mean(), "truth": true_loglik(X_te).mean(),
            "mass": masses(X_tr, best), "hmm": gaussian_hmm(X_tr, X_te, n_starts),
            "seconds": time.perf_counter() - t0}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small samples, two bandwidths; writes nothing")
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1, user_api="blas"):
        if args.quick:
            out = run(sizes=(150, 200, 300), bandwidths=[0.4, 0.6], n_starts=1)
            print({k: out[k] for k in ("scott", "truth", "mass", "hmm")})
            return
        out = run()
    # 12 decimals: the chapter picks bandwidths by comparing validation scores
    path = write_json(out, data_path("tree_bandwidth.json"), digits=12)
    print(f"wrote {path} ({out['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
