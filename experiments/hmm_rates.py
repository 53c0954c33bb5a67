r"""Error of the spectral HMM against the number of sequences; writes ``chapters/data/hmm_rates.json``.

Run ``.venv/bin/python experiments/hmm_rates.py`` (a few minutes, one BLAS thread) or add
``--quick`` (two sizes, two seeds; writes ``hmm_rates_quick.json``). The hidden-Markov
chapter loads the file, plots it and asserts the fitted slopes; it does not re-run the grid,
which is too slow for the book's time budget.

Model: the chapter's running example (k = 3 states, d = 8 symbols; hmmlearn rows
``transmat_`` = [[.8, .1, .1], [.15, .7, .15], [.05, .15, .8]]; emission rows drawn from
Dirichlet(0.4) with ``numpy.random.default_rng(0)``; uniform start). For every number of
sequences n in ``N_GRID`` (length 50 each) and seeds 0..9, the sequences are drawn by
``mvlib.hmm.sample_hmm(..., random_state=seed)`` and the script records

* ``window law`` — the largest entry error of the empirical window law (``window_counts``)
  against the exact pooled law (π̄ of the chapter's eq-ch6-pibar);
* ``O``, ``T`` — the largest entry errors of ``SpectralHMM(3, random_state=seed)`` (Algorithm B,
  the default) after matching states on O;
* ``O (tensor)``, ``T (tensor)`` — the same with ``method="tensor"``, and whether that route
  fell back to Algorithm B (``fallback``).

Stored: the grid, every error (``errors[key][i][s]`` for size i and seed s), fallbacks per size
and the run time.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import mvlib  # noqa: E402
from mvlib import hmm  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "chapters" / "data"
N_GRID = [250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000]
SEEDS = range(10)
LENGTH = 50
TRANSMAT = np.array([[0.80, 0.10, 0.10], [0.15, 0.70, 0.15], [0.05, 0.15, 0.80]])
KEYS = ("window law", "O", "T", "O (tensor)", "T (tensor)")


def model():
    """(π, T, O) of the running example in the paper's column convention."""
    emission = np.random.default_rng(0).dirichlet(np.full(8, 0.4), 3)
    return np.full(3, 1 / 3), TRANSMAT.T, emission.T


def one(n_seq, seed):
    """Errors of one data set: a dict key -> float, plus the tensor fallback flag."""
    pi0, T0, O0 = model()
    pi_bar = np.mean([np.linalg.matrix_power(T0, t) @ pi0 for t in range(LENGTH - 2)], axis=0)
    P123 = hmm.hmm_window_moments(pi_bar, T0, O0)[3]
    X, lengths, _ = hmm.sample_hmm(pi0, T0, O0, n_seq, LENGTH, random_state=seed)
    C3 = hmm.window_counts(X, lengths)
    out = {"window law": float(np.abs(C3 / C3.sum() - P123).max())}
    for method, suffix in (("observable", ""), ("tensor", " (tensor)")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = mvlib.SpectralHMM(3, random_state=seed, method=method).fit(X, lengths)
        p = mvlib.match_columns(O0, est.emissionprob_.T)[0]
        out["O" + suffix] = float(np.abs(est.emissionprob_[p] - O0.T).max())
        out["T" + suffix] = float(np.abs(est.transmat_[np.ix_(p, p)] - TRANSMAT).max())
        if method == "tensor":
            out["fallback"] = est.method_used_ != "tensor"
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two sizes, two seeds")
    args = parser.parse_args(argv)
    grid, seeds = (N_GRID[:2], range(2)) if args.quick else (N_GRID, SEEDS)
    t0 = time.perf_counter()
    errors = {key: [] for key in KEYS}
    fallbacks = []
    for n_seq in grid:
        rows = [one(n_seq, seed) for seed in seeds]
        for key in KEYS:
            errors[key].append([round(r[key], 6) for r in rows])
        fallbacks.append(int(sum(r["fallback"] for r in rows)))
        med = {key: np.median(errors[key][-1]) for key in KEYS}
        print(f"n = {n_seq:6d}: " + "  ".join(f"{k} {v:.4f}" for k, v in med.items())
              + f"  fallbacks {fallbacks[-1]}", flush=True)
    result = {"n_grid": grid, "seeds": list(seeds), "length": LENGTH, "errors": errors,
              "fallbacks": fallbacks, "seconds": round(time.perf_counter() - t0, 1)}
    name = "hmm_rates_quick.json" if args.quick else "hmm_rates.json"
    (OUT / name).write_text(json.dumps(result, indent=1))
    print(f"wrote {OUT / name} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
