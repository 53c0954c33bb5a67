r"""Benchmark: the spectral Gaussian-mixture estimator against scikit-learn's EM.

Run ``.venv/bin/python bench/bench_gmm.py`` (about 20 s on 2 cores; more on a loaded
machine) or add ``--quick`` (n = 50,000, two seeds; a few seconds). ``--seeds 0 1 2 3`` chooses the data sets. This is a measurement script, not a
test: it prints tables and never asserts on time.

Data (the benchmark case of the Gaussian-mixtures chapter)
-----------------------------------------------------------
For each seed s, ``numpy.random.default_rng(s)`` draws k = 10 means μ_h ~ N(0, I_d) in
d = 50 dimensions, weights w ~ Dirichlet(5, ..., 5), and n = 200,000 samples
x = μ_h + σ z with h ~ w, z ~ N(0, I_d) and a common σ = 0.5.

What is compared
----------------
* ``spectral``: ``mvlib.SpectralGMM(10, random_state=s).fit(X)`` — Hsu & Kakade's
  corrected moments, whitening, the tensor power method (one pass over the data per
  moment, no iterations over the data).
* ``EM``: ``sklearn.mixture.GaussianMixture(n_components=10,
  covariance_type="spherical", random_state=s).fit(X)`` — every setting at its default
  (one k-means initialisation, ``max_iter=100``, ``tol=1e-3``); ``random_state`` only
  makes the k-means start reproducible.
* ``spectral->EM``: EM started from the spectral estimate,
  ``SpectralGMM.to_sklearn().fit(X)``. ``to_sklearn()`` passes the spectral weights,
  means and precisions as ``weights_init``/``means_init``/``precisions_init``; with all
  three given, scikit-learn skips its own (k-means) initialisation and starts EM at once.
  Its time includes the spectral fit.

Printed per seed: the largest relative error of a mean after the best matching of
components,
``mvlib.column_errors(M, means.T, relative=True).max()`` (an error near or above 1 means
EM merged two components and split another: a poor local optimum), the wall time
(``time.perf_counter``, one run each; a small warm-up fit precedes the measurements),
time / time(spectral), EM iterations, and the average log-likelihood per sample
(``score``; a lower value with a large error shows EM stopped at a local optimum). The
summary gives median times and ratios over the seeds and checks the chapter's targets —
spectral error < 0.02 and time(spectral) <= time(EM) / 2 — informationally.

Threads
-------
Every method runs with the BLAS and OpenMP thread pools limited to ``--threads``
threads (default 1; 0 keeps the libraries' defaults), through ``threadpoolctl``. One
thread is the default for the reason given in ``bench/bench_core.py``: on a small,
shared machine the libraries' worker threads compete with other processes and with each
other, and the hand-offs can cost more than the arithmetic (EM and k-means suffer most),
which makes timings noisy and unfair. The limit applies to all methods alike. Other
processes still slow everything down; the header prints the load average, so compare
the ratios within one run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

import mvlib
from mvlib.book import format_row, machine_line, thread_limit, timed, versions_line

D, K, SIGMA, CONCENTRATION = 50, 10, 0.5, 5.0
TARGET_ERROR, TARGET_SPEEDUP = 0.02, 2.0


def make_data(n: int, seed: int):
    """X (n, d) and the true means M (d, k) of the benchmark mixture for one seed."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((D, K))
    w = rng.dirichlet(np.full(K, CONCENTRATION))
    h = rng.choice(K, size=n, p=w)
    X = M[:, h].T + SIGMA * rng.standard_normal((n, D))
    return X, M


def error(M, means) -> float:
    """Largest relative error of a mean after matching the components."""
    return float(mvlib.column_errors(M, np.asarray(means).T, relative=True).max())


def run_seed(n: int, seed: int) -> dict:
    """Fit every method on one data set; {method: dict(error, seconds, iters, loglik)}."""
    X, M = make_data(n, seed)
    rows = {}
    spec, t_spec = timed(lambda: mvlib.SpectralGMM(K, random_state=seed).fit(X))
    rows["spectral"] = dict(error=error(M, spec.means_), seconds=t_spec, iters=None,
                            loglik=spec.score(X))
    em, t_em = timed(lambda: GaussianMixture(n_components=K, covariance_type="spherical",
                                             random_state=seed).fit(X))
    rows["EM"] = dict(error=error(M, em.means_), seconds=t_em, iters=em.n_iter_,
                      loglik=em.score(X))
    ref, t_ref = timed(lambda: spec.to_sklearn().fit(X))
    rows["spectral->EM"] = dict(error=error(M, ref.means_), seconds=t_spec + t_ref,
                                iters=ref.n_iter_, loglik=ref.score(X))
    return rows


def print_seed(seed: int, rows: dict) -> None:
    base = rows["spectral"]["seconds"]
    widths = (14, 8, 9, 11, 9, 9)
    print(f"\nseed {seed}")
    print(format_row(["method", "error", "time (s)", "/ spectral", "EM iters", "log-lik"], widths))
    for name, r in rows.items():
        iters = "-" if r["iters"] is None else str(r["iters"])
        print(format_row([name, f"{r['error']:.4f}", f"{r['seconds']:.2f}", f"{r['seconds'] / base:.1f}x",
                          iters, f"{r['loglik']:.3f}"], widths))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="n = 50,000 and seeds 0 1 (about 10 s)")
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="data sets to run (default 0 1 2; 0 1 with --quick)")
    parser.add_argument("--n", type=int, default=None, help="number of samples (default 200,000)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for every method (default 1; 0: library default)")
    args = parser.parse_args(argv)
    n = args.n or (50_000 if args.quick else 200_000)
    seeds = args.seeds or ([0, 1] if args.quick else [0, 1, 2])

    wall = time.perf_counter()
    print("Spectral Gaussian mixture vs scikit-learn EM" + (" (--quick)" if args.quick else ""))
    print(versions_line(**{"scikit-learn": sklearn.__version__, "mvlib": mvlib.__version__}))
    print(machine_line())
    print(f"data: n = {n:,}, d = {D}, k = {K}, sigma = {SIGMA}, means N(0, I), "
          f"weights Dirichlet({CONCENTRATION:g}); seeds {seeds}")
    print("threads per method: " + (str(args.threads) if args.threads > 0 else "library default"))

    results = {}
    with thread_limit(args.threads), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        # warm-up: first calls pay for imports, thread pools and caches
        X0, _ = make_data(5_000, 12345)
        mvlib.SpectralGMM(K, random_state=0).fit(X0).to_sklearn(max_iter=2).fit(X0)
        GaussianMixture(K, covariance_type="spherical", max_iter=2, random_state=0).fit(X0)
        del caught[:]                 # the warm-up's 2-iteration runs do not converge
        for seed in mvlib.progress(seeds, desc="seeds"):
            results[seed] = run_seed(n, seed)
            print_seed(seed, results[seed])
    n_conv = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    others = [w for w in caught if not issubclass(w.category, ConvergenceWarning)]

    methods = list(next(iter(results.values())))
    print("\nSummary over seeds (informational, never asserted)")
    widths = (14, 16, 18, 10, 13)
    print(format_row(["method", "median time (s)", "median / spectral", "max error", "errors > 0.5"], widths))
    for name in methods:
        secs = [results[s][name]["seconds"] for s in seeds]
        ratios = [results[s][name]["seconds"] / results[s]["spectral"]["seconds"] for s in seeds]
        errs = [results[s][name]["error"] for s in seeds]
        print(format_row([name, f"{statistics.median(secs):.2f}", f"{statistics.median(ratios):.1f}x",
                          f"{max(errs):.4f}", f"{sum(e > 0.5 for e in errs):>8d} of {len(seeds)}"], widths))
    err_ok = [results[s]["spectral"]["error"] < TARGET_ERROR for s in seeds]
    speed = [results[s]["EM"]["seconds"] / results[s]["spectral"]["seconds"] for s in seeds]
    print(f"  target spectral error < {TARGET_ERROR}: met on {sum(err_ok)} of {len(seeds)} seeds")
    print(f"  target time(EM) / time(spectral) >= {TARGET_SPEEDUP:g}: met on "
          f"{sum(r >= TARGET_SPEEDUP for r in speed)} of {len(seeds)} seeds "
          f"(ratios {', '.join(f'{r:.1f}' for r in speed)})")
    print(f"  EM runs that hit max_iter (ConvergenceWarning): {n_conv}")
    for w in others:
        print(f"  warning: {w.category.__name__}: {w.message}")
    print(f"\ntotal {time.perf_counter() - wall:.0f} s, load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
