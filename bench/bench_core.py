r"""Benchmark of mvlib's core kernels against tensorly and against a data-reading floor.

Run ``.venv/bin/python bench/bench_core.py`` (1.5–2.5 minutes on 2 cores) or
add ``--quick`` (k <= 20, n = 20,000, fewer repeats; about 20 s). This is a
measurement script, not a test: it prints tables and never asserts on time.
A summary at the end compares the smallest ratios with the project targets.

1. Robust tensor power method
-----------------------------
``mvlib.tensor_power_method(T, k, n_restarts=L, n_iterations=N, tol=...)`` against
``tensorly.decomposition.CPPower(rank=k, n_repeat=L, n_iteration=N).fit_transform(T)``
on whitened, orthogonally decomposable tensors
:math:`T=\sum_{h\le k}\lambda_h v_h^{\otimes 3}` (random orthonormal V, λ uniform
in [1, 3]) for k = 10, 20, 50, with L = 10 restarts (both libraries' default)
and N = 10 (tensorly's default) and N = 100 (enough for convergence).

What "same restarts and iterations" means (read from tensorly 0.10,
``tensorly/decomposition/_cp_power.py``):

* tensorly, per component (``power_iteration``): L starts, each three
  independent vectors (u, v, w) drawn by ``np.random.random_sample`` — uniform
  in [0, 1)^k, i.e. in the non-negative orthant and not normalised — from the
  global NumPy RNG (seeded here with ``np.random.seed`` before each call).
  Each start runs exactly N *sweeps*; a sweep updates the three modes one
  after the other (u ← T(I,v,w)/‖·‖, v ← T(u,I,w)/‖·‖, w ← T(u,v,I)/‖·‖), each
  a ``multi_mode_dot`` of T with two vectors, O(k³). The start with the
  largest T(u,v,w) is refined by N more sweeps; λ = T(u,v,w) and T is
  deflated by λ u⊗v⊗w. There is no tolerance and no early stop: exactly
  (L + 1)·N sweeps = 3(L + 1)·N tensor-vector-vector contractions per
  component, all sequential Python calls; rank·(L + 1)·N sweeps in total.
* mvlib, per component: L starts uniform on the unit sphere, iterated
  *together*: one iteration is a single symmetric update
  θ ← T(I,θ,θ)/‖·‖ for all L starts at once, one matrix product of the
  packed products (θ_j θ_l)_{j≤l} (L × k(k+1)/2) with the packed mode-1
  unfolding of T (which uses the symmetry of modes 2 and 3). The start
  with the largest T(θ,θ,θ) is refined by up to N more iterations, then
  λ = T(v,v,v) and T ← T − λ v^{⊗3}. Each start stops on its own once an
  update moves it by less than ``tol`` (2-norm). So it is run twice:

  - ``tol=1e-10`` (the default): early stop, typically 7–13 iterations per
    start whatever N is;
  - ``tol=0``: no early stop, exactly L·N + N iterations per component, the
    same count as tensorly's (L + 1)·N sweeps. (A start would stop only if an
    update left it bit-for-bit unchanged, when the remaining iterations are
    exact no-ops; in practice the last bits keep moving and all run.)

  One mvlib iteration does one O(k³/2) contraction per start where a tensorly
  sweep does three O(k³) ones: at equal iteration counts tensorly does about
  6× the arithmetic, the price of its non-symmetric (u, v, w) updates and of
  not exploiting symmetry.

Printed per (k, N): median wall time (``time.perf_counter``) over up to 5
repeats (3 with ``--quick``), fewer once the runs of one cell have taken 6 s
(1 s) — the ``reps`` column gives the counts CPPower/mvlib/mvlib-tol0 —; the
ratio time(CPPower)/time(mvlib) (> 1: mvlib faster); the relative
reconstruction error ‖T − T̂‖_F/‖T‖_F and the largest permutation-matched
eigenvector error ``mvlib.matched_error(V, F)`` over the three factor
matrices F. That error is taken up to sign
(``sign_invariant=True``) because tensorly's factors are identified only up
to sign flips of two modes at a time, (−u, −v, w), which leave the tensor
unchanged; the reconstruction error is the sign-sensitive check.

2. Whitened third moment
------------------------
Three Gaussian views X1, X2, X3 (n × d), random Gaussian whiteners W1, W2,
W3 (d × k), n = 100,000, k = 10, d = 50 and 200. Compared:

* ``X1.T @ X1``: one pass over one view with O(n d²) arithmetic — the floor
  set by reading the data;
* ``mvlib.whitened_triples(X1, X2, X3, W1, W2, W3)``: the k×k×k whitened
  moment streamed from the data, never forming a d×d×d array (it has to
  read all three views, 3× the bytes of one XᵀX);
* ``mvlib.multilinear(mvlib.triples(X1, X2, X3), W1, W2, W3)``: the dense
  d×d×d moment, O(n d³), then whitened. It is skipped when its time,
  extrapolated from the smaller d as n·d³, would exceed 60 s (10 s with
  ``--quick``); the note gives the estimate.

Printed: the times, the ratios whitened/XᵀX (the target is ≤ 3 at n = 100k,
d = 200, k = 10) and dense/whitened, and max|whitened − dense| next to the
size max|whitened| of the entries (the difference should be rounding,
~1e-12 or less).

BLAS threads
------------
Both sections run with BLAS limited to ``--blas-threads`` threads (default
1; 0 keeps the library default), through ``threadpoolctl`` when it is
installed. One thread is the default because the matrix products here are
small or memory-bound and, on a small shared machine, OpenBLAS's thread
hand-off can cost more than the product itself, which makes timings noisy
and misleading. A final "threading check" (only for a full run with one
thread) times the first 5 components of k = 50, N = 10 and the d = 200
moments with 1 thread and with the library's default thread count, so that
effect is visible (slowdown = default time / 1-thread time). The
machine header prints the load average: other processes on the machine
slow everything down, so compare ratios from one run rather than absolute
times across runs.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy
import tensorly as tl
from tensorly.decomposition import CPPower

import mvlib
from mvlib.book import Timing, format_row, median_timed, thread_limit, versions_line
from mvlib.core.progress import progress

try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # optional: without it BLAS keeps its default thread count
    threadpool_info = threadpool_limits = None

SEED = 0
RESTARTS = 10  # L: tensorly's n_repeat default and mvlib's n_restarts default
TOLS = (1e-10, 0.0)  # mvlib with its default early stop, and without


# ---------------------------------------------------------------------- helpers
def default_blas_threads() -> str:
    if threadpool_info is None:
        return "unknown (threadpoolctl not installed)"
    libs = [f"{i['internal_api']} {i['version']}: {i['num_threads']}" for i in threadpool_info()
            if i["user_api"] == "blas"]
    return ", ".join(libs) or "no BLAS found"


def print_table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(headers)]

    def line(cells):  # first column (the row label) left-aligned, numbers right-aligned
        return format_row(cells, widths, indent="", sep="  ")

    print(f"\n{title}")
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def secs(t: float) -> str:
    return f"{t:.4f}" if t < 1 else f"{t:.2f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if a / b >= 10 else f"{a / b:.2f}x"


def print_machine(args) -> None:
    print("mvlib core benchmark" + (" (--quick)" if args.quick else ""))
    print(versions_line(scipy=scipy.__version__, tensorly=f"{tl.__version__} (backend {tl.get_backend()})",
                        mvlib=mvlib.__version__))
    print(f"{platform.machine()}, nproc {os.cpu_count()} (usable {len(os.sched_getaffinity(0))}), "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"BLAS default threads: {default_blas_threads()}")
    used = "library default" if args.blas_threads is None else args.blas_threads
    if args.blas_threads is not None and threadpool_limits is None:
        used = "library default (threadpoolctl missing, --blas-threads ignored)"
    print(f"BLAS threads used for the main tables: {used}")


# ------------------------------------------------------- 1. tensor power method
def odeco_tensor(k: int):
    """T = Σ λ_h v_h^{⊗3} with random orthonormal V (k × k) and λ uniform in [1, 3]."""
    rng = np.random.default_rng([SEED, k])
    V, _ = np.linalg.qr(rng.standard_normal((k, k)))
    lam = rng.uniform(1.0, 3.0, size=k)
    return tl.to_numpy(tl.cp_to_tensor((lam, [V, V, V]))), V


class PowerRun(NamedTuple):
    timing: Timing
    recon: float  # ‖T − T̂‖_F / ‖T‖_F
    vec_err: float  # max matched eigenvector error


def cp_errors(T, V, cp) -> tuple[float, float]:
    """(relative reconstruction error, max matched eigenvector error over the three factors)."""
    weights, factors = cp
    rec = np.linalg.norm(T - tl.to_numpy(tl.cp_to_tensor((weights, factors)))) / np.linalg.norm(T)
    vec = max(mvlib.matched_error(V, tl.to_numpy(F), sign_invariant=True) for F in factors)
    return float(rec), vec


def power_methods(T, rank: int, N: int) -> dict[str, Callable[[], Any]]:
    """The three contenders as zero-argument callables, first CPPower (the reference of the ratios)."""
    def tensorly_cppower():
        np.random.seed(SEED)  # CPPower draws its starts from the global RNG
        return CPPower(rank=rank, n_repeat=RESTARTS, n_iteration=N).fit_transform(T)

    def mvlib_tpm(tol):
        return lambda: mvlib.tensor_power_method(T, rank, n_restarts=RESTARTS, n_iterations=N,
                                                 tol=tol, random_state=SEED)

    return {"CPPower": tensorly_cppower, **{f"mvlib tol={tol:g}": mvlib_tpm(tol) for tol in TOLS}}


def bench_power(k: int, N: int, repeats: int, budget: float) -> dict:
    T, V = odeco_tensor(k)
    out = {}
    for name, fn in power_methods(T, k, N).items():
        t = median_timed(fn, repeats=repeats, budget=budget)
        out[name] = PowerRun(t, *cp_errors(T, V, t.result))
    return {"k": k, "N": N, "res": out}


def print_power(title: str, results: list[dict]) -> None:
    names = list(results[0]["res"])
    base = names[0]
    timing_rows, error_rows = [], []
    for r in results:
        res = r["res"]
        key = [str(r["k"]), str(r["N"])]
        t = {n: res[n].timing.seconds for n in names}
        row = key + [str((RESTARTS + 1) * r["N"]), "/".join(str(res[n].timing.runs) for n in names),
                     secs(t[base])]
        for n in names[1:]:
            row += [secs(t[n]), ratio(t[base], t[n])]
        timing_rows.append(row)
        error_rows.append(key + [f"{res[n].recon:.1e}" for n in names]
                          + [f"{res[n].vec_err:.1e}" for n in names])
    headers = ["k", "N", "iters/comp", "reps", f"{base} [s]"]
    for n in names[1:]:
        headers += [f"{n} [s]", "ratio"]
    print_table(title + f" — time (L = {RESTARTS} restarts; ratio = time {base} / time mvlib)",
                headers, timing_rows)
    print_table(title + " — accuracy",
                ["k", "N"] + [f"recon {n}" for n in names] + [f"vec err {n}" for n in names], error_rows)


# -------------------------------------------------------- 2. whitened moments
def make_views(n: int, d: int, k: int):
    """Three Gaussian views (n × d) and three Gaussian whiteners (d × k)."""
    rng = np.random.default_rng([SEED, n, d])
    return [rng.standard_normal((n, d)) for _ in range(3)], [rng.standard_normal((d, k)) for _ in range(3)]


def bench_moments(n: int, d: int, k: int, repeats: int, budget: float,
                  dense_limit: float, dense_rate: float | None) -> dict:
    """Times of XᵀX, whitened_triples and dense triples + multilinear for one d.

    ``dense_rate`` (seconds per n·d³) from a smaller d predicts the dense
    time; the dense path is skipped when the prediction exceeds ``dense_limit``.
    """
    Xs, Ws = make_views(n, d, k)
    out = {"n": n, "d": d, "k": k,
           "xtx": median_timed(lambda: Xs[0].T @ Xs[0], repeats=repeats, budget=budget),
           "white": median_timed(lambda: mvlib.whitened_triples(*Xs, *Ws), repeats=repeats, budget=budget),
           "dense": None, "note": ""}
    estimate = None if dense_rate is None else dense_rate * n * d ** 3
    if estimate is not None and estimate > dense_limit:
        out["note"] = (f"dense skipped: estimated ~{estimate:.0f} s (> {dense_limit:.0f} s) "
                       "from the n·d³ rate")
    else:
        out["dense"] = median_timed(lambda: mvlib.multilinear(mvlib.triples(*Xs), *Ws), repeats=repeats,
                                    budget=budget)
        out["rate"] = out["dense"].seconds / (n * d ** 3)
    return out


def print_moments(title: str, results: list[dict]) -> None:
    rows, notes = [], []
    for r in results:
        xtx, white, dense = r["xtx"], r["white"], r["dense"]
        row = [f"{r['n']:,}", str(r["d"]), str(r["k"]), secs(xtx.seconds), secs(white.seconds),
               ratio(white.seconds, xtx.seconds)]
        if dense is None:
            row += ["skipped", "-", "-"]
            notes.append(f"d = {r['d']}: {r['note']}")
        else:
            diff = np.max(np.abs(white.result - dense.result))
            row += [secs(dense.seconds), ratio(dense.seconds, white.seconds), f"{diff:.1e}"]
        row.append(f"{np.max(np.abs(white.result)):.1e}")
        rows.append(row)
    print_table(title, ["n", "d", "k", "XᵀX [s]", "whitened [s]", "whitened/XᵀX",
                        "dense [s]", "dense/whitened", "max|Δ|", "max|whitened|"], rows)
    for note in notes:
        print(f"  note: {note}")


def speedup(result: dict, name: str) -> float:
    """time(CPPower) / time(name) for one bench_power result."""
    res = result["res"]
    return res["CPPower"].timing.seconds / res[name].timing.seconds


def run_moments(n: int, dims, k: int, repeats: int, budget: float, dense_limit: float) -> list[dict]:
    results, rate = [], None
    for d in dims:
        r = bench_moments(n, d, k, repeats, budget, dense_limit, rate)
        rate = r.get("rate", rate)
        results.append(r)
    return results


# ------------------------------------------------------------ threading check
CHECK_K, CHECK_N, CHECK_RANK = 50, 10, 5  # first 5 components only: bounds the slow cases


def threading_check(n: int, d: int, k: int, repeats: int, budget: float) -> dict[str, float]:
    """Time each case with 1 BLAS thread and with the library default; print and return the slowdowns."""
    T, _ = odeco_tensor(CHECK_K)
    Xs, Ws = make_views(n, d, k)
    cases = {f"{name}, k={CHECK_K} N={CHECK_N} rank {CHECK_RANK}": fn
             for name, fn in power_methods(T, CHECK_RANK, CHECK_N).items()}
    cases[f"X1.T @ X1, n={n:,} d={d}"] = lambda: Xs[0].T @ Xs[0]
    cases[f"whitened_triples, n={n:,} d={d} k={k}"] = lambda: mvlib.whitened_triples(*Xs, *Ws)
    rows, slowdown = [], {}
    for name, fn in cases.items():
        with thread_limit(1, "blas"):
            one = median_timed(fn, repeats=repeats, budget=budget)
        default = median_timed(fn, repeats=repeats, budget=budget)
        slowdown[name] = default.seconds / one.seconds
        rows.append([name, f"{one.runs}/{default.runs}", secs(one.seconds), secs(default.seconds),
                     ratio(default.seconds, one.seconds)])
    print_table("Threading check: 1 BLAS thread vs the library default (slowdown > 1: threads hurt)",
                ["case", "reps", "1 thread [s]", "default [s]", "slowdown"], rows)
    return slowdown


# ------------------------------------------------------------------------ main
def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes, fewer repeats, no threading check (~20 s)")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads for the main tables (default 1; 0 = library default)")
    args = parser.parse_args(argv)
    args.blas_threads = args.blas_threads or None

    if args.quick:
        ks, Ns, repeats, budget = (10, 20), (10, 100), 3, 1.0
        n, dims, dense_limit = 20_000, (50, 200), 10.0
    else:
        ks, Ns, repeats, budget = (10, 20, 50), (10, 100), 5, 6.0
        n, dims, dense_limit = 100_000, (50, 200), 60.0
    k_white = 10
    wall = time.perf_counter()
    print_machine(args)

    with thread_limit(args.blas_threads, "blas"):
        cases = [(k, N) for k in ks for N in Ns]
        power = [bench_power(k, N, repeats, budget) for k, N in progress(cases, desc="power method")]
        print_power("1. tensor power method", power)
        moments = run_moments(n, dims, k_white, repeats, budget, dense_limit)
        print_moments("2. whitened triples vs dense triples vs one XᵀX", moments)

    slowdown = {}
    if not args.quick and args.blas_threads == 1 and threadpool_limits is not None:
        slowdown = threading_check(n, dims[-1], k_white, 3, budget)

    print("\nSummary (informational, never asserted)")
    mvlib_names = list(power[0]["res"])[1:]
    for name in mvlib_names:
        worst = min(power, key=lambda r: speedup(r, name))
        print(f"  {name}: smallest speed-up over CPPower {speedup(worst, name):.1f}x "
              f"(k = {worst['k']}, N = {worst['N']}); project target >= 10x for k <= 50")
    big = moments[-1]
    print(f"  whitened_triples / XᵀX at n = {big['n']:,}, d = {big['d']}, k = {big['k']}: "
          f"{big['white'].seconds / big['xtx'].seconds:.2f}x; project target <= 3x at n = 100,000, d = 200"
          + (" (--quick uses a smaller n)" if args.quick else ""))
    if slowdown:
        print("  with the default BLAS threads instead of 1, times change by: "
              + ", ".join(f"{name.split(',')[0]} {s:.2f}x" for name, s in slowdown.items()))
    print(f"\ntotal {time.perf_counter() - wall:.0f} s, load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    sys.exit(main())
