"""Quick checks of the HMM bench scripts (``experiments/hmm_experiments.py``, ``bench/bench_hmm.py``).

Small sizes only (a few seconds): the functions run end to end, return the keys the
chapter reads, and two independent computations agree where they should. No timing is
asserted, and nothing is written to ``chapters/data``.
"""
from __future__ import annotations

import numpy as np
import pytest
from scripts import load_script

pytest.importorskip("hmmlearn")
pytest.importorskip("lda")


bench_hmm = load_script("bench", "bench_hmm")
hmm_experiments = load_script("experiments", "hmm_experiments")


def test_reasonable_start_is_diagonal_dominant_and_stochastic():
    m = hmm_experiments.reasonable_start(4, 27, np.random.default_rng(0))
    assert np.allclose(m.transmat_.sum(axis=1), 1) and np.allclose(m.emissionprob_.sum(axis=1), 1)
    assert np.all(np.diag(m.transmat_) >= 0.5)
    assert np.allclose(m.startprob_, 0.25)


def test_compare_seed_small_keys_and_traces():
    row = hmm_experiments.compare_seed(0, n_sequences=100, n_test=50, n_random=1, max_iter=5)
    for key in ("seed", "true_loglik", "true_test_loglik", "spectral", "spectral_refine",
                "observable_operator", "random", "reasonable", "spectral_start", "seconds_total"):
        assert key in row
    for tr in row["random"] + row["reasonable"] + [row["spectral_start"]]:
        assert tr["iters"] == len(tr["loglik"]) == len(tr["seconds"]) == len(tr["err_transition"]) <= 5
        assert isinstance(tr["converged"], bool) and np.isfinite(tr["test_loglik"])
    oo = row["observable_operator"]
    assert 0 <= oo["n_floored_observed"] <= oo["n_floored"] <= oo["n_values"] == 50 * 50 * 8
    # held-out log-likelihood of the true model is that of hmmlearn's own score
    assert row["true_test_loglik"] < 0


def test_reuters_split_zero_is_the_chapter_split_and_old_route_moves():
    seqs = hmm_experiments.reuters_sequences()
    tr, te = hmm_experiments.reuters_split(0, len(seqs))
    assert np.array_equal(tr, np.arange(300)) and np.array_equal(te, np.arange(300, len(seqs)))
    tr1, te1 = hmm_experiments.reuters_split(1, len(seqs))
    assert len(np.intersect1d(tr1, te1)) == 0 and len(tr1) + len(te1) == len(seqs)
    X, L = hmm_experiments.stack([seqs[i] for i in tr])
    # the former route (divide by column sums, then project) moves a column of T by a lot at
    # k = 4; the simplex-constrained least squares keeps the move bounded
    moved_old, min_sum = hmm_experiments.old_route_move(X, L, 4)
    import warnings

    import mvlib
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mvlib.SpectralHMM(4, random_state=0, n_symbols=27).fit(X, L)
    assert moved_old > 10 * spec.projection_["transmat"]


def test_reuters_split_run_small():
    res = hmm_experiments.reuters_split_run(2, ks=(2,), n_random=1, max_iter=3)
    e = res["k"]["2"]
    for key in ("observable_operator", "spectral", "spectral_refine", "spectral_bw", "random_bw"):
        assert key in e
    assert e["spectral_bw"]["iters"] <= 3 and len(e["random_bw"]) == 1
    assert res["n_train_chars"] > 0 and res["unigram"]["train"] < 0


def test_cost_layout_forward_passes_agree():
    row = bench_hmm.cost_layout(200, 50, seed=0, repeats=1, em_iters=1, skip=("spectral_refine_fit",))
    assert row["n_symbols"] == 200 * 50
    assert row["forward_check_abs_diff"] < 1e-6
    assert set(row["ratios"]) >= {"em_iteration_over_spectral_fit", "em_iteration_over_mvlib_forward"}


def test_reuters_baum_welch_runs_past_hmmlearns_default_ten_iterations():
    # hmmlearn's ConvergenceMonitor is built in __init__ with n_iter=10; the script must
    # raise its cap too, or every run stops at 10 iterations whatever max_iter says
    res = hmm_experiments.reuters_split_run(0, ks=(3,), n_random=1, max_iter=25)
    e = res["k"]["3"]
    assert max(r["iters"] for r in e["random_bw"] + [e["spectral_bw"]]) > 10


def test_vowels_fit_small_keys_and_stochastic_parameters():
    out = hmm_experiments.vowels_fit(max_iter=3)
    assert out["split"] == 0 and out["iters"] <= 3 and isinstance(out["converged"], bool)
    assert np.allclose(np.sum(out["transmat"], axis=1), 1) and np.allclose(np.sum(out["emissionprob"], axis=1), 1)
    assert np.asarray(out["emissionprob"]).shape == (2, 27) and np.isclose(np.sum(out["startprob"]), 1)
