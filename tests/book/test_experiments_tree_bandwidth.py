"""Quick checks of ``experiments/tree_bandwidth.py`` (the density example of chapter 8).

Small samples only: the records have the keys the chapter reads, the script's bandwidth choice
is the chapter's rule, the data are those the chapter's description gives (one generator, three
samples in order), and the stored file is consistent with itself.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("hmmlearn")


tree_bandwidth = load_script("experiments", "tree_bandwidth")


def test_small_run_has_the_keys_the_chapter_reads():
    out = tree_bandwidth.run(sizes=(120, 150, 200), bandwidths=[0.4, 0.6], n_starts=1)
    assert {"sizes", "bandwidths", "scores", "scott", "truth", "mass", "hmm"} <= set(out)
    methods = {r["method"] for r in out["scores"]}
    assert methods == {"tree, rank 2", "tree, rank 3", "tree, rank 4", "product KDE"}
    assert len(out["scores"]) == 4 * 2
    for r in out["scores"]:
        assert 0 <= r["negative"] <= 1 and np.isfinite(r["validation"]) and np.isfinite(r["test"])
    best = tree_bandwidth.best_bandwidths(out["scores"], out["bandwidths"])
    for rank in (2, 3, 4):
        assert out["mass"][str(rank)]["bandwidth"] == best[f"tree, rank {rank}"]
        assert 0 < out["mass"][str(rank)]["mass"] < 2
    assert np.isfinite(out["hmm"]["test"]) and out["hmm"]["n_starts"] == 1


def test_truth_is_a_density_and_data_come_from_one_generator():
    X_tr, X_va = tree_bandwidth.data(sizes=(50, 60))
    assert X_tr.shape == (50, tree_bandwidth.D) and X_va.shape == (60, tree_bandwidth.D)
    rng = np.random.default_rng(tree_bandwidth.SEED)
    assert np.array_equal(X_tr, tree_bandwidth.sample_gauss_chain(50, rng))
    assert np.array_equal(X_va, tree_bandwidth.sample_gauss_chain(60, rng))
    # the forward recursion against a brute-force sum over the 3^5 hidden paths
    import itertools

    from scipy.stats import norm
    x = X_tr[:3]
    brute = np.zeros(3)
    for hs in itertools.product(range(3), repeat=tree_bandwidth.D):
        w = tree_bandwidth.PI[hs[0]] * np.prod([tree_bandwidth.T[a, b] for a, b in zip(hs[:-1], hs[1:])])
        brute += w * np.prod([norm.pdf(x[:, j], tree_bandwidth.MU[h], tree_bandwidth.SD[h])
                              for j, h in enumerate(hs)], axis=0)
    assert np.allclose(tree_bandwidth.true_loglik(x), np.log(brute), rtol=1e-12)


def test_stored_file_is_consistent():
    stored = json.loads((ROOT / "chapters" / "data" / "tree_bandwidth.json").read_text())
    best = tree_bandwidth.best_bandwidths(stored["scores"], stored["bandwidths"])
    for rank in (2, 3, 4):
        assert stored["mass"][str(rank)]["bandwidth"] == best[f"tree, rank {rank}"]
    assert len(stored["scores"]) == 4 * len(stored["bandwidths"])
