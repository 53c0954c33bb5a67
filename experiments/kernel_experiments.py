r"""Experiments of the chapter "Kernel embeddings of latent variable models" (Song et al. 2014, §8).

Run ``OMP_NUM_THREADS=1 python experiments/kernel_experiments.py`` from the repository root (all
threads pinned to 1, the synthetic grid spread over ``--processes 2``; about 20 minutes on a 2-core
machine), ``--parts NAME ...`` to re-run some parts and keep the others' stored results, or
``--quick`` (tiny sizes, for testing the script; prints a summary and writes nothing). Writes (numbers
rounded to ten decimals)
``chapters/data/kernel_experiments.json``, which ``chapters/07_kernel_embeddings.ipynb`` loads,
asserts on and plots. The chapter never re-runs this script.

Parts
-----
``running_example``
    The running example of the kernel chapter: three 1-d views, each a mixture of N(−4, 1), a Gamma
    with shape 0.8 (scale 1, shifted to start at 0) and N(5, 0.8²) with weights
    (1, 2, 3)/6, m = 2000, seeds 0-4. Weighted density error (below) of
    ``KernelSpectral(3, bandwidth="cv")`` (symmetric views) against scikit-learn's
    ``GaussianMixture(3, covariance_type="full", n_init=10)`` on the 3-vector
    (x1, x2, x3), whose component density of view v is the Gaussian marginal.
``synthetic``
    Figure 3 of Song et al. at laptop scale: m ∈ {50, 200, 1000, 5000, 10000},
    k ∈ {2, 3, 4, 8}, π_h ∝ h, ten repetitions (as the paper), two settings — ``gauss`` (Gaussian
    components with different variances) and ``gamma`` (odd components Gaussian, even
    ones shifted Gammas with shape 0.8-1.0). The three views have different component
    densities (a different order of the locations in every view). Methods:
    ``kernel`` (KernelSpectral(k, symmetric=False): views symmetrised as in Appendix 9,
    falling back to Algorithm B when the symmetrised pairs matrix has fewer than k positive
    eigenvalues (``kernel_route`` records which ran); bandwidth by cross-validation on
    ``mvlib.kernel.cv_subsample_size(m)`` points, rescaled to m; exact path up to
    m = 1000 per view and rank 300 above),
    ``em_gmm`` (GaussianMixture, full covariance, n_init=10, on the 3-vector),
    ``em_gmm_diag`` (the same with diagonal covariances: the parametric model that encodes
    the views' conditional independence),
    ``spectral_gmm`` (mvlib.SpectralGMM on the 3-vector: needs d = 3 > k, so k = 2
    only), ``npem`` (mvlib.NonparametricEM with the kernel method's bandwidths, m ≤ 1000
    because it costs O(m²) per iteration), ``histogram`` (mvlib.HistogramSpectral).
``clustering``
    F-score (classes matched to clusters by the Hungarian algorithm, F1 weighted by
    class size) on scikit-learn's bundled wine (k = 3) and breast-cancer (k = 2) data,
    standardised, features split into three views by low cross-correlation (greedy,
    §8.2 of Song et al.), against EM-GMM on all features.
``theorem2``
    ε_T = ‖T̂ − T‖_F against m for the Gaussian RBF embedding represented by an explicit
    finite feature map (normalised Gaussian bumps on a grid of centres), in which the
    population T is exact; T̂ is rotated onto T's whitened basis (orthogonal Procrustes)
    before the difference is taken.
``bandwidth``
    The weighted density error of KernelSpectral against a fixed bandwidth s, for two
    sample sizes, on the running example (whose Gamma(0.8) component has a pole, so Remark
    3's O(s²) bias does not apply to it).
``bandwidth_smooth``
    The same on smooth components (the Gamma replaced by N(0.5, 0.7²)), where Remark 3
    applies (bias O(s²), variance O(s^{-d/2} m^{-1/2}) if ρ/σ_k stays bounded): m ∈ {300,
    3000, 30000}, 25 bandwidths from 0.05 to 2, three samples each; ``error`` (dx = 1) and
    ``error_l2``.
``theorem2_bound``
    Theorem 2's bound eq-ch7-epsT (δ = 0.05) against the measured ε_T, and the ratios of its two
    conclusions, for m ∈ {1000, 10⁴, 10⁵}, three samples each (about half a minute).
``smoothing``
    The smoothing floor (``smoothing_floor``: the error of the exact densities smoothed at
    bandwidth s) on the ``bandwidth`` part's grid, and the population smoothing bias of the
    Gamma(0.8) and N(−4, 1) components at four bandwidths (about a minute).
``summary``
    Written on every run from the stored parts (no new fits): the curves, claims, routes and
    fit times of ``synthetic``, mean ε_T per m of ``theorem2``, the error curves and best
    bandwidths of the two bandwidth parts, and the largest within-class cross-view correlation
    of the clustering data sets.

Weighted density error (Song et al. 2014, §8.1)
-----------------------------------------------
Σ_h π_h √(Σ_j (p(x_j|h) − p̂(x_j|h))²) over G = 400 uniformly spaced points x_j
covering every component (``mvlib.weighted_density_error`` with dx = 1, components
matched by the Hungarian algorithm), averaged over the three views: ``errors``. The grid
covers a range that grows with k, so these values are not comparable across k; the
synthetic rows also store ``errors_l2``, the same with each view's grid step dx
(≈ Σ_h π_h ‖p(·|h) − p̂(·|h)‖_{L²}), which is.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import multiprocessing as mp  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402  (F-score matching)
from sklearn.datasets import load_breast_cancer, load_wine  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import mvlib  # noqa: E402
from mvlib.book import data_path, rounded, write_json  # noqa: E402
from mvlib.core.tensors import cp_tensor, cp_to_dense, multilinear  # noqa: E402

PARTS = ["running_example", "synthetic", "clustering", "theorem2", "theorem2_bound", "bandwidth",
         "bandwidth_smooth", "smoothing"]
N_GRID = 400


# ----------------------------------------------------------------------------- data
def running_example_components():
    dists = [stats.norm(-4, 1), stats.gamma(0.8, loc=0.0, scale=1.0), stats.norm(5, 0.8)]
    return [dists] * 3, np.array([1.0, 2.0, 3.0]) / 6


def synthetic_components(setting, k):
    """Per view, k frozen scipy distributions; locations 5 apart, order permuted per view."""
    rng = np.random.default_rng(1000 * k + (setting == "gamma"))
    locs = 5.0 * np.arange(k)
    views = []
    for v in range(3):
        order = np.arange(k) if v == 0 else rng.permutation(k)
        dists = []
        for h in range(k):
            loc = locs[order[h]]
            if setting == "gamma" and h % 2 == 1:
                dists.append(stats.gamma(rng.choice([0.8, 0.9, 1.0]), loc=loc - 1.0, scale=1.0))
            else:
                dists.append(stats.norm(loc, rng.uniform(0.6, 1.2)))
        views.append(dists)
    w = np.arange(1, k + 1, dtype=float)
    return views, w / w.sum()


def sample(dists, w, m, seed):
    rng = np.random.default_rng(seed)
    h = rng.choice(len(w), size=m, p=w)
    views = []
    for comps in dists:
        x = np.empty(m)
        for j, dist in enumerate(comps):
            x[h == j] = dist.rvs(size=int(np.sum(h == j)), random_state=rng)
        views.append(x[:, None])
    return views, h


def grids(dists):
    out = []
    for comps in dists:
        lo = min(d.ppf(0.001) for d in comps) - 1.0
        hi = max(d.ppf(0.999) for d in comps) + 1.0
        out.append(np.linspace(lo, hi, N_GRID))
    return out


def true_densities(dists, grid_list):
    return [np.stack([d.pdf(g) for d in comps], axis=1) for comps, g in zip(dists, grid_list)]


def weighted_error(true, est, w, grid_list=None):
    """mvlib.weighted_density_error per view, averaged over views: dx = 1 (the paper's plain sum)
    without ``grid_list``; with it, each view's grid step (an L² error, comparable across k)."""
    dxs = [1.0] * len(true) if grid_list is None else [float(g[1] - g[0]) for g in grid_list]
    return float(np.mean([mvlib.weighted_density_error(T, E, w, dx=dx) for T, E, dx in zip(true, est, dxs)]))


# ----------------------------------------------------------------------------- methods
def gmm_marginals(gm, grid_list):
    """Component densities of each coordinate of a fitted GaussianMixture, per view (G, k)."""
    out = []
    for v, g in enumerate(grid_list):
        cov = gm.covariances_        # full (k, d, d), diag (k, d) or spherical (k,)
        sd = np.sqrt(cov[:, v, v] if cov.ndim == 3 else cov[:, v] if cov.ndim == 2 else cov)
        out.append(stats.norm.pdf(g[:, None], gm.means_[None, :, v], sd[None, :]))
    return out


def fit_kernel(views, k, seed, bandwidth="cv", symmetric=True):
    """KernelSpectral with its default path choice (exact up to 2000 basis points, else rank 300)."""
    return mvlib.KernelSpectral(k, bandwidth=bandwidth, random_state=seed, symmetric=symmetric).fit(views)


def run_method(name, views, k, seed, grid_list, kernel_model=None):
    """Component densities on the grids (list of (G, k)), or None when the method does not apply."""
    if name == "kernel":
        return [kernel_model.conditional_density(g[:, None], view=v) for v, g in enumerate(grid_list)]
    if name in ("em_gmm", "em_gmm_diag"):
        cov = "full" if name == "em_gmm" else "diag"
        gm = GaussianMixture(k, covariance_type=cov, n_init=10, random_state=seed).fit(np.hstack(views))
        return gmm_marginals(gm, grid_list)
    if name == "spectral_gmm":
        if k >= 3:
            return None
        sg = mvlib.SpectralGMM(k, random_state=seed).fit(np.hstack(views))
        return [stats.norm.pdf(g[:, None], sg.means_[None, :, v], np.sqrt(sg.covariances_)[None, :])
                for v, g in enumerate(grid_list)]
    if name == "npem":
        if views[0].shape[0] > 1000:
            return None
        bw = list(kernel_model.bandwidth_) if kernel_model is not None and hasattr(kernel_model, "bandwidth_") \
            else "silverman"
        est = mvlib.NonparametricEM(k, bandwidth=bw, random_state=seed).fit(views)
        return [est.conditional_density(g[:, None], view=v) for v, g in enumerate(grid_list)]
    if name == "histogram":
        est = mvlib.HistogramSpectral(k, random_state=seed).fit(views)
        return [est.conditional_density(g[:, None], view=v) for v, g in enumerate(grid_list)]
    raise ValueError(name)


METHODS = ["kernel", "em_gmm", "em_gmm_diag", "spectral_gmm", "npem", "histogram"]


def evaluate(views, k, seed, dists, w, methods=METHODS, symmetric=False):
    grid_list = grids(dists)
    true = true_densities(dists, grid_list)
    errors, errors_l2, seconds = {}, {}, {}
    kernel_model = None
    for name in methods:
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if name == "kernel":
                    kernel_model = fit_kernel(views, k, seed, symmetric=symmetric)
                est = run_method(name, views, k, seed, grid_list, kernel_model)
        except Exception as exc:  # a failure is a result: record it
            errors[name] = errors_l2[name] = f"failed: {type(exc).__name__}: {str(exc)[:120]}"
            seconds[name] = None
            continue
        seconds[name] = time.perf_counter() - t0
        errors[name] = None if est is None else weighted_error(true, est, w)
        errors_l2[name] = None if est is None else weighted_error(true, est, w, grid_list)
    return errors, seconds, kernel_model, errors_l2


# ----------------------------------------------------------------------------- parts
def part_running_example(seeds):
    dists, w = running_example_components()
    rows = []
    for s in seeds:
        views, _ = sample(dists, w, 2000, s)
        err, sec, km, _ = evaluate(views, 3, s, dists, w, methods=["kernel", "em_gmm"], symmetric=True)
        rows.append({"seed": s, "errors": err, "seconds": sec,
                     "bandwidth": [float(b) for b in np.ravel(getattr(km, "bandwidth_", [np.nan]))]})
        print(f"running example, seed {s}: {err}", flush=True)
    ok = [r for r in rows if all(isinstance(r["errors"][m], float) for m in ("kernel", "em_gmm"))]
    mean = {m: float(np.mean([r["errors"][m] for r in ok])) if ok else None for m in ("kernel", "em_gmm")}
    return {"m": 2000, "seeds": list(seeds), "rows": rows, "mean_error": mean,
            "kernel_beats_em": bool(ok and len(ok) == len(rows) and mean["kernel"] < mean["em_gmm"])}


def _synthetic_task(args):
    setting, k, m, r, methods = args
    with threadpool_limits(1):
        dists, w = synthetic_components(setting, k)
        seed = 100000 * k + 10 * m + r + (setting == "gamma") * 7
        views, _ = sample(dists, w, m, seed)
        err, sec, km, err_l2 = evaluate(views, k, r, dists, w, methods=methods)
        return {"setting": setting, "k": k, "m": m, "rep": r, "errors": err,
                "errors_l2": err_l2, "seconds": sec,
                "kernel_route": getattr(km, "method_used_", None),
                "kernel_bandwidth": [float(b) for b in getattr(km, "bandwidth_", [])]}


def part_synthetic(m_grid, k_grid, reps, methods=METHODS, previous=None, processes=2):
    """Run ``methods`` on the grid (tasks spread over ``processes``, one thread each); results of
    other methods are kept from ``previous``."""
    old = {(r["setting"], r["k"], r["m"], r["rep"]): r for r in (previous or {}).get("rows", [])}
    tasks = [(setting, k, m, r, methods) for setting in ("gauss", "gamma") for k in k_grid
             for m in m_grid for r in range(reps)]
    tasks.sort(key=lambda t: -t[2])               # the largest m first
    if processes > 1:
        with mp.get_context("fork").Pool(processes) as pool:
            done = pool.map(_synthetic_task, tasks, chunksize=1)
    else:
        done = [_synthetic_task(t) for t in tasks]
    rows = []
    for new in sorted(done, key=lambda r: (r["setting"] == "gamma", r["k"], r["m"], r["rep"])):
        row = old.get((new["setting"], new["k"], new["m"], new["rep"]),
                      {"errors": {}, "errors_l2": {}, "seconds": {}})
        for key in ("errors", "errors_l2", "seconds"):
            row.setdefault(key, {}).update(new[key])
        row.update({key: new[key] for key in ("setting", "k", "m", "rep")})
        if "kernel" in methods:
            row.update({key: new[key] for key in ("kernel_route", "kernel_bandwidth")})
        rows.append(row)
    for setting in ("gauss", "gamma"):
        for k in k_grid:
            for m in m_grid:
                cell = [r for r in rows if (r["setting"], r["k"], r["m"]) == (setting, k, m)]
                kern = [r["errors"].get("kernel") for r in cell]
                print(f"{setting} k={k} m={m}: kernel " + ", ".join(
                    f"{v:.3f}" if isinstance(v, float) else "failed" for v in kern), flush=True)
    return {"m_grid": list(m_grid), "k_grid": list(k_grid), "reps": reps, "methods": METHODS, "rows": rows}


def split_views(Z, n_views=3):
    """Greedy split of the columns into views with low cross-view correlation (Song et al. §8.2)."""
    C = np.abs(np.corrcoef(Z.T))
    d = Z.shape[1]
    # seeds: three features with the smallest mutual correlations, then each feature joins
    # the (not yet full) view it correlates with most, so that views correlate little with
    # each other; views get ceil(d / 3) features at most
    best, seeds_ = np.inf, None
    for a in range(d):
        for b in range(a + 1, d):
            for c in range(b + 1, d):
                val = C[a, b] + C[a, c] + C[b, c]
                if val < best:
                    best, seeds_ = val, [a, b, c]
    groups = [[s] for s in seeds_]
    size = int(np.ceil(d / n_views))
    for j in np.argsort(-C[seeds_].max(0)):
        if j in seeds_:
            continue
        open_ = [g for g in groups if len(g) < size]
        open_[int(np.argmax([C[j, g].mean() for g in open_]))].append(int(j))
    return [sorted(int(j) for j in g) for g in groups]


def f_score(y, pred):
    """Classes matched to clusters (Hungarian on the contingency table), weighted F1."""
    classes, clusters = np.unique(y), np.unique(pred)
    table = np.array([[np.sum((y == a) & (pred == b)) for b in clusters] for a in classes])
    r, c = linear_sum_assignment(-table)
    mapping = {clusters[j]: classes[i] for i, j in zip(r, c)}
    relabelled = np.array([mapping.get(p, -1) for p in pred])
    return float(f1_score(y, relabelled, labels=classes, average="weighted"))


def part_clustering():
    out = {}
    for name, loader, k in (("wine", load_wine, 3), ("breast_cancer", load_breast_cancer, 2)):
        X, y = loader(return_X_y=True)
        Z = (X - X.mean(0)) / X.std(0)
        groups = split_views(Z)
        views = [Z[:, g] for g in groups]
        C = np.abs(np.corrcoef(Z.T))
        cross = float(max(C[np.ix_(groups[a], groups[b])].max() for a in range(3) for b in range(a + 1, 3)))
        res = {"n": int(Z.shape[0]), "d": int(Z.shape[1]), "k": k, "views": groups,
               "max_cross_correlation": cross, "f_score": {}}
        fits = {
            "kernel": lambda s: mvlib.KernelSpectral(k, random_state=s, symmetric=False).fit(views).predict(views),
            "em_gmm": lambda s: GaussianMixture(k, covariance_type="full", n_init=10,
                                                random_state=s).fit(Z).predict(Z),
            "em_gmm_diag": lambda s: GaussianMixture(k, covariance_type="diag", n_init=10,
                                                     random_state=s).fit(Z).predict(Z),
            "spectral_gmm": lambda s: mvlib.SpectralGMM(k, random_state=s).fit(Z).predict(Z),
            "npem": lambda s: mvlib.NonparametricEM(k, random_state=s).fit(views).predict(views),
            "histogram": lambda s: mvlib.HistogramSpectral(k, random_state=s).fit(views).predict(views),
        }
        for meth, fit in fits.items():
            scores = []
            for s in range(5):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        scores.append(f_score(y, fit(s)))
                except Exception as exc:
                    scores = f"failed: {type(exc).__name__}: {str(exc)[:120]}"
                    break
            res["f_score"][meth] = scores
        out[name] = res
        print(name, {m: (np.round(np.mean(v), 3) if isinstance(v, list) else v) for m, v in res["f_score"].items()},
              flush=True)
    return out


def bump_features(x, centres, a):
    """Explicit feature map φ(x)_j = N(x; c_j, a²), (m, D): its kernel is a Gaussian RBF up to edges."""
    return stats.norm.pdf(x[:, None], centres[None, :], a)


def part_theorem2(m_grid, reps):
    """ε_T = ‖T̂ − T‖_F for the running-example mixture in the explicit bump features (exact population)."""
    # population embeddings of N(μ, σ²) are N(c; μ, σ² + a²); Gamma components have no closed
    # form, so this part uses the Gaussian mixture N(-4,1), N(0.5,0.7²), N(5,0.8²)
    mus, sds, w = np.array([-4.0, 0.5, 5.0]), np.array([1.0, 0.7, 0.8]), np.array([1.0, 2.0, 3.0]) / 6
    a = 0.5
    centres = np.linspace(-9, 10, 96)
    Mu = stats.norm.pdf(centres[:, None], mus[None, :], np.sqrt(sds ** 2 + a ** 2))   # (D, k)
    C2 = (Mu * w) @ Mu.T
    W = mvlib.whitening_matrix(C2, 3)
    V = W.T @ Mu                                                                      # (k, k)
    T = np.einsum("h,ih,jh,lh->ijl", w, V, V, V)
    dists = [[stats.norm(mu, sd) for mu, sd in zip(mus, sds)]] * 3
    rows = []
    for m in m_grid:
        for r in range(reps):
            views, _ = sample(dists, w, m, 7 * m + r)
            F = [bump_features(x[:, 0], centres, a) for x in views]
            C2h = 0.5 * (F[0].T @ F[1] + F[1].T @ F[0]) / m
            Wh = mvlib.whitening_matrix(C2h, 3)
            U_, _, Vt_ = np.linalg.svd((Wh.T @ Mu) @ V.T)     # Procrustes: Q^T Wh^T Mu ≈ W^T Mu
            Wq = Wh @ (U_ @ Vt_)
            Th = (mvlib.whitened_triples(F[0], F[1], F[2], Wq, Wq, Wq)
                  + mvlib.whitened_triples(F[2], F[0], F[1], Wq, Wq, Wq)
                  + mvlib.whitened_triples(F[1], F[2], F[0], Wq, Wq, Wq)) / 3
            T_fixed = mvlib.whitened_triples(F[0], F[1], F[2], W, W, W)   # population whitening
            rows.append({"m": m, "rep": r, "eps_T": float(np.linalg.norm(Th - T)),
                         "eps_T_population_whitening": float(np.linalg.norm(T_fixed - T))})
        print(f"theorem2 m={m}: {np.mean([x['eps_T'] for x in rows if x['m'] == m]):.4f}", flush=True)
    return {"feature_bandwidth": a, "n_centres": int(centres.size), "means": mus.tolist(), "sds": sds.tolist(),
            "weights": w.tolist(), "rows": rows}


def smooth_components():
    """The running example with its Gamma component replaced by N(0.5, 0.7²): every density smooth."""
    dists = [stats.norm(-4, 1), stats.norm(0.5, 0.7), stats.norm(5, 0.8)]
    return [dists] * 3, np.array([1.0, 2.0, 3.0]) / 6


def part_bandwidth(s_grid, m_list, reps, smooth=False):
    """Density error (dx = 1 and L²) of KernelSpectral against a fixed bandwidth s."""
    dists, w = smooth_components() if smooth else running_example_components()
    grid_list = grids(dists)
    true = true_densities(dists, grid_list)
    rows = []
    for m in m_list:
        for r in range(reps):
            views, _ = sample(dists, w, m, 31 * m + r)
            for s in s_grid:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        km = fit_kernel(views, 3, r, bandwidth=float(s), symmetric=True)
                    est = [km.conditional_density(g[:, None], view=v) for v, g in enumerate(grid_list)]
                    e, e_l2 = weighted_error(true, est, w), weighted_error(true, est, w, grid_list)
                except Exception as exc:
                    e = e_l2 = f"failed: {type(exc).__name__}"
                rows.append({"m": m, "rep": r, "bandwidth": float(s), "error": e, "error_l2": e_l2})
        print(f"bandwidth{' (smooth)' if smooth else ''} m={m} done", flush=True)
    return {"s_grid": [float(s) for s in s_grid], "m_list": list(m_list), "rows": rows,
            "components": "smooth" if smooth else "running_example"}


# ----------------------------------------------------------------------------- the chapter's measurements
def smoothing_floor(s, dists=None, w=None):
    """The error (dx = 1) of the exact component densities smoothed at bandwidth ``s``, no noise:
    Σ_h π_h ‖p_h * N(0, s²) − p_h‖ on the view-1 grid of ``grids`` (``mvlib.kernel.smoothing_bias``)."""
    if dists is None:
        dists, w = running_example_components()
    grid = grids(dists)[0]
    dx = grid[1] - grid[0]
    return sum(p * mvlib.kernel.smoothing_bias(d, s, grid) / np.sqrt(dx) for p, d in zip(w, dists[0]))


def part_smoothing(s_grid):
    """The smoothing floor on the bandwidth part's grid ``s_grid`` and the population smoothing bias
    of the Gamma(0.8) and N(−4, 1) components at s ∈ {0.02, 0.05, 0.1, 0.2} (its slope in log-log
    is the order of the bias: 1/2 − α at a pole y^(−α), 2 for a smooth density)."""
    dists, _ = running_example_components()
    s_b = [0.02, 0.05, 0.1, 0.2]
    x_b = np.linspace(-2, 8, 10001)
    bias = {name: [mvlib.kernel.smoothing_bias(d, b, x_b + shift) for b in s_b]
            for name, d, shift in (("Gamma(0.8)", dists[0][1], 0.0), ("N(-4, 1)", dists[0][0], -5.0))}
    return {"s_grid": [float(s) for s in s_grid], "floor": [smoothing_floor(s) for s in s_grid],
            "bias_bandwidths": s_b, "bias": bias}


def population_bumps():
    """The population section of the chapter: three Gaussians N(−4, 1), N(0.5, 0.7²), N(5, 0.8²),
    weights (1, 2, 3)/6, in the feature map of D = 96 Gaussian bumps of width a = 0.5. Returns the
    exact C_{X|H} (D, k), C_{X1X2}, its whitening W and the whitened tensor T (k, k, k)."""
    m_pop, sd_pop = np.array([-4.0, 0.5, 5.0]), np.array([1.0, 0.7, 0.8])
    w = np.array([1.0, 2.0, 3.0]) / 6
    a_feat, centres = 0.5, np.linspace(-9, 10, 96)
    C_XH = stats.norm.pdf(centres[:, None], m_pop, np.sqrt(sd_pop**2 + a_feat**2))
    C2 = C_XH @ np.diag(w) @ C_XH.T
    C3 = cp_to_dense(cp_tensor(w, [C_XH] * 3))
    W = mvlib.whitening_matrix(C2, 3)
    T = multilinear(C3, W, W, W)
    return {"means": m_pop, "sds": sd_pop, "weights": w, "a": a_feat, "centres": centres,
            "C_XH": C_XH, "C2": C2, "W": W, "T": T}


def part_theorem2_bound(sizes, reps, delta=0.05):
    """Theorem 2 of Song et al. measured in the bump features of ``population_bumps``: ε_T of
    ``mvlib.kernel.kernel_spectral_decomposition`` (sample whitening rotated onto the population
    basis by orthogonal Procrustes) against the bound eq-ch7-epsT at δ = ``delta``, and the ratios
    of the theorem's two conclusions (eigenvalues: ≤ 5 ε_T; embeddings: ≤ 8 ε_T π^(1/2), and the
    form printed in the paper with π^(−1/2)). Samples ``mvlib.kernel.sample_views``, seed 700 + rep."""
    pop = population_bumps()
    C_XH, W, T, w, centres, a = pop["C_XH"], pop["W"], pop["T"], pop["weights"], pop["centres"], pop["a"]
    x_fine = np.linspace(-15, 16, 20001)
    rho = float(np.max(np.sum(stats.norm.pdf(x_fine[:, None], centres[None, :], a) ** 2, axis=1)))
    sigma_k = float(np.linalg.eigvalsh(pop["C2"])[::-1][2])
    log_d = np.log(2 / delta)

    def eps_bound(m):
        # the right-hand side of eq-ch7-epsT
        return (8 * rho**1.5 * np.sqrt(log_d) / (np.sqrt(m) * sigma_k**1.5)
                + 512 * np.sqrt(2) * rho**3 * log_d**1.5 / (m**1.5 * sigma_k**3 * np.sqrt(w.min())))

    comps = [stats.norm(a_, b_) for a_, b_ in zip(pop["means"], pop["sds"])]
    rows = []
    for m in sizes:
        for rep in range(reps):
            views, _ = mvlib.kernel.sample_views(comps, w, m, 700 + rep)
            F = [stats.norm.pdf(v, centres[None, :], a) for v in views]               # (m, D)
            out = mvlib.kernel.kernel_spectral_decomposition(*F, 3, random_state=rep)
            U_, _, Vt_ = np.linalg.svd((out["whitening"].T @ C_XH) @ (W.T @ C_XH).T)
            R = U_ @ Vt_                                      # Procrustes rotation
            eps_T = np.linalg.norm(multilinear(out["T"], R, R, R) - T)
            p_ = mvlib.match_columns(C_XH, out["embeddings"])[0]
            lam_hat, mu_hat = out["eigenvalues"][p_], out["embeddings"][:, p_]
            mu_dev = np.linalg.norm(w**0.5 * C_XH - mu_hat / lam_hat, axis=0)          # corrected
            mu_dev_printed = np.linalg.norm(w**-0.5 * C_XH - mu_hat / lam_hat, axis=0)
            bound = eps_bound(m)
            rows.append({"m": m, "rep": rep, "eps_T": eps_T, "bound": bound, "eps_over_bound": eps_T / bound,
                         "lambda_ratio": np.abs(lam_hat - w**-0.5).max() / eps_T,
                         "embedding_ratio": np.max(mu_dev / (eps_T * w**0.5)),
                         "embedding_ratio_printed": np.max(mu_dev_printed / (eps_T * w**-0.5))})
        print(f"theorem2_bound m={m} done", flush=True)
    return {"rho": rho, "sigma_k": sigma_k, "pi_min": float(w.min()), "delta": delta, "rows": rows}


def clustering_within_class(clustering):
    """Largest |correlation| between features of different views within one class, per data set
    (the labels serve this diagnosis only), for the view split stored in the clustering part."""
    out = {}
    for name, loader in (("wine", load_wine), ("breast_cancer", load_breast_cancer)):
        Z, y = loader(return_X_y=True)
        owner = np.empty(Z.shape[1], dtype=int)
        for v, g in enumerate(clustering[name]["views"]):
            owner[g] = v
        across = owner[:, None] != owner[None, :]
        out[name] = max(np.abs(np.corrcoef(Z[y == c].T))[across].max() for c in np.unique(y))
    return out


# ----------------------------------------------------------------------------- summaries of stored parts
def margin_below(a, b):
    """mean(b) − mean(a) − 2 standard errors of the difference: positive when mean(a) is below
    mean(b) by more than two standard errors (Welch)."""
    return b.mean() - (a.mean() + 2 * np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))


def synthetic_summary(syn, m_np=1000):
    """What the chapter plots and asserts from the synthetic rows: per (setting, k, method) the mean
    and standard deviation over the data sets of the L² error per m (``curves``); per (setting, k)
    the fitted log-log slope of the kernel error for m ≥ 200, its step from the second-largest to the
    largest m, error ratios at the largest m (npEM at ``m_np``) and Welch margins (``claims``); the
    kernel routes, the refused fits and the median fit times at the largest m."""
    M_GRID = np.array(syn["m_grid"])
    m_max = int(M_GRID.max())

    def runs(setting, k, method, m, key="errors_l2"):
        vals = [r[key].get(method) for r in syn["rows"] if (r["setting"], r["k"], r["m"]) == (setting, k, m)]
        return np.array([v for v in vals if isinstance(v, float)])

    def curve(setting, k, method, key="errors_l2"):
        out = [runs(setting, k, method, m, key) for m in M_GRID]
        return (np.array([v.mean() if v.size else np.nan for v in out]),
                np.array([v.std(ddof=1) if v.size > 1 else np.nan for v in out]))

    curves, claims = {}, []
    for setting in ("gauss", "gamma"):
        curves[setting] = {}
        for k in syn["k_grid"]:
            curves[setting][str(k)] = {}
            for method in syn["methods"]:
                mean, sd = curve(setting, k, method)
                curves[setting][str(k)][method] = {"mean": mean, "sd": sd}
            mean_k = curve(setting, k, "kernel")[0]
            fit = M_GRID >= 200
            last = {meth: runs(setting, k, meth, m_max) for meth in syn["methods"]}

            def ratio(a, b, m=m_max):
                return runs(setting, k, a, m).mean() / runs(setting, k, b, m).mean()

            claims.append(dict(
                setting=setting, k=k, slope=np.polyfit(np.log(M_GRID[fit]), np.log(mean_k[fit]), 1)[0],
                step=mean_k[-1] / mean_k[-2], kernel_em=ratio("kernel", "em_gmm"),
                npem_kernel=ratio("npem", "kernel", m_np), hist_kernel=ratio("histogram", "kernel"),
                diag_full=ratio("em_gmm_diag", "em_gmm"),
                margin_em_below_kernel=margin_below(last["em_gmm"], last["kernel"]),
                margin_kernel_below_em=margin_below(last["kernel"], last["em_gmm"]),
                margin_kernel_below_hist=margin_below(last["kernel"], last["histogram"])))
    routes = [r.get("kernel_route") for r in syn["rows"]]
    ran = {meth: [r["seconds"][meth] for r in syn["rows"] if r["m"] == m_max
                  and isinstance(r["errors"].get(meth), float)] for meth in syn["methods"]}
    return {"m_max": m_max, "m_np": m_np, "curves": curves, "claims": claims,
            "routes": {"tensor": routes.count("tensor"), "observable": routes.count("observable"),
                       "total": len(routes)},
            "fallback_cells": sorted({(r["setting"], r["k"], r["m"]) for r in syn["rows"]
                                      if r.get("kernel_route") == "observable"}),
            "refused": [[r["setting"], r["k"], r["m"], r["errors"]["kernel"]] for r in syn["rows"]
                        if isinstance(r["errors"].get("kernel"), str)],
            "median_seconds": {meth: float(np.median(v)) for meth, v in ran.items() if v}}


def bandwidth_summary(part, key):
    """Per m of a bandwidth part: the mean ``key`` error over its samples per bandwidth (NaN where
    every fit failed), the grid bandwidth of the smallest error, and the vertex of the parabola
    through that error and its neighbours in log s (a finer estimate of the best bandwidth)."""
    s_ = np.array(part["s_grid"])
    out = {"s_grid": s_, "error": {}, "best_grid": {}, "best_vertex": {}}
    for m in part["m_list"]:
        runs_s = [[r[key] for r in part["rows"] if r["m"] == m and r["bandwidth"] == b
                   and isinstance(r[key], float)] for b in s_]
        err = np.array([np.mean(v) if v else np.nan for v in runs_s])
        i = int(np.nanargmin(err))
        out["error"][str(m)], out["best_grid"][str(m)] = err, s_[i]
        if 0 < i < len(s_) - 1:
            a, b, c = np.log(err[i - 1:i + 2])
            out["best_vertex"][str(m)] = float(np.exp(np.log(s_[i]) + 0.5 * np.log(s_[1] / s_[0])
                                                       * (a - c) / (a - 2 * b + c)))
    return out


def theorem2_summary(th):
    """Mean ε_T per m over the repetitions, with sample and with population whitening."""
    m_th = sorted({r["m"] for r in th["rows"]})
    return {"m": m_th,
            "eps_T": [np.mean([r["eps_T"] for r in th["rows"] if r["m"] == m]) for m in m_th],
            "eps_T_population_whitening": [np.mean([r["eps_T_population_whitening"] for r in th["rows"]
                                                    if r["m"] == m]) for m in m_th]}


def summaries(results):
    """The summaries of the stored parts that are present (no new fits)."""
    out = {}
    if "synthetic" in results:
        out["synthetic"] = synthetic_summary(results["synthetic"])
    if "theorem2" in results:
        out["theorem2"] = theorem2_summary(results["theorem2"])
    for part, key in (("bandwidth", "error"), ("bandwidth_smooth", "error_l2")):
        if part in results:
            out[part] = bandwidth_summary(results[part], key)
    if "clustering" in results:
        out["clustering_within_class"] = clustering_within_class(results["clustering"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes; prints a summary, writes nothing")
    ap.add_argument("--methods", nargs="*", default=METHODS,
                    help="synthetic part: methods to (re-)run; the others' stored results are kept")
    ap.add_argument("--processes", type=int, default=2, help="synthetic part: worker processes (default 2)")
    ap.add_argument("--parts", nargs="*", default=PARTS,
                    help="parts to (re-)run; the stored results of the others are kept (none: summaries only)")
    args = ap.parse_args()
    out_path = data_path("kernel_experiments.json")
    results = {} if args.quick or not out_path.exists() else json.loads(out_path.read_text())
    t_start = time.perf_counter()
    with threadpool_limits(1):
        for part in args.parts:
            t0 = time.perf_counter()
            if part == "running_example":
                results[part] = part_running_example([0, 1] if args.quick else range(5))
            elif part == "synthetic":
                grid = ([100, 400], [2, 3], 1) if args.quick else ([50, 200, 1000, 5000, 10000], [2, 3, 4, 8], 10)
                results[part] = part_synthetic(*grid, methods=args.methods, previous=results.get(part),
                                               processes=args.processes)
            elif part == "clustering":
                results[part] = part_clustering()
            elif part == "theorem2":
                results[part] = (part_theorem2([100, 1000], 2) if args.quick
                                 else part_theorem2([100, 300, 1000, 3000, 10000, 30000, 100000], 10))
            elif part == "theorem2_bound":
                results[part] = (part_theorem2_bound([300, 1000], 1) if args.quick
                                 else part_theorem2_bound([1000, 10000, 100000], 3))
            elif part == "bandwidth":
                s_grid = np.geomspace(0.01, 3.0, 6 if args.quick else 13)
                results[part] = part_bandwidth(s_grid, [200] if args.quick else [300, 3000], 1 if args.quick else 3)
            elif part == "bandwidth_smooth":
                s_grid = np.geomspace(0.05, 2.0, 6 if args.quick else 25)
                results[part] = part_bandwidth(s_grid, [200] if args.quick else [300, 3000, 30000],
                                               1 if args.quick else 3, smooth=True)
            elif part == "smoothing":
                s_grid = results["bandwidth"]["s_grid"] if "bandwidth" in results else np.geomspace(0.01, 3.0, 13)
                results[part] = part_smoothing(s_grid[::4] if args.quick else s_grid)
            else:
                raise SystemExit(f"unknown part {part}")
            results.setdefault("seconds", {})[part] = round(time.perf_counter() - t0, 1)
            if not args.quick:
                write_json(results, out_path, digits=10)
        results["summary"] = summaries(results)
    if args.quick:
        print(json.dumps(rounded(results["summary"], 4))[:2000])
    else:
        write_json(results, out_path, digits=10)
    print(f"total {time.perf_counter() - t_start:.0f} s" + ("" if args.quick else f" -> {out_path}"))


if __name__ == "__main__":
    main()
