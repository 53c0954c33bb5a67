r"""The ALS budget decides at k/d = 2: the estimator's defaults against ``parafac`` with 100 and
300 sweeps; writes ``chapters/data/overcomplete_budget.json`` for the overcomplete chapter
(09_overcomplete, section "Compare").

Run ``OMP_NUM_THREADS=1 python experiments/overcomplete_budget.py`` (well under a minute on one core),
or add ``--quick`` (d = 10, k = 12, one tensor; writes nothing).

Three exact tensors ``mvlib.random_overcomplete_tensor(24, 48, seed)``, seeds 0, 1, 2 (equal
weights, random unit components; k/d = 2 as the benchmark case of ``bench/bench_overcomplete.py``).
For each, the share of the k components recovered to error < 0.1 (``column_errors``, sign-free,
after the best matching) by

* ``mvlib.OvercompleteTensorDecomposition(k, random_state=0)`` at its defaults (SVD starts,
  power updates, clustering, then at most 100 ALS sweeps), and
* ``tensorly.decomposition.parafac(T, k, n_iter_max=sweeps, random_state=0)`` for 100 sweeps (its
  default) and 300, everything else at its defaults.
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np
import tensorly as tl
from tensorly.decomposition import parafac

import mvlib
from mvlib.book import data_path, write_json
from mvlib.core.metrics import column_errors

THRESHOLD = 0.1
SWEEPS = (100, 300)
METHODS = ["mvlib defaults"] + [f"parafac, {s} sweeps" for s in SWEEPS]


def recovered(A, F, threshold=THRESHOLD):
    """Share of the columns of A (d, k) within ``threshold`` of a column of F, sign-free, matched."""
    return float(np.mean(column_errors(A, np.asarray(F), sign_invariant=True) < threshold))


def one_tensor(d, k, seed):
    """Recovered shares of the three methods (keys ``METHODS``) on the tensor of ``seed``."""
    T, _, A = mvlib.random_overcomplete_tensor(d, k, seed)
    est = mvlib.OvercompleteTensorDecomposition(k, random_state=0).fit(T)
    out = {"mvlib defaults": recovered(A, est.factors_)}
    for sweeps in SWEEPS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # tensorly: SVD init with rank > d
            _, F = tl.cp_normalize(parafac(tl.tensor(T), k, n_iter_max=sweeps, random_state=0))
        out[f"parafac, {sweeps} sweeps"] = recovered(A, F[0])
    return out


def run(d=24, k=48, seeds=(0, 1, 2)):
    """``{"d", "k", "seeds", "threshold", "sweeps", "recovered": {method: [share per seed]}}``."""
    per_seed = [one_tensor(d, k, seed) for seed in seeds]
    return {"d": d, "k": k, "seeds": list(seeds), "threshold": THRESHOLD, "sweeps": list(SWEEPS),
            "recovered": {m: [r[m] for r in per_seed] for m in METHODS}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d = 10, k = 12, one tensor; write nothing")
    args = parser.parse_args(argv)
    res = run(10, 12, (0,)) if args.quick else run()
    for name, shares in res["recovered"].items():
        print(f"{name:20s} recovered share per tensor: {np.round(shares, 2)}")
    if not args.quick:
        print("wrote", write_json(res, data_path("overcomplete_budget.json")))


if __name__ == "__main__":
    main()
