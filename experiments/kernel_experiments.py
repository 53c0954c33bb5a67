r"""Experiments of the chapter "Kernel embeddings of latent variable models" (Song et al. 2014, §8).

Run ``.venv/bin/python experiments/kernel_experiments.py`` (all threads pinned to 1, the synthetic
grid spread over ``--processes 2``; about 20 minutes on a 2-core machine) or ``--quick`` (a tiny grid, for testing the
script; results then go to ``/tmp``). Writes ``chapters/data/kernel_experiments.json``,
which ``chapters/07_kernel_embeddings.ipynb`` loads and plots. The chapter never re-runs
this script.

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
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402  (F-score matching)
from sklearn.datasets import load_breast_cancer, load_wine  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import mvlib  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data" / "kernel_experiments.json"
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny grid, output to /tmp")
    ap.add_argument("--methods", nargs="*", default=METHODS,
                    help="synthetic part: methods to (re-)run; the others' stored results are kept")
    ap.add_argument("--processes", type=int, default=2, help="synthetic part: worker processes (default 2)")
    ap.add_argument("--parts", nargs="*", default=["running_example", "synthetic", "clustering", "theorem2",
                                                   "bandwidth", "bandwidth_smooth"])
    args = ap.parse_args()
    out_path = Path("/tmp/kernel_experiments_quick.json") if args.quick else OUT
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
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
            elif part == "bandwidth":
                s_grid = np.geomspace(0.01, 3.0, 6 if args.quick else 13)
                results[part] = part_bandwidth(s_grid, [200] if args.quick else [300, 3000], 1 if args.quick else 3)
            elif part == "bandwidth_smooth":
                s_grid = np.geomspace(0.05, 2.0, 6 if args.quick else 25)
                results[part] = part_bandwidth(s_grid, [200] if args.quick else [300, 3000, 30000],
                                               1 if args.quick else 3, smooth=True)
            else:
                raise SystemExit(f"unknown part {part}")
            results.setdefault("seconds", {})[part] = round(time.perf_counter() - t0, 1)
            out_path.parent.mkdir(parents=True, exist_ok=True)
            out_path.write_text(json.dumps(results, indent=1))
    print(f"total {time.perf_counter() - t_start:.0f} s -> {out_path}")


if __name__ == "__main__":
    main()
