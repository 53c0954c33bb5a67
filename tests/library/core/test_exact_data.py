"""Exact-moment data sets (mvlib.core.cubature) and Isserlis with independent vectors."""
import itertools

import numpy as np
import pytest
import sympy as sp

import mvlib
from mvlib.core.cubature import categorical_exact_data, multiview_gaussian_cubature
from mvlib.core.symbolic import gaussian_expectation, isserlis


def test_gaussian_expectation_single_base_unchanged():
    z = sp.IndexedBase("z")
    i, j, l, m = sp.symbols("i j l m", integer=True)
    d = sp.KroneckerDelta
    assert gaussian_expectation(z[i] * z[j], z) == d(i, j)
    assert gaussian_expectation(z[1] * z[1], z) == 1
    assert sp.expand(gaussian_expectation(z[i] * z[j] * z[l] * z[m], z)
                     - isserlis((i, j, l, m))) == 0


def test_gaussian_expectation_independent_bases():
    z1, z2 = sp.IndexedBase("z1"), sp.IndexedBase("z2")
    i, j = sp.symbols("i j", integer=True)
    # different bases are independent even at equal indices
    assert gaussian_expectation(z1[i] * z2[i], (z1, z2)) == 0
    assert gaussian_expectation(z1[1] * z2[1], [z1, z2]) == 0
    assert gaussian_expectation(z1[i] ** 2 * z2[j] ** 2, (z1, z2)) == 1
    assert gaussian_expectation(z1[i] * z1[j] * z2[j] * z2[j], (z1, z2)) == sp.KroneckerDelta(i, j)
    mu, s = sp.symbols("mu s")
    assert sp.expand(gaussian_expectation((mu + s * z1[i]) * (mu + s * z2[i]), (z1, z2)) - mu**2) == 0


def _random_views(rng, dims, k):
    return [rng.normal(size=(d, k)) for d in dims]


@pytest.mark.parametrize("dims", [(3, 2, 2), (4, 3, 5)])
def test_multiview_cubature_moments_exact(dims):
    rng = np.random.default_rng(0)
    k = 2
    M = _random_views(rng, dims, k)
    counts = np.array([2, 3])
    w = counts / counts.sum()
    S = rng.uniform(0.2, 1.5, size=(3, k))
    X1, X2, X3 = multiview_gaussian_cubature(M, counts, S)
    assert X1.shape[0] == X2.shape[0] == X3.shape[0] == counts.sum() * np.prod([2 * d for d in dims])
    np.testing.assert_allclose(X1.mean(axis=0), M[0] @ w, atol=1e-12)
    np.testing.assert_allclose(mvlib.pairs(X1, X2), (M[0] * w) @ M[1].T, atol=1e-12)
    np.testing.assert_allclose(mvlib.pairs(X2, X3), (M[1] * w) @ M[2].T, atol=1e-12)
    T = np.einsum("h,ih,jh,lh->ijl", w, *M)
    np.testing.assert_allclose(mvlib.triples(X1, X2, X3), T, atol=1e-12)
    # within-view second moment carries the noise, sum_h w_h sigma_{1h}^2 I
    within = (M[0] * w) @ M[0].T + np.eye(dims[0]) * (w * S[0] ** 2).sum()
    np.testing.assert_allclose(mvlib.pairs(X1, X1), within, atol=1e-12)
    # a mixed moment E[x1_a x1_b x2_c] = sum_h w_h (mu_a mu_b + s^2 delta_ab) nu_c
    mixed = np.einsum("h,ah,bh,ch->abc", w, M[0], M[0], M[1]) + np.einsum(
        "h,ab,ch->abc", w * S[0] ** 2, np.eye(dims[0]), M[1])
    np.testing.assert_allclose(mvlib.triples(X1, X1, X2), mixed, atol=1e-12)


def test_multiview_cubature_sigma_forms_and_errors():
    M = [np.eye(2), np.eye(2)]
    a = multiview_gaussian_cubature(M, [1, 1], 0.5)
    b = multiview_gaussian_cubature(M, [1, 1], [0.5, 0.5])
    c = multiview_gaussian_cubature(M, [1, 1], np.full((2, 2), 0.5))
    for x, y, zz in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, zz)
    with pytest.raises(ValueError):
        multiview_gaussian_cubature(M, [1, 0], 0.5)
    with pytest.raises(ValueError):
        multiview_gaussian_cubature(M, [1, 1], -1.0)
    with pytest.raises(ValueError):
        multiview_gaussian_cubature([np.eye(2), np.ones((2, 3))], [1, 1], 0.5)


def test_categorical_exact_data_moments():
    w = ["1/3", "2/3"]
    M1 = [["1/4", "1/2"], ["1/4", "1/4"], ["1/2", "1/4"]]
    M2 = [["3/4", "1/4"], ["1/4", "3/4"]]
    M3 = [["1/2", "1/8"], ["1/2", "7/8"]]
    (X1, X2, X3), h = categorical_exact_data(w, [M1, M2, M3])
    f = lambda A: np.array([[float(sp.Rational(x)) for x in row] for row in A])
    wf, A, B, C = np.array([1 / 3, 2 / 3]), f(M1), f(M2), f(M3)
    assert X1.shape[0] == len(h) and set(np.unique(h)) == {0, 1}
    np.testing.assert_allclose(np.bincount(h) / len(h), wf, atol=1e-15)
    np.testing.assert_allclose(mvlib.pairs(X1, X2), (A * wf) @ B.T, atol=1e-14)
    np.testing.assert_allclose(mvlib.triples(X1, X2, X3),
                               np.einsum("h,ih,jh,lh->ijl", wf, A, B, C), atol=1e-14)
    np.testing.assert_allclose(mvlib.pairs(X1, X1), np.diag(A @ wf), atol=1e-14)
    # conditional independence within each component, exactly
    for k_ in range(2):
        sel = h == k_
        np.testing.assert_allclose(mvlib.pairs(X1[sel], X3[sel]), np.outer(A[:, k_], C[:, k_]), atol=1e-14)


def test_categorical_exact_data_refuses():
    with pytest.raises(ValueError):
        categorical_exact_data(["1/2", "1/3"], [[["1"], ["0"]]])      # weights do not sum to 1
    with pytest.raises(ValueError):
        categorical_exact_data(["1"], [[["1/2"], ["1/3"]]])            # column not a distribution
    with pytest.raises(ValueError):
        categorical_exact_data(["1/2", "1/2"], [[["1/997", "1/2"], ["996/997", "1/2"]]] * 3,
                               max_rows=1000)
