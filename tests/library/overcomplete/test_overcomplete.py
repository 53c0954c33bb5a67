"""Overcomplete tensor decomposition (seed 004): Algorithm 1, Procedures 2 and 3, Lemma 1."""
import warnings

import numpy as np
import pytest
import tensorly as tl

import mvlib
from mvlib.overcomplete import OvercompleteTensorDecomposition
from mvlib.core.metrics import column_errors
from mvlib.overcomplete import (ThirdMomentOperator, als_refine, asymmetric_power_updates,
                                cluster_restarts, labelled_initialization,
                                random_overcomplete_tensor, svd_initialization)
from mvlib.overcomplete._algorithm import _DenseTensor
from mvlib.core.tensors import cp_tensor, cp_to_dense, multilinear

from mvlib.core.tensors import random_odeco_tensor


def unit_columns(rng, d, k):
    A = rng.standard_normal((d, k))
    return A / np.linalg.norm(A, axis=0)


def sign_free_errors(A, F):
    """‖a_j − ±â_j‖ after the best matching (the paper's error, eq. 4)."""
    return column_errors(A, F, sign_invariant=True)


def mixture_data(rng, d, k, n, zeta2, n_labelled=5):
    A = unit_columns(rng, d, k)
    h = rng.integers(k, size=n)
    X = A.T[h] + np.sqrt(zeta2) * rng.standard_normal((n, d))
    y = np.repeat(np.arange(k), n_labelled)
    Xl = A.T[y] + np.sqrt(zeta2) * rng.standard_normal((len(y), d))
    return A, X, Xl, y


# ---------------------------------------------------------------- contractions
def test_dense_contractions_equal_multilinear_maps(rng):
    d = 6
    T = rng.standard_normal((d, d, d))  # asymmetric
    op = _DenseTensor(T)
    assert not op.symmetric
    U, V = rng.standard_normal((2, 5, d))
    I = np.eye(d)
    for r in range(5):
        np.testing.assert_allclose(op.contract(0, U, V)[r], multilinear(T, I, U[r], V[r]), atol=1e-12)
        np.testing.assert_allclose(op.contract(1, U, V)[r], multilinear(T, U[r], I, V[r]), atol=1e-12)
        np.testing.assert_allclose(op.contract(2, U, V)[r], multilinear(T, U[r], V[r], I), atol=1e-12)


@pytest.mark.parametrize("zeta2", [0.0, 0.37])
def test_moment_operator_equals_lemma1_tensor(rng, zeta2):
    """Contractions from data equal those of the explicit eq. (2) tensor, built independently."""
    n, d = 200, 5
    X = rng.standard_normal((n, d)) + rng.standard_normal(d)
    X_before = X.copy()
    op = ThirdMomentOperator(X, zeta2)
    m = X.mean(0)
    E3 = np.einsum("ni,nj,nl->ijl", X, X, X) / n
    corr = sum(np.einsum("i,j,l->ijl", *v) for e in np.eye(d)
               for v in ((m, e, e), (e, m, e), (e, e, m)))
    M3 = E3 - zeta2 * corr
    np.testing.assert_allclose(op.to_dense(), M3, atol=1e-12)
    U, V = rng.standard_normal((2, 4, d))
    dense = _DenseTensor(M3)
    for mode in range(3):
        np.testing.assert_allclose(op.contract(mode, U, V), dense.contract(mode, U, V), atol=1e-12)
    theta = rng.standard_normal(d)
    np.testing.assert_allclose(op.slice(theta), multilinear(M3, np.eye(d), np.eye(d), theta), atol=1e-12)
    assert op.value(U[0], V[0], U[1]) == pytest.approx(float(multilinear(M3, U[0], V[0], U[1])))
    np.testing.assert_array_equal(X, X_before)


def test_lemma1_population_moment_is_the_mixture_tensor(rng):
    """With many samples the corrected moment approaches Σ w_j a_j^{⊗3} (Lemma 1), the raw one does not."""
    d, k, n = 4, 3, 400_000
    A, X, _, _ = mixture_data(rng, d, k, n, zeta2=0.5)
    target = cp_to_dense(cp_tensor(np.full(k, 1 / k), [A, A, A]))
    corrected = ThirdMomentOperator(X, 0.5).to_dense()
    raw = ThirdMomentOperator(X, 0.0).to_dense()
    assert np.abs(corrected - target).max() < 0.03
    assert np.abs(raw - target).max() > 0.2


# ---------------------------------------------------------------- Algorithm 1
def _reference_eq1(T, a, b, c, n_iterations):
    """Eq. (1) one start at a time with tensorly's multilinear map."""
    I = np.eye(len(a))
    for _ in range(n_iterations):
        na = multilinear(T, I, b, c)
        nb = multilinear(T, a, I, c)
        nc = multilinear(T, a, b, I)
        a, b, c = na / np.linalg.norm(na), nb / np.linalg.norm(nb), nc / np.linalg.norm(nc)
    return float(multilinear(T, a, b, c)), a, b, c


def test_batched_updates_equal_eq1_one_start_at_a_time(rng):
    d, R = 7, 9
    T = rng.standard_normal((d, d, d))
    A0, B0, C0 = (unit_columns(rng, d, R) for _ in range(3))
    w, A, B, C = asymmetric_power_updates(T, A0, B0, C0, n_iterations=4, tol=0.0)
    for r in range(R):
        wr, a, b, c = _reference_eq1(T, A0[:, r], B0[:, r], C0[:, r], 4)
        assert w[r] == pytest.approx(wr, rel=1e-10)
        np.testing.assert_allclose(A[:, r], a, atol=1e-10)
        np.testing.assert_allclose(B[:, r], b, atol=1e-10)
        np.testing.assert_allclose(C[:, r], c, atol=1e-10)


def test_symmetric_updates_equal_eq1_from_equal_starts(rng):
    T, _, _ = random_overcomplete_tensor(8, 10, rng)
    A0 = unit_columns(rng, 8, 6)
    w_sym, U, U2, _ = asymmetric_power_updates(T, A0, n_iterations=5, tol=0.0)
    assert U is not None and np.array_equal(U, U2)
    w_asym, A, B, C = asymmetric_power_updates(T, A0, n_iterations=5, tol=0.0, symmetric=False)
    np.testing.assert_allclose(U, A, atol=1e-10)
    np.testing.assert_allclose(U, C, atol=1e-10)
    np.testing.assert_allclose(w_sym, w_asym, rtol=1e-10)


def test_components_of_an_orthogonal_tensor_are_fixed_points(rng):
    T, lam, V = random_odeco_tensor(6, rng)
    w, A, _, _ = asymmetric_power_updates(T, V, n_iterations=5)
    np.testing.assert_allclose(A, V, atol=1e-12)
    np.testing.assert_allclose(w, lam, rtol=1e-12)


def test_semi_supervised_recovery_done_when_scaled_down():
    """The done-when case at d = 60, k = 90 (k/d = 1.5): 5 labelled samples per component,
    ζ² = 1/d, power updates alone: median error within 3√k/d (Theorem 1)."""
    rng = np.random.default_rng(4)
    d, k = 60, 90
    T, w, A = random_overcomplete_tensor(d, k, rng)
    y = np.repeat(np.arange(k), 5)
    Xl = A.T[y] + np.sqrt(1 / d) * rng.standard_normal((len(y), d))
    A0 = labelled_initialization(Xl, y, k)
    est = OvercompleteTensorDecomposition(k, "labels", refine=False, random_state=0).fit(T, init_vectors=A0)
    err = np.linalg.norm(A - est.factors_ * np.sign(np.sum(A * est.factors_, 0)), axis=0)  # label order kept
    assert np.median(err) <= 3 * np.sqrt(k) / d
    assert np.median(err) < np.median(np.linalg.norm(A - A0, axis=0))  # the updates improve on the means
    # CP-ALS refinement from there removes the O(√k/d) bias on an exact tensor
    ref = OvercompleteTensorDecomposition(k, "labels", refine=True, random_state=0).fit(T, init_vectors=A0)
    err_ref = np.linalg.norm(A - ref.factors_ * np.sign(np.sum(A * ref.factors_, 0)), axis=0)
    assert np.median(err_ref) < 1e-6
    np.testing.assert_allclose(ref.weights_, w, atol=1e-6)


# ---------------------------------------------------------------- Procedure 3
def test_svd_initialization_uses_top_singular_pair_of_a_random_slice(rng):
    d = 6
    T = rng.standard_normal((d, d, d))
    A, B, C = svd_initialization(T, 4, random_state=3)
    thetas = np.random.default_rng(3).standard_normal((4, d))  # the same draws
    for r in range(4):
        u, s, vt = np.linalg.svd(multilinear(T, np.eye(d), np.eye(d), thetas[r]))
        assert abs(A[:, r] @ u[:, 0]) == pytest.approx(1.0, abs=1e-10)
        assert abs(B[:, r] @ vt[0]) == pytest.approx(1.0, abs=1e-10)
        c = multilinear(T, A[:, r], B[:, r], np.eye(d))
        np.testing.assert_allclose(C[:, r], c / np.linalg.norm(c), atol=1e-10)


def test_svd_initialization_on_data_matches_the_explicit_slices(rng):
    """Block subspace iteration with operator products finds the same top pairs."""
    A, X, _, _ = mixture_data(rng, 8, 3, 3000, 0.05)
    op = ThirdMomentOperator(X, 0.05)
    Ao, Bo, _ = svd_initialization(op, 5, random_state=1, n_svd_iterations=200)
    Ad, Bd, _ = svd_initialization(op.to_dense(), 5, random_state=1)
    np.testing.assert_allclose(np.abs(np.sum(Ao * Ad, 0)), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(Bo * Bd, 0)), 1.0, atol=1e-6)


# ---------------------------------------------------------------- Procedure 2
def test_cluster_restarts_picks_largest_and_drops_its_cluster(rng):
    T, lam, V = random_odeco_tensor(5, rng)
    # noisy copies (both signs) of the eigenvectors: 3 per component
    starts = np.hstack([V * s + 0.05 * rng.standard_normal((5, 5)) for s in (1, -1, 1)])
    w, A, B, C = asymmetric_power_updates(T, starts, n_iterations=0)
    wc, Ac, _, _ = cluster_restarts(T, w, A, B, C, 5, n_iterations=30)
    assert Ac.shape == (5, 5)
    assert np.max(sign_free_errors(V, Ac)) < 1e-8
    # centres come out by decreasing |T(a, b, c)|
    order = np.argsort(-lam)
    np.testing.assert_allclose(np.abs(wc), lam[order], rtol=1e-8)
    # asking for more than there are clusters returns what there is
    wc2, Ac2, _, _ = cluster_restarts(T, w, A, B, C, 8, n_iterations=30)
    assert Ac2.shape == (5, 5)


# ---------------------------------------------------------------- estimator
@pytest.mark.parametrize("init", ["svd", "random"])
def test_exact_recovery_of_orthogonal_tensors(rng, init):
    T, lam, V = random_odeco_tensor(8, rng)
    est = OvercompleteTensorDecomposition(8, init, refine=False, n_iterations=50, random_state=0).fit(T)
    assert np.max(sign_free_errors(V, est.factors_)) < 1e-8
    perm, _ = mvlib.match_columns(V, est.factors_, sign_invariant=True)
    np.testing.assert_allclose(est.weights_[perm], lam, rtol=1e-8)
    assert est.factors_.shape == (8, 8) and est.weights_.shape == (8,)


def test_unsupervised_overcomplete_recovery_with_refinement():
    """k = d = 40 random components, SVD init + Procedure 2 + CP-ALS."""
    T, w, A = random_overcomplete_tensor(40, 40, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # components without a basin of their own
        est = OvercompleteTensorDecomposition(40, "svd", n_restarts=200, random_state=0).fit(T)
    err = sign_free_errors(A, est.factors_)
    assert np.mean(err < 0.1) >= 0.8
    assert np.all(est.weights_ > 0)
    np.testing.assert_allclose(np.linalg.norm(est.factors_, axis=0), 1.0)
    # the power-method result is kept, before refinement
    assert est.power_factors_.shape == (40, 40)
    That = tl.cp_to_tensor(est.cp_tensor_)
    assert That.shape == T.shape


def test_asymmetric_tensor_three_factors(rng):
    d, k = 30, 6
    A, B, C = (unit_columns(rng, d, k) for _ in range(3))
    w = rng.uniform(1, 1.2, k)
    T = cp_to_dense(cp_tensor(w, [A, B, C]))
    est = OvercompleteTensorDecomposition(k, "svd", n_restarts=40, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # all five found by the power updates
        est.fit(T)
    assert not est.symmetric_
    Ah, Bh, Ch = est.view_factors_
    perm, _ = mvlib.match_columns(A, Ah, sign_invariant=True)
    for true, F in ((A, Ah), (B, Bh), (C, Ch)):
        assert np.max(sign_free_errors(true, F)) < 1e-6
    np.testing.assert_allclose(est.weights_[perm], w, rtol=1e-6)
    np.testing.assert_array_equal(est.factors_, Ah)
    np.testing.assert_allclose(cp_to_dense(est.cp_tensor_), T, atol=1e-6)


def test_fit_moments_spherical_mixture_overcomplete():
    """Data from k = 30 > d = 20 spherical Gaussians with ζ² = 1/d; Lemma 1 moment, labels, ALS."""
    rng = np.random.default_rng(2)
    d, k, n = 20, 30, 60_000
    A, X, Xl, y = mixture_data(rng, d, k, n, 1 / d)
    A0 = labelled_initialization(Xl, y, k)
    est = OvercompleteTensorDecomposition(k, "labels", random_state=0)
    est.fit_moments(X, noise_variance=1 / d, init_vectors=A0)
    assert est.materialized_
    err = np.linalg.norm(A - est.factors_ * np.sign(np.sum(A * est.factors_, 0)), axis=0)
    assert np.median(err) < 0.1
    np.testing.assert_allclose(est.weights_, 1 / k, atol=0.3 / k)


def test_fit_moments_operator_equals_materialized(rng):
    d, k = 10, 6
    A, X, Xl, y = mixture_data(rng, d, k, 4000, 0.1)
    A0 = labelled_initialization(Xl, y, k)
    kw = dict(noise_variance=0.1, init_vectors=A0)
    lazy = OvercompleteTensorDecomposition(k, "labels", n_iterations=20, n_als_iterations=5,
                                           random_state=0).fit_moments(X, materialize=False, **kw)
    dense = OvercompleteTensorDecomposition(k, "labels", n_iterations=20, n_als_iterations=5,
                                            random_state=0).fit_moments(X, materialize=True, **kw)
    assert not lazy.materialized_ and dense.materialized_
    np.testing.assert_allclose(lazy.power_factors_, dense.power_factors_, atol=1e-8)
    np.testing.assert_allclose(lazy.power_weights_, dense.power_weights_, atol=1e-10)
    # ALS: operator sweeps vs tensorly parafac, both 5 sweeps from the same start
    np.testing.assert_allclose(np.abs(np.sum(lazy.factors_ * dense.factors_, 0)), 1.0, atol=1e-4)


def test_fit_moments_unsupervised_on_operator(rng):
    d, k = 20, 4
    A, X, _, _ = mixture_data(rng, d, k, 20_000, 0.05)
    est = OvercompleteTensorDecomposition(k, "svd", n_restarts=20, random_state=0, n_als_iterations=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # all found by the power updates
        est.fit_moments(X, noise_variance=0.05, materialize=False)
    assert np.max(sign_free_errors(A, est.factors_)) < 0.1


def test_als_refine_exact_from_perturbed_truth(rng):
    T, w, A = random_overcomplete_tensor(15, 20, rng)
    A1 = A + 0.05 * rng.standard_normal(A.shape)
    cp = als_refine(T, w, [A1, A1, A1])
    assert isinstance(cp, tl.cp_tensor.CPTensor)
    w2, F = cp
    for M in F:
        assert np.max(sign_free_errors(A, M)) < 1e-3  # parafac stops on its error decrease
    np.testing.assert_allclose(np.abs(w2), w, rtol=1e-4)
    # the operator sweeps give the same on the same tensor
    from mvlib.overcomplete._algorithm import _als_operator
    w3, A3, B3, C3 = _als_operator(_DenseTensor(T), w, A1, A1, A1, 200, 1e-12)
    assert np.max(sign_free_errors(A, A3)) < 1e-6


def test_reproducible_and_generator_accepted():
    T, _, _ = random_overcomplete_tensor(15, 10, 0)
    kw = dict(n_restarts=30, refine=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = OvercompleteTensorDecomposition(10, "random", random_state=5, **kw).fit(T)
        b = OvercompleteTensorDecomposition(10, "random", random_state=5, **kw).fit(T)
        c = OvercompleteTensorDecomposition(10, "svd", random_state=np.random.default_rng(5), **kw).fit(T)
        d = OvercompleteTensorDecomposition(10, "svd", random_state=np.random.default_rng(5), **kw).fit(T)
    np.testing.assert_array_equal(a.factors_, b.factors_)
    np.testing.assert_array_equal(c.factors_, d.factors_)


def test_short_of_components_warns_and_fills(rng):
    T, lam, V = random_odeco_tensor(4, rng)
    T6 = np.zeros((6, 6, 6))
    T6[:4, :4, :4] = T  # rank 4 in dimension 6: 6 components cannot all be found
    est = OvercompleteTensorDecomposition(6, "random", n_restarts=30, max_rounds=2, refine=False,
                                          random_state=0)
    with pytest.warns(RuntimeWarning, match="only 4 of n_components=6"):
        est.fit(T6)
    assert est.factors_.shape == (6, 6) and np.all(np.isfinite(est.weights_))


def test_labelled_initialization(rng):
    X = rng.standard_normal((9, 4))
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    A0 = labelled_initialization(X, y, 3)
    for j in range(3):
        m = X[y == j].mean(0)
        np.testing.assert_allclose(A0[:, j], m / np.linalg.norm(m))


def test_random_unit_columns_are_the_components_of_the_random_tensor():
    A = mvlib.overcomplete.random_unit_columns(6, 11, 3)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0)
    assert np.array_equal(A, random_overcomplete_tensor(6, 11, 3)[2])          # the same draw
    g = np.random.default_rng(3).standard_normal((6, 11))
    np.testing.assert_allclose(A, g / np.linalg.norm(g, axis=0), rtol=0, atol=0)
    with pytest.raises(ValueError):
        mvlib.overcomplete.random_unit_columns(0, 3)


def test_coherence_is_the_largest_off_diagonal_overlap(rng):
    from mvlib.overcomplete import coherence
    assert coherence(np.eye(4)) == 0.0
    A = unit_columns(rng, 5, 9)
    G = A.T @ A
    assert coherence(A) == max(abs(G[i, j]) for i in range(9) for j in range(9) if i != j)
    assert coherence(np.hstack([A[:, :1], -A[:, :1]])) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="two"):
        coherence(A[:, :1])


def test_random_overcomplete_tensor(rng):
    T, w, A = random_overcomplete_tensor(5, 8, rng, weights=np.arange(1.0, 9.0))
    np.testing.assert_allclose(T, np.einsum("j,ij,kj,lj->ikl", w, A, A, A), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0)


# ---------------------------------------------------------------- bad input
T_GOOD = random_overcomplete_tensor(4, 3, 0)[0]


@pytest.mark.parametrize("T,exc,match", [
    (np.zeros((3, 3, 4)), ValueError, "cubic"),
    (np.zeros((3, 3)), ValueError, "3-dimensional"),
    (None, TypeError, "None"),
    ([["a"]], TypeError, "T"),
    (np.full((3, 3, 3), np.nan), ValueError, "NaN"),
    (np.where(np.eye(3)[:, :, None] > 0, np.inf, 0.0) * np.ones((3, 3, 3)), ValueError, "infinity"),
    (np.zeros((3, 3, 3)), ValueError, "identically zero"),
    (np.zeros((0, 0, 0)), ValueError, "rows"),
])
def test_bad_tensor(T, exc, match):
    with pytest.raises(exc, match=match):
        OvercompleteTensorDecomposition(2).fit(T)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(n_components=0), ValueError, "n_components=0 must be at least 1"),
    (dict(n_components=-2), ValueError, "n_components"),
    (dict(n_components=1.5), TypeError, "n_components must be an int"),
    (dict(n_components=True), TypeError, "n_components"),
    (dict(n_components=6), ValueError, "generic rank"),
    (dict(n_components=2, init="kmeans"), ValueError, "init must be one of"),
    (dict(n_components=2, init=None), ValueError, "init must be one of"),
    (dict(n_components=2, random_state="seed"), TypeError, "random_state"),
    (dict(n_components=2, random_state=1.5), TypeError, "random_state"),
    (dict(n_components=2, n_restarts=0), ValueError, "n_restarts"),
    (dict(n_components=2, n_iterations=-1), ValueError, "n_iterations"),
    (dict(n_components=2, refine="yes"), TypeError, "refine"),
    (dict(n_components=2, epsilon=0), ValueError, "epsilon"),
    (dict(n_components=2, symmetric="maybe"), TypeError, "symmetric"),
])
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        OvercompleteTensorDecomposition(**kwargs).fit(T_GOOD)


def test_bad_init_vectors():
    est = OvercompleteTensorDecomposition(3, "labels")
    with pytest.raises(ValueError, match="needs init_vectors"):
        est.fit(T_GOOD)
    with pytest.raises(ValueError, match="init_vectors has 2 columns but 3 are required"):
        est.fit(T_GOOD, init_vectors=np.ones((4, 2)))
    with pytest.raises(ValueError, match="init_vectors has 5 rows but 4 are required"):
        est.fit(T_GOOD, init_vectors=np.ones((5, 3)))
    with pytest.raises(ValueError, match="zero column"):
        est.fit(T_GOOD, init_vectors=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="NaN"):
        est.fit(T_GOOD, init_vectors=np.full((4, 3), np.nan))
    with pytest.raises(ValueError, match="only with init='labels'"):
        OvercompleteTensorDecomposition(3, "svd").fit(T_GOOD, init_vectors=np.ones((4, 3)))
    with pytest.raises(ValueError, match="list of three"):
        est.fit(T_GOOD, init_vectors=[np.ones((4, 3))] * 2)


def test_bad_data_for_fit_moments(rng):
    est = OvercompleteTensorDecomposition(2, "random")
    X = rng.standard_normal((50, 4))
    with pytest.raises(ValueError, match="noise_variance=-1"):
        est.fit_moments(X, noise_variance=-1.0)
    with pytest.raises(ValueError, match="noise_variance"):
        est.fit_moments(X, noise_variance=np.nan)
    with pytest.raises(TypeError, match="noise_variance"):
        est.fit_moments(X, noise_variance="1")
    with pytest.raises(ValueError, match="NaN"):
        est.fit_moments(np.where(X > 2, np.nan, X))
    with pytest.raises(ValueError, match="2-dimensional"):
        est.fit_moments(X[:, 0])
    with pytest.raises(ValueError, match="X has 1 rows but at least 2"):
        est.fit_moments(X[:1])
    with pytest.raises(TypeError, match="X must be an array of numbers, got None"):
        est.fit_moments(None)
    with pytest.raises(TypeError, match="materialize"):
        est.fit_moments(X, materialize="sometimes")


def test_bad_labels(rng):
    X = rng.standard_normal((6, 3))
    with pytest.raises(ValueError, match="label 2 has no labelled sample"):
        labelled_initialization(X, [0, 1, 0, 1, 0, 1], 3)
    with pytest.raises(ValueError, match="integers in 0"):
        labelled_initialization(X, [0, 1, 0, 1, 0, 5], 3)
    with pytest.raises(ValueError, match="X has 6 rows but labels has 2"):
        labelled_initialization(X, [0, 1], 2)


def test_inputs_not_modified(rng):
    T = T_GOOD.copy()
    A0 = unit_columns(rng, 4, 3)
    A0c = A0.copy()
    OvercompleteTensorDecomposition(3, "labels", random_state=0).fit(T, init_vectors=A0)
    np.testing.assert_array_equal(T, T_GOOD)
    np.testing.assert_array_equal(A0, A0c)


def test_defaults_done_when_a_scaled_down():
    """Done-when (a) at d = 24, k = 48 (the same k/d = 2 as d = 50, k = 100; the full size is
    measured in bench/bench_overcomplete.py): the estimator's defaults recover at least 90 %
    of the components to error < 0.1, without a warning."""
    for seed in (0, 1):
        T, w, A = random_overcomplete_tensor(24, 48, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est = OvercompleteTensorDecomposition(48, random_state=seed).fit(T)
        err = sign_free_errors(A, est.factors_)
        assert np.mean(err < 0.1) >= 0.9
        assert 1 <= est.n_power_components_ <= 48
        assert est.n_restarts_ % 480 == 0
