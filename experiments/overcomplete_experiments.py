r"""Experiments behind the chapter "Overcomplete latent variable models" (09_overcomplete).

Run ``OMP_NUM_THREADS=1 .venv/bin/python experiments/overcomplete_experiments.py`` (about
5-10 minutes on one core; name parts, e.g. ``error_vs_n``, to run only those). It writes three small JSON files that the chapter loads:

* ``chapters/data/overcomplete_error_vs_dk.json`` — exact tensors
  :math:`T=\sum_j a_j^{\otimes 3}` with random unit :math:`a_j`, d = 50 … 200 and
  k = d/2 … 2d; starts from the means of 5 labelled samples per component of the
  spherical mixture :math:`N(a_j, I/d)`; the power updates alone (``refine=False``, the
  estimator's default N = 2 for labelled starts). Median error
  :math:`\min_\pm\|\hat a_j\pm a_j\|` against :math:`\sqrt k/d` (the approximation term of
  Anandkumar, Ge & Janzamin 2015, eq. 3), plus the large case d = 200, k = 300 for three seeds with all
  300 errors of seed 0.
* ``chapters/data/overcomplete_error_vs_n.json`` — d = 50, k = 75, equal weights, data
  from the spherical mixture with ζ² = 1/d, n = 10³ … 3·10⁵; the Lemma 1 moment of the data
  (``fit_moments``), the same labelled starts, power updates alone. Median error against n
  (the :math:`\sqrt{k/n}` term) and the exact-tensor floor, for the power updates alone and
  after the CP-ALS refinement (``refine=True``, ALS on the data's moment).
* ``chapters/data/overcomplete_success.json`` — d = 40, k/d = 0.5 … 2.5, two seeds:
  fraction of components recovered to error < 0.1 (after the best matching) and wall
  time for SVD (Procedure 3), random and labelled starts, each without and with the
  CP-ALS refinement, and tensorly's ``parafac(T, k, random_state=seed)`` (all else at
  its defaults).

Times are ``time.perf_counter`` of one run each and depend on the machine and its load;
the chapter shows them only in a figure.
"""
from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import tensorly as tl
from tensorly.decomposition import parafac

import mvlib
from mvlib.core.metrics import column_errors

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"


def labelled_starts(A, m, zeta2, rng):
    """Normalised means of m samples from each N(a_j, zeta2 I) -> (d, k)."""
    d, k = A.shape
    y = np.repeat(np.arange(k), m)
    X = A.T[y] + np.sqrt(zeta2) * rng.standard_normal((len(y), d))
    return mvlib.labelled_initialization(X, y, k)


def indexed_errors(A, F):
    """min over signs of ||F_j -+ A_j||, column j against column j (labelled order)."""
    s = np.sign(np.sum(A * F, axis=0))
    s[s == 0] = 1
    return np.linalg.norm(F * s - A, axis=0)


def error_vs_dk():
    rows = []
    for d in (50, 75, 100, 150, 200):
        for r in (0.5, 1.0, 1.5, 2.0):
            k = int(r * d)
            T, _, A = mvlib.random_overcomplete_tensor(d, k, 1000 + d + k)
            V = labelled_starts(A, 5, 1.0 / d, np.random.default_rng(d + k))
            est = mvlib.OvercompleteTensorDecomposition(k, init="labels", refine=False).fit(T, init_vectors=V)
            e = indexed_errors(A, est.factors_)
            rows.append(dict(d=d, k=k, sqrt_k_over_d=float(np.sqrt(k) / d),
                             median_error=float(np.median(e)), init_median_error=float(np.median(indexed_errors(A, V)))))
            print("error vs d,k", rows[-1], flush=True)
    done = []
    for seed in range(3):
        d, k = 200, 300
        T, _, A = mvlib.random_overcomplete_tensor(d, k, seed)
        V = labelled_starts(A, 5, 1.0 / d, np.random.default_rng(seed + 100))
        t = time.perf_counter()
        est = mvlib.OvercompleteTensorDecomposition(k, init="labels", refine=False).fit(T, init_vectors=V)
        dt = time.perf_counter() - t
        e = indexed_errors(A, est.factors_)
        done.append(dict(seed=seed, median_error=float(np.median(e)), init_median_error=float(np.median(indexed_errors(A, V))),
                         bound=float(3 * np.sqrt(k) / d), time=dt, errors=[round(float(x), 6) for x in e] if seed == 0 else None))
        print("large case", {kk: v for kk, v in done[-1].items() if kk != "errors"}, flush=True)
    return dict(grid=rows, large_case=done)


def error_vs_n():
    d, k, zeta2 = 50, 75, 1.0 / 50
    rng = np.random.default_rng(7)
    T, _, A = mvlib.random_overcomplete_tensor(d, k, rng)
    V = labelled_starts(A, 5, zeta2, rng)
    est = mvlib.OvercompleteTensorDecomposition(k, init="labels", refine=False).fit(T, init_vectors=V)
    floor = float(np.median(indexed_errors(A, est.factors_)))
    rows = []
    for n in (1000, 3000, 10_000, 30_000, 100_000, 300_000):
        meds = []
        for rep in range(2):
            r2 = np.random.default_rng(10 * n + rep)
            h = r2.integers(k, size=n)
            X = A.T[h] + np.sqrt(zeta2) * r2.standard_normal((n, d))
            est = mvlib.OvercompleteTensorDecomposition(k, init="labels", refine=True)
            est.fit_moments(X, zeta2, init_vectors=V)
            meds.append((float(np.median(indexed_errors(A, est.power_factors_))),
                         float(np.median(column_errors(A, est.factors_, sign_invariant=True)))))
        meds = np.mean(meds, axis=0)
        rows.append(dict(n=n, median_error=float(meds[0]), median_error_als=float(meds[1]),
                         sqrt_k_over_n=float(np.sqrt(k / n))))
        print("error vs n", rows[-1], flush=True)
    return dict(d=d, k=k, zeta2=zeta2, exact_floor=floor, rows=rows)


def success():
    d = 40
    rows = []
    for r in (0.5, 1.0, 1.5, 2.0, 2.5):
        k = int(r * d)
        for seed in range(2):
            T, _, A = mvlib.random_overcomplete_tensor(d, k, 500 + 10 * k + seed)
            V = labelled_starts(A, 5, 1.0 / d, np.random.default_rng(seed))
            for init in ("svd", "random", "labels"):
                for refine in (False, True):
                    est = mvlib.OvercompleteTensorDecomposition(k, init=init, refine=refine, random_state=seed)
                    t = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)  # too few centres without ALS
                        est.fit(T, init_vectors=V if init == "labels" else None)
                    dt = time.perf_counter() - t
                    e = column_errors(A, est.factors_, sign_invariant=True)
                    rows.append(dict(k_over_d=r, k=k, seed=seed, method=init + ("+ALS" if refine else ""),
                                     success=float(np.mean(e < 0.1)), median_error=float(np.median(e)), time=dt))
                    print(rows[-1], flush=True)
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # its SVD init pads rank > d with random columns
                cp = parafac(tl.tensor(T), k, random_state=seed)
            dt = time.perf_counter() - t
            _, F = tl.cp_normalize(cp)
            e = column_errors(A, np.asarray(F[0]), sign_invariant=True)
            rows.append(dict(k_over_d=r, k=k, seed=seed, method="parafac", success=float(np.mean(e < 0.1)),
                             median_error=float(np.median(e)), time=dt))
            print(rows[-1], flush=True)
    return dict(d=d, rows=rows)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    info = dict(script="experiments/overcomplete_experiments.py", omp_num_threads=os.environ.get("OMP_NUM_THREADS"))
    parts = (("error_vs_dk", error_vs_dk), ("error_vs_n", error_vs_n), ("success", success))
    chosen = sys.argv[1:] or [name for name, _ in parts]
    for name, fn in parts:
        if name not in chosen:
            continue
        res = fn()
        res["info"] = info
        (OUT / f"overcomplete_{name}.json").write_text(json.dumps(res, indent=1))
        print("wrote", f"chapters/data/overcomplete_{name}.json", flush=True)


if __name__ == "__main__":
    main()
