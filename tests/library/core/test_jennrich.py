"""mvlib.jennrich: simultaneous diagonalisation of two random slices."""
import numpy as np
import pytest
from tensorly.cp_tensor import CPTensor

import mvlib
from mvlib.core.tensors import cp_tensor, cp_to_dense, random_odeco_tensor, random_symmetric_tensor


@pytest.mark.parametrize("k", [1, 2, 5, 10, 30])
def test_exact_on_odeco_tensors(k):
    for seed in range(3):
        T, lam, V = random_odeco_tensor(k, np.random.default_rng(100 * k + seed))
        cp = mvlib.jennrich(T, k, random_state=seed)
        assert isinstance(cp, CPTensor)
        weights, (A, B, C) = cp
        assert A.shape == (k, k) and weights.shape == (k,)
        assert np.array_equal(A, B) and np.array_equal(B, C)
        assert np.allclose(np.linalg.norm(A, axis=0), 1.0)
        assert np.all(np.diff(weights) <= 0)            # decreasing
        perm, _ = mvlib.match_columns(V, A)
        assert mvlib.matched_error(V, A) < 1e-8      # signs fixed by lambda > 0
        np.testing.assert_allclose(weights[perm], lam, rtol=1e-8)
        assert np.linalg.norm(cp_to_dense(cp) - T) / np.linalg.norm(T) < 1e-9


def test_exact_on_non_orthogonal_symmetric_tensor():
    rng = np.random.default_rng(0)
    k = 6
    V = rng.standard_normal((k, k))
    V /= np.linalg.norm(V, axis=0)
    lam = rng.uniform(1, 3, k)
    T = cp_to_dense(cp_tensor(lam, [V, V, V]))
    cp = mvlib.jennrich(T, k, random_state=1)
    assert mvlib.matched_error(V, cp.factors[0]) < 1e-7
    assert np.linalg.norm(cp_to_dense(cp) - T) / np.linalg.norm(T) < 1e-8


def test_rank_below_dimension_projects_first():
    T, lam, V = random_odeco_tensor(8, np.random.default_rng(3))
    idx = np.argsort(-lam)[:3]
    T3 = cp_to_dense(cp_tensor(lam[idx], [V[:, idx]] * 3))
    cp = mvlib.jennrich(T3, 3, random_state=0)
    assert cp.factors[0].shape == (8, 3)
    assert mvlib.matched_error(V[:, idx], cp.factors[0]) < 1e-8
    np.testing.assert_allclose(np.sort(cp.weights), np.sort(lam[idx]), rtol=1e-8)


def test_noise_error_is_first_order_small():
    T, lam, V = random_odeco_tensor(10, np.random.default_rng(5))
    E = 1e-6 * random_symmetric_tensor(10, np.random.default_rng(6))
    cp = mvlib.jennrich(T + E, 10, random_state=0)
    assert mvlib.matched_error(V, cp.factors[0]) < 1e-3


def test_reproducible_and_input_untouched():
    T, _, _ = random_odeco_tensor(7, np.random.default_rng(9))
    T += 1e-3 * random_symmetric_tensor(7, np.random.default_rng(10))
    T0 = T.copy()
    a = mvlib.jennrich(T, 7, random_state=4)
    b = mvlib.jennrich(T, 7, random_state=np.random.default_rng(4))
    assert np.array_equal(a.weights, b.weights)
    assert np.array_equal(a.factors[0], b.factors[0])
    assert np.array_equal(T, T0)
    c = mvlib.jennrich(T, 7, random_state=5)        # other slices: same answer to O(noise)
    assert mvlib.matched_error(a.factors[0], c.factors[0]) < 0.05


@pytest.mark.parametrize("T, rank, kwargs, exc, word", [
    (np.zeros((3, 3)), 2, {}, ValueError, "T"),
    (np.zeros((3, 3, 4)), 2, {}, ValueError, "T"),
    (np.full((3, 3, 3), np.nan), 2, {}, ValueError, "T"),
    ("abc", 2, {}, (TypeError, ValueError), "T"),
    (np.ones((3, 3, 3)), 0, {}, ValueError, "rank"),
    (np.ones((3, 3, 3)), 4, {}, ValueError, "rank"),
    (np.ones((3, 3, 3)), 2.5, {}, (TypeError, ValueError), "rank"),
    (np.ones((3, 3, 3)), 2, {"random_state": "x"}, TypeError, "random_state"),
])
def test_bad_input_names_the_argument(T, rank, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        mvlib.jennrich(T, rank, **kwargs)


def test_rank_larger_than_the_tensor_rank_is_refused():
    v = np.array([1.0, 0.0, 0.0])
    T = cp_to_dense(cp_tensor(np.array([2.0]), [v[:, None]] * 3))   # rank 1
    with pytest.raises(ValueError, match="rank"):
        mvlib.jennrich(T, 3, random_state=0)
