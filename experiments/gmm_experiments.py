r"""Experiments of the Gaussian-mixtures chapter; results go to ``chapters/data/gmm_*.json``.

Run ``.venv/bin/python experiments/gmm_experiments.py`` (a few minutes on 2 cores; ``--quick``
runs 3 seeds at n = 10,000 only, for a smoke test, and writes nothing). The chapter
``chapters/05_gaussian_mixtures.ipynb`` does not re-run the grid (too slow for the book's time
budget): ``experiments/gmm_chapter.py`` summarises the file per cell of the grid into
``gmm_chapter.json``, which the chapter loads, asserts on, plots and quotes.

``gmm_separation.json`` — how the methods behave as the components move together
    Model: d = 10, k = 4, weights (0.1, 0.2, 0.3, 0.4), common σ = 1. For a separation
    Δ and a seed s, ``numpy.random.default_rng(s)`` draws G (d × k) with N(0, 1) entries
    and the means are the columns of Δ·G / min_{h≠h'} ‖G_h − G_h'‖, so the closest two
    means are exactly Δσ apart. Then 2n samples: the first n are fitted, the other n are
    held out. Grid: Δ ∈ {1, 1.5, 2, 3, 4, 6, 8, 12}, n ∈ {10,000, 100,000}, seeds 0..9.

    Methods (the same data for all):

    * ``spectral``: ``mvlib.SpectralGMM(4, random_state=s)``; a ``ValueError`` (the rank
      check: the fourth eigenvalue of 𝓜₂ is within the sampling noise) is recorded as a
      refusal;
    * ``spec->EM``: ``SpectralGMM.to_sklearn().fit(X)`` (refused with the spectral fit);
    * ``km x1``: ``GaussianMixture(4, covariance_type="spherical", random_state=s)``,
      scikit-learn's defaults (one k-means start, ``tol=1e-3``, ``max_iter=100``);
    * ``rand x1`` / ``rand x5``: ``init_params="random"`` (random responsibilities),
      ``n_init`` 1 or 5.

    Recorded per run: ``error`` = max_h ‖μ̂_h − μ_h‖ / σ after the best matching of
    components (``mvlib.matched_error``), ``weight_error`` = max_h |ŵ_h − w_h|,
    ``var_error`` = max_h |σ̂_h² − σ²| / σ², ``dll`` = held-out average log-likelihood
    minus that of the true parameters (nats per sample; ≈ 0 is the best possible),
    ``iters`` (EM iterations of the returned start, 0 for spectral), ``converged``,
    ``seconds`` (``time.perf_counter``; spec->EM includes the spectral fit).

Threads: every fit runs with the BLAS/OpenMP pools limited to one thread
(``threadpoolctl``), as in ``bench/bench_gmm.py``, so the timings compare methods, not
thread hand-offs.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

import mvlib

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
D, K = 10, 4
WEIGHTS = np.array([0.1, 0.2, 0.3, 0.4])
SEPARATIONS = [1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0]
NS = [10_000, 100_000]
SEEDS = list(range(10))
METHODS = ["spectral", "spec->EM", "km x1", "rand x1", "rand x5"]
EM_VARIANTS = {"km x1": ("kmeans", 1), "rand x1": ("random", 1), "rand x5": ("random", 5)}


def make_problem(separation: float, n: int, seed: int):
    """Training X (n, d), held-out X (n, d) and the means M (d, k); σ = 1."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((D, K))
    closest = min(np.linalg.norm(G[:, a] - G[:, b]) for a in range(K) for b in range(a + 1, K))
    M = separation * G / closest
    h = rng.choice(K, size=2 * n, p=WEIGHTS)
    X = M[:, h].T + rng.standard_normal((2 * n, D))
    return X[:n], X[n:], M


def true_model(M) -> GaussianMixture:
    """A fitted-looking GaussianMixture at the true parameters (for the reference score)."""
    g = GaussianMixture(K, covariance_type="spherical")
    g.weights_, g.means_ = WEIGHTS.copy(), M.T.copy()
    g.covariances_ = np.ones(K)
    g.precisions_cholesky_ = np.ones(K)
    return g


def record(model, M, X_test, ll_true, seconds) -> dict:
    perm, _ = mvlib.match_columns(M, model.means_.T)
    return dict(
        error=mvlib.matched_error(M, model.means_.T),
        weight_error=float(np.abs(model.weights_[perm] - WEIGHTS).max()),
        var_error=float(np.abs(model.covariances_[perm] - 1.0).max()),
        dll=float(model.score(X_test) - ll_true),
        iters=int(getattr(model, "n_iter_", 0)),
        converged=bool(getattr(model, "converged_", True)),
        seconds=seconds,
    )


def run_one(separation: float, n: int, seed: int) -> dict:
    X, X_test, M = make_problem(separation, n, seed)
    ll_true = true_model(M).score(X_test)
    out = {}
    t0 = time.perf_counter()
    try:
        spec = mvlib.SpectralGMM(K, random_state=seed).fit(X)
    except ValueError as exc:
        spec = None
        out["spectral"] = out["spec->EM"] = dict(refused=str(exc).split(";")[0])
    t_spec = time.perf_counter() - t0
    if spec is not None:
        out["spectral"] = record(spec, M, X_test, ll_true, t_spec)
        t0 = time.perf_counter()
        ref = spec.to_sklearn().fit(X)
        out["spec->EM"] = record(ref, M, X_test, ll_true, t_spec + time.perf_counter() - t0)
    for name, (init, n_init) in EM_VARIANTS.items():
        t0 = time.perf_counter()
        em = GaussianMixture(K, covariance_type="spherical", init_params=init, n_init=n_init,
                             random_state=seed).fit(X)
        out[name] = record(em, M, X_test, ll_true, time.perf_counter() - t0)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 seeds, n = 10,000, nothing written")
    args = parser.parse_args(argv)
    seeds = SEEDS[:3] if args.quick else SEEDS
    ns = NS[:1] if args.quick else NS
    wall = time.perf_counter()
    runs = []
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # warm-up: first calls pay for imports and caches
        Xw, _, _ = make_problem(4.0, 2_000, 12345)
        mvlib.SpectralGMM(K, random_state=0).fit(Xw)
        GaussianMixture(K, covariance_type="spherical", max_iter=2).fit(Xw)
        grid = [(n, s, seed) for n in ns for s in SEPARATIONS for seed in seeds]
        for n, sep, seed in mvlib.progress(grid, desc="separation grid"):
            runs.append(dict(n=n, separation=sep, seed=seed, methods=run_one(sep, n, seed)))
    total = time.perf_counter() - wall
    for n in ns:
        print(f"\nn = {n:,}: mean error / sigma (refusals or runs with error > separation / 2)")
        print("  sep  " + "".join(f"{m:>16s}" for m in METHODS))
        for sep in SEPARATIONS:
            cells = []
            for m in METHODS:
                rs = [r["methods"][m] for r in runs if r["n"] == n and r["separation"] == sep]
                ok = [r["error"] for r in rs if "error" in r]
                bad = sum("refused" in r or r["error"] > sep / 2 for r in rs)
                cells.append(f"{np.mean(ok) if ok else float('nan'):9.3f} ({bad})")
            print(f"  {sep:4.1f} " + "".join(f"{c:>16s}" for c in cells))
    print(f"\ntotal {total:.0f} s")
    if args.quick:
        return
    OUT.mkdir(parents=True, exist_ok=True)
    payload = dict(
        description="chapter 5, low-separation grid; see experiments/gmm_experiments.py",
        d=D, k=K, weights=WEIGHTS.tolist(), sigma=1.0, separations=SEPARATIONS, ns=ns,
        seeds=seeds, methods=METHODS, threads=1,
        machine=dict(python=platform.python_version(), numpy=np.__version__,
                     sklearn=sklearn.__version__, nproc=os.cpu_count(),
                     load_average=os.getloadavg()[0]),
        total_seconds=total, runs=runs)
    path = OUT / "gmm_separation.json"
    path.write_text(json.dumps(payload, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
