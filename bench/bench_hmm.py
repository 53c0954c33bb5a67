r"""Benchmark: the spectral HMM estimator against hmmlearn's Baum–Welch.

Run ``.venv/bin/python bench/bench_hmm.py`` (about a minute on 2 cores) or add ``--quick`` (10⁵
symbols, 2,000 sequences; seconds). ``--seeds`` chooses the data sets on which the spectral
estimates are measured (default 0 1 2 3 4), ``--bw-seeds`` those on which Baum–Welch runs
to the end as well (default none; ``--bw-seeds 0`` adds about 17 minutes: 100 iterations on
10⁶ symbols, twice). Writes ``chapters/data/hmm_bench.json`` (``hmm_bench_quick.json`` with
``--quick``). This is a measurement script, not a test: it prints tables and never asserts
on time.

Cost per iteration and per symbol (part 1, "cost")
--------------------------------------------------
hmmlearn's Baum–Welch spends a fixed Python overhead on every sequence of every iteration,
so its speed depends on how the same symbols are cut into sequences. Part 1 measures one
model (seed 0 below) and the same number of symbols, 10⁶, in two layouts: **short**
(20,000 sequences of length 50) and **long** (200 of length 5,000), sampled by
``mvlib.hmm.sample_hmm``. On each layout, with one BLAS thread:

* ``hmmlearn_em_iteration`` — one Baum–Welch iteration of ``CategoricalHMM`` (E-step:
  forward–backward over every sequence, M-step): a fit with ``n_iter=3, tol=-inf`` from
  hmmlearn's random start, divided by 3;
* ``hmmlearn_score`` — ``CategoricalHMM.score`` (forward pass only) at the true parameters;
* ``mvlib_forward`` — ``mvlib.hmm.forward_log_likelihood`` at the true parameters (forward
  pass in log space, vectorised over the sequences: one loop over time steps);
* ``spectral_fit``, ``spectral_refine_fit``, ``oo_fit`` — ``mvlib.SpectralHMM(3)``,
  ``SpectralHMM(3, refine=True)`` and ``ObservableOperatorHMM(3)`` fits (the whole
  estimator: one pass over the windows, no iterations over the data); ``oo_score`` its
  per-step normalised scoring.

Each time is the median of 3 repeats (``*_repeats`` keep all three); ``*_ns_per_symbol``
divides by the 10⁶ symbols. ``per_sequence_overhead_share`` = 1 − t(long)/t(short) of the
hmmlearn iteration: the share of the short-layout iteration that goes to per-sequence
overhead rather than to symbols. Ratios compare within one run.

Accuracy of the moment estimates (part 2)
-----------------------------------------

Data (the benchmark case of the hidden-Markov chapter): for each seed s, k = 3 states,
d = 8 symbols; emission rows drawn from Dirichlet(0.4, ..., 0.4) with
``numpy.random.default_rng(s)``; the fixed, well-conditioned transition matrix
``TRANSMAT`` (``mvlib.book.HMM_BENCH``, hmmlearn layout, rows = next-state distributions; condition number
about 2) and a uniform start. ``hmmlearn.hmm.CategoricalHMM.sample(50, random_state=...)``
draws 20,000 sequences of length 50 (10⁶ symbols).

What is compared:

* ``spectral``: ``mvlib.SpectralHMM(3, random_state=s).fit(X, lengths)`` (default
  ``method="observable"``, Algorithm B) — one pass over the windows of three consecutive
  symbols, no iterations over the data; ``spectral-tensor``: the same with
  ``method="tensor"``; ``observable-operator``: ``ObservableOperatorHMM(3)`` (Hsu, Kakade &
  Zhang 2012; no parameters, so no errors — its log-likelihood only).
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
import os
import time
import warnings
from pathlib import Path

import hmmlearn
import numpy as np
from hmmlearn.hmm import CategoricalHMM

import mvlib
from mvlib.book import (HMM_BENCH, data_path, environment, format_row, hmm_bench_data, hmm_bench_model, machine_line,
                        median_timed, thread_limit, timed, versions_line, write_json)
from mvlib.hmm import forward_log_likelihood, parameter_errors, sample_hmm

ObservableOperatorHMM = mvlib.ObservableOperatorHMM

HERE = Path(__file__).resolve().parent
K, D, CONCENTRATION, LENGTH = (HMM_BENCH[key] for key in ("k", "d", "concentration", "length"))
TRANSMAT = np.array(HMM_BENCH["transmat"])
TARGET_ERROR, TARGET_SPEEDUP = 0.05, 5.0
#: the two layouts of part 1 (n_sequences, length); both hold 10⁶ symbols
LAYOUTS = {"short": (20_000, 50), "long": (200, 5_000)}
EM_ITERS, REPEATS = 3, 3
true_model, make_data, errors = hmm_bench_model, hmm_bench_data, parameter_errors


def median_time(fn, repeats=REPEATS, divide=1):
    """(median, all) of ``repeats`` wall times of ``fn()``, each divided by ``divide``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        times = [t / divide for t in median_timed(fn, repeats=repeats).times]
    return float(np.median(times)), times


# --------------------------------------------------------------------------- part 1: cost
def cost_layout(n_sequences, length, seed, repeats, em_iters, skip=()):
    """Times of every method on one layout of the same model (see the module docstring);
    ``skip``: names of timings to leave out (tests)."""
    model = true_model(seed)
    pi, T, O = model.startprob_, model.transmat_.T, model.emissionprob_.T
    X, lengths, _ = sample_hmm(pi, T, O, n_sequences, length, random_state=seed)
    n = len(X)
    jobs = {
        "hmmlearn_em_iteration": (lambda: CategoricalHMM(K, n_features=D, n_iter=em_iters, tol=-np.inf,
                                                         random_state=seed).fit(X, lengths), em_iters),
        "hmmlearn_score": (lambda: model.score(X, lengths), 1),
        "mvlib_forward": (lambda: forward_log_likelihood(X, lengths, pi, T, O), 1),
        "spectral_fit": (lambda: mvlib.SpectralHMM(K, random_state=seed).fit(X, lengths), 1),
        "spectral_refine_fit": (lambda: mvlib.SpectralHMM(K, random_state=seed, refine=True).fit(X, lengths), 1),
        "oo_fit": (lambda: ObservableOperatorHMM(K).fit(X, lengths), 1),
    }
    row = {"n_sequences": int(n_sequences), "length": int(length), "n_symbols": int(n)}
    for name, (fn, div) in jobs.items():
        if name in skip:
            row[f"{name}_seconds"] = float("nan")
            continue
        med, all_ = median_time(fn, repeats, div)
        row[f"{name}_seconds"] = med
        row[f"{name}_seconds_repeats"] = all_
        row[f"{name}_ns_per_symbol"] = med / n * 1e9
    oo = ObservableOperatorHMM(K).fit(X, lengths)
    med, all_ = median_time(lambda: oo.score(X, lengths), repeats)
    row.update(oo_score_seconds=med, oo_score_seconds_repeats=all_, oo_score_ns_per_symbol=med / n * 1e9)
    # same numbers from the two forward passes (a check that they compute the same thing)
    row["forward_check_abs_diff"] = float(abs(model.score(X, lengths)
                                              - forward_log_likelihood(X, lengths, pi, T, O).sum()))
    row["ratios"] = {
        "em_iteration_over_spectral_fit": row["hmmlearn_em_iteration_seconds"] / row["spectral_fit_seconds"],
        "em_iteration_over_spectral_refine_fit": (row["hmmlearn_em_iteration_seconds"]
                                                  / row["spectral_refine_fit_seconds"]),   # nan if skipped
        "em_iteration_over_oo_fit": row["hmmlearn_em_iteration_seconds"] / row["oo_fit_seconds"],
        "em_iteration_over_mvlib_forward": row["hmmlearn_em_iteration_seconds"] / row["mvlib_forward_seconds"],
        "hmmlearn_score_over_mvlib_forward": row["hmmlearn_score_seconds"] / row["mvlib_forward_seconds"],
    }
    return row


def run_cost(seed, layouts, repeats, em_iters):
    res = {"seed": seed, "k": K, "d": D, "repeats": repeats, "em_iterations_timed": em_iters, "layouts": {}}
    for name, (n_seq, length) in layouts.items():
        res["layouts"][name] = cost_layout(n_seq, length, seed, repeats, em_iters)
        print(f"  layout {name} done", flush=True)
    s, l_ = res["layouts"]["short"], res["layouts"]["long"]
    res["per_sequence_overhead_share"] = 1.0 - l_["hmmlearn_em_iteration_seconds"] / s["hmmlearn_em_iteration_seconds"]
    res["per_sequence_overhead_seconds"] = ((s["hmmlearn_em_iteration_seconds"] - l_["hmmlearn_em_iteration_seconds"])
                                            / (s["n_sequences"] - l_["n_sequences"]))
    res["em_iteration_short_over_long"] = s["hmmlearn_em_iteration_seconds"] / l_["hmmlearn_em_iteration_seconds"]
    return res


def print_cost(res):
    names = [("hmmlearn_em_iteration", "hmmlearn: one Baum-Welch iteration"),
             ("hmmlearn_score", "hmmlearn: score (forward pass)"),
             ("mvlib_forward", "mvlib.hmm.forward_log_likelihood"),
             ("spectral_fit", "SpectralHMM fit"),
             ("spectral_refine_fit", "SpectralHMM(refine=True) fit"),
             ("oo_fit", "ObservableOperatorHMM fit"),
             ("oo_score", "ObservableOperatorHMM score")]
    lay = res["layouts"]
    cols = list(lay)
    print("\nCost on 10^6 symbols, one thread, median of "
          f"{res['repeats']} repeats (ns per symbol in brackets)")
    print(f"  {'':38s}" + "".join(f"{c + ' ' + str(lay[c]['n_sequences']) + 'x' + str(lay[c]['length']):>26s}"
                                  for c in cols))
    for key, label in names:
        print(f"  {label:38s}" + "".join(
            f"{lay[c][key + '_seconds']:>14.3f} s [{lay[c][key + '_ns_per_symbol']:6.0f}]" for c in cols))
    print("  ratios (one Baum-Welch iteration / ...)")
    for key in lay[cols[0]]["ratios"]:
        print(f"    {key:44s}" + "".join(f"{lay[c]['ratios'][key]:>20.2f}x" for c in cols))
    print(f"  per-sequence overhead: {100 * res['per_sequence_overhead_share']:.0f} % of a short-layout "
          f"iteration, {1e6 * res['per_sequence_overhead_seconds']:.0f} µs per sequence per iteration; "
          f"short/long iteration time {res['em_iteration_short_over_long']:.2f}", flush=True)


# --------------------------------------------------------------------------- part 2: accuracy
def run_seed(n_sequences: int, seed: int, baum_welch: bool) -> dict:
    X, lengths, model = make_data(n_sequences, seed)
    n = len(X)
    rows = {}
    for name, method, refine in (("spectral", "observable", False), ("spectral+refine", "observable", True),
                                 ("spectral-tensor", "tensor", False)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # simplex constraints on a noisy estimate
            est, secs = timed(lambda: mvlib.SpectralHMM(K, random_state=seed, method=method,
                                                        refine=refine).fit(X, lengths))
        rows[name] = dict(errors=errors(model, est), seconds=secs, iters=None,
                          loglik=est.score(X, lengths) / n)
        if name == "spectral":
            spec, t_spec = est, secs
    oo, secs = timed(lambda: ObservableOperatorHMM(K).fit(X, lengths))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # counted flooring
        rows["observable-operator"] = dict(errors=(float("nan"), float("nan")), seconds=secs, iters=None,
                                           loglik=oo.score(X, lengths) / n)
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
    widths = (19, 9, 10, 9, 11, 6, 15)
    print(f"\nseed {seed}", flush=True)
    print(format_row(["method", "err emis", "err trans", "time (s)", "/ spectral", "iters", "log-lik/symbol"],
                     widths))
    for name, r in rows.items():
        iters = "-" if r["iters"] is None else str(r["iters"])
        ratio = "-" if np.isnan(r["seconds"]) else f"{r['seconds'] / base:.1f}x"
        secs = "-" if np.isnan(r["seconds"]) else f"{r['seconds']:.2f}"
        e_O, e_T = ("-" if np.isnan(e) else f"{e:.4f}" for e in r["errors"])
        print(format_row([name, e_O, e_T, secs, ratio, iters, f"{r['loglik']:.5f}"], widths), flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="10^5 symbols in part 1, 2,000 sequences in part 2; writes hmm_bench_quick.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4],
                        help="data sets for the spectral estimates (default 0 1 2 3 4)")
    parser.add_argument("--bw-seeds", type=int, nargs="*", default=[],
                        help="data sets on which Baum-Welch runs to the end too (default none)")
    parser.add_argument("--n-sequences", type=int, default=None, help="part 2; default 20,000")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for every method (default 1; 0: library default)")
    parser.add_argument("--no-json", action="store_true", help="print only")
    args = parser.parse_args(argv)
    n_seq = args.n_sequences or (2_000 if args.quick else 20_000)
    seeds = sorted(set(args.seeds) | set(args.bw_seeds))
    layouts = ({name: (n // 10, length) for name, (n, length) in LAYOUTS.items()} if args.quick else LAYOUTS)

    wall = time.perf_counter()
    load0 = os.getloadavg()[0]
    print("Spectral HMM vs hmmlearn Baum-Welch" + (" (--quick)" if args.quick else ""))
    print(versions_line(hmmlearn=hmmlearn.__version__, mvlib=mvlib.__version__))
    print(machine_line(load0))
    print("threads per method: " + (str(args.threads) if args.threads > 0 else "library default"))
    results = {}
    with thread_limit(args.threads):
        X0, L0, _ = make_data(200, 12345)                 # warm-up
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mvlib.SpectralHMM(K, random_state=0).fit(X0, L0)
            ObservableOperatorHMM(K).fit(X0, L0)
            CategoricalHMM(K, n_iter=2, random_state=0).fit(X0, L0)
        print("\nPart 1: cost per iteration and per symbol, two layouts of the same symbols", flush=True)
        t0 = time.perf_counter()
        cost = run_cost(0, layouts, REPEATS, EM_ITERS)
        t_cost = time.perf_counter() - t0
        print_cost(cost)
        print(f"  part 1: {t_cost:.0f} s")
        print(f"\nPart 2: accuracy; {n_seq:,} sequences of length {LENGTH} sampled by hmmlearn, k = {K} states, "
              f"d = {D} symbols, emissions Dirichlet({CONCENTRATION:g}); seeds {seeds}, "
              f"Baum-Welch on {args.bw_seeds or 'none'}", flush=True)
        t0 = time.perf_counter()
        for seed in seeds:
            results[seed] = run_seed(n_seq, seed, seed in args.bw_seeds)
            print_seed(seed, results[seed])
        t_acc = time.perf_counter() - t0
        print(f"  part 2: {t_acc:.0f} s")
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
    total = time.perf_counter() - wall
    print(f"\ntotal {total:.0f} s, load average now {os.getloadavg()[0]:.2f}")
    if args.no_json:
        return
    out = {
        "environment": {**environment(hmmlearn=hmmlearn.__version__, mvlib=mvlib.__version__),
                        "threads": args.threads, "load_average_start": load0,
                        "load_average_end": os.getloadavg()[0]},
        "cost": cost,
        "accuracy": {"n_sequences": n_seq, "length": LENGTH, "seeds": {
            str(seed): {name: {"err_emission": r["errors"][0], "err_transition": r["errors"][1],
                               "seconds": r["seconds"], "iters": r["iters"], "loglik": r["loglik"]}
                        for name, r in rows.items()} for seed, rows in results.items()}},
        "runtime_seconds": {"cost": t_cost, "accuracy": t_acc, "total": total},
    }
    path = write_json(out, data_path("hmm_bench_quick.json" if args.quick else "hmm_bench.json", HERE), digits=9)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
