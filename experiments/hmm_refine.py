r"""The moment estimate of the HMM alone and refined by the window likelihood; writes ``chapters/data/hmm_refine.json``.

Run ``OMP_NUM_THREADS=1 python experiments/hmm_refine.py`` (well under a minute on one
BLAS thread) or add ``--quick`` (one small data set per size, prints, writes nothing). The
hidden-Markov chapter (``chapters/06_hidden_markov.ipynb``, section "Polishing the estimate
with the window likelihood") loads the file, prints its table and asserts on it.

Model: the chapter's running example (k = 3 states, d = 8 symbols; hmmlearn rows
``transmat_`` = [[.8, .1, .1], [.15, .7, .15], [.05, .15, .8]]; emission rows drawn from
Dirichlet(0.4) with ``numpy.random.default_rng(0)``; uniform start). For n = 2,000 and 8,000
sequences of length 50 and data sets s = 0..3, the sequences are drawn by
``mvlib.hmm.sample_hmm(..., random_state=100 + s)``; ``SpectralHMM(3, random_state=0)`` is
fitted with ``refine=False`` and with ``refine=True``, and the script records, for each fit,
the largest entry errors of ``emissionprob_`` and ``transmat_`` after matching the states on
the emission columns and the log-likelihood per symbol of the training data (mvlib's forward
algorithm), and the log-likelihood per symbol of the true parameters (hmmlearn's ``score``).

Stored: ``columns`` (the names of the columns of ``rows``), ``rows`` (one per data set, in the
order n, then s) and ``seconds`` (the run time on the machine that ran it).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from hmmlearn.hmm import CategoricalHMM

import mvlib
from mvlib import hmm
from mvlib.book import data_path, write_json

K, D, LENGTH = 3, 8, 50
TRANSMAT = np.array([[0.80, 0.10, 0.10], [0.15, 0.70, 0.15], [0.05, 0.15, 0.80]])
CONCENTRATION = 0.4
SIZES, SEEDS = (2000, 8000), range(4)
COLUMNS = ["n_sequences", "data_set",
           "moments_err_emission", "moments_err_transition", "moments_loglik",
           "refined_err_emission", "refined_err_transition", "refined_loglik", "true_loglik"]


def running_model():
    """The chapter's running example as an hmmlearn ``CategoricalHMM`` (rows: hmmlearn's layout)."""
    true = CategoricalHMM(K, n_features=D, init_params="")
    true.startprob_ = np.full(K, 1 / K)
    true.transmat_ = TRANSMAT
    true.emissionprob_ = np.random.default_rng(0).dirichlet(np.full(D, CONCENTRATION), K)
    return true


def one_row(n_sequences, data_set, true=None):
    """One row of ``COLUMNS``: both fits on the data set ``data_set`` of ``n_sequences`` sequences."""
    true = running_model() if true is None else true
    pi0, T0, O0 = true.startprob_, true.transmat_.T, true.emissionprob_.T
    X, lengths, _ = hmm.sample_hmm(pi0, T0, O0, n_sequences, LENGTH, random_state=100 + data_set)
    row = [n_sequences, data_set]
    for refine in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)          # simplex constraints
            est = mvlib.SpectralHMM(K, random_state=0, refine=refine).fit(X, lengths)
        p = mvlib.match_columns(O0, est.emissionprob_.T)[0]
        row += [np.abs(est.emissionprob_[p] - true.emissionprob_).max(),
                np.abs(est.transmat_[np.ix_(p, p)] - TRANSMAT).max(),
                est.score(X, lengths) / len(X)]
    row.append(true.score(X, lengths) / len(X))
    return row


def run(sizes=SIZES, seeds=SEEDS):
    """``{"columns", "rows", "seconds"}`` over the grid ``sizes`` x ``seeds``."""
    t0 = time.perf_counter()
    true = running_model()
    rows = []
    for n_sequences in sizes:
        for data_set in seeds:
            rows.append(one_row(n_sequences, data_set, true))
            print(f"n = {n_sequences:5d}, data set {data_set}: "
                  + " ".join(f"{v:.4f}" for v in rows[-1][2:]), flush=True)
    return {"columns": COLUMNS, "rows": rows, "seconds": time.perf_counter() - t0}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one data set of 500 sequences; writes nothing")
    args = parser.parse_args(argv)
    if args.quick:
        run(sizes=(500,), seeds=range(1))
        return
    result = run()
    # 10 decimals: the chapter prints 3 to 4 and compares log-likelihoods to 1e-3
    path = write_json(result, data_path("hmm_refine.json"), digits=10)
    print(f"wrote {path} ({result['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
