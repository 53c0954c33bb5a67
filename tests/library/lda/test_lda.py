"""Moments of latent Dirichlet allocation from sparse counts, and SpectralLDA.

Exact checks compare the α₀-corrected moments computed from closed-form Dirichlet moments
E[Π θ_i^{m_i}] = Π α_i^{(m_i)} / α₀^{(Σm)} (rising factorials, in exact rational arithmetic)
with the factorisations Σ c α_h μ_h^{⊗2}, Σ c' α_h μ_h^{⊗3}; the sparse accumulators are
compared with dense references built from per-document pair/triple counts.
"""
from __future__ import annotations

import itertools
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from mvlib.lda import SpectralLDA
from mvlib.lda import (LDASecondMoment, drop_short_documents, lda_decompose, lda_mean,
                       lda_moment_coefficients, lda_whitened_pairs, lda_whitened_third_moment,
                       randomized_whitening)


# --------------------------------------------------------------------------- helpers
def _rising(a, m):
    out = Fraction(1)
    for j in range(m):
        out *= a + j
    return out


def _dirichlet_moment(alpha, idx):
    """E[θ_{i1} θ_{i2} ...] for θ ~ Dir(alpha), exact (alpha a list of Fractions)."""
    m = np.bincount(idx, minlength=len(alpha))
    num = Fraction(1)
    for a, mi in zip(alpha, m):
        num *= _rising(a, int(mi))
    return num / _rising(sum(alpha), len(idx))


def _population_raw_moments(alpha, mu):
    """E[x1], E[x1⊗x2], E[x1⊗x2⊗x3] of LDA: mu (k, d), alpha Fractions; by Dirichlet moments."""
    k = len(alpha)
    E1 = np.array([float(_dirichlet_moment(alpha, [i])) for i in range(k)])
    E2 = np.array([[float(_dirichlet_moment(alpha, [i, j])) for j in range(k)] for i in range(k)])
    E3 = np.zeros((k, k, k))
    for i, j, l in itertools.product(range(k), repeat=3):
        E3[i, j, l] = float(_dirichlet_moment(alpha, [i, j, l]))
    m1 = E1 @ mu
    P2 = np.einsum("ij,ia,jb->ab", E2, mu, mu)
    P3 = np.einsum("ijl,ia,jb,lc->abc", E3, mu, mu, mu)
    return m1, P2, P3


def _corrected(m1, P2, P3, alpha0):
    """The α₀ corrections of Anandkumar et al. (2012, Thm 3.5) applied to dense moments."""
    M2 = P2 - alpha0 / (alpha0 + 1) * np.outer(m1, m1)
    Pm = np.einsum("ab,c->abc", P2, m1)
    M3 = (P3 - alpha0 / (alpha0 + 2) * (Pm + Pm.transpose(0, 2, 1) + Pm.transpose(2, 0, 1))
          + 2 * alpha0 ** 2 / ((alpha0 + 1) * (alpha0 + 2)) * np.einsum("a,b,c->abc", m1, m1, m1))
    return M2, M3


def _dense_count_moments(X):
    """Per-document enumeration of ordered distinct positions: (m1, E[x1⊗x2], E[x1⊗x2⊗x3])."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X)
    n, d = X.shape
    m1, P2, P3 = np.zeros(d), np.zeros((d, d)), np.zeros((d, d, d))
    for c in X:
        words = np.repeat(np.arange(d), c.astype(int))
        ell = len(words)
        m1 += c / ell
        for p, q in itertools.permutations(range(ell), 2):
            P2[words[p], words[q]] += 1.0 / (ell * (ell - 1))
        for p, q, r in itertools.permutations(range(ell), 3):
            P3[words[p], words[q], words[r]] += 1.0 / (ell * (ell - 1) * (ell - 2))
    return m1 / n, P2 / n, P3 / n


def _sample_lda(n, mu, alpha, lengths, rng):
    """n documents of LDA (vectorised): returns (CSR counts, theta)."""
    k, d = mu.shape
    theta = rng.dirichlet(alpha, size=n)
    ell = rng.integers(lengths[0], lengths[1] + 1, size=n)
    doc = np.repeat(np.arange(n), ell)
    u = rng.random(doc.size)
    topic = (u[:, None] > np.cumsum(theta, axis=1)[doc][:, :-1]).sum(axis=1)
    cmu = np.cumsum(mu, axis=1)
    v = rng.random(doc.size)
    word = np.empty(doc.size, dtype=np.int64)
    for h in range(k):
        at = topic == h
        word[at] = np.minimum(np.searchsorted(cmu[h], v[at] * cmu[h, -1], side="right"), d - 1)
    X = sp.csr_matrix((np.ones(doc.size), (doc, word)), shape=(n, d))
    X.sum_duplicates()
    return X, theta


def _rel(a, b):
    """Largest entry-wise difference relative to the largest entry of the reference b."""
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


def _topic_error(mu, est):
    """Largest L1 distance between matched topics (Hungarian matching)."""
    C = np.abs(mu[:, None, :] - est[None, :, :]).sum(axis=-1)
    r, c = linear_sum_assignment(C)
    return float(C[r, c].max()), c


ALPHAS = [
    [Fraction(1, 10), Fraction(2, 10), Fraction(3, 10), Fraction(4, 10)],   # α₀ = 1
    [Fraction(1, 20), Fraction(1, 4), Fraction(1, 5)],                     # α₀ = 1/2
    [Fraction(3, 2), Fraction(2), Fraction(5, 2)],                         # α₀ = 6
]


# --------------------------------------------------------------------------- exact identities
@pytest.mark.parametrize("alpha", ALPHAS, ids=["a0=1", "a0=0.5", "a0=6"])
def test_corrected_moments_factor_with_the_stated_coefficients(alpha):
    rng = np.random.default_rng(1)
    k, d = len(alpha), 5
    mu = rng.dirichlet(np.ones(d), size=k)
    alpha0 = float(sum(alpha))
    m1, P2, P3 = _population_raw_moments(alpha, mu)
    M2, M3 = _corrected(m1, P2, P3, alpha0)
    c, c3 = lda_moment_coefficients(alpha0)
    a = np.array([float(x) for x in alpha])
    np.testing.assert_allclose(M2, np.einsum("h,ha,hb->ab", c * a, mu, mu), rtol=0, atol=1e-10 * np.abs(M2).max())
    np.testing.assert_allclose(M3, np.einsum("h,ha,hb,hc->abc", c3 * a, mu, mu, mu), rtol=0,
                               atol=1e-10 * np.abs(M3).max())
    # the coefficients themselves, in exact arithmetic
    A0 = sum(alpha)
    assert Fraction(c).limit_denominator(10 ** 6) == 1 / (A0 * (A0 + 1))
    assert Fraction(c3).limit_denominator(10 ** 6) == 2 / (A0 * (A0 + 1) * (A0 + 2))


def test_uncorrected_moments_do_not_factor():
    """The check can fail: without the correction M2 is not Σ c α μ μ^T."""
    alpha = ALPHAS[0]
    rng = np.random.default_rng(1)
    mu = rng.dirichlet(np.ones(5), size=4)
    m1, P2, P3 = _population_raw_moments(alpha, mu)
    c, _ = lda_moment_coefficients(1.0)
    a = np.array([float(x) for x in alpha])
    assert np.abs(P2 - np.einsum("h,ha,hb->ab", c * a, mu, mu)).max() > 1e-3


@pytest.mark.parametrize("alpha", ALPHAS, ids=["a0=1", "a0=0.5", "a0=6"])
def test_recovery_from_population_moments(alpha):
    rng = np.random.default_rng(2)
    k, d = len(alpha), 9
    mu = rng.dirichlet(np.full(d, 0.5), size=k)
    alpha0 = float(sum(alpha))
    m1, P2, P3 = _population_raw_moments(alpha, mu)
    M2, M3 = _corrected(m1, P2, P3, alpha0)
    est, alpha_hat, _ = lda_decompose(M2, lambda W: np.einsum("abc,ai,bj,ck->ijk", M3, W, W, W), k, alpha0,
                                      random_state=0)
    est = est / est.sum(axis=1, keepdims=True)
    err, perm = _topic_error(mu, est)
    assert err < 1e-8
    a = np.array([float(x) for x in alpha])
    np.testing.assert_allclose(alpha_hat[perm], a, rtol=1e-8)


def test_randomized_whitening_whitens_the_operator():
    rng = np.random.default_rng(3)
    k, d = 4, 40
    mu = rng.dirichlet(np.full(d, 0.3), size=k)
    a = np.array([0.1, 0.2, 0.3, 0.4])
    c, _ = lda_moment_coefficients(1.0)
    M2 = np.einsum("h,ha,hb->ab", c * a, mu, mu)
    W, B, s = randomized_whitening(M2, k, random_state=0)
    np.testing.assert_allclose(W.T @ M2 @ W, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(B.T @ W, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(s, np.sort(np.linalg.eigvalsh(M2))[::-1][:k], rtol=1e-10)


# --------------------------------------------------------------------------- sparse vs dense
def _small_counts(seed, n=40, d=7):
    rng = np.random.default_rng(seed)
    ell = rng.integers(3, 9, size=n)
    X = np.array([rng.multinomial(l, rng.dirichlet(np.ones(d))) for l in ell], float)
    return X


@pytest.mark.parametrize("alpha0", [0.3, 1.0, 4.0])
def test_sparse_accumulators_match_dense_enumeration(alpha0):
    X = _small_counts(4)
    m1, P2, P3 = _dense_count_moments(X)
    M2, M3 = _corrected(m1, P2, P3, alpha0)
    Xs = sp.csr_matrix(X)
    op = LDASecondMoment(Xs, alpha0)
    V = np.random.default_rng(5).standard_normal((X.shape[1], 3))
    assert _rel(op @ V, M2 @ V) < 1e-10
    assert _rel(op.matvec(V[:, 0]), M2 @ V[:, 0]) < 1e-10
    assert _rel(lda_mean(Xs), m1) < 1e-10
    assert _rel(lda_whitened_pairs(Xs, V), V.T @ P2 @ V) < 1e-10
    T = lda_whitened_third_moment(Xs, V, alpha0)
    assert _rel(T, np.einsum("abc,ai,bj,ck->ijk", M3, V, V, V)) < 1e-10
    # dense input gives the same numbers
    np.testing.assert_allclose(lda_whitened_third_moment(X, V, alpha0), T, rtol=0, atol=1e-13)


def test_short_documents_are_skipped_with_a_count():
    X = _small_counts(6, n=30)
    X[[2, 5, 9]] = 0
    X[2, 0], X[5, 1], X[5, 2] = 1, 1, 1
    with pytest.warns(UserWarning, match="3 of 30 documents"):
        Xk, lengths, dropped = drop_short_documents(X)
    assert dropped == 3 and Xk.shape[0] == 27 and lengths.min() >= 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.warns(UserWarning, match="3 of 30 documents"):
            m = SpectralLDA(2, random_state=0).fit(X)
    assert m.n_skipped_ == 3


# --------------------------------------------------------------------------- estimator on samples
K, D = 3, 30
ALPHA = np.array([0.2, 0.3, 0.5])


def _truth(seed):
    return np.random.default_rng(100 + seed).dirichlet(np.full(D, 0.2), size=K)


def test_recovery_on_sampled_corpora_shrinks_with_n():
    ns = [2000, 8000, 32000]
    errs = np.zeros((5, len(ns)))
    alpha_err = np.zeros(5)
    for seed in range(5):
        mu = _truth(seed)
        for j, n in enumerate(ns):
            X, _ = _sample_lda(n, mu, ALPHA, (3, 30), np.random.default_rng(seed * 10 + j))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                m = SpectralLDA(K, 1.0, random_state=seed).fit(X)
            errs[seed, j], perm = _topic_error(mu, m.topic_word_)
        alpha_err[seed] = np.abs(m.alpha_[perm] - ALPHA).max()
    mean = errs.mean(axis=0)
    assert np.all(np.diff(mean) < 0), mean
    slope = np.polyfit(np.log(ns), np.log(mean), 1)[0]
    assert -0.8 < slope < -0.3, (slope, mean)
    assert mean[-1] < 0.05
    assert alpha_err.mean() < 0.05


def test_fit_outputs_transform_and_score():
    mu = _truth(0)
    rng = np.random.default_rng(7)
    X, _ = _sample_lda(20000, mu, ALPHA, (5, 40), rng)
    m = SpectralLDA(K, 1.0, random_state=0).fit(X)
    assert m.topic_word_.shape == (K, D) and np.all(m.topic_word_ >= 0)
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(m.alpha_ > 0) and abs(m.alpha_.sum() - 1.0) < 0.1
    # long held-out documents: the posterior proportions approach the true θ
    Xh, theta = _sample_lda(200, mu, ALPHA, (800, 800), rng)
    est = m.transform(Xh)
    np.testing.assert_allclose(est.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(est >= 0)
    _, perm = _topic_error(mu, m.topic_word_)
    assert np.abs(est[:, perm] - theta).mean() < 0.05
    # held-out per-word log-likelihood beats a model with uniform topics
    Xh2, _ = _sample_lda(500, mu, ALPHA, (20, 40), rng)
    s = m.score(Xh2)
    u = clone(m).fit(X)
    u.topic_word_ = np.full((K, D), 1.0 / D)
    assert np.isfinite(s) and s > u.score(Xh2) + 0.1
    assert np.isclose(m.perplexity(Xh2), np.exp(-s))
    # the same random_state gives the same fit; dense input gives the same as CSR
    m2 = SpectralLDA(K, 1.0, random_state=0).fit(X.toarray())
    np.testing.assert_allclose(m2.topic_word_, m.topic_word_, rtol=0, atol=1e-12)
    # an empty document gets the prior mean
    empty = sp.csr_matrix((1, D))
    np.testing.assert_allclose(m.transform(empty)[0], m.alpha_ / m.alpha_.sum(), atol=1e-12)


def test_no_vocabulary_squared_array_at_200000_words():
    rng = np.random.default_rng(8)
    d, k, n, ell = 200_000, 5, 3000, 60
    mu = rng.dirichlet(np.full(d, 0.01), size=k)
    X, _ = _sample_lda(n, mu, np.full(k, 0.2), (ell, ell), rng)
    tracemalloc.start()
    try:
        m = SpectralLDA(k, 1.0, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m.fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # d² float64 would be 320 GB; the budget is O(nnz + d (k + 10) + k³)
    budget = 8 * (40 * X.nnz + 12 * d * (k + 10)) + 2 ** 20
    assert peak < budget, (peak, budget)
    assert m.topic_word_.shape == (k, d)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("X, exc, match", [
    (np.array([[1, 2, -1], [3, 0, 1]], float), ValueError, "non-negative"),
    (np.array([[1.5, 2, 1], [3, 0, 1]]), ValueError, "integer counts"),
    (np.array([[np.nan, 2, 1], [3, 0, 1]]), ValueError, "NaN"),
    (np.array([[1, 1, 0], [0, 1, 1]], float), ValueError, "0 documents with at least 3 words"),
    (np.ones(5), ValueError, "X"),
    (["a", "b"], (TypeError, ValueError), "X"),
])
def test_bad_input(X, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(exc, match=match):
            SpectralLDA(2, random_state=0).fit(X)


@pytest.mark.parametrize("params, exc, match", [
    (dict(n_components=0), ValueError, "n_components"),
    (dict(n_components=2.0), TypeError, "n_components"),
    (dict(n_components=9), ValueError, "n_components"),
    (dict(n_components=2, alpha0=0.0), ValueError, "alpha0"),
    (dict(n_components=2, alpha0=-1.0), ValueError, "alpha0"),
    (dict(n_components=2, alpha0=np.inf), ValueError, "alpha0"),
    (dict(n_components=2, alpha0="1"), TypeError, "alpha0"),
    (dict(n_components=2, random_state="x"), TypeError, "random_state"),
])
def test_bad_parameters(params, exc, match):
    X = _small_counts(9, d=7)
    with pytest.raises(exc, match=match):
        SpectralLDA(**params).fit(X)


def test_not_fitted_and_wrong_features():
    X = _small_counts(10, d=7)
    with pytest.raises(NotFittedError):
        SpectralLDA(2).transform(X)
    m = SpectralLDA(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        m.transform(X[:, :5])
    with pytest.raises(ValueError, match="no words"):
        m.score(np.zeros((2, 7)))


def test_accumulator_input_checks():
    X = _small_counts(11, d=7)
    with pytest.raises(ValueError, match="W has 3 rows"):
        lda_whitened_third_moment(X, np.ones((3, 2)))
    with pytest.raises(ValueError, match="third-order moments need at least 3"):
        LDASecondMoment(np.array([[1, 1, 0], [2, 1, 1]], float))
    with pytest.raises(ValueError, match="alpha0"):
        LDASecondMoment(X, alpha0=0)


# ------------------------------------------- the single-topic model on the same accumulators
def test_topic_model_large_vocabulary_no_squared_array_and_same_as_dense():
    """SpectralTopicModel applies the pairs moment implicitly above 500 words: no n_words²
    array at 200,000 words (tracemalloc cap), and on 800 words the implicit path equals the
    dense one (both Lanczos with the same start) to rounding."""
    from mvlib import CountPairsOperator, SpectralTopicModel, count_pairs
    import mvlib.topic._estimator as topic_module

    rng = np.random.default_rng(9)
    d, k, n, ell = 200_000, 4, 3000, 40
    mu = rng.dirichlet(np.full(d, 0.01), size=k)
    X, _ = _sample_lda(n, mu, np.full(k, 0.01), (ell, ell), rng)   # α₀ → 0: single topic
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m = SpectralTopicModel(k, method="tensor", random_state=0).fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    budget = 8 * (40 * X.nnz + 12 * d * (k + 10)) + 2 ** 20     # d² float64 would be 320 GB
    assert peak < budget, (peak, budget)
    assert m.topic_word_.shape == (k, d)
    # the operator is count_pairs, applied
    Xs, _ = _sample_lda(200, rng.dirichlet(np.full(30, 0.3), size=3), np.full(3, 0.01), (3, 9), rng)
    V = rng.standard_normal((30, 4))
    np.testing.assert_allclose(CountPairsOperator(Xs) @ V, count_pairs(Xs) @ V, atol=1e-14)
    # implicit = dense on a vocabulary both can hold
    mu8 = rng.dirichlet(np.full(800, 0.3), size=5)
    X8, _ = _sample_lda(4000, mu8, np.full(5, 0.01), (20, 20), rng)
    fits = []
    for limit in (500, 10 ** 9):                  # implicit, then dense
        topic_module._DENSE_MAX_WORDS, saved = limit, topic_module._DENSE_MAX_WORDS
        try:
            fits.append(SpectralTopicModel(5, random_state=0).fit(X8))
        finally:
            topic_module._DENSE_MAX_WORDS = saved
    assert np.max(np.abs(fits[0].topic_word_ - fits[1].topic_word_)) < 1e-10
