r"""Benchmark: mvlib.SpectralGMM at scale — one pass over a stream, Dask clusters, time against n.

Run (about 8–13 minutes on 2 cores, more on a loaded machine)::

    OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        .venv/bin/python bench/bench_scale.py

``--part stream|throughput|dask|sweep`` runs one part (it replaces its own section of an
existing JSON file and keeps the others); ``--threads`` sets the BLAS/OpenMP threads of every
measuring subprocess (default 2); ``--no-json`` prints only; ``--out PATH`` writes elsewhere;
``--quick`` shrinks every size (a smoke run of about 30 s) and writes nothing unless
``--out`` is given. Writes ``chapters/data/scale_bench.json``. A measurement script, not a
test: it prints tables and never asserts on time.

The data
--------
One spherical Gaussian mixture throughout: d = 200 features, k = 10 components, weights
Dirichlet(10·1) and means with i.i.d. N(0, 1) entries (``numpy.random.default_rng(2026)``:
weights 0.054–0.133, means 12.8–15.4 long, at least 17.9 apart), σ = 1 for every component.
A *stream* of n rows is a sequence of chunks of 50,000 rows (the last one shorter); chunk i
of the stream with seed s is drawn from ``default_rng([s, i])`` alone (labels from the
weights, then N(0, I) noise plus the labelled means), so any chunk can be made again on any
process, and a stream is never held whole (10^7 × 200 float64 would be 14.9 GiB).

How memory is measured
----------------------
Every measurement runs in its **own subprocess** (``--child``) with the BLAS threads set and
the two CPU pins of the book's Makefile (``OPENBLAS_CORETYPE``, ``NPY_DISABLE_CPU_FEATURES``,
defaulted to the Makefile's values when the caller did not set them). Before a fit the process
has imported everything and built its input; ``rss_before_gib`` is its resident memory then.
The kernel's peak-RSS counter is reset (``/proc/self/clear_refs`` ← 5) and read after the fit
(``VmHWM``): ``rss_peak_gib`` is the process's peak during the fit and ``fit_gib =
rss_peak_gib − rss_before_gib`` what the fit added at its peak (for the stream this includes
the chunk being generated: the generator runs inside ``fit``). ``ru_maxrss_gib`` is the
lifetime peak of the subprocess (``resource.getrusage``), for a cross-check.
``tracemalloc_peak_gib`` comes from a second, identical fit in a fresh subprocess under
``tracemalloc``: the peak of the Python/NumPy allocations during the fit (BLAS scratch and
allocator slack are not seen); ``traced_seconds`` is that (slightly slower) fit's time.

Part 1 ``stream``: ``SpectralGMM(10, moments="one-pass", random_state=0).fit(gen)`` where
``gen`` is a generator over the stream of 10^7 rows (seed 1). Wall time of ``fit``, split
into ``generate_seconds`` (inside the generator, producing chunks), ``chunk_seconds`` (from
handing a chunk to ``fit`` until ``fit`` asks for the next: mvlib's work on the chunks) and
``finish_seconds`` (the rest: the decomposition after the pass); rows/s with and without the
generation and on the median chunk (robust to stalls caused by other work on the machine);
the memory above, and the errors against the truth: ``mean_error`` =
``mvlib.matched_error(true_means.T, means_.T)`` (largest 2-norm error of a mean after the best
matching), its ``relative=True`` form, and with the same matching the largest absolute errors
of the weights and of the variances (σ² = 1). Target: ``fit_gib`` < 2 GiB.

Part 2 ``throughput``: one pass over the same stream (seed 1, all 10^7 rows) in one
subprocess; each chunk is generated once and then given to (a)
``mvlib.core.scale.SketchedMoments(omega).update(chunk)`` with ``omega =
mvlib.core.scale.sketch_matrix(200, 30, 0)`` (K = min(d, 2k + 10) = 30, the fit's sketch width), and
then to (b) ``G += chunk.T @ chunk`` (the plain second moment; NumPy runs it as a BLAS
``syrk``), each timed alone with ``time.perf_counter``. Feeding both the same chunk one after
the other keeps the comparison paired when other work on the machine comes and goes.
Reported for each: ``compute_seconds`` (sum over chunks), ``total_seconds`` = compute +
the stream's generation time (measured inside the generator), rows/s of both, rows/s of the
median chunk; the ratios (a)/(b) of each rate and ``paired_ratio_median`` = median over chunks
of time(b)/time(a). Target: (a)/(b) ≥ 0.5 on the update alone. Also a ``cProfile`` (one BLAS thread) of 10
updates on one chunk: the own time per call of the functions inside ``update``, to show where
the time goes.

Part 3 ``dask``: the first 10^6 rows of the stream (seed 1; 20 chunks, 1.5 GiB) as a NumPy
array and as a ``dask.array`` of 20 row blocks, each block generated on a worker by
``dask.delayed`` from its seed and persisted on the cluster before timing (``persist_seconds``).
``SpectralGMM(10, moments=m, random_state=0).fit`` with m = "one-pass" and "two-pass" on
the NumPy array (``threads`` BLAS threads) and on ``distributed.LocalCluster(n_workers=w,
threads_per_worker=1, processes=True, dashboard_address=None)`` for w = 1, 2; each worker
gets one BLAS thread (``OMP_NUM_THREADS`` etc. = 1 set before the workers are spawned, as
``distributed`` would do by default; the JSON records what the workers report). Median of 3
fits each; ``max_abs_diff_means``: the largest |difference| between the Dask fit's ``means_``
and the in-memory fit's (same ``random_state``); they should agree to 1e-8.

Part 4 ``sweep``: time against n for the chapter's figure, n ∈ {10^4, 3·10^4, 10^5, 3·10^5,
10^6}, d = 200, k = 10; repetitions r = 0, 1, 2 use the streams with seeds 100 + r (the first n
rows, in memory) and ``random_state=r``. Methods, one subprocess per (method, n), a warm-up
fit first:

* ``spectral_one_pass``: ``SpectralGMM(10, moments="one-pass", random_state=r)`` fitted on
  ``mvlib.core.scale.row_chunks(X, 50_000)`` (streamed in chunks from memory, so no generation
  time): 1 pass over the data;
* ``spectral_two_pass``: ``SpectralGMM(10, random_state=r).fit(X)`` (in memory): 2 passes;
* ``sklearn_em``: ``sklearn.mixture.GaussianMixture(n_components=10,
  covariance_type="spherical", random_state=r).fit(X)``, everything else at its defaults
  (k-means initialisation with one k-means run, tol 1e-3, at most 100 EM iterations).
  ``n_iter_`` is its EM iteration count; ``kmeans_iter`` the Lloyd iterations of its
  initialisation, read from an untimed ``KMeans(10, n_init=1, random_state=r)`` on the same X
  (the call GaussianMixture makes, with the same random state). ``passes`` counts the reads of X:
  k-means++ seeding (k = 10 rounds, each scoring every row against new candidates) + Lloyd
  iterations + 1 (k-means' final labelling) + 1 (initial M-step) + 2 per EM iteration (E-step
  and M-step) + 1 (the final E-step of ``fit_predict``).

Reported per (method, n): median ``seconds`` over the 3 repetitions (all of them in
``seconds_repeats``), median and max ``mean_error`` (as in part 1), ``fit_gib``, ``n_stuck``
(repetitions whose ``mean_error`` exceeds half the smallest distance between true means, 8.9:
a local optimum with two components merged); failures (e.g. a rank check that small n
cannot pass) recorded with their message.

JSON schema (``chapters/data/scale_bench.json``)
------------------------------------------------
``{"environment": {python, numpy, scipy, sklearn, dask, distributed, mvlib, machine, cpu_count,
threads, pins: {OPENBLAS_CORETYPE, NPY_DISABLE_CPU_FEATURES}, pins_set_by_caller, load_start,
load_end, date, sources: {git_head, mvlib_uncommitted, sha256: {file: first 16 hex digits}},
sources_changed_during_run},
"config": {d, k, sigma, chunk_rows, truth_seed, weights, mean_norms, min_mean_distance,
sketch_dim, n_stream, n_dask, sweep_ns, sweep_reps}, "units": {...}, "targets":
{stream_fit_gib, throughput_ratio}, "seconds_total", "parts_run" (of the last run), "runs":
[{date, parts, seconds_total, load_start, load_end, sources, sources_changed_during_run}],
"stream": {rows, chunks, seconds, generate_seconds, chunk_seconds, finish_seconds, rows_per_s,
rows_per_s_chunks, rows_per_s_median_chunk, rss_before_gib, rss_peak_gib,
fit_gib, ru_maxrss_gib, peak_method, tracemalloc_peak_gib, traced_seconds, mean_error,
mean_error_relative, weight_error, variance_error, warnings, met_memory, part_seconds},
"throughput": {rows, chunks, generate_seconds, wall_seconds, sketch_dim, passes: {sketch, xtx:
{compute_seconds, total_seconds, rows_per_s_compute, rows_per_s_total,
rows_per_s_median_chunk}}, ratio_compute, ratio_total, ratio_median_chunk,
paired_ratio_median, met_ratio, check, profile: {rows, calls, functions: [{function,
seconds_per_call}]}, part_seconds},
"dask": {rows, chunks, fits: [{where ("numpy"/"dask"), workers, moments, seconds,
seconds_repeats, persist_seconds, max_abs_diff_means, matched_diff_means, mean_error,
mean_error_relative, weight_error, variance_error}], worker_blas, numpy_threads, met_equal_1e-8,
part_seconds},
"sweep": {ns, methods, runs: [{method, n, seconds, seconds_repeats, mean_error_median,
mean_error_max, fit_gib_max, n_stuck, passes, n_iter (EM), kmeans_iter (EM), converged (EM),
failed}], part_seconds}}``.
Times in seconds, memory in GiB (2^30 bytes), rates in rows per second, errors in the units
of the data (σ = 1), load averages over (1, 5, 15) minutes; every part says how many rows it
used.

The numbers of the last run are in the JSON (and glued into chapter 11); the profile of
part 2 says where an update spends its time, so a slower accumulator shows where it lost.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np

from mvlib.book import (ChildError, child_reply, data_path, environment, max_rss_gib, measure_call, merged_sections,
                        run_child, run_parts, thread_env, timed, versions_line)

OUT = data_path("scale_bench.json", Path(__file__).resolve().parent)
PINS = {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}

D, K, SIGMA = 200, 10, 1.0
CHUNK = 50_000
TRUTH_SEED = 2026
STREAM_SEED = 1          # parts 1-3
SWEEP_SEED = 100         # part 4: stream 100 + r for repetition r
SIZES = {"n_stream": 10_000_000, "n_dask": 1_000_000,
         "sweep_ns": [10_000, 30_000, 100_000, 300_000, 1_000_000], "sweep_reps": 3}
QUICK_SIZES = {"n_stream": 200_000, "n_dask": 100_000, "sweep_ns": [10_000], "sweep_reps": 2}
TARGETS = {"stream_fit_gib": 2.0, "throughput_ratio": 0.5}
SWEEP_METHODS = ["spectral_one_pass", "spectral_two_pass", "sklearn_em"]
UNITS = {"seconds": "s", "*_gib": "GiB (2^30 bytes)", "rows_per_s*": "rows per second",
         "mean_error": "largest 2-norm error of a matched mean (data units, sigma = 1)",
         "mean_error_relative": "mean_error divided by the true mean's norm",
         "weight_error": "largest absolute error of a matched weight",
         "variance_error": "largest absolute error of a matched variance (true sigma^2 = 1)",
         "max_abs_diff_means": "largest absolute entry of means_(dask) - means_(numpy)",
         "load_*": "load averages over 1, 5, 15 minutes"}


def sizes():
    """The problem sizes (smaller under --quick, which children learn from the environment)."""
    return QUICK_SIZES if os.environ.get("SCALE_BENCH_QUICK") else SIZES


# --------------------------------------------------------------------------- the data
def truth():
    """(weights (k,), means (k, d)) of the mixture, from TRUTH_SEED."""
    rng = np.random.default_rng(TRUTH_SEED)
    return rng.dirichlet(np.full(K, 10.0)), rng.standard_normal((K, D))


def make_chunk(stream_seed, index, rows, weights, means):
    """Chunk ``index`` of a stream: ``rows`` samples drawn from default_rng([stream_seed, index]) alone."""
    rng = np.random.default_rng([stream_seed, index])
    labels = rng.choice(len(weights), size=rows, p=weights)
    X = rng.standard_normal((rows, means.shape[1]))
    if SIGMA != 1.0:
        X *= SIGMA
    X += means[labels]
    return X


def chunk_sizes(n):
    """Row counts of the chunks of a stream of n rows."""
    return [min(CHUNK, n - s) for s in range(0, n, CHUNK)]


def stream(stream_seed, n, stats=None):
    """Generator over the stream of n rows; adds rows, chunks and generation time to ``stats``.

    With a list ``stats["consumer"]`` it also records, per chunk, how long the consumer held
    the chunk before asking for the next one (its own processing time of that chunk)."""
    w, mu = truth()
    for i, rows in enumerate(chunk_sizes(n)):
        t = time.perf_counter()
        X = make_chunk(stream_seed, i, rows, w, mu)
        if stats is not None:
            stats["generate_seconds"] += time.perf_counter() - t
            stats["rows"] += rows
            stats["chunks"] += 1
        t = time.perf_counter()
        yield X
        if stats is not None and "consumer" in stats:
            stats["consumer"].append(time.perf_counter() - t)
        del X


def first_rows(stream_seed, n):
    """The stream of n rows as one in-memory array."""
    return np.concatenate(list(stream(stream_seed, n)))


# --------------------------------------------------------------------------- memory and errors
def measured(fit):
    """Run ``fit()`` and return (its result, seconds, memory dict, warnings)."""
    m = measure_call(fit)
    mem = {**m.memory(), "ru_maxrss_gib": max_rss_gib(),
           "peak_method": "VmHWM after clear_refs" if m.peak_reset else "ru_maxrss (lifetime peak)"}
    return m.result, m.seconds, mem, m.warnings


def stuck_level():
    """Half the smallest distance between true means: a matched mean farther off than this sits
    nearer another component than its own (two components merged, one split)."""
    from scipy.spatial.distance import pdist

    return float(pdist(truth()[1]).min()) / 2


def errors(means, weights, variances):
    """Errors of fitted parameters (components as rows) against the truth, after the best matching."""
    from mvlib.core.metrics import match_columns, matched_error

    w, mu = truth()
    perm, _ = match_columns(mu.T, means.T)
    return {"mean_error": matched_error(mu.T, means.T),
            "mean_error_relative": matched_error(mu.T, means.T, relative=True),
            "weight_error": float(np.max(np.abs(np.asarray(weights)[perm] - w))),
            "variance_error": float(np.max(np.abs(np.asarray(variances)[perm] - SIGMA**2)))}


# --------------------------------------------------------------------------- children
def child_stream(spec):
    """Part 1: the one-pass fit on the generator (untraced, or under tracemalloc)."""
    import mvlib

    n = sizes()["n_stream"]
    stats = {"rows": 0, "chunks": 0, "generate_seconds": 0.0, "consumer": []}
    gen = stream(STREAM_SEED, n, stats)
    est = mvlib.SpectralGMM(K, moments="one-pass", random_state=0)
    if spec.get("traced"):
        import tracemalloc
        tracemalloc.start()
        out = {"traced_seconds": timed(est.fit, gen)[1],
               "tracemalloc_peak_gib": tracemalloc.get_traced_memory()[1] / 2**30}
        tracemalloc.stop()
    else:
        _, seconds, mem, msgs = measured(lambda: est.fit(gen))
        out = {"seconds": seconds, **mem, "warnings": msgs}
    seconds = out.get("seconds", out.get("traced_seconds"))
    per_chunk = np.array(stats.pop("consumer"))
    rows = np.array(chunk_sizes(n), dtype=float)[:len(per_chunk)]
    out.update(stats, rows_per_s=stats["rows"] / seconds, chunk_seconds=float(per_chunk.sum()),
               rows_per_s_chunks=stats["rows"] / float(per_chunk.sum()),
               rows_per_s_median_chunk=float(np.median(rows / per_chunk)),
               finish_seconds=seconds - stats["generate_seconds"] - float(per_chunk.sum()))
    out.update(errors(est.means_, est.weights_, est.covariances_))
    return out


def child_throughput(spec):
    """Part 2: one pass over the stream; each chunk goes through both accumulators, timed apart."""
    from mvlib.core.scale import SketchedMoments, default_sketch_dim, sketch_matrix

    n = sizes()["n_stream"]
    sketch_dim = default_sketch_dim(K, D)
    acc = SketchedMoments(sketch_matrix(D, sketch_dim, 0))   # (a) the one-pass accumulator
    G = np.zeros((D, D))                                     # (b) the plain second moment
    stats = {"rows": 0, "chunks": 0, "generate_seconds": 0.0}
    t_a, t_b, last = [], [], None
    start = time.perf_counter()
    for X in stream(STREAM_SEED, n, stats):
        t = time.perf_counter()
        acc.update(X)
        t_a.append(time.perf_counter() - t)
        t = time.perf_counter()
        G += X.T @ X
        t_b.append(time.perf_counter() - t)
        last = X
    wall = time.perf_counter() - start
    rows, gen = stats["rows"], stats["generate_seconds"]
    t_a, t_b = np.array(t_a), np.array(t_b)
    sizes_ = np.array(chunk_sizes(n), dtype=float)

    def summary(times):
        compute = float(times.sum())
        return {"compute_seconds": compute, "total_seconds": gen + compute,
                "rows_per_s_compute": rows / compute, "rows_per_s_total": rows / (gen + compute),
                "rows_per_s_median_chunk": float(np.median(sizes_ / times))}

    out = {"sketch_dim": sketch_dim, **stats, "wall_seconds": wall,
           "passes": {"sketch": summary(t_a), "xtx": summary(t_b)},
           "paired_ratio_median": float(np.median(t_b / t_a)),
           "check": {"n_sketch": int(acc.n), "trace_xtx_per_row": float(np.trace(G)) / rows}}
    # where the update's time goes: cProfile of 10 updates on the last chunk
    import cProfile
    import pstats

    from threadpoolctl import threadpool_limits

    # one BLAS thread: the update then runs its third-moment product in this thread (not in a
    # pool of threads cProfile cannot see), so the profile shows where the work is
    prof, calls = cProfile.Profile(), 10
    with threadpool_limits(1, user_api="blas"):
        prof.enable()
        for _ in range(calls):
            SketchedMoments(acc.omega).update(last)
        prof.disable()
    st = pstats.Stats(prof).stats
    funcs = sorted(((v[2] / calls, f"{Path(f[0]).name}:{f[2]}") for f, v in st.items()), reverse=True)
    out["profile"] = {"rows": int(last.shape[0]), "calls": calls, "note": "own time (tottime) per update call, one BLAS thread (serial third-moment product)",
                      "functions": [{"function": name, "seconds_per_call": s} for s, name in funcs[:6]]}
    return out


def _blas_threads():
    """BLAS/OpenMP thread counts a process uses (run on the Dask workers)."""
    from threadpoolctl import threadpool_info

    return sorted({(i["internal_api"], i["num_threads"]) for i in threadpool_info()})


def child_dask(spec):
    """Part 3: in-memory fits, then the same fits on LocalClusters of 1 and 2 worker processes."""
    import logging

    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    import mvlib
    from mvlib.core.metrics import matched_error

    n, reps = sizes()["n_dask"], 3
    w, mu = truth()
    X = first_rows(STREAM_SEED, n)

    def fit_reps(data, moments):
        times, est = [], None
        for _ in range(reps):
            est = mvlib.SpectralGMM(K, moments=moments, random_state=0)
            times.append(timed(est.fit, data)[1])
        return est, times

    fits, reference = [], {}
    for moments in ("one-pass", "two-pass"):
        est, times = fit_reps(X, moments)
        reference[moments] = est.means_
        fits.append({"where": "numpy", "workers": None, "moments": moments, "seconds": float(np.median(times)),
                     "seconds_repeats": times, **errors(est.means_, est.weights_, est.covariances_)})
    worker_blas = {}
    # One BLAS thread per worker, as distributed's own default would give. The thread variables
    # this subprocess inherited override that default, and they must be in place before a
    # worker imports NumPy, so they are set here, before the workers are spawned (this
    # process's own BLAS was loaded already and keeps its threads).
    one_thread = thread_env(1)
    os.environ.update(one_thread)
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR, env=one_thread) as cluster, Client(cluster) as client:
            worker_blas[workers] = [list(map(list, v)) for v in client.run(_blas_threads).values()]
            # each block is generated on a worker from its own seed, then kept there
            blocks = [da.from_delayed(dask.delayed(make_chunk, pure=True)(STREAM_SEED, i, rows, w, mu),
                                      shape=(rows, D), dtype=np.float64)
                      for i, rows in enumerate(chunk_sizes(n))]
            t = time.perf_counter()
            Xd = da.concatenate(blocks, axis=0).persist()
            wait(Xd)
            persist = time.perf_counter() - t
            for moments in ("one-pass", "two-pass"):
                est, times = fit_reps(Xd, moments)
                fits.append({"where": "dask", "workers": workers, "moments": moments,
                             "seconds": float(np.median(times)), "seconds_repeats": times,
                             "persist_seconds": persist,
                             "max_abs_diff_means": float(np.max(np.abs(est.means_ - reference[moments]))),
                             "matched_diff_means": matched_error(reference[moments].T, est.means_.T),
                             **errors(est.means_, est.weights_, est.covariances_)})
            del Xd
    return {"rows": n, "chunks": len(chunk_sizes(n)), "fits": fits, "worker_blas": worker_blas,
            "numpy_threads": [list(t) for t in _blas_threads()]}


def child_sweep(spec):
    """Part 4: one method at one n, over the repetitions (median time)."""
    import mvlib
    from mvlib.core.scale import row_chunks

    method, n = spec["method"], spec["n"]

    def make(r):
        if method == "sklearn_em":
            from sklearn.mixture import GaussianMixture
            return GaussianMixture(n_components=K, covariance_type="spherical", random_state=r)
        moments = "one-pass" if method == "spectral_one_pass" else "two-pass"
        return mvlib.SpectralGMM(K, moments=moments, random_state=r)

    def fit(est, X):
        return est.fit(row_chunks(X, CHUNK) if method == "spectral_one_pass" else X)

    with warnings.catch_warnings():   # warm-up: lazy imports and first BLAS calls off the clock
        warnings.simplefilter("ignore")
        fit(make(0), first_rows(99, 20_000))
    runs = []
    for r in range(sizes()["sweep_reps"]):
        X = first_rows(SWEEP_SEED + r, n)
        est = make(r)
        try:
            _, seconds, mem, msgs = measured(lambda: fit(est, X))
        except Exception as e:   # e.g. the rank check at small n: record it, go on
            runs.append({"rep": r, "failed": f"{type(e).__name__}: {e}"})
            continue
        run = {"rep": r, "seconds": seconds, "fit_gib": mem["fit_gib"], "warnings": msgs,
               **errors(est.means_, est.weights_, est.covariances_)}
        if method == "sklearn_em":
            from sklearn.cluster import KMeans
            km = KMeans(n_clusters=K, n_init=1, random_state=r).fit(X)   # the init GaussianMixture ran
            run.update(n_iter=int(est.n_iter_), converged=bool(est.converged_), kmeans_iter=int(km.n_iter_),
                       passes=K + int(km.n_iter_) + 1 + 1 + 2 * int(est.n_iter_) + 1)
        else:
            run["passes"] = 1 if method == "spectral_one_pass" else 2
        runs.append(run)
        del X
    ok = [r for r in runs if "seconds" in r]
    out = {"method": method, "n": n, "reps": runs}
    if ok:
        out.update(seconds=float(np.median([r["seconds"] for r in ok])),
                   seconds_repeats=[r["seconds"] for r in ok],
                   mean_error_median=float(np.median([r["mean_error"] for r in ok])),
                   mean_error_max=float(np.max([r["mean_error"] for r in ok])),
                   fit_gib_max=float(np.max([r["fit_gib"] for r in ok])),
                   n_stuck=int(sum(r["mean_error"] > stuck_level() for r in ok)),
                   passes=float(np.median([r["passes"] for r in ok])))
        if method == "sklearn_em":
            out.update(n_iter=[r["n_iter"] for r in ok], kmeans_iter=[r["kmeans_iter"] for r in ok],
                       converged=all(r["converged"] for r in ok))
    if len(ok) < len(runs):
        out["failed"] = sorted({r["failed"] for r in runs if "failed" in r})
    return out


CHILDREN = {"stream": child_stream, "throughput": child_throughput, "dask": child_dask, "sweep": child_sweep}


def child(spec):
    out = {"load_start": list(os.getloadavg())}
    out.update(CHILDREN[spec["part"]](spec))
    out["load_end"] = list(os.getloadavg())
    child_reply({**spec, **out})


# --------------------------------------------------------------------------- parent side
SOURCES = ["mvlib/core/scale.py", "mvlib/gmm/_estimator.py", "mvlib/core/moments.py", "mvlib/core/metrics.py"]


def source_state():
    """Git commit and short SHA-256 of the mvlib files measured here (they may differ from the commit)."""
    import hashlib

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "mvlib"], cwd=root, capture_output=True,
                               text=True).stdout.split("\n")
    except OSError:
        head, dirty = "?", []
    return {"git_head": head, "mvlib_uncommitted": sorted(line[3:] for line in dirty if line.strip()),
            "sha256": {f: hashlib.sha256((root / f).read_bytes()).hexdigest()[:16] for f in SOURCES}}


def in_child(spec, threads, timeout=3600):
    """Run one measurement in a fresh interpreter (:func:`child`): its JSON result, or what failed."""
    env = {"MVLIB_PROGRESS": "0", **{var: os.environ.get(var, value) for var, value in PINS.items()}}
    try:
        return run_child(__file__, json.dumps(spec), threads=threads, env=env, timeout=timeout)
    except ChildError as e:
        return {**spec, "failed": f"timed out after {timeout} s" if e.timed_out
                else f"exit {e.returncode}: {e.stderr.strip()[-1500:]}"}


def _ratio(a, b):
    return a / b if a and b else float("nan")


def part_stream(threads):
    n = sizes()["n_stream"]
    print(f"\nPart 1 (stream): SpectralGMM(10, moments='one-pass').fit(generator), {n:,} rows x {D} "
          f"in chunks of {CHUNK:,} ({n * D * 8 / 2**30:.1f} GiB if held whole)", flush=True)
    res = in_child({"part": "stream"}, threads)
    if "failed" in res:
        print(f"  FAILED: {res['failed']}")
        return res
    traced = in_child({"part": "stream", "traced": True}, threads)
    if "failed" in traced:
        res["traced_failed"] = traced["failed"]
    else:
        res.update(tracemalloc_peak_gib=traced["tracemalloc_peak_gib"], traced_seconds=traced["traced_seconds"])
    res["met_memory"] = res["fit_gib"] < TARGETS["stream_fit_gib"]
    nan = float("nan")
    print(f"  rows read {res['rows']:,} in {res['chunks']} chunks; fit {res['seconds']:.1f} s = generation "
          f"{res['generate_seconds']:.1f} s + mvlib on the chunks {res['chunk_seconds']:.1f} s + the rest "
          f"{res['finish_seconds']:.2f} s; {res['rows_per_s']:,.0f} rows/s with generation, "
          f"{res['rows_per_s_chunks']:,.0f} without ({res['rows_per_s_median_chunk']:,.0f} on the median chunk)")
    print(f"  memory: before fit {res['rss_before_gib']:.3f} GiB, peak {res['rss_peak_gib']:.3f} GiB, "
          f"fit added {res['fit_gib']:.3f} GiB (target < {TARGETS['stream_fit_gib']} GiB: "
          f"{'met' if res['met_memory'] else 'NOT met'}); tracemalloc peak "
          f"{res.get('tracemalloc_peak_gib', nan):.3f} GiB ({res.get('traced_seconds', nan):.1f} s traced)")
    print(f"  errors: means {res['mean_error']:.4f} (relative {res['mean_error_relative']:.2e}), weights "
          f"{res['weight_error']:.2e}, variances {res['variance_error']:.2e}")
    for w in res.get("warnings", []):
        print(f"  warning: {w}")
    return res


def part_throughput(threads):
    n = sizes()["n_stream"]
    print(f"\nPart 2 (throughput): one pass over the same stream ({n:,} rows); each chunk is generated once "
          "and fed to (a) then (b), each timed alone", flush=True)
    res = in_child({"part": "throughput"}, threads)
    if "failed" in res:
        print(f"  FAILED: {res['failed']}")
        return res
    a, b = res["passes"]["sketch"], res["passes"]["xtx"]
    res.update(ratio_compute=a["rows_per_s_compute"] / b["rows_per_s_compute"],
               ratio_total=a["rows_per_s_total"] / b["rows_per_s_total"],
               ratio_median_chunk=a["rows_per_s_median_chunk"] / b["rows_per_s_median_chunk"])
    res["met_ratio"] = res["ratio_compute"] >= TARGETS["throughput_ratio"]
    print(f"  {'pass':<34} {'rows':>11} {'compute s':>9} {'rows/s':>11} {'median chunk':>12} "
          f"{'+gen s':>8} {'rows/s +gen':>12}")
    for label, p in ((f"(a) SketchedMoments.update, K={res['sketch_dim']}", a), ("(b) G += X.T @ X", b)):
        print(f"  {label:<34} {res['rows']:>11,} {p['compute_seconds']:9.1f} {p['rows_per_s_compute']:11,.0f} "
              f"{p['rows_per_s_median_chunk']:12,.0f} {p['total_seconds']:8.1f} {p['rows_per_s_total']:12,.0f}")
    print(f"  {'ratio (a)/(b)':<34} {'':>11} {'':>9} {res['ratio_compute']:11.3f} "
          f"{res['ratio_median_chunk']:12.3f} {'':>8} {res['ratio_total']:12.3f}")
    print(f"  target (a)/(b) >= {TARGETS['throughput_ratio']} on the update alone: "
          f"{'met' if res['met_ratio'] else 'NOT met'}; median over chunks of time(b)/time(a) "
          f"{res['paired_ratio_median']:.3f}; generating the stream took {res['generate_seconds']:.1f} s "
          f"({res['rows'] / res['generate_seconds']:,.0f} rows/s), the pass {res['wall_seconds']:.1f} s")
    print(f"  profile of one update on {res['profile']['rows']:,} rows (own s per call): " + ", ".join(
        f"{f['function']} {f['seconds_per_call']:.4f}" for f in res["profile"]["functions"][:4]))
    return res


def part_dask(threads):
    n = sizes()["n_dask"]
    print(f"\nPart 3 (dask): first {n:,} rows of the stream, in memory and as a dask.array of "
          f"{len(chunk_sizes(n))} blocks persisted on a LocalCluster; median of 3 fits", flush=True)
    res = in_child({"part": "dask"}, threads)
    if "failed" in res:
        print(f"  FAILED: {res['failed']}")
        return res
    fits = res["fits"]
    print(f"  {'moments':<9} {'numpy s':>8} {'1 worker s':>10} {'2 workers s':>11} {'1w/numpy':>8} "
          f"{'2w/numpy':>8} {'1w/2w':>6} {'max|dmeans| 1w':>14} {'2w':>9}")
    for moments in ("one-pass", "two-pass"):
        row = {(f["where"], f["workers"]): f for f in fits if f["moments"] == moments}
        t0, t1, t2 = row[("numpy", None)]["seconds"], row[("dask", 1)]["seconds"], row[("dask", 2)]["seconds"]
        print(f"  {moments:<9} {t0:8.2f} {t1:10.2f} {t2:11.2f} {t1 / t0:8.2f} {t2 / t0:8.2f} {t1 / t2:6.2f} "
              f"{row[('dask', 1)]['max_abs_diff_means']:14.1e} {row[('dask', 2)]['max_abs_diff_means']:9.1e}")
    worst = max(f["max_abs_diff_means"] for f in fits if f["where"] == "dask")
    res["met_equal_1e-8"] = worst <= 1e-8
    print(f"  dask means equal the in-memory means to 1e-8: {'yes' if res['met_equal_1e-8'] else 'NO'} "
          f"(worst {worst:.1e}); persist took {fits[2]['persist_seconds']:.1f} s (1 worker), "
          f"{fits[4]['persist_seconds']:.1f} s (2 workers); numpy BLAS threads {res['numpy_threads']}, "
          f"workers {res['worker_blas']}")
    return res


def part_sweep(threads):
    ns, reps = sizes()["sweep_ns"], sizes()["sweep_reps"]
    print(f"\nPart 4 (sweep): time against n, d={D}, k={K}, median of {reps} repetitions", flush=True)
    runs = []
    for n in ns:
        for method in SWEEP_METHODS:
            runs.append(in_child({"part": "sweep", "method": method, "n": n}, threads))
    print(f"  {'n':>9} " + " ".join(f"{m + ' s':>20} {'err':>7} {'passes':>6}" for m in SWEEP_METHODS)
          + f" {'EM/1-pass':>9} {'2-pass/1-pass':>13}")
    for n in ns:
        row = {r["method"]: r for r in runs if r["n"] == n}
        line = f"  {n:>9,} "
        for m in SWEEP_METHODS:
            r = row[m]
            if "seconds" in r:
                line += f"{r['seconds']:20.3f} {r['mean_error_median']:7.3f} {r['passes']:6.0f} "
            else:
                line += f"{'failed':>20} {'-':>7} {'-':>6} "
        t1 = row["spectral_one_pass"].get("seconds")
        line += (f"{_ratio(row['sklearn_em'].get('seconds'), t1):9.2f} "
                 f"{_ratio(row['spectral_two_pass'].get('seconds'), t1):13.2f}")
        print(line)
    for r in runs:
        if r.get("failed"):
            print(f"  {r['method']} n={r['n']}: failed {r['failed']}")
        if r.get("n_stuck"):
            print(f"  {r['method']} n={r['n']:,}: {r['n_stuck']} of {len(r['seconds_repeats'])} repetitions "
                  f"stuck (a matched mean off by more than {stuck_level():.1f}, half the closest true distance)")
        if r["method"] == "sklearn_em" and "n_iter" in r:
            print(f"  sklearn_em n={r['n']:,}: EM iterations {r['n_iter']}, k-means Lloyd iterations "
                  f"{r['kmeans_iter']}, converged {r['converged']}")
    return {"ns": ns, "methods": SWEEP_METHODS, "reps": reps, "runs": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["stream", "throughput", "dask", "sweep", "all"], default="all")
    ap.add_argument("--threads", type=int, default=2, help="BLAS/OpenMP threads of each measuring subprocess")
    ap.add_argument("--no-json", action="store_true", help="print only")
    ap.add_argument("--out", type=Path, default=None, help=f"JSON path (default {OUT})")
    ap.add_argument("--quick", action="store_true", help="tiny sizes for a smoke run; writes only with --out")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        os.environ["SCALE_BENCH_QUICK"] = "1"   # children inherit it
    if args.child:
        child(json.loads(args.child))
        return
    out_path = args.out or (None if args.quick or args.no_json else OUT)

    import dask
    import distributed
    import scipy
    import sklearn

    import mvlib
    wall = time.perf_counter()
    w, mu = truth()
    from scipy.spatial.distance import pdist
    env = environment(scipy=scipy.__version__, sklearn=sklearn.__version__, dask=dask.__version__,
                      distributed=distributed.__version__, mvlib=getattr(mvlib, "__version__", "?"))
    env["cpu_count"] = env.pop("nproc")   # this file's name for it, in the same place
    env.update(threads=args.threads, pins={v: os.environ.get(v, PINS[v]) for v in PINS},
               pins_set_by_caller=all(v in os.environ for v in PINS), load_start=list(os.getloadavg()),
               date=datetime.datetime.now().isoformat(timespec="seconds"), sources=source_state())
    s = sizes()
    config = {"d": D, "k": K, "sigma": SIGMA, "chunk_rows": CHUNK, "truth_seed": TRUTH_SEED,
              "stream_seed": STREAM_SEED, "sweep_seed": SWEEP_SEED, "weights": w.tolist(),
              "mean_norms": np.linalg.norm(mu, axis=1).tolist(), "min_mean_distance": float(pdist(mu).min()),
              "sketch_dim": int(min(D, 2 * K + 10)), **s, "quick": bool(args.quick)}
    print(f"SpectralGMM scale benchmark; {versions_line(dask=env['dask'], sklearn=env['sklearn'])}, "
          f"{env['machine']}, cpus {env['cpu_count']}, threads {args.threads}, "
          f"pins {env['pins']}{'' if env['pins_set_by_caller'] else ' (defaulted for the subprocesses)'}, "
          f"load {env['load_start'][0]:.2f}{', QUICK sizes' if args.quick else ''}")
    print(f"mixture: d={D}, k={K}, sigma={SIGMA}, weights {w.min():.3f}-{w.max():.3f}, mean norms "
          f"{min(config['mean_norms']):.1f}-{max(config['mean_norms']):.1f}, "
          f"closest means {config['min_mean_distance']:.1f} apart")
    parts = ["stream", "throughput", "dask", "sweep"] if args.part == "all" else [args.part]
    run = {"stream": part_stream, "throughput": part_throughput, "dask": part_dask, "sweep": part_sweep}
    res = run_parts(parts, lambda part, done: run[part](args.threads))
    total = time.perf_counter() - wall
    env["load_end"] = list(os.getloadavg())
    env["sources_changed_during_run"] = source_state()["sha256"] != env["sources"]["sha256"]
    print(f"\ntotal {total:.0f} s")
    if env["sources_changed_during_run"]:
        print("WARNING: mvlib's sources changed while the bench ran; the parts may have measured different code")
    if out_path is None:
        return
    # A single part replaces its own section and keeps the others; "runs" lists every run that
    # wrote the file (a full run starts the list afresh), so each section's origin stays known.
    data = merged_sections(out_path, res, keep_others=args.part != "all")
    run = {"date": env["date"], "parts": parts, "seconds_total": total, "load_start": env["load_start"],
           "load_end": env["load_end"], "sources": env["sources"],
           "sources_changed_during_run": env["sources_changed_during_run"]}
    data.update(environment=env, config=config, units=UNITS, targets=TARGETS, seconds_total=total,
                parts_run=parts, runs=data.get("runs", []) + [run])
    out_path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
