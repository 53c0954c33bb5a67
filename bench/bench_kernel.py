r"""Benchmark: mvlib.KernelSpectral (low-rank path) at m = 20,000 against scikit-learn EM.

Run ``.venv/bin/python bench/bench_kernel.py`` (well under a minute) or add
``--quick`` (m = 5,000). ``--seeds`` chooses the data sets, ``--m`` the sample size.
A measurement script, not a test: it prints tables and never asserts on time.

Data (the kernel chapter's running example)
-------------------------------------------
Three one-dimensional views, each a mixture of N(−4, 1), a Gamma with shape 0.8 (scale 1,
starting at 0) and N(5, 0.8²), weights (1, 2, 3)/6, views independent given the
component; m triples drawn with ``numpy.random.default_rng(seed)``.

What is compared
----------------
* ``kernel low-rank``: ``KernelSpectral(3, random_state=seed).fit([X1, X2, X3])`` at its
  defaults: bandwidth by cross-validation, low-rank path (m > 500: incomplete Cholesky of
  rank ≤ 300 on the stacked views 1 and 2).
* ``kernel rank 100``: the same with ``rank=100`` (cheaper basis).
* ``EM-GMM``: ``sklearn.mixture.GaussianMixture(3, covariance_type="full", n_init=10,
  random_state=seed)`` on the 3-vectors (x1, x2, x3); its component density of a view is
  the Gaussian marginal.

Printed per seed and method: wall time (``time.perf_counter``, one run, every method on one
BLAS thread as in ``kernel_experiments.py``), time / time(EM), the weighted density error
of the kernel chapter (``kernel_experiments.weighted_error``: Σ_h π_h ‖p̂(·|h) − p(·|h)‖ on
a 400-point grid per view, components matched, averaged over the views), and the peak
resident memory of the process after each fit (``resource.getrusage``, a high-water
mark: it only grows). The point of the low-rank path: m = 20,000 should fit in well under a minute and a few GiB on 2 cores.

A second table checks the exact and the low-rank path against each other on a small case
(m = 400, both paths forced by ``rank``): the largest gap between their conditional
densities on the grid, relative to the largest density.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the experiments module pins every BLAS/OpenMP pool to one thread before NumPy loads, and
# holds the data, the true densities and the EM marginals this benchmark shares with them
import kernel_experiments as KE  # noqa: E402

import argparse  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402

import mvlib  # noqa: E402

DISTS, PI = KE.running_example_components()


def peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # KiB on Linux


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="m = 5,000 instead of 20,000")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--m", type=int, default=None)
    args = ap.parse_args()
    m = args.m or (5_000 if args.quick else 20_000)
    print(f"KernelSpectral vs scikit-learn EM-GMM, m = {m} three-view samples"
          + (" (--quick)" if args.quick else ""))
    print(f"{'seed':>4} {'method':<18} {'time s':>8} {'/EM':>6} {'error':>7} {'rank':>5} {'peak GiB':>9}")
    worst_time, worst_mem = 0.0, 0.0
    for seed in args.seeds:
        views, _ = KE.sample(DISTS, PI, m, seed)
        grid_list = KE.grids(DISTS)
        p_true = KE.true_densities(DISTS, grid_list)
        rows = []
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gm = GaussianMixture(3, covariance_type="full", n_init=10,
                                 random_state=seed).fit(np.hstack(views))
        t_em = time.perf_counter() - t0
        err_em = KE.weighted_error(p_true, KE.gmm_marginals(gm, grid_list), PI)
        rows.append(("EM-GMM", t_em, err_em, "", peak_gib()))
        for name, kw in (("kernel low-rank", {}), ("kernel rank 100", {"rank": 100})):
            t0 = time.perf_counter()
            ks = mvlib.KernelSpectral(3, random_state=seed, **kw).fit(views)
            t = time.perf_counter() - t0
            err = KE.weighted_error(p_true, [ks.conditional_density(g, view=v)
                                             for v, g in enumerate(grid_list)], PI)
            mem = peak_gib()
            rows.append((name, t, err, ks.rank_[0], mem))
            if not kw:
                worst_time, worst_mem = max(worst_time, t), max(worst_mem, mem)
        for name, t, err, rank, mem in rows:
            print(f"{seed:>4} {name:<18} {t:8.2f} {t / t_em:6.2f} {err:7.3f} {rank!s:>5} {mem:9.2f}")
    ok = worst_time < 60 and worst_mem < 4
    print(f"target (defaults, m = {m}: < 60 s and < 4 GiB): slowest {worst_time:.1f} s, "
          f"peak {worst_mem:.2f} GiB -> {'met' if ok else 'NOT met'}")

    # exact and low-rank paths on one small case
    views, _ = KE.sample(DISTS, PI, 400, 0)
    grid = KE.grids(DISTS)[0]
    exact = mvlib.KernelSpectral(3, bandwidth=0.4, random_state=0).fit(views)
    low = mvlib.KernelSpectral(3, bandwidth=0.4, rank=800, random_state=0).fit(views)
    low_small = mvlib.KernelSpectral(3, bandwidth=0.4, rank=30, random_state=0).fit(views)
    p_exact = exact.conditional_density(grid)
    for name, est in (("low-rank, rank 800", low), ("low-rank, rank 30", low_small)):
        p = est.conditional_density(grid)
        perm = mvlib.match_columns(p_exact, p)[0]
        gap = np.abs(p[:, perm] - p_exact).max() / p_exact.max()
        print(f"exact (basis {exact.rank_[0]}) vs {name} (basis {est.rank_[0]}): "
              f"largest density gap / max density = {gap:.2e}")


if __name__ == "__main__":
    main()
