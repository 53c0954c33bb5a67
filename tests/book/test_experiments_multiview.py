"""Quick checks of ``experiments/multiview_experiments.py`` (chapter 4's data script).

Small sizes only: the functions return the keys the chapter reads, and their parts agree with
independent computations. Nothing is written to ``chapters/data``.
"""
from __future__ import annotations

import numpy as np
from scripts import load_script

mv = load_script("experiments", "multiview_experiments")


def test_sample_mixed_is_the_hand_written_draw():
    means = mv.mixed_means()
    X, h = mv.sample_mixed(300, np.random.default_rng(3), means)
    rng = np.random.default_rng(3)
    h_ref = rng.choice(3, size=300, p=mv.W_MIX)
    assert np.array_equal(h, h_ref)
    assert np.array_equal(X[0], means[0][:, h_ref].T + rng.standard_normal((300, 8)))
    assert np.array_equal(X[1], rng.poisson(means[1][:, h_ref].T).astype(float))


def test_weight_variants_small_keys():
    out = mv.weight_variants(n=3000, seeds=1)
    assert out["variants"] == list(mv.VARIANTS) and len(out["spread"]) == 1
    assert all(len(out["errors"][v]) == 1 and 0 <= out["errors"][v][0] < 0.2 for v in mv.VARIANTS)


def test_accuracy_small_keys_and_shapes():
    out = mv.accuracy(sizes=[3000], n_reps=1)
    for key in ("error", "weight_error", "seconds"):
        assert set(out[key]) == set(mv.METHODS)
    assert out["error"]["observable"].shape == (1, 1) and out["error"]["tensor"][0, 0] < 0.2


def test_covariance_model_and_small_run():
    M1, M2, M3, S3 = mv.covariance_model()
    assert S3.shape == (3, 3, 3) and np.linalg.eigvalsh(S3).min() >= 0.2
    assert M1.shape == M2.shape == (8, 3) and M3.shape == (3, 3)
    out = mv.covariances(n_cov=(5000,), seeds=1)
    assert out["error"]["distinct"].shape == out["error"]["shared"].shape == (1, 1)
