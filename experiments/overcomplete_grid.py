r"""Where the overcomplete power method wins and where CP-ALS wins, over a grid of k/d;
writes ``chapters/data/overcomplete_grid.json``.

Run (one core; the two CPU variables make the BLAS/NumPy kernels the same on every
machine of the same kind)::

    OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        .venv/bin/python experiments/overcomplete_grid.py

(about 3 minutes on one idle core, well inside a 25-minute budget, so no cell is
dropped). ``--d``, ``--ratios`` and ``--seeds`` change the grid (default d ∈ {20, 40}, k/d ∈ {0.5, 1, 1.5, 2, 2.5, 3}, seeds 0..9), ``--skip d:ratio``
drops cells (default: none), ``--max-restarts`` caps the equal-time restarts (default 500),
``--no-coverage`` skips the second part, ``--no-json`` only prints. The script forces one
BLAS/OpenMP thread (environment variables set before NumPy is imported, and
``threadpoolctl.threadpool_limits(1)`` around everything). A measurement script, not a
test: it prints tables and never asserts on time.

Part 1: the grid (JSON key ``cells``)
-------------------------------------
For every d, k = round(k/d · d) and seed, the exact tensor
``T, w, A = mvlib.random_overcomplete_tensor(d, k, seed)`` (:math:`T=\sum_j a_j^{\otimes3}`,
equal weights, :math:`a_j` i.i.d. uniform on the unit sphere) and five methods, each timed
once with ``time.perf_counter`` (nothing is shared between them):

* ``power`` — the seed's method alone (Anandkumar, Ge & Janzamin 2015):
  ``OvercompleteTensorDecomposition(k, refine=False, random_state=seed).fit(T)`` at its
  defaults: Procedure 3 starts (L = 10 k per batch), N = 10 symmetric power updates,
  Procedure 2 clustering (ε = 1.4), up to 5 batches while a batch adds a centre; columns it
  cannot find are random unit vectors;
* ``default`` — the same with ``refine=True`` (the library default: the power stage, then
  tensorly's ``parafac`` started at its result, at most 100 sweeps, tol 1e-10);
* ``parafac`` — ``tensorly.decomposition.parafac(T, k, random_state=seed)`` at its defaults
  (``init="svd"``, padded with random columns when k > d; n_iter_max = 100, tol = 1e-8);
* ``parafac_equal_time`` — ``parafac(T, k, init="random", random_state=seed*1000 + r)`` at
  the default sweeps, r = 0, 1, …, restarted until the wall time spent (fits plus the
  reconstruction errors used to choose) reaches the time ``default`` took on the same tensor
  (at least one restart, at most ``--max-restarts``); the restart with the smallest relative
  reconstruction error :math:`\|T-\hat T\|_F/\|T\|_F` is kept — chosen without the truth.
  Its time therefore overshoots the budget by at most one restart;
* ``parafac_converged`` — ``parafac(T, k, n_iter_max=2000, tol=1e-12)`` (``init="svd"``).

For all parafac runs ``return_errors=True`` gives the number of sweeps run (it adds no
work: the errors are computed anyway when tol > 0). The factor compared with the truth is
the first factor of the normalised CP tensor (as in ``bench/bench_overcomplete.py``).

Success of a method on one tensor = the fraction of the k true components recovered,
``mean(mvlib.core.metrics.column_errors(A, F, sign_invariant=True) < 0.1)``: the best one-to-one
matching (Hungarian) of the estimated to the true columns, error
:math:`\min_\pm\|\hat a_{\pi(j)}\pm a_j\|`. Per (d, k/d, method) the JSON holds the per-seed
values and a summary: the mean success over seeds with a 95 % **percentile bootstrap
interval over seeds** (2000 resamples of the seeds, ``numpy.random.default_rng(0)``; the
tensor is the unit of replication, so the interval collapses to a point when every seed gives
the same value), the mean and median time. Paired comparisons (same tensors) give the mean
difference of success with the same bootstrap over seeds.
A secondary score, ``success_loose``, is the same fraction at error < 0.3: the power stage's
fixed points carry an O(√k/d) bias (√k/d ≥ 0.16 on this grid except d = 40, k = 20), so
its estimates can sit in the right basin yet miss 0.1.

Part 2: coverage of the power stage (JSON key ``coverage``)
-----------------------------------------------------------
d = 20, k = 30 (k/d = 1.5), seeds 0..4 (``--coverage-seeds``).

* ``restarts``: for L ∈ {30, 100, 300, 1000, 3000} the Procedure 3 starts
  ``mvlib.svd_initialization(T, L, random_state=seed)`` (the estimator uses only the first
  factor as the symmetric start, and these are exactly the starts of its first batch with
  ``n_restarts=L, random_state=seed``), then symmetric power updates
  ``mvlib.asymmetric_power_updates(T, A0, tol=1e-10)`` as in the estimator: 2 updates,
  then 8 more. Reported: the number of distinct true components :math:`a_j` with at least
  one iterate of :math:`|\langle\hat a,a_j\rangle|>0.8` after 0 (the starts), 2 and 10
  updates; beside it the estimator itself with that L
  (``OvercompleteTensorDecomposition(30, n_restarts=L, refine=False, random_state=seed)``):
  its number of Procedure 2 centres and its success.
* ``exact_starts``: the updates started exactly at the true :math:`a_j` (tol = 0, i.e.
  exactly N updates), N ∈ {0, 1, 2, 10, 50, 200}: how many iterates are still nearest
  (largest :math:`|\langle\hat a_j,a_i\rangle|`) to their own component, how many distinct
  components are nearest to some iterate, and the median :math:`\min_\pm\|\hat a_j\pm a_j\|`.

Budget: two full default runs took 164 s and 167 s on one idle core (the grid about 160 s,
its largest cell d = 40, k = 120 about 45 s; the coverage part about 4 s), so nothing is
shrunk: every cell runs and the equal-time restarts never reach the cap (at most 10
restarts on one tensor). The measured
total is stored as ``info.seconds``. At d = 20 every method takes 10–130 ms per tensor, so
there the equal-time comparison gives parafac only 2–4 restarts and Python overhead is a
visible part of every time.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data" / "overcomplete_grid.json"
METHODS = ("power", "default", "parafac", "parafac_equal_time", "parafac_converged")
N_BOOT = 2000
THRESH = 0.1
LOOSE = 0.3   # secondary: in the right basin but not polished (the power stage's bias is O(sqrt(k)/d))
COMPARISONS = (("default", "parafac_equal_time"), ("power", "parafac"),
               ("power", "parafac_equal_time"), ("default", "parafac_converged"))


def bootstrap_ci(x, n_boot=N_BOOT):
    """Mean and 95 % percentile bootstrap interval of the mean over the entries of x (the seeds)."""
    x = np.asarray(x, float)
    rng = np.random.default_rng(0)
    means = x[rng.integers(len(x), size=(n_boot, len(x)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(x.mean()), [float(lo), float(hi)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, nargs="+", default=[20, 40])
    ap.add_argument("--ratios", type=float, nargs="+", default=[0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--skip", nargs="*", default=[], metavar="D:RATIO",
                    help="cells to drop, e.g. 40:3.0")
    ap.add_argument("--max-restarts", type=int, default=500)
    ap.add_argument("--coverage-seeds", type=int, nargs="+", default=list(range(5)))
    ap.add_argument("--coverage-L", type=int, nargs="+", default=[30, 100, 300, 1000, 3000])
    ap.add_argument("--no-coverage", action="store_true")
    ap.add_argument("--no-grid", action="store_true")
    ap.add_argument("--no-json", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    import tensorly as tl
    from tensorly.decomposition import parafac
    from threadpoolctl import threadpool_limits

    import mvlib
    from mvlib.core.metrics import column_errors

    skip = {(int(s.split(":")[0]), float(s.split(":")[1])) for s in args.skip}

    def score(A, F):
        e = column_errors(A, F, sign_invariant=True)
        return float(np.mean(e < THRESH)), float(np.median(e)), float(np.mean(e < LOOSE))

    def rel_error(T, cp):
        return float(np.linalg.norm(T - tl.cp_to_tensor(cp)) / np.linalg.norm(T))

    def run_parafac(T, k, **kw):
        with warnings.catch_warnings():
            # SVD init pads rank > d with random columns (UserWarning); return_errors is
            # deprecated in favour of callbacks (DeprecationWarning)
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            cp, errs = parafac(tl.tensor(T), k, return_errors=True, **kw)
        return cp, len(errs)

    def factor(cp):
        return np.asarray(tl.cp_normalize(cp)[1][0])

    def one_tensor(d, k, seed):
        T, _, A = mvlib.random_overcomplete_tensor(d, k, seed)
        out = {}
        for name, refine in (("power", False), ("default", True)):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # fewer than k centres, no ALS
                est = mvlib.OvercompleteTensorDecomposition(k, refine=refine, random_state=seed).fit(T)
            dt = time.perf_counter() - t
            s, med, s3 = score(A, est.factors_)
            out[name] = dict(success=s, success_loose=s3, median_error=med, time=dt,
                             rec_error=rel_error(T, est.cp_tensor_),
                             n_power_components=int(est.n_power_components_),
                             n_restarts=int(est.n_restarts_))
        t = time.perf_counter()
        cp, sweeps = run_parafac(T, k, random_state=seed)
        dt = time.perf_counter() - t
        s, med, s3 = score(A, factor(cp))
        out["parafac"] = dict(success=s, success_loose=s3, median_error=med, time=dt, rec_error=rel_error(T, cp), sweeps=sweeps)

        budget = out["default"]["time"]
        best, r, sweeps_all = None, 0, []
        t = time.perf_counter()
        while True:
            cp, sweeps = run_parafac(T, k, init="random", random_state=seed * 1000 + r)
            err = rel_error(T, cp)
            sweeps_all.append(sweeps)
            if best is None or err < best[0]:
                best = (err, cp, r)
            r += 1
            if time.perf_counter() - t >= budget or r >= args.max_restarts:
                break
        dt = time.perf_counter() - t
        s, med, s3 = score(A, factor(best[1]))
        out["parafac_equal_time"] = dict(success=s, success_loose=s3, median_error=med, time=dt, rec_error=best[0],
                                         budget=budget, n_restarts=r, best_restart=best[2],
                                         mean_sweeps=float(np.mean(sweeps_all)),
                                         hit_cap=bool(r >= args.max_restarts and dt < budget))

        t = time.perf_counter()
        cp, sweeps = run_parafac(T, k, n_iter_max=2000, tol=1e-12, random_state=seed)
        dt = time.perf_counter() - t
        s, med, s3 = score(A, factor(cp))
        out["parafac_converged"] = dict(success=s, success_loose=s3, median_error=med, time=dt, rec_error=rel_error(T, cp),
                                        sweeps=sweeps)
        return out

    def grid():
        cells = []
        for d in args.d:
            for ratio in args.ratios:
                if (d, ratio) in skip:
                    print(f"d={d} k/d={ratio}: skipped", flush=True)
                    continue
                k = int(round(ratio * d))
                t_cell = time.perf_counter()
                per_seed = [one_tensor(d, k, seed) for seed in args.seeds]
                methods = {}
                for m in METHODS:
                    keys = per_seed[0][m].keys()
                    raw = {key: [ps[m][key] for ps in per_seed] for key in keys}
                    mean, ci = bootstrap_ci(raw["success"])
                    mean3, ci3 = bootstrap_ci(raw["success_loose"])
                    raw["summary"] = dict(success_mean=mean, success_ci95=ci,
                                          success_loose_mean=mean3, success_loose_ci95=ci3,
                                          time_mean=float(np.mean(raw["time"])),
                                          time_median=float(np.median(raw["time"])))
                    methods[m] = raw
                comps = {}
                for a, b in COMPARISONS:
                    diff = np.array(methods[a]["success"]) - np.array(methods[b]["success"])
                    mean, ci = bootstrap_ci(diff)
                    comps[f"{a}-{b}"] = dict(mean=mean, ci95=ci)
                cell = dict(d=d, k=k, k_over_d=ratio, seeds=list(args.seeds), methods=methods,
                            success_differences=comps, seconds=time.perf_counter() - t_cell)
                cells.append(cell)
                print(f"d={d:>3} k={k:>3} ({cell['seconds']:.0f} s) "
                      + "  ".join(f"{m} {methods[m]['summary']['success_mean']:.2f}/"
                                  f"{methods[m]['summary']['time_mean']:.2f}s" for m in METHODS)
                      + f"  eq-time restarts {np.mean(methods['parafac_equal_time']['n_restarts']):.1f}",
                      flush=True)
        return cells

    def coverage():
        d, k = 20, 30
        res = dict(d=d, k=k, seeds=list(args.coverage_seeds), threshold=0.8, L=list(args.coverage_L))
        rows = []
        for seed in args.coverage_seeds:
            T, _, A = mvlib.random_overcomplete_tensor(d, k, seed)

            def covered(F):
                return int(np.sum(np.max(np.abs(A.T @ F), axis=1) > 0.8))

            for L in args.coverage_L:
                A0 = mvlib.svd_initialization(T, L, random_state=seed)[0]
                F2 = mvlib.asymmetric_power_updates(T, A0, n_iterations=2, tol=1e-10)[1]
                F10 = mvlib.asymmetric_power_updates(T, F2, n_iterations=8, tol=1e-10)[1]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    est = mvlib.OvercompleteTensorDecomposition(k, n_restarts=L, refine=False,
                                                                random_state=seed).fit(T)
                rows.append(dict(seed=seed, L=L, covered_0=covered(A0), covered_2=covered(F2),
                                 covered_10=covered(F10), estimator_centres=int(est.n_power_components_),
                                 estimator_success=score(A, est.factors_)[0],
                                 estimator_success_loose=score(A, est.factors_)[2]))
                print("coverage", rows[-1], flush=True)
        summ = []
        for L in args.coverage_L:
            sel = [r for r in rows if r["L"] == L]
            summ.append({"L": L, **{key: float(np.mean([r[key] for r in sel]))
                                    for key in ("covered_0", "covered_2", "covered_10",
                                                "estimator_centres", "estimator_success", "estimator_success_loose")}})
        res["restarts"] = dict(rows=rows, mean=summ)

        n_grid = [0, 1, 2, 10, 50, 200]
        ex_rows = []
        for seed in args.coverage_seeds:
            T, _, A = mvlib.random_overcomplete_tensor(d, k, seed)
            F, done = A.copy(), 0
            for N in n_grid:
                if N > done:
                    F = mvlib.asymmetric_power_updates(T, F, n_iterations=N - done, tol=0.0)[1]
                    done = N
                nearest = np.argmax(np.abs(A.T @ F), axis=0)
                sgn = np.where(np.sum(A * F, axis=0) < 0, -1.0, 1.0)
                ex_rows.append(dict(seed=seed, N=N, own_nearest=int(np.sum(nearest == np.arange(k))),
                                    distinct_nearest=int(np.unique(nearest).size),
                                    median_error=float(np.median(np.linalg.norm(F * sgn - A, axis=0)))))
            print("exact starts seed", seed, [(r["N"], r["own_nearest"], r["distinct_nearest"])
                                               for r in ex_rows if r["seed"] == seed], flush=True)
        ex_mean = []
        for N in n_grid:
            sel = [r for r in ex_rows if r["N"] == N]
            ex_mean.append({"N": N, **{key: float(np.mean([r[key] for r in sel]))
                                       for key in ("own_nearest", "distinct_nearest", "median_error")},
                            "own_nearest_range": [min(r["own_nearest"] for r in sel), max(r["own_nearest"] for r in sel)],
                            "distinct_nearest_range": [min(r["distinct_nearest"] for r in sel),
                                                       max(r["distinct_nearest"] for r in sel)]})
        res["exact_starts"] = dict(N=n_grid, rows=ex_rows, mean=ex_mean)
        return res

    t0 = time.perf_counter()
    with threadpool_limits(1):
        T, _, _ = mvlib.random_overcomplete_tensor(20, 30, 123)   # warm-up, not recorded
        mvlib.OvercompleteTensorDecomposition(30, random_state=0).fit(T)
        run_parafac(T, 30, random_state=0)
        cells = [] if args.no_grid else grid()
        cov = None if args.no_coverage else coverage()
    total = time.perf_counter() - t0

    print_summary(cells, cov)
    print(f"total {total:.0f} s")
    if args.no_json:
        return
    info = dict(
        script="experiments/overcomplete_grid.py", argv=list(argv) if argv is not None else sys.argv[1:],
        threads=1, seconds=round(total, 1), success_threshold=THRESH,
        success="fraction of the k true components with min over signs ||a_hat - a_j|| < 0.1 after the "
                "best one-to-one matching (mvlib.core.metrics.column_errors, sign_invariant=True)",
        interval="95 % percentile bootstrap over seeds (tensors): 2000 resamples, numpy default_rng(0); "
                 "also for the paired per-seed success differences",
        timing="time.perf_counter, one run per method and tensor; warm-up run first",
        equal_time="parafac init='random', random_state=seed*1000+r, default sweeps, restarted until the "
                   "elapsed time reaches default's time on the same tensor (>= 1 restart, <= max_restarts); "
                   "best by relative reconstruction error",
        max_restarts=args.max_restarts, skipped=sorted([list(s) for s in skip]),
        env={v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                            "OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")},
        versions=dict(python=platform.python_version(), numpy=np.__version__, tensorly=tl.__version__),
        machine=platform.machine())
    out = dict(info=info, grid=dict(d=args.d, k_over_d=args.ratios, seeds=args.seeds, methods=list(METHODS)),
               cells=cells, coverage=cov)
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


def print_summary(cells, cov):
    if cells:
        short = {"power": "power", "default": "default", "parafac": "parafac",
                 "parafac_equal_time": "pf eq-time", "parafac_converged": "pf converged"}
        print()
        for key, title in (("success", "Success (mean fraction recovered over seeds [95 % bootstrap "
                                        "interval over seeds])"),
                           ("success_loose", "Secondary: mean fraction with error < 0.3 (right basin, "
                                              "not polished) [95 % bootstrap interval]")):
            print(title)
            print(f"{'d':>3} {'k':>4} {'k/d':>4} " + " ".join(f"{short[m]:>18}" for m in METHODS))
            for c in cells:
                print(f"{c['d']:>3} {c['k']:>4} {c['k_over_d']:>4} " + " ".join(
                    f"{c['methods'][m]['summary'][key + '_mean']:.2f} "
                    f"[{c['methods'][m]['summary'][key + '_ci95'][0]:.2f},"
                    f"{c['methods'][m]['summary'][key + '_ci95'][1]:.2f}]".rjust(18) for m in METHODS))
            print()
        print("Mean time (s) per tensor; eq-time restarts and converged sweeps (means over seeds)")
        print(f"{'d':>3} {'k':>4} " + " ".join(f"{short[m]:>12}" for m in METHODS)
              + f" {'eq restarts':>11} {'pf sweeps':>9} {'conv sweeps':>11} {'power centres':>13}")
        for c in cells:
            M = c["methods"]
            print(f"{c['d']:>3} {c['k']:>4} " + " ".join(f"{M[m]['summary']['time_mean']:12.3f}" for m in METHODS)
                  + f" {np.mean(M['parafac_equal_time']['n_restarts']):11.1f}"
                  + f" {np.mean(M['parafac']['sweeps']):9.0f}"
                  + f" {np.mean(M['parafac_converged']['sweeps']):11.0f}"
                  + f" {np.mean(M['power']['n_power_components']):13.1f}")
        print()
        print("Paired success differences (mean [95 % bootstrap interval over seeds])")
        print(f"{'d':>3} {'k':>4} " + " ".join(f"{a + '-' + b:>30}" for a, b in COMPARISONS))
        for c in cells:
            print(f"{c['d']:>3} {c['k']:>4} " + " ".join(
                (f"{c['success_differences'][a + '-' + b]['mean']:+.2f} "
                 f"[{c['success_differences'][a + '-' + b]['ci95'][0]:+.2f},"
                 f"{c['success_differences'][a + '-' + b]['ci95'][1]:+.2f}]").rjust(30) for a, b in COMPARISONS))
    if cov:
        print()
        print(f"Coverage, d = {cov['d']}, k = {cov['k']}, seeds {cov['seeds']}: distinct a_j with some "
              f"|<a_hat, a_j>| > 0.8 (mean over seeds)")
        print(f"{'L':>5} {'starts':>7} {'2 upd':>6} {'10 upd':>7} {'est. centres':>12} {'est. success':>12}")
        for r in cov["restarts"]["mean"]:
            print(f"{r['L']:>5} {r['covered_0']:7.1f} {r['covered_2']:6.1f} {r['covered_10']:7.1f} "
                  f"{r['estimator_centres']:12.1f} {r['estimator_success']:12.2f}")
        print()
        print("Started at the true a_j: iterates nearest their own component, distinct nearest "
              "components (mean [min, max] over seeds), median error")
        for r in cov["exact_starts"]["mean"]:
            print(f"N={r['N']:>4}: own {r['own_nearest']:5.1f} {r['own_nearest_range']}  "
                  f"distinct {r['distinct_nearest']:5.1f} {r['distinct_nearest_range']}  "
                  f"median error {r['median_error']:.3f}")


if __name__ == "__main__":
    main()
