"""Quick checks of ``experiments/scale_experiments.py`` (the sample experiments of chapter 11).

Small sizes only (a few seconds): the functions return the keys and shapes the chapter reads,
the running example is drawn as the chapter used to draw it, the kept fractions agree with a
direct computation, and the exact parts (cubature data, K = d) hold to rounding. No timing is
asserted, and nothing is written to ``chapters/data``.
"""
from __future__ import annotations

import numpy as np
from scripts import load_script

from mvlib.core.scale import sketch_matrix
from mvlib.lda import LDASecondMoment

scale_experiments = load_script("experiments", "scale_experiments")


def test_running_example_draws_as_the_chapter_did():
    model = scale_experiments.running_example()
    rng = np.random.default_rng([7, 0, 1])
    X, _ = model.sample(500, rng)
    rng = np.random.default_rng([7, 0, 1])
    h = rng.choice(4, size=500, p=[0.1, 0.2, 0.3, 0.4])          # the chapter's former sample_gmm
    M = 2.0 * np.random.default_rng(0).standard_normal((30, 4))
    X_old = M[:, h].T + np.array([0.6, 0.5, 0.4, 0.3])[h, None] * rng.standard_normal((500, 30))
    assert np.array_equal(X, X_old)


def test_rate_and_price_small_shapes():
    rate = scale_experiments.rate(ns=[1000, 2000], reps=2)
    assert set(rate["errors"]) == {"one-pass", "two-pass"}
    assert all(e.shape == (2, 2) and np.all(e > 0) for e in rate["errors"].values())
    price = scale_experiments.price(seeds=range(1), Ks=[12, 48], n=500)
    assert price["one_pass"].shape == (1, 2) and price["two_pass"].shape == (1,)
    assert np.all(price["one_pass"] > 0) and price["Ks"] == [12, 48]


def test_kept_fractions_match_a_direct_computation():
    out = scale_experiments.kept(Ks=[24], sketches=2, n=500)
    assert out["d"] == 300 and set(out["fractions"]) == {"cross signal", "cross noise", "sketch signal",
                                                         "sketch noise"}
    mu, X = scale_experiments.corpus(0, 500)
    M2 = mu.T @ np.diag(scale_experiments.ALPHA / 2.0) @ mu
    E = LDASecondMoment(X, 1.0) @ np.eye(300) - M2
    direct = np.mean([np.linalg.norm(om.T @ E @ om, 2) for om in
                      (sketch_matrix(300, 24, random_state=s) for s in range(2))]) / np.linalg.norm(E, 2)
    assert np.isclose(out["fractions"]["sketch noise"][0], direct)
    assert all(0 < v[0] < 1 for v in out["fractions"].values())


def test_cubature_fits_are_exact_and_warn_only_at_k():
    out = scale_experiments.cubature()
    assert out["d"] == 30 and out["n_points"] > 0
    assert [f["K"] for f in out["fits"]] == [4, 18, 30]
    assert [f["warned"] for f in out["fits"]] == [True, False, False]
    assert all(max(f["means"], f["weights"], f["variances"]) < 1e-8 for f in out["fits"])


def test_k_equals_d_small_gaps_and_the_chapter_keys():
    gaps = scale_experiments.k_equals_d(n=2000, n_docs=1000)
    assert list(gaps) == ["SpectralGMM", "SpectralTopicModel (tensor)", "SpectralLDA"]
    assert gaps["SpectralGMM"] < 1e-10 and gaps["SpectralTopicModel (tensor)"] < 1e-10
    assert gaps["SpectralLDA"] < 1e-6                  # randomized range finder in the two-pass route


def test_fit_gap_matches_components_before_comparing():
    class Fit:
        def __init__(self, means, weights):
            self.means_, self.weights_ = means, weights

    a = Fit(np.array([[0.0, 1.0], [5.0, 5.0]]), np.array([0.3, 0.7]))
    b = Fit(a.means_[::-1] + 1e-3, a.weights_[::-1])             # same components, other order
    assert np.isclose(scale_experiments.fit_gap(a, b, ("means_", "weights_"), "means_"), 1e-3)


def test_shifted_fits_fail_only_on_the_shifted_data():
    fits = scale_experiments.shifted_fits(scale_experiments.running_sample(4000))
    assert list(fits) == ["two-pass", "one-pass"]
    for cases in fits.values():
        assert list(cases) == ["plain", "shifted", "offset"]
        assert cases["shifted"]["warned"] and not cases["plain"]["warned"]
        assert cases["shifted"]["error"] > 1 > 10 * cases["plain"]["error"]
        assert np.isclose(cases["offset"]["error"], cases["plain"]["error"], rtol=0.5)
