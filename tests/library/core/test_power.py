import numpy as np
import pytest
import tensorly as tl
from tensorly.cp_tensor import CPTensor
from tensorly.tenalg import multi_mode_dot

import mvlib
from mvlib.core.tensors import cp_to_dense

from mvlib.core.tensors import random_odeco_tensor


@pytest.mark.parametrize("k", [2, 5, 10, 25, 50])
def test_exact_recovery_of_odeco_tensors(k, rng):
    for trial in range(3):
        T, lam, V = random_odeco_tensor(k, rng)
        cp = mvlib.tensor_power_method(T, k, random_state=trial)
        assert isinstance(cp, CPTensor)
        That = cp_to_dense(cp)
        assert np.linalg.norm(That - T) / np.linalg.norm(T) < 1e-8
        weights, (A, B, C) = cp
        assert np.allclose(A, B) and np.allclose(B, C)
        assert np.allclose(np.linalg.norm(A, axis=0), 1.0)
        # eigenpairs, not just a reconstruction
        perm, _ = mvlib.match_columns(V, A)
        assert mvlib.matched_error(V, A) < 1e-8
        np.testing.assert_allclose(weights[perm], lam, rtol=1e-8)


def test_eigenvalues_extracted_largest_first_when_starts_are_many(rng):
    T, lam, V = random_odeco_tensor(6, rng)
    cp = mvlib.tensor_power_method(T, 6, n_restarts=50, random_state=0)
    assert cp.weights[0] == pytest.approx(lam.max(), rel=1e-10)


def test_partial_rank_returns_rank_components(rng):
    T, lam, V = random_odeco_tensor(8, rng)
    cp = mvlib.tensor_power_method(T, 3, random_state=1)
    assert cp.weights.shape == (3,)
    assert cp.factors[0].shape == (8, 3)
    for h in range(3):
        # every extracted vector is a true eigenvector
        assert np.min(np.linalg.norm(V - cp.factors[0][:, [h]], axis=0)) < 1e-8


def _reference_power(T, theta, n_iterations, tol):
    """One start at a time with tensorly's multi_mode_dot (unbatched reference)."""
    for _ in range(n_iterations):
        y = tl.to_numpy(multi_mode_dot(tl.tensor(T), [theta, theta], modes=[1, 2]))
        y = y / np.linalg.norm(y)
        done = np.linalg.norm(y - theta) <= tol
        theta = y
        if done:
            break
    return theta


@pytest.mark.parametrize("n_iterations,tol", [(1, 0.0), (3, 0.0), (50, 1e-10)])
def test_batched_equals_unbatched_power_iterations(rng, n_iterations, tol):
    T, _, _ = random_odeco_tensor(7, rng)
    T = T + 0.05 * rng.standard_normal(T.shape)  # not exactly odeco, still iterates
    starts = rng.standard_normal((20, 7))
    starts /= np.linalg.norm(starts, axis=1, keepdims=True)
    batched = mvlib.power_iteration(T, starts, n_iterations=n_iterations, tol=tol)
    single = np.array([_reference_power(T, s, n_iterations, tol) for s in starts])
    np.testing.assert_allclose(batched, single, atol=1e-12)
    one = mvlib.power_iteration(T, starts[3], n_iterations=n_iterations, tol=tol)
    np.testing.assert_allclose(one, single[3], atol=1e-12)


def test_power_iteration_fixed_point(rng):
    T, lam, V = random_odeco_tensor(5, rng)
    for h in range(5):
        out = mvlib.power_iteration(T, V[:, h], n_iterations=5)
        np.testing.assert_allclose(out, V[:, h], atol=1e-13)


def test_reproducible_under_same_random_state(rng):
    T, _, _ = random_odeco_tensor(10, rng)
    T = T + 0.01 * rng.standard_normal(T.shape)
    a = mvlib.tensor_power_method(T, 10, random_state=7)
    b = mvlib.tensor_power_method(T, 10, random_state=7)
    c = mvlib.tensor_power_method(T, 10, random_state=np.random.default_rng(7))
    for x in (b, c):
        np.testing.assert_array_equal(a.weights, x.weights)
        np.testing.assert_array_equal(a.factors[0], x.factors[0])


def test_accepts_tensorly_tensor_and_does_not_modify_input(rng):
    T, _, _ = random_odeco_tensor(4, rng)
    Tt = tl.tensor(T.copy())
    cp = mvlib.tensor_power_method(Tt, 4, random_state=0)
    np.testing.assert_array_equal(tl.to_numpy(Tt), T)
    assert np.linalg.norm(cp_to_dense(cp) - T) < 1e-8


def test_noisy_tensor_within_theorem3_bound(rng):
    k = 8
    T, lam, V = random_odeco_tensor(k, rng)
    E = rng.standard_normal((k, k, k))
    E = sum(E.transpose(p) for p in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]) / 6
    E *= 1e-3 / np.linalg.norm(E)
    cp = mvlib.tensor_power_method(T + E, k, n_restarts=20, random_state=0)
    eps = np.linalg.norm(E)  # Frobenius >= spectral norm
    perm, _ = mvlib.match_columns(V, cp.factors[0])
    errs = np.linalg.norm(V - cp.factors[0][:, perm], axis=0)
    assert np.all(errs <= 8 * eps / lam)
    assert np.all(np.abs(cp.weights[perm] - lam) <= 5 * eps)
    # the estimate of the spectral norm is a lower bound of the Frobenius norm
    assert mvlib.symmetric_spectral_norm(E, random_state=0) <= eps + 1e-15


def test_spectral_norm_of_rank_one():
    v = np.array([3.0, 4.0]) / 5
    T = -2.5 * mvlib.symmetric_outer(v)
    assert mvlib.symmetric_spectral_norm(T, random_state=0) == pytest.approx(2.5, rel=1e-12)


@pytest.mark.parametrize(
    "T,rank,kwargs,exc,match",
    [
        (np.zeros((3, 3)), 1, {}, ValueError, "3-dimensional"),
        (np.zeros((3, 3, 4)), 1, {}, ValueError, "cubic"),
        (np.full((2, 2, 2), np.nan), 1, {}, ValueError, "NaN"),
        (np.full((2, 2, 2), np.inf), 1, {}, ValueError, "NaN or infinity"),
        (None, 1, {}, TypeError, "None"),
        ("abc", 1, {}, TypeError, "T must be"),
        (np.ones((3, 3, 3)), 4, {}, ValueError, "rank=4 exceeds the dimension k of T"),
        (np.ones((3, 3, 3)), 0, {}, ValueError, "rank=0"),
        (np.ones((3, 3, 3)), 1.5, {}, TypeError, "rank must be an int"),
        (np.ones((3, 3, 3)), 1, {"n_restarts": 0}, ValueError, "n_restarts"),
        (np.ones((3, 3, 3)), 1, {"tol": -1.0}, ValueError, "tol"),
        (np.ones((3, 3, 3)), 1, {"random_state": "seed"}, TypeError, "random_state"),
        (np.ones((3, 3, 3)), 1, {"random_state": 1.5}, TypeError, "random_state"),
    ],
)
def test_bad_input(T, rank, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        mvlib.tensor_power_method(T, rank, **kwargs)
