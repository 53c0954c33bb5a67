"""Quick checks of ``experiments/multiview_moments_experiments.py`` (chapter 1's data script).

Small sizes only: the functions return the keys and shapes the chapter reads, and their parts
agree with independent computations. Nothing is written to ``chapters/data``.
"""
from __future__ import annotations

import numpy as np
from scripts import load_script

mm = load_script("experiments", "multiview_moments_experiments")


def test_degenerate_means_are_affine_plus_orthogonal_step():
    ts = [1.0, 0.1]
    means = mm.degenerate_means(ts)
    for t, Ms in zip(ts, means):
        for M in Ms:
            step = M[:, 2] - (2 * M[:, 0] - M[:, 1])
            assert np.isclose(np.linalg.norm(step), 3.0 * t)
            assert np.abs(M[:, :2].T @ step).max() < 1e-10
    # the first two means do not move with t
    assert all(np.array_equal(a[:, :2], b[:, :2]) for a, b in zip(*means))


def test_convergence_small_keys_and_error_falls():
    out = mm.convergence(sizes=[300, 30_000], n_reps=2)
    assert list(out["errors"]) == ["categorical", "gaussian"] and out["n_reps"] == 2
    for err in out["errors"].values():
        assert err.shape == (2, 3) and np.all(err > 0)
        assert np.all(err[1] < err[0])          # a hundred times the data: about a tenth of the error


def test_degradation_small_keys_the_chapter_reads():
    out = mm.degradation(ts=[1.0, 0.01], n=2000, seeds=range(2))
    for key in ("t", "n", "seeds", "weights", "sigma_k", "error", "sine", "mean_error", "warned"):
        assert key in out
    assert out["error"].shape == out["sine"].shape == out["warned"].shape == (2, 2)
    assert out["sigma_k"][1] < 1e-3 * out["sigma_k"][0]
    assert not out["warned"][0].any() and out["warned"][1].all()
