import numpy as np
import pytest

import mvlib
from mvlib.gmm import SpectralGMM, spherical_moments, third_order_correction


def _sample(rng, n, d, k, sigmas):
    M = rng.standard_normal((d, k))
    w = rng.dirichlet(np.full(k, 5.0))
    h = rng.choice(k, size=n, p=w)
    X = M[:, h].T + np.asarray(sigmas)[h][:, None] * rng.standard_normal((n, d))
    return X, M, w, h


def test_population_corrections_are_exact(rng):
    """E[xx^T] - σ̄² I and the whitened E[x⊗x⊗x] minus the correction equal the mixture terms."""
    d, k = 6, 3
    M = rng.standard_normal((d, k))
    w = rng.dirichlet(np.ones(k))
    s2 = rng.uniform(0.2, 1.0, k)
    I = np.eye(d)
    E2 = (M * w) @ M.T + np.sum(w * s2) * I
    # E[x⊗x⊗x] for x = μ + σ z: μ⊗μ⊗μ + σ² Σ_i (μ⊗e_i⊗e_i + e_i⊗μ⊗e_i + e_i⊗e_i⊗μ)
    E3 = sum(w[h] * (np.einsum("i,j,l->ijl", M[:, h], M[:, h], M[:, h])
                     + s2[h] * (np.einsum("i,jl->ijl", M[:, h], I) + np.einsum("j,il->ijl", M[:, h], I)
                                + np.einsum("l,ij->ijl", M[:, h], I))) for h in range(k))
    sigma2_bar, m_tilde = np.sum(w * s2), M @ (w * s2)
    M2 = E2 - sigma2_bar * I
    np.testing.assert_allclose(M2, (M * w) @ M.T, atol=1e-12)
    W = mvlib.whitening_matrix(M2, k)
    T = mvlib.multilinear(E3, W, W, W) - third_order_correction(W.T @ m_tilde, W.T @ W)
    want = np.einsum("h,ih,jh,lh->ijl", w, W.T @ M, W.T @ M, W.T @ M)
    np.testing.assert_allclose(T, want, atol=1e-10)
    # and the power method returns the exact parameters from it
    cp = mvlib.tensor_power_method(T, k, random_state=0)
    Mhat = mvlib.dewhiten(W, cp.factors[0], cp.weights)
    assert mvlib.matched_error(M, Mhat) < 1e-8


def test_noise_eigenvalues_give_the_average_variance(rng):
    X, M, w, h = _sample(rng, 200_000, 8, 3, [0.5, 0.7, 0.9])
    mom = spherical_moments(X, 3)
    counts = np.bincount(h, minlength=3) / len(h)
    assert abs(mom["sigma2_bar"] - np.sum(counts * np.array([0.25, 0.49, 0.81]))) < 0.02


def test_recovers_means_weights_and_variances(rng):
    sig = np.array([0.4, 0.6, 0.8, 0.5])
    X, M, w, _ = _sample(rng, 100_000, 12, 4, sig)
    g = SpectralGMM(4, random_state=0).fit(X)
    assert g.means_.shape == (4, 12) and g.weights_.shape == (4,) and g.covariances_.shape == (4,)
    perm, _ = mvlib.match_columns(M, g.means_.T)
    assert np.max(mvlib.column_errors(M, g.means_.T, relative=True)) < 0.05
    np.testing.assert_allclose(g.weights_[perm], w, atol=0.02)
    np.testing.assert_allclose(g.covariances_[perm], sig ** 2, atol=0.05)
    P = g.predict_proba(X[:500])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.isfinite(g.score(X[:500]))


def test_common_variance_small_case(rng):
    X, M, w, _ = _sample(rng, 60_000, 20, 5, np.full(5, 0.5))
    g = SpectralGMM(5, random_state=1).fit(X)
    assert np.max(mvlib.column_errors(M, g.means_.T, relative=True)) < 0.03
    np.testing.assert_allclose(g.covariances_, 0.25, atol=0.02)


def test_reproducible_and_input_untouched(rng):
    X, *_ = _sample(rng, 5000, 6, 2, [0.5, 0.5])
    X0 = X.copy()
    a = SpectralGMM(2, random_state=3).fit(X)
    b = SpectralGMM(2, random_state=3).fit(X)
    np.testing.assert_array_equal(a.means_, b.means_)
    np.testing.assert_array_equal(X, X0)


def test_hand_off_to_em(rng):
    X, M, w, _ = _sample(rng, 20_000, 8, 3, [0.5, 0.5, 0.5])
    g = SpectralGMM(3, random_state=0).fit(X)
    em = g.to_sklearn(max_iter=50)
    np.testing.assert_allclose(em.means_init, g.means_)
    em.fit(X)
    assert em.converged_
    assert np.max(mvlib.column_errors(M, em.means_.T, relative=True)) < 0.05


@pytest.mark.parametrize(
    "X,k,kwargs,exc,match",
    [
        (np.ones((100, 3)), 4, {}, ValueError, "n_components=4 exceeds n_features=3"),
        (np.full((100, 5), np.nan), 2, {}, ValueError, "X contains NaN"),
        (np.full((100, 5), np.inf), 2, {}, ValueError, "X contains NaN or infinity"),
        (None, 2, {}, TypeError, "X must be an array of numbers, got None"),
        ([["a", "b", "c"]], 2, {}, TypeError, "X must hold real numbers"),
        (np.ones(5), 2, {}, ValueError, "X must be 2-dimensional"),
        (np.ones((1, 5)), 2, {}, ValueError, "X has 1 rows"),
        (np.ones((100, 5)), 0, {}, ValueError, "n_components=0"),
        (np.ones((100, 5)), 2.0, {}, TypeError, "n_components must be an int"),
        (np.ones((100, 5)), 2, {"covariance_type": "full"}, ValueError, "covariance_type"),
        (np.ones((100, 5)), 2, {"random_state": "x"}, TypeError, "random_state"),
    ],
)
def test_bad_input(X, k, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        SpectralGMM(k, **kwargs).fit(X)


def test_rank_deficient_means_refused(rng):
    # all components on one line: M2 has rank 1 < k = 3
    X = np.outer(rng.choice([-2.0, 0.0, 2.0], 20_000), np.ones(6)) + 0.3 * rng.standard_normal((20_000, 6))
    with pytest.raises(ValueError, match="n_components=3 exceeds the number of components these data identify"):
        SpectralGMM(3, random_state=0).fit(X)


def test_predict_before_fit():
    with pytest.raises(ValueError, match="not fitted"):
        SpectralGMM(2).predict(np.ones((3, 4)))


# ---------------------------------------------------------------- noise estimates
# Chapter 5's running example (cell defining M_true, w_true, s_true).
_D5, _K5 = 10, 4
_M5 = 2.0 * np.random.default_rng(0).standard_normal((_D5, _K5))
_W5 = np.array([0.1, 0.2, 0.3, 0.4])
_S5 = np.array([0.6, 0.5, 0.4, 0.3])


def _sample5(n, seed):
    rng = np.random.default_rng(seed)
    h = rng.choice(_K5, size=n, p=_W5)
    return _M5[:, h].T + _S5[h, None] * rng.standard_normal((n, _D5))


def test_noise_variance_and_component_variances_unbiased():
    """At n = 10,000 over 20 seeds, σ̄² and every σ_h² are unbiased within 3 standard errors.

    The smallest sample eigenvalue alone (the former estimate) is biased low by about
    18 standard errors here (Marchenko–Pastur lower edge); so is every σ_h² built on it.
    """
    n, seeds = 10_000, range(20)
    s2bar, var = [], []
    for seed in seeds:
        X = _sample5(n, seed)
        s2bar.append(spherical_moments(X, _K5)["sigma2_bar"])
        g = SpectralGMM(_K5, random_state=seed).fit(X)
        perm, _ = mvlib.match_columns(_M5, g.means_.T)
        var.append(g.covariances_[perm])
    for est, truth in ((np.array(s2bar), _W5 @ _S5 ** 2), (np.array(var), _S5 ** 2)):
        bias = est.mean(axis=0) - truth
        se = est.std(axis=0, ddof=1) / np.sqrt(len(seeds))
        assert np.all(np.abs(bias) <= 3 * se), (bias, se)


def test_noise_moments_average_the_noise_eigenspace(rng):
    """σ̄² is the mean of the d-k+1 smallest covariance eigenvalues, m̃ the HK statistic
    averaged over their eigenvectors (each eigenvector alone gives an unbiased m̃ too)."""
    X = _sample5(5_000, 3)
    mom = spherical_moments(X, _K5)
    Xc = X - X.mean(axis=0)
    evals, U = np.linalg.eigh(Xc.T @ Xc / len(X))
    r = _D5 - _K5 + 1
    assert mom["noise_eigenvalues"].shape == (r,)
    np.testing.assert_allclose(mom["sigma2_bar"], evals[:r].mean(), rtol=1e-12)
    each = np.stack([X.T @ (Xc @ U[:, a]) ** 2 / len(X) for a in range(r)])
    np.testing.assert_allclose(mom["m_tilde"], each.mean(axis=0), rtol=1e-10)
    # exact on cubature data, where every noise eigenvector gives m̃ exactly
    Xq = mvlib.core.cubature.gaussian_cubature(_M5, [1, 2, 3, 4], _S5)
    mq = spherical_moments(Xq, _K5)
    np.testing.assert_allclose(mq["sigma2_bar"], _W5 @ _S5 ** 2, rtol=1e-12)
    np.testing.assert_allclose(mq["m_tilde"], _M5 @ (_W5 * _S5 ** 2), atol=1e-10)


def test_d_equal_k_is_allowed_with_a_warning():
    """Theorem 2 needs only k <= d; at d = k the estimator fits but warns that the
    single noise eigenvalue cannot be checked."""
    rng = np.random.default_rng(0)
    d = k = 4
    M = 2 * rng.standard_normal((d, k))
    h = rng.choice(k, size=50_000, p=_W5)
    X = M[:, h].T + _S5[h, None] * rng.standard_normal((50_000, d))
    with pytest.warns(UserWarning, match="n_components=4 equals n_features=4"):
        g = SpectralGMM(k, random_state=0).fit(X)
    perm, _ = mvlib.match_columns(M, g.means_.T)
    assert mvlib.matched_error(M, g.means_.T, relative=True) < 0.05
    np.testing.assert_allclose(g.covariances_[perm], _S5 ** 2, atol=0.03)
    # the population identities hold exactly at d = k
    Xq = mvlib.core.cubature.gaussian_cubature(M, [1, 2, 3, 4], _S5)
    mq = spherical_moments(Xq, k)
    np.testing.assert_allclose(mq["m_tilde"], M @ (_W5 * _S5 ** 2), atol=1e-10)
    np.testing.assert_allclose(mq["M2"], (M * _W5) @ M.T, atol=1e-10)


def test_third_order_correction(rng):
    a, B = rng.standard_normal(3), rng.standard_normal((5, 3))
    G = B.T @ B
    C = third_order_correction(a, G)
    want = sum(np.einsum("p,q,r->pqr", a, g, g) + np.einsum("p,q,r->pqr", g, a, g)
               + np.einsum("p,q,r->pqr", g, g, a) for g in B)
    np.testing.assert_allclose(C, want, atol=1e-12)


def test_anisotropic_noise_refused(rng):
    """Noise that is not spherical spreads the d-k+1 'noise' eigenvalues; when the weakest
    mean direction does not stand out of that spread, the fit is refused."""
    n, d = 20_000, 6
    M = np.zeros((d, 3))
    M[0] = [3.0, -3.0, 0.0]
    M[1] = [0.0, 1.5, -1.5]
    M += 5.0                                   # away from the origin: independent means
    h = rng.choice(3, size=n)
    scales = np.array([1.0, 1.0, 2.0, 0.3, 1.5, 0.5])   # anisotropic noise
    X = M[:, h].T + scales * rng.standard_normal((n, d))
    with pytest.raises(ValueError, match="within the noise level"):
        SpectralGMM(3, random_state=0).fit(X)
    # the same means with spherical noise are accepted
    Xs = M[:, h].T + rng.standard_normal((n, d))
    SpectralGMM(3, random_state=0).fit(Xs)
