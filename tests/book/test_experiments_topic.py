"""Quick checks of ``experiments/topic_experiments.py`` (the Reuters fits and the document-length
grid of chapter 03, topic models).

Small sizes only (a few seconds): one split, k = 3, a few Gibbs sweeps; two document lengths at a
small word budget. The records carry the keys the chapter reads, and the script's split 0 is the
one the chapter rebuilds to show the ill-conditioning warning live. Nothing is written to
``chapters/data``, and no timing is asserted.
"""
from __future__ import annotations

import numpy as np
import pytest
from scripts import load_script

topic = load_script("experiments", "topic_experiments")
lda_datasets = pytest.importorskip("lda.datasets")


def test_split_zero_is_the_one_the_chapter_rebuilds():
    X_all = lda_datasets.load_reuters()
    keep, X_tr, X_te, first, second = topic.split_corpus(X_all, 0)
    # the chapter's own construction of the training matrix of split 0 (cell before the warning)
    order = np.random.default_rng(0).permutation(X_all.shape[0])
    train_idx = order[topic.N_TEST:]
    keep_ch = np.flatnonzero((X_all[train_idx] > 0).sum(axis=0) >= topic.MIN_DOCS)
    np.testing.assert_array_equal(keep, keep_ch)
    np.testing.assert_array_equal(X_tr, X_all[np.ix_(train_idx, keep_ch)])
    assert X_tr.shape == (316, 1446) and X_te.shape == (topic.N_TEST, keep.size)
    np.testing.assert_array_equal(first + second, X_te)      # the two halves of each held-out document


def test_reuters_records_carry_the_keys_the_chapter_reads(monkeypatch):
    monkeypatch.setattr(topic, "KS", (3,))
    monkeypatch.setattr(topic, "SWEEPS", 20)
    out = topic.reuters(1)
    assert out["config"]["ks"] == [3] and out["config"]["splits"] == 1
    assert [r["method"] for r in out["runs"]] == list(topic.METHODS)
    for r in out["runs"]:
        assert {"split", "k", "method", "seconds", "warnings", "unigram_loglik", "loglik", "npmi", "umass",
                "sizes"} <= set(r)
        assert len(r["npmi"]) == len(r["umass"]) == len(r["sizes"]) == 3
        assert np.isclose(sum(r["sizes"]), 1) and r["loglik"] < 0
        assert r["loglik"] > r["unigram_loglik"] - 1.0          # same scale as the no-topic baseline
    em = [r for r in out["runs"] if r["method"] in ("em", "spectral_em")]
    assert all("em_converged" in r for r in em)
    assert set(out["lda_trace_split0"]["loglik"]) == {"3"} and set(out["top_words_split0_k5"]) == set()


def test_doc_length_grid(monkeypatch):
    monkeypatch.setattr(topic, "LENGTHS", (10, 100))
    monkeypatch.setattr(topic, "WORD_BUDGET", 30_000)
    out = topic.doc_length(2)
    assert out["config"]["lengths"] == [10, 100] and out["config"]["reps"] == 2
    for key in ("errors", "weight_errors"):
        assert set(out[key]) == {"10", "100"} and all(len(v) == 2 for v in out[key].values())
        assert all(0 <= e < 1 for v in out[key].values() for e in v)
