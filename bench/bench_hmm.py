r"""Benchmark: the spectral HMM estimator against hmmlearn's Baum–Welch.

Run ``.venv/bin/python bench/bench_hmm.py`` (about 10 minutes: Baum–Welch on 10⁶ symbols
dominates) or add ``--quick`` (2,000 sequences). ``--seeds`` chooses the data sets on which
the spectral estimate is measured (default 0 1 2 3 4), ``--bw-seeds`` those on which
Baum–Welch runs as well (default 0).
This is a measurement script, not a test: it prints tables and never asserts on time.

Data (the benchmark case of the hidden-Markov chapter)
--------------------------------------------------------
For each seed s: k = 3 states, d = 8 symbols; emission rows drawn from Dirichlet(0.4, ..., 0.4)
with ``numpy.random.default_rng(s)``; the fixed, well-conditioned transition matrix
``TRANSMAT`` below (hmmlearn layout, rows = next-state distributions; condition number
about 2) and a uniform start. ``hmmlearn.hmm.CategoricalHMM.sample(50, random_state=...)``
draws 20,000 sequences of length 50 (10⁶ symbols).

What is compared
----------------
* ``spectral``: ``mvlib.SpectralHMM(3, random_state=s).fit(X, lengths)`` (default
  ``method="observable"``, Algorithm B) — one pass over the windows of three consecutive
  symbols, no iterations over the data; ``spectral-tensor``: the same with
  ``method="tensor"``.
* ``Baum-Welch``: ``hmmlearn.hmm.CategoricalHMM(3, n_iter=100, random_state=s).fit(X, lengths)``
  — hmmlearn's defaults otherwise (random initialisation, ``tol=1e-2``).
* ``spectral+refine``: the same with ``refine=True`` — the moment estimate polished by
  maximising the composite likelihood of the window counts
  (``mvlib.hmm.refine_window_likelihood``; O(d³k) per iteration, independent of n).
* ``spectral->BW``: Baum–Welch started at the spectral estimate,
  ``SpectralHMM.to_hmmlearn(n_iter=100).fit(X, lengths)``; its time includes the spectral fit.

Printed per seed: the largest absolute error of ``emissionprob_`` and of ``transmat_`` after
matching states (Hungarian matching of emission rows, ``mvlib.match_columns``), wall time
(``time.perf_counter``, one run each after a small warm-up), time / time(spectral),
Baum–Welch iterations and the average log-likelihood per symbol. The summary checks the
targets — both errors < 0.05 and time(Baum-Welch) >= 5 × time(spectral) — informationally.

Threads: BLAS/OpenMP pools limited to ``--threads`` (default 1) for every method through
``threadpoolctl``, as in ``bench/bench_gmm.py`` (one thread keeps timings fair on a small
shared machine). The header prints the load average; compare ratios within one run.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import platform
import time
import warnings

import hmmlearn
import numpy as np
from hmmlearn.hmm import CategoricalHMM
from threadpoolctl import threadpool_limits

import mvlib

K, D, CONCENTRATION, LENGTH = 3, 8, 0.4, 50
TRANSMAT = np.array([[0.80, 0.10, 0.10],
                     [0.15, 0.70, 0.15],
                     [0.05, 0.15, 0.80]])
TARGET_ERROR, TARGET_SPEEDUP = 0.05, 5.0


def true_model(seed: int) -> CategoricalHMM:
    """The data-generating CategoricalHMM of one seed."""
    rng = np.random.default_rng(seed)
    model = CategoricalHMM(K, n_features=D, init_params="")
    model.startprob_ = np.full(K, 1.0 / K)
    model.transmat_ = TRANSMAT.copy()
    model.emissionprob_ = rng.dirichlet(np.full(D, CONCENTRATION), size=K)
    return model


def make_data(n_sequences: int, seed: int):
    """X (n_sequences·50, 1), lengths, and the true model, sampled by hmmlearn."""
    model = true_model(seed)
    rs = np.random.RandomState(seed)
    X = np.concatenate([model.sample(LENGTH, random_state=rs)[0] for _ in range(n_sequences)])
    return X, np.full(n_sequences, LENGTH), model


def errors(true, est):
    """(max |emission error|, max |transition error|) after matching the states."""
    perm, _ = mvlib.match_columns(true.emissionprob_.T, est.emissionprob_.T)
    e_O = np.abs(est.emissionprob_[perm] - true.emissionprob_).max()
    e_T = np.abs(est.transmat_[np.ix_(perm, perm)] - true.transmat_).max()
    return float(e_O), float(e_T)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def run_seed(n_sequences: int, seed: int, baum_welch: bool) -> dict:
    X, lengths, model = make_data(n_sequences, seed)
    n = len(X)
    rows = {}
    for name, method, refine in (("spectral", "observable", False), ("spectral+refine", "observable", True),
                                 ("spectral-tensor", "tensor", False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # simplex projection of a noisy estimate
            est, secs = timed(lambda: mvlib.SpectralHMM(K, random_state=seed, method=method,
                                                        refine=refine).fit(X, lengths))
        rows[name] = dict(errors=errors(model, est), seconds=secs, iters=None,
                          loglik=est.score(X, lengths) / n)
        if name == "spectral":
            spec, t_spec = est, secs
    rows["true model"] = dict(errors=(0.0, 0.0), seconds=float("nan"), iters=None,
                              loglik=model.score(X, lengths) / n)
    if not baum_welch:
        return rows
    bw, t_bw = timed(lambda: CategoricalHMM(K, n_iter=100, random_state=seed).fit(X, lengths))
    rows["Baum-Welch"] = dict(errors=errors(model, bw), seconds=t_bw, iters=bw.monitor_.iter,
                              loglik=bw.score(X, lengths) / n)
    ref, t_ref = timed(lambda: spec.to_hmmlearn(n_iter=100).fit(X, lengths))
    rows["spectral->BW"] = dict(errors=errors(model, ref), seconds=t_spec + t_ref,
                                iters=ref.monitor_.iter, loglik=ref.score(X, lengths) / n)
    return rows


def print_seed(seed: int, rows: dict) -> None:
    base = rows["spectral"]["seconds"]
    print(f"\nseed {seed}", flush=True)
    print(f"  {'method':15s} {'err emis':>9s} {'err trans':>10s} {'time (s)':>9s} {'/ spectral':>11s} "
          f"{'iters':>6s} {'log-lik/symbol':>15s}")
    for name, r in rows.items():
        iters = "-" if r["iters"] is None else str(r["iters"])
        ratio = "-" if np.isnan(r["seconds"]) else f"{r['seconds'] / base:10.1f}x"
        secs = "-" if np.isnan(r["seconds"]) else f"{r['seconds']:9.2f}"
        print(f"  {name:15s} {r['errors'][0]:9.4f} {r['errors'][1]:10.4f} {secs:>9s} {ratio:>11s} "
              f"{iters:>6s} {r['loglik']:15.5f}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 sequences instead of 20,000")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                        help="data sets for the spectral estimate (default 0 1 2 3 4)")
    parser.add_argument("--bw-seeds", type=int, nargs="+", default=[0],
                        help="data sets on which Baum-Welch runs too (default 0)")
    parser.add_argument("--n-sequences", type=int, default=None, help="default 20,000")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for every method (default 1; 0: library default)")
    args = parser.parse_args(argv)
    n_seq = args.n_sequences or (2_000 if args.quick else 20_000)
    seeds = sorted(set(args.seeds) | set(args.bw_seeds))

    wall = time.perf_counter()
    print("Spectral HMM vs hmmlearn Baum-Welch" + (" (--quick)" if args.quick else ""))
    print(f"python {platform.python_version()}, numpy {np.__version__}, hmmlearn {hmmlearn.__version__}, "
          f"mvlib {mvlib.__version__}")
    print(f"{platform.machine()}, nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    print(f"data: {n_seq:,} sequences of length {LENGTH} sampled by hmmlearn, k = {K} states, "
          f"d = {D} symbols, emissions Dirichlet({CONCENTRATION:g}); seeds {seeds}, Baum-Welch on {args.bw_seeds}")
    print("threads per method: " + (str(args.threads) if args.threads > 0 else "library default"))
    limit = threadpool_limits(limits=args.threads) if args.threads > 0 else contextlib.nullcontext()
    results = {}
    with limit:
        X0, L0, _ = make_data(200, 12345)                 # warm-up
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mvlib.SpectralHMM(K, random_state=0).fit(X0, L0)
            CategoricalHMM(K, n_iter=2, random_state=0).fit(X0, L0)
        for seed in seeds:
            results[seed] = run_seed(n_seq, seed, seed in args.bw_seeds)
            print_seed(seed, results[seed])
    print("\nTargets (informational, never asserted)")
    for seed, rows in results.items():
        for name in ("spectral", "spectral+refine"):
            e_O, e_T = rows[name]["errors"]
            line = (f"  seed {seed}: {name:15s} errors {e_O:.4f} (emission), {e_T:.4f} (transition) "
                    f"< {TARGET_ERROR}: {'met' if max(e_O, e_T) < TARGET_ERROR else 'NOT met'}")
            if "Baum-Welch" in rows:
                speed = rows["Baum-Welch"]["seconds"] / rows[name]["seconds"]
                line += (f"; time(Baum-Welch)/time({name}) = {speed:.1f} >= {TARGET_SPEEDUP:g}: "
                         f"{'met' if speed >= TARGET_SPEEDUP else 'NOT met'}")
            print(line)
    print(f"\ntotal {time.perf_counter() - wall:.0f} s, load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
