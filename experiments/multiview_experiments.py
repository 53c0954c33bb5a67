r"""Experiments of the three-view chapter; results go to ``chapters/data/multiview_*.json``.

Run ``OMP_NUM_THREADS=1 .venv/bin/python experiments/multiview_experiments.py`` (well under a
minute on 2 cores). The chapter ``chapters/04_three_view_mixtures.ipynb`` loads and plots the
files; it does not re-run the grids (its time budget is 30 s).

The model is the chapter's mixed model: k = 3, weights (0.5, 0.3, 0.2); view 1 Gaussian
(d = 8, means 3 N(0, 1), unit noise), view 2 Poisson (d = 10, rates Gamma(2, 1.5)), view 3
Bernoulli (d = 12, probabilities U[0.1, 0.9]), all drawn from ``default_rng(2024)`` in this
order, exactly as in the chapter (which checks the stored means against its own).

``multiview_collinear.json`` — failure mode: nearly collinear view-3 means
    The view-3 mean of component 3 slides towards that of component 2,
    mu_33(eps) = (1 - eps) mu_32 + eps mu_33, for six eps in logspace(-2, 0); for each, five
    samples (n = 20,000, ``default_rng(1000 + s)``) fitted by ``MultiViewMixture(3, method=m,
    random_state=s)`` for m in ("observable", "tensor"). Stored: sigma_k(M3), the worst
    relative error over the three views (columns aligned on view 1), whether an
    ``IllConditionedWarning`` was raised, and fits that raised (none did when last run).

``multiview_em.json`` — likelihood baseline: EM for the product mixture
    ``mvlib.multiview.ProductMixtureEM`` (diagonal Gaussian / Poisson / Bernoulli views, the
    model that generated the data) on two settings of the mixed model: the chapter's model
    (eps = 1) and the nearly collinear one of the failure study with eps = 0.025. For each,
    five samples (n = 20,000, ``default_rng(2000 + s)``): the spectral estimate
    (``MultiViewMixture(3, random_state=s)``), EM from it (``init="spectral"``), and EM from
    five random starts (``init="random"``, ``random_state=100 s + r``, each run separately;
    means at random samples). Stored per fit: worst relative error over the views (aligned
    on view 1), mean log-likelihood per sample, iterations and seconds (``perf_counter`` on
    the machine that ran the script; the chapter does not assert on time).
"""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import mvlib  # noqa: E402
from mvlib.core.metrics import match_columns

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
K = 3
W_MIX = np.array([0.5, 0.3, 0.2])
METHODS = ("observable", "tensor")


def mixed_means():
    """The chapter's mixed model: [M1 (8, 3) Gaussian, M2 (10, 3) Poisson, M3 (12, 3) Bernoulli]."""
    rng = np.random.default_rng(2024)
    return [3 * rng.standard_normal((8, K)), rng.gamma(2.0, 1.5, size=(10, K)),
            rng.uniform(0.1, 0.9, size=(12, K))]


def sample_mixed(n, rng, means, w=W_MIX):
    """Gaussian / Poisson / Bernoulli views given h, as in the chapter; returns ([X1, X2, X3], h)."""
    h = rng.choice(len(w), size=n, p=w)
    X1 = means[0][:, h].T + rng.standard_normal((n, means[0].shape[0]))
    X2 = rng.poisson(means[1][:, h].T).astype(float)
    X3 = (rng.random((n, means[2].shape[0])) < means[2][:, h].T).astype(float)
    return [X1, X2, X3], h


def worst_relative_error(means_hat, means_true, on=0):
    """Worst relative Frobenius error over the views, columns aligned by one permutation (view ``on``)."""
    perm, _ = match_columns(means_true[on], means_hat[on])
    return max(float(np.linalg.norm(Mh[:, perm] - M) / np.linalg.norm(M))
               for Mh, M in zip(means_hat, means_true)), perm


def collinear(n=20_000, seeds=5):
    M_mix = mixed_means()
    eps_grid = np.logspace(-2, 0, 6)
    out = {"eps": eps_grid.tolist(), "n": n, "seeds": seeds, "sigma_k": [],
           "error": {m: [] for m in METHODS}, "warned": {m: [] for m in METHODS},
           "failed": {m: [] for m in METHODS}, "M3_original": M_mix[2].tolist()}
    for eps in mvlib.progress(eps_grid, desc="epsilon"):
        M3 = M_mix[2].copy()
        M3[:, 2] = (1 - eps) * M_mix[2][:, 1] + eps * M_mix[2][:, 2]
        means = [M_mix[0], M_mix[1], M3]
        out["sigma_k"].append(float(np.linalg.svd(M3, compute_uv=False)[-1]))
        rows = {m: ([], [], []) for m in METHODS}
        for s in range(seeds):
            X, _ = sample_mixed(n, np.random.default_rng(1000 + s), means)
            for m in METHODS:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        est = mvlib.MultiViewMixture(K, method=m, random_state=s).fit(X)
                    except (RuntimeError, ValueError):
                        rows[m][2].append(s)
                        continue
                rows[m][0].append(worst_relative_error([M.T for M in est.means_], means)[0])
                rows[m][1].append(bool(any(issubclass(c.category, mvlib.IllConditionedWarning) for c in caught)))
        for m in METHODS:
            out["error"][m].append(rows[m][0])
            out["warned"][m].append(rows[m][1])
            out["failed"][m].append(rows[m][2])
    return out


def em_compare(n=20_000, seeds=5, n_random=5, settings=(("original", 1.0), ("collinear", 0.025))):
    from mvlib.multiview import ProductMixtureEM

    M_mix = mixed_means()
    warnings.simplefilter("ignore", mvlib.IllConditionedWarning)   # expected near collinearity
    out = {"n": n, "seeds": seeds, "n_random": n_random, "settings": {}}
    for name, eps in settings:
        M3 = M_mix[2].copy()
        M3[:, 2] = (1 - eps) * M_mix[2][:, 1] + eps * M_mix[2][:, 2]
        means = [M_mix[0], M_mix[1], M3]
        rec = {"eps": eps, "sigma_k": float(np.linalg.svd(M3, compute_uv=False)[-1]),
               "spectral": [], "spectral_em": [], "random_em": []}
        for s in mvlib.progress(range(seeds), desc=name):
            X, _ = sample_mixed(n, np.random.default_rng(2000 + s), means)
            t0 = time.perf_counter()
            spec = mvlib.MultiViewMixture(K, random_state=s).fit(X)
            t_spec = time.perf_counter() - t0
            rec["spectral"].append({"error": worst_relative_error([M.T for M in spec.means_], means)[0],
                                    "seconds": t_spec})
            t0 = time.perf_counter()
            em = ProductMixtureEM(K, init="spectral", random_state=s).fit(X)
            rec["spectral_em"].append({"error": worst_relative_error([M.T for M in em.means_], means)[0],
                                       "loglik": em.log_likelihood_, "iterations": em.n_iter_,
                                       "seconds": time.perf_counter() - t0})
            runs = []
            for r in range(n_random):
                t0 = time.perf_counter()
                em = ProductMixtureEM(K, init="random", random_state=100 * s + r).fit(X)
                runs.append({"error": worst_relative_error([M.T for M in em.means_], means)[0],
                             "loglik": em.log_likelihood_, "iterations": em.n_iter_,
                             "seconds": time.perf_counter() - t0})
            rec["random_em"].append(runs)
        out["settings"][name] = rec
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    which = sys.argv[1:] or ["collinear", "em"]
    with threadpool_limits(limits=1):
        if "collinear" in which:
            res = collinear()
            (OUT / "multiview_collinear.json").write_text(json.dumps(res, indent=1))
            print("wrote", OUT / "multiview_collinear.json")
        if "em" in which:
            res = em_compare()
            (OUT / "multiview_em.json").write_text(json.dumps(res, indent=1))
            print("wrote", OUT / "multiview_em.json")


if __name__ == "__main__":
    main()
