r"""Error of the alternating power updates against the number of updates N; writes
``chapters/data/overcomplete_error_vs_N.json``.

Run ``.venv/bin/python experiments/overcomplete_iterations.py`` (a few minutes on 2 cores, one BLAS
thread per process) or add ``--quick`` (d = 50 only; writes ``*_quick.json``). The
overcomplete chapter loads the file and plots it; it does not re-run the updates.

For (d, k) ∈ {(50, 75), (100, 150), (200, 300)} (k/d = 1.5) and tensors 0, 1, 2
(``mvlib.random_overcomplete_tensor(d, k, seed)``: equal weights, random unit components
a_j, the exact third moment Σ_j w_j a_j^{⊗3}), the symmetric updates u ← T(I, u, u)/‖·‖ of
``mvlib.asymmetric_power_updates`` (tol = 0: exactly N updates) run from two kinds of start:

* ``labels`` — the chapter's semi-supervised starts: the normalised mean of 5 samples of
  N(a_j, I/d) per component (``mvlib.labelled_initialization``; ``numpy.random.default_rng([d, seed])``);
* ``exact`` — the true components a_j themselves.

After N ∈ {0, 1, 2, 3, 5, 10, 20, 30, 50, 100} updates it records, per start kind: the
median over j of min_± ‖â_j ± a_j‖ (start j against component j), the share of iterates
whose closest component (largest |⟨â_j, a_i⟩|) is their own, and the number of distinct
components that are closest to some iterate.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import mvlib  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
N_GRID = [0, 1, 2, 3, 5, 10, 20, 30, 50, 100]
SIZES = [(50, 75), (100, 150), (200, 300)]


def summary(A, F):
    """(median sign-free error of column j against a_j, share nearest own, distinct nearest)."""
    s = np.where(np.sum(A * F, axis=0) < 0, -1.0, 1.0)
    err = np.linalg.norm(F * s - A, axis=0)
    nearest = np.argmax(np.abs(A.T @ F), axis=0)
    return (float(np.median(err)), float(np.mean(nearest == np.arange(A.shape[1]))),
            int(np.unique(nearest).size))


def one(args):
    d, k, seed = args
    t0 = time.perf_counter()
    T, _, A = mvlib.random_overcomplete_tensor(d, k, seed)
    rng = np.random.default_rng([d, seed])
    y = np.repeat(np.arange(k), 5)
    X = A.T[y] + rng.standard_normal((len(y), d)) / np.sqrt(d)
    starts = {"labels": mvlib.labelled_initialization(X, y, k), "exact": A.copy()}
    out = {"d": d, "k": k, "seed": seed}
    for name, F in starts.items():
        rows, done = [], 0
        for N in N_GRID:
            if N > done:
                F = mvlib.asymmetric_power_updates(T, F, n_iterations=N - done, tol=0.0)[1]
                done = N
            rows.append(summary(A, F))
        out[name] = {"median_error": [r[0] for r in rows], "share_own": [r[1] for r in rows],
                     "distinct": [r[2] for r in rows]}
    out["seconds"] = time.perf_counter() - t0
    print(f"d={d} k={k} seed={seed}: labels median error "
          + " ".join(f"{e:.2f}" for e in out["labels"]["median_error"])
          + f" ({out['seconds']:.0f} s)", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="d = 50 only")
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args(argv)
    sizes = SIZES[:1] if args.quick else SIZES
    tasks = [(d, k, s) for d, k in sizes for s in range(3)]
    tasks.sort(key=lambda t: -t[0])
    t0 = time.perf_counter()
    if args.processes > 1:
        with mp.get_context("fork").Pool(args.processes) as pool:
            rows = pool.map(one, tasks, chunksize=1)
    else:
        rows = [one(t) for t in tasks]
    res = {"n_grid": N_GRID, "rows": sorted(rows, key=lambda r: (r["d"], r["seed"])),
           "seconds": round(time.perf_counter() - t0, 1)}
    path = OUT / ("overcomplete_error_vs_N_quick.json" if args.quick else "overcomplete_error_vs_N.json")
    path.write_text(json.dumps(res, indent=1))
    print(f"wrote {path} ({res['seconds']} s)")


if __name__ == "__main__":
    main()
