import warnings

import numpy as np
import pytest

import mvlib
from mvlib.multiview import MultiViewMixtureModel, random_multiview_model


def test_whitening_whitens(rng):
    A = rng.standard_normal((12, 4))
    M2 = A @ np.diag([3.0, 2.0, 1.0, 0.5]) @ A.T
    W, evals = mvlib.whitening_matrix(M2, 4, return_eigenvalues=True)
    assert W.shape == (12, 4)
    np.testing.assert_allclose(W.T @ M2 @ W, np.eye(4), atol=1e-12)
    assert np.all(np.diff(evals) <= 0)


def test_whitening_uses_symmetric_part(rng):
    A = rng.standard_normal((6, 3))
    S = A @ A.T
    skew = rng.standard_normal((6, 6))
    skew = skew - skew.T
    np.testing.assert_allclose(mvlib.whitening_matrix(S + 1e-3 * skew, 3), mvlib.whitening_matrix(S, 3), atol=1e-12)


def test_population_pipeline_recovers_means_and_weights():
    base = random_multiview_model(5, (15, 15, 15), kind="gaussian", random_state=3)
    M, w = base.means[0], base.weights
    model = MultiViewMixtureModel(w, [M, M, M], kind="gaussian")
    W = mvlib.whitening_matrix(model.pairs(1, 2), 5)
    T = model.whitened_triples(W, W, W)
    cp = mvlib.tensor_power_method(T, 5, random_state=0)
    Mhat = mvlib.dewhiten(W, cp.factors[0], cp.weights)
    assert mvlib.matched_error(M, Mhat) < 1e-8
    perm, _ = mvlib.match_columns(M, Mhat)
    np.testing.assert_allclose(cp.weights[perm] ** -2, w, rtol=1e-8)


def test_rank_larger_than_numerical_rank_is_refused(rng):
    A = rng.standard_normal((8, 3))
    with pytest.raises(ValueError, match=r"rank=4 exceeds the numerical rank 3 of M2"):
        mvlib.whitening_matrix(A @ A.T, 4)
    with pytest.raises(ValueError, match="rank=9 exceeds the dimension of M2"):
        mvlib.whitening_matrix(A @ A.T, 9)


def test_ill_conditioned_second_moment_warns(rng):
    A, _ = np.linalg.qr(rng.standard_normal((5, 3)))
    M2 = A @ np.diag([1.0, 1e-4, 1e-10]) @ A.T
    with pytest.warns(mvlib.IllConditionedWarning, match="ill-conditioned"):
        mvlib.whitening_matrix(M2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mvlib.whitening_matrix(M2, 2)


@pytest.mark.parametrize(
    "M2,exc,match",
    [
        (np.ones((3, 4)), ValueError, "M2 must be square"),
        (np.ones(3), ValueError, "M2 must be 2-dimensional"),
        (np.full((2, 2), np.nan), ValueError, "M2 contains NaN"),
        (None, TypeError, "M2 must be an array"),
    ],
)
def test_bad_second_moment(M2, exc, match):
    with pytest.raises(exc, match=match):
        mvlib.whitening_matrix(M2, 1)
