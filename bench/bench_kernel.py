r"""Benchmark: mvlib.KernelSpectral from 10⁴ to 10⁶ samples against scikit-learn EM, and the
accuracy target of the kernel chapter's running example.

Run ``.venv/bin/python bench/bench_kernel.py`` (about ten minutes on 2 cores) or add
``--quick`` (m up to 10⁵, seconds to a minute; nothing written). Writes
``chapters/data/kernel_scale.json``, which ``chapters/07_kernel_embeddings.ipynb`` plots. A
measurement script, not a test: it prints tables and never asserts on time.

Data (the kernel chapter's running example)
-------------------------------------------
Three one-dimensional views, each a mixture of N(−4, 1), a Gamma with shape 0.8 (scale 1,
starting at 0) and N(5, 0.8²), weights (1, 2, 3)/6, views independent given the
component; m triples drawn with ``numpy.random.default_rng(seed)``
(``kernel_experiments.sample``).

Part 1: time and memory against m
---------------------------------
For m ∈ {10⁴, 10⁵, 10⁶} (seed 0), each method runs in its **own subprocess** (so that each
peak memory is its own) with one BLAS thread:

* ``kernel``: ``KernelSpectral(3, random_state=0).fit([X1, X2, X3])`` at its defaults —
  bandwidth by cross-validation on ``cv_subsample_size(3m)`` pooled points, low-rank path of
  rank ≤ 300 with pivots searched among 20,000 points, features streamed in chunks of
  50,000 rows when they exceed 256 MiB;
* ``em_gmm``: ``sklearn.mixture.GaussianMixture(3, covariance_type="full", n_init=10,
  random_state=0)`` on the 3-vectors (x1, x2, x3); its component density of a view is the
  Gaussian marginal.

Recorded per run: the fit's wall time (``time.perf_counter``), the peak resident memory of
the child process (``resource.getrusage``; it includes the interpreter, the libraries and
the data) and the same just before the fit (``baseline``), and the weighted density error of
the chapter (dx = 1, averaged over the views).

Part 2: the accuracy target
---------------------------
The chapter's running case: m = 2,000, seeds 0–4, ``KernelSpectral`` (symmetric views,
defaults) and EM-GMM as above; the ratio of the mean errors (target ≤ 0.6) and the
smoothing floor of the exact densities at each fit's bandwidth
(``mvlib.kernel.smoothing_bias`` on the error's grid), which no amount of data removes at
that bandwidth.

Part 3: the exact and the low-rank path on one small case (m = 400, both forced by
``rank``): the largest gap between their conditional densities on the grid, relative to the
largest density.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _experiments_module():
    """experiments/kernel_experiments.py (run as a file, not installed): it pins every BLAS/OpenMP
    pool to one thread before NumPy loads, and holds the data, the true densities and the EM
    marginals this benchmark shares with the chapter's experiments."""
    path = Path(__file__).resolve().parents[1] / "experiments" / "kernel_experiments.py"
    spec = importlib.util.spec_from_file_location("kernel_experiments", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernel_experiments"] = module
    spec.loader.exec_module(module)
    return module


KE = _experiments_module()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402

import mvlib  # noqa: E402
from mvlib.book import (ChildError, child_reply, data_path, environment, max_rss_gib, run_child,  # noqa: E402
                        timed, versions_line)

DISTS, PI = KE.running_example_components()
OUT = data_path("kernel_scale.json", Path(__file__).resolve().parent)
TARGET_RATIO, TARGET_SECONDS, TARGET_GIB = 0.6, 120.0, 4.0


def fit_one(method, views, seed):
    """(densities on the error grids, fitted object) of one method."""
    grid_list = KE.grids(DISTS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "kernel":
            est = mvlib.KernelSpectral(3, random_state=seed).fit(views)
            return [est.conditional_density(g[:, None], view=v) for v, g in enumerate(grid_list)], est
        gm = GaussianMixture(3, covariance_type="full", n_init=10, random_state=seed).fit(np.hstack(views))
        return KE.gmm_marginals(gm, grid_list), gm


def child(method, m, seed):
    """Run in a subprocess: one fit, printed as one JSON line."""
    views, _ = KE.sample(DISTS, PI, m, seed)
    base = max_rss_gib()
    (dens, est), seconds = timed(fit_one, method, views, seed)
    peak = max_rss_gib()
    err = KE.weighted_error(KE.true_densities(DISTS, KE.grids(DISTS)), dens, PI)
    out = {"method": method, "m": m, "seed": seed, "seconds": seconds, "peak_gib": peak,
           "baseline_gib": base, "error": err}
    if method == "kernel":
        out.update(bandwidth=float(est.bandwidth_[0]), rank=int(est.rank_[0]))
    child_reply(out)


def in_child(method, m, seed):
    """One fit in its own subprocess (:func:`child`); its JSON line, or what failed."""
    try:
        return run_child(__file__, method, m, seed)
    except ChildError as e:
        return {"method": method, "m": m, "seed": seed, "failed": e.stderr.strip().splitlines()[-1:]}


def smoothing_floor(s):
    """The chapter's error (dx = 1, one view) of the exact densities smoothed at bandwidth s."""
    g = KE.grids(DISTS)[0]
    dx = g[1] - g[0]
    return float(sum(p * mvlib.kernel.smoothing_bias(d, s, g) / np.sqrt(dx) for p, d in zip(PI, DISTS[0])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="m up to 10^5; nothing written")
    ap.add_argument("--child", nargs=3, metavar=("METHOD", "M", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return
    wall = time.perf_counter()
    m_list = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    print(f"KernelSpectral vs scikit-learn EM-GMM; {versions_line()}, {platform.machine()}, nproc {os.cpu_count()}, "
          f"load {os.getloadavg()[0]:.2f}")
    print("\nPart 1: one subprocess per fit, one BLAS thread")
    print(f"{'m':>9} {'method':<8} {'time s':>8} {'/EM':>6} {'peak GiB':>9} {'before GiB':>11} {'error':>7}")
    scale = []
    for m in m_list:
        rows = {meth: in_child(meth, m, 0) for meth in ("em_gmm", "kernel")}
        for meth, r in rows.items():
            scale.append(r)
            if "failed" in r:
                print(f"{m:>9} {meth:<8} failed: {r['failed']}")
                continue
            ratio = r["seconds"] / rows["em_gmm"]["seconds"] if "seconds" in rows["em_gmm"] else float("nan")
            print(f"{m:>9} {meth:<8} {r['seconds']:8.1f} {ratio:6.2f} {r['peak_gib']:9.2f} "
                  f"{r['baseline_gib']:11.2f} {r['error']:7.3f}", flush=True)
    big = [r for r in scale if r["method"] == "kernel" and r["m"] == max(m_list) and "seconds" in r]
    if big:
        r = big[0]
        ok = r["seconds"] < TARGET_SECONDS and r["peak_gib"] < TARGET_GIB
        print(f"target (kernel, m = {max(m_list):,}: < {TARGET_SECONDS:g} s and < {TARGET_GIB:g} GiB): "
              f"{r['seconds']:.1f} s, {r['peak_gib']:.2f} GiB -> {'met' if ok else 'NOT met'}")

    print("\nPart 2: the running case, m = 2,000, seeds 0-4")
    acc = []
    grid_list = KE.grids(DISTS)
    p_true = KE.true_densities(DISTS, grid_list)
    for seed in range(5):
        views, _ = KE.sample(DISTS, PI, 2000, seed)
        row = {"seed": seed}
        for meth in ("kernel", "em_gmm"):
            dens, est = fit_one(meth, views, seed)
            row[meth] = KE.weighted_error(p_true, dens, PI)
            if meth == "kernel":
                row["bandwidth"] = float(est.bandwidth_[0])
                row["floor"] = smoothing_floor(row["bandwidth"])
        acc.append(row)
        print(f"  seed {seed}: kernel {row['kernel']:.3f} (floor {row['floor']:.3f} at s = "
              f"{row['bandwidth']:.3f})  EM-GMM {row['em_gmm']:.3f}", flush=True)
    mk_, me_, mf_ = (float(np.mean([r[key] for r in acc])) for key in ("kernel", "em_gmm", "floor"))
    ratio = mk_ / me_
    print(f"  mean error ratio kernel / EM = {ratio:.3f} (target <= {TARGET_RATIO}: "
          f"{'met' if ratio <= TARGET_RATIO else f'NOT met, gap {ratio - TARGET_RATIO:.3f}'}); "
          f"the smoothing floor alone is {mf_ / me_:.3f} of EM's error and {mf_ / mk_:.2f} of the kernel's")

    print("\nPart 3: exact vs low-rank path (m = 400, s = 0.4)")
    views, _ = KE.sample(DISTS, PI, 400, 0)
    grid = KE.grids(DISTS)[0]
    exact = mvlib.KernelSpectral(3, bandwidth=0.4, random_state=0).fit(views)
    p_exact = exact.conditional_density(grid)
    gaps = {}
    for rank in (800, 30):
        est = mvlib.KernelSpectral(3, bandwidth=0.4, rank=rank, random_state=0).fit(views)
        p = est.conditional_density(grid)
        perm = mvlib.match_columns(p_exact, p)[0]
        gaps[rank] = float(np.abs(p[:, perm] - p_exact).max() / p_exact.max())
        print(f"  exact (basis {exact.rank_[0]}) vs low-rank rank {rank} (basis {est.rank_[0]}): "
              f"largest density gap / max density = {gaps[rank]:.2e}")
    total = time.perf_counter() - wall
    print(f"\ntotal {total:.0f} s")
    if args.quick:
        return
    OUT.write_text(json.dumps({
        "environment": {**environment(), "threads": 1},
        "scale": scale, "targets": {"seconds": TARGET_SECONDS, "gib": TARGET_GIB, "ratio": TARGET_RATIO},
        "accuracy": {"m": 2000, "rows": acc, "mean_kernel": mk_, "mean_em": me_, "mean_floor": mf_,
                     "ratio": ratio},
        "exact_vs_lowrank": {str(k): v for k, v in gaps.items()}, "seconds_total": total}, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
