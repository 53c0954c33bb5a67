r"""Experiments of the three-view chapter; results go to ``chapters/data/multiview_*.json``.

Run ``OMP_NUM_THREADS=1 python experiments/multiview_experiments.py [NAME ...]`` with NAME among
``weights accuracy covariances collinear em`` (default: all; a few minutes on one core);
``--quick`` runs the new three at small sizes and writes nothing. The chapter
``chapters/04_three_view_mixtures.ipynb`` loads the files, asserts on them, glues from them and
plots them; it does not re-run the grids (its time budget is 30 s).

The model is the chapter's mixed model: k = 3, weights (0.5, 0.3, 0.2); view 1 Gaussian
(d = 8, means 3 N(0, 1), unit noise), view 2 Poisson (d = 10, rates Gamma(2, 1.5)), view 3
Bernoulli (d = 12, probabilities U[0.1, 0.9]), all drawn from ``default_rng(2024)`` in this
order by ``mvlib.book.mixed_views_model``, which the chapter uses too (and checks the stored
means against its own).

``multiview_weights.json`` — six ways to solve for the weights
    Ten samples of the mixed model (n = 20,000, ``default_rng(500 + s)``) fitted by
    ``MultiViewMixture(3, random_state=s)``; the means aligned on view 3, then the weights from
    ``mixture_weights`` with each view alone, the three stacked (unscaled; scaled by each view's
    spread; view 1 multiplied by 100). Stored: the max weight error of each variant per sample,
    and each sample's ratio of largest to smallest view spread.

``multiview_accuracy.json`` — Algorithm B against the tensor route
    Five sizes ``logspace(3, 5, 5)``, five samples each, all drawn in turn from one
    ``default_rng(7)``; each sample fitted by ``MultiViewMixture(3, method=m, random_state=r)``
    for m in ("observable", "tensor"). Stored per size and sample: the worst relative error of
    the views and the weight error (``mvlib.multiview.view_errors``, aligned on view 3); per
    size, the mean seconds per fit (``perf_counter`` on the machine that ran the script).

``multiview_covariances.json`` — view-3 covariances from samples
    The chapter's covariance model (``default_rng(21)``: M1, M2 3 N(0, 1) of size (8, 3), M3
    2 N(0, 1) of size (3, 3), three covariances ``mvlib.core.cubature.random_cov(3)``; sampled by
    ``MultiViewMixtureModel`` with ``covariances=[None, None, S3]``), n in (20,000, 80,000),
    five seeds. "distinct": samples ``default_rng(300 + s)``, means from
    ``MultiViewMixture(3, random_state=s)`` passed to ``view_covariances``; "shared" (one view-3
    mean): samples ``default_rng(400 + s)``, ``view_covariances(random_state=s)`` without means.
    Stored: the worst relative Frobenius error of the three covariances.

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

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import mvlib  # noqa: E402
from mvlib.book import data_path, mixed_views_model, write_json
from mvlib.core.cubature import random_cov
from mvlib.core.metrics import match_columns
from mvlib.core.observable import mixture_weights
from mvlib.multiview import MultiViewMixtureModel, view_errors

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
K = 3
W_MIX = np.array([0.5, 0.3, 0.2])
METHODS = ("observable", "tensor")
VARIANTS = ("view 1 alone", "view 2 alone", "view 3 alone (B.5)", "stacked, unscaled",
            "stacked, scaled (mvlib)", "stacked, unscaled, view 1 x 100")


def mixed_means():
    """The chapter's mixed model (``mvlib.book.mixed_views_model``, seed 2024): [M1 (8, 3) Gaussian,
    M2 (10, 3) Poisson, M3 (12, 3) Bernoulli]."""
    return mixed_views_model(2024).means


def sample_mixed(n, rng, means, w=W_MIX):
    """Gaussian / Poisson / Bernoulli views given h, as in the chapter; returns ([X1, X2, X3], h)."""
    model = MultiViewMixtureModel(w, means, kind=("gaussian", "poisson", "bernoulli"))
    return model.sample(n, random_state=rng)


def weight_variants(n=20_000, seeds=10):
    """Max weight error of six least-squares variants (``VARIANTS``) per sample, and view spreads."""
    M_mix = mixed_means()
    w_errs = {v: [] for v in VARIANTS}
    spread = []
    for s in mvlib.progress(range(seeds), desc="weights"):
        X, _ = sample_mixed(n, np.random.default_rng(500 + s), M_mix)
        est = mvlib.MultiViewMixture(K, random_state=s).fit(X)
        p, _ = match_columns(M_mix[2], est.means_[2].T)
        Mh = [m.T[:, p] for m in est.means_]
        mu = [x.mean(axis=0) for x in X]
        sd = [np.sqrt(x.var(axis=0).mean()) for x in X]
        spread.append(max(sd) / min(sd))
        sols = [mixture_weights([Mh[v]], [mu[v]]) for v in range(3)]
        sols += [mixture_weights(Mh, mu), mixture_weights(Mh, mu, sd),
                 mixture_weights([100 * Mh[0], Mh[1], Mh[2]], [100 * mu[0], mu[1], mu[2]])]
        for v, sol in zip(VARIANTS, sols):
            w_errs[v].append(np.abs(sol / sol.sum() - W_MIX).max())
    return {"n": n, "seeds": seeds, "variants": list(VARIANTS), "errors": w_errs, "spread": spread}


def accuracy(sizes=None, n_reps=5, seed=7):
    """Worst view error and weight error of both routes, per size and sample; mean seconds per fit."""
    sizes = np.round(np.logspace(3, 5, 5)).astype(int) if sizes is None else np.asarray(sizes)
    M_mix, rng_n = mixed_means(), np.random.default_rng(seed)
    errs = {m: np.zeros((len(sizes), n_reps)) for m in METHODS}
    werrs = {m: np.zeros((len(sizes), n_reps)) for m in METHODS}
    secs = {m: np.zeros(len(sizes)) for m in METHODS}
    for i, n in enumerate(mvlib.progress(sizes, desc="n")):
        for r in range(n_reps):
            X, _ = sample_mixed(int(n), rng_n, M_mix)
            for m in METHODS:
                t0 = time.perf_counter()
                est = mvlib.MultiViewMixture(K, method=m, random_state=r).fit(X)
                secs[m][i] += (time.perf_counter() - t0) / n_reps
                rel, werr = view_errors(est, M_mix, W_MIX)
                errs[m][i, r], werrs[m][i, r] = max(rel), werr
    return {"sizes": sizes, "n_reps": n_reps, "methods": list(METHODS), "error": errs,
            "weight_error": werrs, "seconds": secs}


def covariance_model():
    """The chapter's covariance model: ``(M1, M2, M3, S3)``, S3 (k, 3, 3), from ``default_rng(21)``."""
    rng_p = np.random.default_rng(21)
    M1, M2 = 3 * rng_p.standard_normal((8, K)), 3 * rng_p.standard_normal((8, K))
    M3 = 2 * rng_p.standard_normal((3, K))
    S3 = np.array([random_cov(3, rng_p) for _ in range(K)])
    return M1, M2, M3, S3


def covariances(n_cov=(20_000, 80_000), seeds=5):
    """Worst relative error of the view-3 covariances, distinct and one shared view-3 mean."""
    M1, M2, M3, S3 = covariance_model()
    M3_one = np.tile(M3[:, [0]], (1, K))
    # views 1, 2 with unit spherical noise, view 3 with covariance S3[h]
    distinct, shared = (MultiViewMixtureModel(W_MIX, [M1, M2, M3v], kind="gaussian",
                                              covariances=[None, None, S3]) for M3v in (M3, M3_one))

    def cov_error(S_hat):
        return max(np.linalg.norm(S_hat[h] - S3[h]) / np.linalg.norm(S3[h]) for h in range(K))

    cov_errs = {case: np.zeros((len(n_cov), seeds)) for case in ("distinct", "shared")}
    for i, n in enumerate(n_cov):
        for s in mvlib.progress(range(seeds), desc=f"n={n}"):
            X, _ = distinct.sample(n, random_state=np.random.default_rng(300 + s))
            est = mvlib.MultiViewMixture(K, random_state=s).fit(X)
            out = mvlib.view_covariances(X, K, means1=est.means_[0].T, means3=est.means_[2].T)
            p, _ = match_columns(M1, est.means_[0].T)
            cov_errs["distinct"][i, s] = cov_error(out["covariances"][p])
            X, _ = shared.sample(n, random_state=np.random.default_rng(400 + s))
            out = mvlib.view_covariances(X, K, random_state=s)
            D = out["directions1"] / np.linalg.norm(out["directions1"], axis=0)
            p, _ = match_columns(M1 / np.linalg.norm(M1, axis=0), D, sign_invariant=True)
            cov_errs["shared"][i, s] = cov_error(out["covariances"][p])
    return {"n": list(n_cov), "seeds": seeds, "S3": S3, "error": cov_errs}


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


def main(argv=None):
    names = ("weights", "accuracy", "covariances", "collinear", "em")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", help=f"experiments to run, among {names} (default: all)")
    parser.add_argument("--quick", action="store_true", help="weights, accuracy, covariances small; write nothing")
    args = parser.parse_args(argv)
    with threadpool_limits(limits=1):
        if args.quick:
            print(weight_variants(n=3000, seeds=2)["errors"])
            print(accuracy(sizes=[2000, 4000], n_reps=2)["error"])
            print(covariances(n_cov=(5000,), seeds=2)["error"])
            return
        which = args.which or names
        if set(which) - set(names):
            parser.error(f"unknown experiments {sorted(set(which) - set(names))}; choose among {names}")
        # 10 decimals: the chapter prints and fits slopes to these numbers
        for name, fn in (("weights", weight_variants), ("accuracy", accuracy), ("covariances", covariances)):
            if name in which:
                print("wrote", write_json(fn(), data_path(f"multiview_{name}.json"), digits=10))
        OUT.mkdir(parents=True, exist_ok=True)
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
