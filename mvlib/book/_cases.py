"""Shared benchmark cases: the data of a bench that a chapter's experiment script also uses."""
from __future__ import annotations

import numpy as np

__all__ = ["HMM_BENCH", "hmm_bench_data", "hmm_bench_model"]

#: The hidden-Markov benchmark case of :doc:`/chapters/06_hidden_markov` (``bench/bench_hmm.py``
#: and ``experiments/hmm_experiments.py``): k states, d symbols, Dirichlet concentration of the
#: emission rows, sequence length, and the fixed transition matrix (hmmlearn layout: rows are
#: next-state laws; condition number about 2).
HMM_BENCH = {
    "k": 3, "d": 8, "concentration": 0.4, "length": 50,
    "transmat": ((0.80, 0.10, 0.10),
                 (0.15, 0.70, 0.15),
                 (0.05, 0.15, 0.80)),
}


def hmm_bench_model(seed: int):
    """The data-generating ``hmmlearn.hmm.CategoricalHMM`` of one seed: uniform start, the fixed
    ``HMM_BENCH["transmat"]``, emission rows drawn from Dirichlet(0.4, …, 0.4) with
    ``numpy.random.default_rng(seed)``. Needs hmmlearn (the ``compare`` extra)."""
    from hmmlearn.hmm import CategoricalHMM

    k, d = HMM_BENCH["k"], HMM_BENCH["d"]
    rng = np.random.default_rng(seed)
    model = CategoricalHMM(k, n_features=d, init_params="")
    model.startprob_ = np.full(k, 1.0 / k)
    model.transmat_ = np.array(HMM_BENCH["transmat"])
    model.emissionprob_ = rng.dirichlet(np.full(d, HMM_BENCH["concentration"]), size=k)
    return model


def hmm_bench_data(n_sequences: int, seed: int):
    """``(X, lengths, model)``: ``n_sequences`` sequences of length 50 sampled by hmmlearn from
    :func:`hmm_bench_model` (``seed``) with ``numpy.random.RandomState(seed)``; X has shape
    (n_sequences·50, 1), hmmlearn's layout."""
    model = hmm_bench_model(seed)
    rs = np.random.RandomState(seed)
    length = HMM_BENCH["length"]
    X = np.concatenate([model.sample(length, random_state=rs)[0] for _ in range(n_sequences)])
    return X, np.full(n_sequences, length), model
