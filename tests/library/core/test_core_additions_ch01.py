"""The core functions that chapters 1 and 4 used to retype: the Gaussian (Isserlis) mixture
expectation, two error measures, and exact-moment rows with full covariances."""
from __future__ import annotations

import doctest

import numpy as np
import pytest
import sympy as sp

from mvlib.core.cubature import multiview_gaussian_cubature, product_cubature, random_cov
from mvlib.core.metrics import largest_sine, relative_error
from mvlib.core.symbolic import as_float_array, cp_array, gaussian_mixture_expectation, mixture_symbols
from mvlib.core import cubature, metrics, symbolic

NEW = [symbolic.gaussian_mixture_expectation, symbolic.as_float_array, metrics.relative_error, metrics.largest_sine,
       cubature.product_cubature, cubature.random_cov]


@pytest.mark.parametrize("fn", NEW, ids=lambda f: f.__name__)
def test_docstring_examples_run(fn):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(fn, fn.__name__, globs={}) if t.examples]
    assert tests, f"{fn.__name__} has no Examples"
    for t in tests:
        runner.run(t)
    assert runner.failures == 0


def _gaussian_setup(k=2, dims=(2, 2, 2)):
    w, Ms = mixture_symbols(k, dims)
    sig = sp.Matrix(3, k, lambda v, c: sp.Symbol(f"s_{v}{c}", positive=True))
    zs = [sp.IndexedBase(f"z_{v}") for v in (1, 2, 3)]
    return w, Ms, sig, zs


def test_gaussian_mixture_expectation_gives_the_moments():
    w, Ms, sig, zs = _gaussian_setup()
    M1, M2, M3 = Ms
    W = sp.diag(*w)
    P12 = gaussian_mixture_expectation(lambda x1, x2, x3: x1 * x2.T, w, Ms, sig, zs)
    assert sp.expand(P12 - M1 * W * M2.T) == sp.zeros(2, 2)
    P11 = gaussian_mixture_expectation(lambda x1, x2, x3: x1 * x1.T, w, Ms, sig, zs)
    noise = sum(w[c] * sig[0, c] ** 2 for c in range(2))
    assert sp.expand(P11 - M1 * W * M1.T - noise * sp.eye(2)) == sp.zeros(2, 2)
    outer = lambda x1, x2, x3: cp_array(sp.ones(1, 1), [x1, x2, x3])
    P123 = gaussian_mixture_expectation(outer, w, Ms, sig, zs)
    assert (P123 - cp_array(w, Ms)).applyfunc(sp.expand) == sp.Array.zeros(2, 2, 2)


def test_gaussian_mixture_expectation_matches_exact_rows():
    # a fourth moment within view 1: sympy at numbers against the cubature rows of the same model
    w, Ms, sig, zs = _gaussian_setup(dims=(1, 1, 1))
    E4 = gaussian_mixture_expectation(lambda x1, x2, x3: x1 * x1.T * x2, w, Ms, sig, zs)
    means = [np.array([[1.0, -2.0]]), np.array([[0.5, 3.0]]), np.array([[2.0, 1.0]])]
    sigmas = np.array([[0.5, 1.5], [1.0, 0.25], [2.0, 1.0]])
    vals = {w[0]: sp.Rational(1, 3), w[1]: sp.Rational(2, 3)}
    for M, Mv in zip(Ms, means):
        vals.update(zip(list(M), Mv.ravel().tolist()))
    vals.update(zip(list(sig), sigmas.ravel().tolist()))
    X1, X2, _ = multiview_gaussian_cubature(means, [1, 2], sigmas)
    assert float(E4[0, 0].subs(vals)) == pytest.approx(np.mean(X1[:, 0] ** 2 * X2[:, 0]), rel=1e-12)


def test_relative_error_and_largest_sine():
    truth = np.array([[3.0, 4.0]])
    assert relative_error(truth * 1.5, truth) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        relative_error(np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError):
        relative_error(np.ones(3), np.ones(2))
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 2))
    assert largest_sine(A, A @ rng.standard_normal((2, 2))) < 1e-12          # same column space
    Q = np.linalg.qr(rng.standard_normal((6, 4)))[0]
    assert largest_sine(Q[:, :2], Q[:, 2:]) == pytest.approx(1.0)              # orthogonal spaces
    theta = 0.3
    B = np.array([[np.cos(theta)], [np.sin(theta)], [0.0]])
    assert largest_sine(np.eye(3)[:, :1], B) == pytest.approx(np.sin(theta))


def test_product_cubature_moments_and_spherical_case():
    rng = np.random.default_rng(11)
    k, counts = 2, np.array([2, 3])
    means = [rng.standard_normal((d, k)) for d in (3, 2, 2)]
    covs = [[random_cov(d, rng) for _ in range(k)] for d in (3, 2, 2)]
    X1, X2, X3 = product_cubature(means, covs, counts)
    w = counts / counts.sum()
    n = X1.shape[0]
    assert n == counts.sum() * 6 * 4 * 4
    assert np.allclose(X1.T @ X2 / n, (means[0] * w) @ means[1].T)
    # the second moment of view 3 holds the covariances
    second = sum(w[h] * (covs[2][h] + np.outer(means[2][:, h], means[2][:, h])) for h in range(k))
    assert np.allclose(X3.T @ X3 / n, second)
    # spherical covariances: the same rows as multiview_gaussian_cubature
    sig = np.array([[0.5, 2.0], [1.0, 1.5], [0.3, 0.7]])
    sph = [[s ** 2 * np.eye(M.shape[0]) for s in sig[v]] for v, M in enumerate(means)]
    for A, B in zip(product_cubature(means, sph, counts), multiview_gaussian_cubature(means, counts, sig)):
        assert np.allclose(A, B)
    with pytest.raises(ValueError):
        product_cubature(means, [covs[0], covs[1], [-c for c in covs[2]]], counts)


def test_random_cov_draws_one_matrix():
    S = random_cov(4, np.random.default_rng(5))
    A = np.random.default_rng(5).standard_normal((4, 4))
    assert np.array_equal(S, A @ A.T / 4 + 0.2 * np.eye(4))
    assert np.linalg.eigvalsh(S).min() >= 0.2


def test_as_float_array_is_exact_then_rounded():
    a, b = sp.symbols("a b")
    third = sp.Rational(1, 3)
    # (a + b) - b at a = 1/3, b = 10**20: exact arithmetic keeps 1/3, floats would give 0
    M = sp.Matrix([[a + b - b * 1, (a + b) * 3 - 3 * b]])
    got = as_float_array(M, {a: third, b: sp.Integer(10) ** 20})
    assert got.shape == (1, 2) and got[0, 0] == 1 / 3 and got[0, 1] == 1.0
    T = as_float_array(cp_array(sp.Matrix([third]), [sp.Matrix([2]), sp.Matrix([a]), sp.Matrix([1])]), {a: 3})
    assert T.shape == (1, 1, 1) and T[0, 0, 0] == 2.0
    assert as_float_array(a * b, {a: 2, b: sp.Rational(1, 4)}) == 0.5
    assert np.array_equal(as_float_array(sp.Matrix([[1, 2]])), np.array([[1.0, 2.0]]))
