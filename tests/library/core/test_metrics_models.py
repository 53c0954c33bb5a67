import numpy as np
import pytest
import sympy as sp

import mvlib
from mvlib.multiview import MultiViewMixtureModel, random_multiview_model
from mvlib.core.symbolic import array_equal, cp_array, discrete_expectation, mixture_symbols, sym_multilinear


def test_matching_undoes_permutation_and_sign(rng):
    A = rng.standard_normal((6, 4))
    perm = np.array([2, 0, 3, 1])
    B = A[:, perm] + 1e-9 * rng.standard_normal((6, 4))
    got, signs = mvlib.match_columns(A, B)
    np.testing.assert_allclose(B[:, got], A, atol=1e-8)
    assert np.all(signs == 1)
    Bs = B * np.array([1, -1, -1, 1])
    assert mvlib.matched_error(A, Bs) > 0.1
    assert mvlib.matched_error(A, Bs, sign_invariant=True) < 1e-8
    with pytest.raises(ValueError, match="estimate has 3 columns but 4"):
        mvlib.matched_error(A, B[:, :3])


def test_relative_column_errors():
    A = np.array([[2.0, 0.0], [0.0, 4.0]])
    B = np.array([[0.0, 2.2], [4.0, 0.0]])
    np.testing.assert_allclose(mvlib.column_errors(A, B, relative=True), [0.1, 0.0], atol=1e-12)


def test_model_population_moments_match_definitions():
    model = random_multiview_model(3, (4, 5, 6), random_state=0)
    w, (M1, M2, M3) = model.weights, model.means
    T = np.einsum("h,ih,jh,lh->ijl", w, M1, M2, M3)
    np.testing.assert_allclose(model.triples(), T, atol=1e-15)
    eta = np.linspace(-1, 1, 6)
    np.testing.assert_allclose(model.triples_slice(eta), np.einsum("ijl,l->ij", T, eta), atol=1e-15)
    np.testing.assert_allclose(model.pairs(2, 3), np.einsum("h,ih,jh->ij", w, M2, M3), atol=1e-15)


def test_categorical_sampling_is_one_hot_and_reproducible():
    model = random_multiview_model(2, (3, 3, 3), random_state=1)
    (X1, X2, X3), h = model.sample(1000, random_state=5)
    assert set(np.unique(X1)) == {0.0, 1.0} and np.all(X1.sum(axis=1) == 1)
    (Y1, _, _), g = model.sample(1000, random_state=5)
    np.testing.assert_array_equal(X1, Y1)
    np.testing.assert_array_equal(h, g)


def test_model_validation():
    with pytest.raises(ValueError, match="weights must be positive and sum to 1"):
        MultiViewMixtureModel([0.5, 0.6], [np.eye(2)] * 3)
    with pytest.raises(ValueError, match="probability vectors"):
        MultiViewMixtureModel([0.5, 0.5], [2 * np.eye(2)] * 3)
    with pytest.raises(ValueError, match="smaller than n_components"):
        random_multiview_model(4, (3, 5, 5))


def test_symbolic_expectation_gives_pairs_factorisation():
    w, Ms = mixture_symbols(2, (2, 2, 2))
    # column sums of every M_v are 1 for categorical views
    subs = {Ms[v][1, j]: 1 - Ms[v][0, j] for v in range(3) for j in range(2)}
    Ms = [M.subs(subs) for M in Ms]
    w = w.subs({w[1]: 1 - w[0]})
    pairs = discrete_expectation(lambda x1, x2, x3: x1 * x2.T, w, Ms)
    assert sp.simplify(pairs - Ms[0] * sp.diag(*w) * Ms[1].T) == sp.zeros(2, 2)
    trip = discrete_expectation(
        lambda x1, x2, x3: sp.Array([[[x1[i] * x2[j] * x3[l] for l in range(2)] for j in range(2)] for i in range(2)]),
        w, Ms)
    assert array_equal(trip, cp_array(w, Ms))
    V = sp.Matrix([[1, 2], [0, 1]])
    assert array_equal(sym_multilinear(cp_array(w, Ms), V, V, V), cp_array(w, [V.T * M for M in Ms]))


def test_error_text_hides_rounding_digits_only():
    from mvlib.core.metrics import error_text

    assert error_text(3e-16) == "< 1e-12" and error_text(7e-13) == "< 1e-12"
    assert error_text(2.345e-7) == "= 2.3e-07"
    assert error_text(5e-9, floor=1e-8) == "< 1e-08"
    with pytest.raises(ValueError, match="floor"):
        error_text(1.0, floor=0)
    with pytest.raises(ValueError, match="NaN"):
        error_text(float("nan"))
