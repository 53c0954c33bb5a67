r"""Accuracy of the HMM's estimated start law on five data sets; writes ``chapters/data/hmm_start.json``.

Run ``OMP_NUM_THREADS=1 python experiments/hmm_start.py`` (seconds on one BLAS thread) or add
``--quick`` (two small data sets; prints, writes nothing). The hidden-Markov chapter
(``chapters/06_hidden_markov.ipynb``, section "The initial distribution") loads the file,
prints its table and asserts on it.

Model: the chapter's running example (k = 3 states, d = 8 symbols; hmmlearn rows
``transmat_`` = [[.8, .1, .1], [.15, .7, .15], [.05, .15, .8]]; emission rows drawn from
Dirichlet(0.4) with ``numpy.random.default_rng(0)``; uniform start law). For data sets
s = 0..4, 2,000 sequences of length 50 are drawn by
``mvlib.hmm.sample_hmm(..., random_state=s)`` and ``SpectralHMM(3, random_state=0)`` is fitted.
Each row holds, after matching the states on the emission columns: the largest entry error of
``startprob_``; the same for the start law fitted from the first symbols' frequencies f with
the *true* O (``simplex_least_squares(O, f)``, so only the sampling noise of f remains); the
largest entry error of f against O pi (that noise); and the largest entry error of
``emissionprob_``.

Stored: ``columns``, ``rows`` (one per data set, in order) and ``seconds``.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import mvlib
from mvlib import hmm
from mvlib.book import data_path, write_json

K, D, LENGTH, N_SEQUENCES = 3, 8, 50, 2000
TRANSMAT = np.array([[0.80, 0.10, 0.10], [0.15, 0.70, 0.15], [0.05, 0.15, 0.80]])
CONCENTRATION = 0.4
SEEDS = range(5)
COLUMNS = ["err_startprob", "err_start_true_O", "noise_first_symbols", "err_emission"]


def model():
    """(pi, T, O) of the running example in the paper's column convention."""
    emission = np.random.default_rng(0).dirichlet(np.full(D, CONCENTRATION), K)
    return np.full(K, 1 / K), TRANSMAT.T, emission.T


def one_row(seed, n_sequences=N_SEQUENCES):
    """The four errors of ``COLUMNS`` on the data set ``seed``."""
    pi0, T0, O0 = model()
    X, lengths, _ = hmm.sample_hmm(pi0, T0, O0, n_sequences, LENGTH, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # simplex constraints
        est = mvlib.SpectralHMM(K, random_state=0).fit(X, lengths)
    p = mvlib.match_columns(O0, est.emissionprob_.T)[0]
    f_hat = np.bincount(X[np.cumsum(lengths) - lengths, 0], minlength=D) / len(lengths)
    return [np.abs(est.startprob_[p] - pi0).max(),
            np.abs(hmm.simplex_least_squares(O0, f_hat) - pi0).max(),
            np.abs(f_hat - O0 @ pi0).max(),
            np.abs(est.emissionprob_[p] - O0.T).max()]


def run(seeds=SEEDS, n_sequences=N_SEQUENCES):
    """``{"columns", "rows", "seconds"}`` over the data sets ``seeds``."""
    t0 = time.perf_counter()
    rows = []
    for seed in seeds:
        rows.append(one_row(seed, n_sequences))
        print(f"data set {seed}: " + " ".join(f"{v:.4f}" for v in rows[-1]), flush=True)
    return {"columns": COLUMNS, "n_sequences": n_sequences, "length": LENGTH, "rows": rows,
            "seconds": time.perf_counter() - t0}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two data sets of 300 sequences; writes nothing")
    args = parser.parse_args(argv)
    if args.quick:
        run(seeds=range(2), n_sequences=300)
        return
    result = run()
    # 10 decimals: the chapter prints 3 and compares the rows entry by entry
    path = write_json(result, data_path("hmm_start.json"), digits=10)
    print(f"wrote {path} ({result['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
