"""Observable operators, Algorithms A and B, view symmetrisation and unbiased count moments."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mvlib
from mvlib.multiview import MultiViewMixtureModel, random_multiview_model
from mvlib.topic import SingleTopicModel, random_topic_model
from mvlib.core.moments import count_mean, count_triples
from mvlib.core.observable import EigengapWarning, projected_operator, random_orthogonal, view_bases


# --------------------------------------------------------------------------- helpers
def projected_population(model, k):
    """(U1, U2, U3), T = P123(U1, U2, U3) and the projected pairs of a three-view model."""
    Us = view_bases(model.pairs(1, 2), model.pairs(1, 3), k)
    T = model.whitened_triples(*Us)
    P = {(a, b): Us[a - 1].T @ model.pairs(a, b) @ Us[b - 1] for a, b in ((1, 2), (1, 3), (2, 3))}
    return Us, T, P


def brute_force_moments(docs, d):
    """Pairs / Triples averaged over ordered tuples of distinct positions, by enumeration."""
    P, T = np.zeros((d, d)), np.zeros((d, d, d))
    for doc in docs:
        ell = len(doc)
        pp, tt = np.zeros((d, d)), np.zeros((d, d, d))
        for p, q in itertools.permutations(range(ell), 2):
            pp[doc[p], doc[q]] += 1
        for p, q, r in itertools.permutations(range(ell), 3):
            tt[doc[p], doc[q], doc[r]] += 1
        P += pp / (ell * (ell - 1))
        T += tt / (ell * (ell - 1) * (ell - 2))
    return P / len(docs), T / len(docs)


@pytest.fixture
def tiny_docs(rng):
    d = 5
    docs = [rng.integers(0, d, size=rng.integers(3, 8)) for _ in range(9)]
    X = np.zeros((len(docs), d))
    for i, doc in enumerate(docs):
        np.add.at(X[i], doc, 1)
    return docs, X, d


# --------------------------------------------------------------------------- count moments
def test_count_moments_equal_brute_force_enumeration(tiny_docs, rng):
    docs, X, d = tiny_docs
    P, T = brute_force_moments(docs, d)
    np.testing.assert_allclose(mvlib.count_pairs(X), P, atol=1e-15)
    np.testing.assert_allclose(count_triples(X), T, atol=1e-15)
    eta = rng.standard_normal(d)
    np.testing.assert_allclose(mvlib.count_triples_slice(X, eta), np.einsum("ijl,l->ij", T, eta), atol=1e-14)
    W = rng.standard_normal((d, 3))
    np.testing.assert_allclose(mvlib.count_whitened_triples(X, W), mvlib.multilinear(T, W, W, W), atol=1e-14)
    np.testing.assert_allclose(count_mean(X), np.mean(X / X.sum(1, keepdims=True), axis=0), atol=1e-15)


def test_count_moments_sparse_equals_dense_and_inputs_untouched(tiny_docs, rng):
    _, X, d = tiny_docs
    S = sp.csr_matrix(X)
    X0, S0 = X.copy(), S.copy()
    W = rng.standard_normal((d, 2))
    np.testing.assert_allclose(mvlib.count_pairs(S), mvlib.count_pairs(X), atol=1e-15)
    np.testing.assert_allclose(mvlib.count_whitened_triples(S, W), mvlib.count_whitened_triples(X, W), atol=1e-14)
    np.testing.assert_allclose(mvlib.count_triples_slice(S, np.ones(d)), mvlib.count_triples_slice(X, np.ones(d)),
                               atol=1e-15)
    np.testing.assert_array_equal(X, X0)
    assert (S != S0).nnz == 0


def test_count_pairs_is_unbiased_for_short_documents():
    # 3-word documents: the naive c c^T / l^2 is biased on the diagonal, the distinct-pair average is not
    model = random_topic_model(3, 6, concentration=1.0, random_state=1)
    X, _ = model.sample(40000, 3, random_state=2)
    err = np.abs(mvlib.count_pairs(X) - model.pairs()).max()
    naive = (X.T @ X).toarray() / 9 / X.shape[0]
    assert err < 3e-3
    assert np.abs(naive - model.pairs()).max() > 10 * err
    W = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 3)))[0]
    np.testing.assert_allclose(mvlib.count_whitened_triples(X, W), model.whitened_triples(W), atol=5e-3)


@pytest.mark.parametrize(
    "X,exc,match",
    [
        (np.array([[1, 2, 0], [-1, 3, 2]]), ValueError, "non-negative counts, but document 1"),
        (np.array([[1, 2, 0.5], [1, 3, 2]]), ValueError, "integer counts, but document 0"),
        (np.array([[1, 2, 1], [1, 1, 0]]), ValueError, "document 1 has 2 words; third-order moments need at least 3"),
        (np.array([[1, np.nan, 1]]), ValueError, "X contains NaN"),
        (None, TypeError, "X must be an array"),
        (np.ones(4), ValueError, "X must be 2-dimensional"),
    ],
)
def test_count_moments_refuse_bad_counts(X, exc, match):
    with pytest.raises(exc, match=match):
        mvlib.count_whitened_triples(X, np.ones((np.shape(X)[-1] if X is not None else 3, 1)))


# --------------------------------------------------------------------------- topic model
def test_single_topic_model_sample_and_moments():
    model = random_topic_model(4, 12, random_state=0)
    X, h = model.sample(3000, 7, random_state=1)
    assert sp.issparse(X) and X.shape == (3000, 12)
    np.testing.assert_array_equal(np.asarray(X.sum(1)).ravel(), 7)
    assert set(np.unique(h)) <= set(range(4))
    X2, h2 = model.sample(3000, 7, random_state=1)
    assert (X != X2).nnz == 0 and np.array_equal(h, h2)
    lengths = np.arange(3000) % 5 + 3
    X3, _ = model.sample(3000, lengths, random_state=2)
    np.testing.assert_array_equal(np.asarray(X3.sum(1)).ravel(), lengths)
    M, w = model.M, model.weights
    eta = np.linspace(-1, 1, 12)
    np.testing.assert_allclose(model.pairs(), M @ np.diag(w) @ M.T, atol=1e-15)
    np.testing.assert_allclose(model.triples_slice(eta), M @ np.diag(M.T @ eta) @ np.diag(w) @ M.T, atol=1e-15)
    np.testing.assert_allclose(np.einsum("ijl,l->ij", model.triples(), eta), model.triples_slice(eta), atol=1e-15)
    np.testing.assert_allclose(model.mean(), M @ w, atol=1e-15)
    with pytest.raises(ValueError, match="topic_word must have probability vectors"):
        SingleTopicModel([0.5, 0.5], np.ones((2, 3)))


# --------------------------------------------------------------------------- observable operators
def test_observable_operator_has_eigenvalues_eta_mu3(rng):
    model = random_multiview_model(4, (9, 8, 7), kind="gaussian", random_state=3)
    U1, U2, U3 = view_bases(model.pairs(1, 2), model.pairs(1, 3), 4)
    eta = rng.standard_normal(7)
    B = mvlib.observable_operator(model.pairs(1, 2), model.triples_slice(eta), U1, U2)
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(B).real), np.sort(model.means[2].T @ eta), atol=1e-10)
    # Lemma 3.2: B = (U1^T M1) diag(M3^T eta) (U1^T M1)^{-1}
    A = U1.T @ model.means[0]
    np.testing.assert_allclose(B, A @ np.diag(model.means[2].T @ eta) @ np.linalg.inv(A), atol=1e-10)
    # the projected form with eta = U3 theta gives the same operator
    theta = rng.standard_normal(4)
    _, T, P = projected_population(model, 4)
    B2 = mvlib.observable_operator(model.pairs(1, 2), model.triples_slice(U3 @ theta), U1, U2)
    np.testing.assert_allclose(projected_operator(T, P[1, 2], theta), B2, atol=1e-10)


def test_algorithm_b_recovers_every_view_in_one_order():
    model = random_multiview_model(5, (12, 10, 8), kind="gaussian", random_state=4)
    Us, T, P = projected_population(model, 5)
    A = mvlib.algorithm_b(T, P[1, 2], P[1, 3], P[2, 3], random_state=0)
    means = [U @ a for U, a in zip(Us, A)]
    perm, _ = mvlib.match_columns(model.means[2], means[2])
    for M, Mhat in zip(model.means, means):
        np.testing.assert_allclose(Mhat[:, perm], M, atol=1e-9)


def test_algorithm_a_recovers_topics_from_population_moments():
    model = random_topic_model(5, 30, random_state=2)
    evals, evecs = np.linalg.eigh(model.pairs())
    U = evecs[:, -5:]
    M, info = mvlib.algorithm_a(U, U.T @ model.pairs() @ U, model.whitened_triples(U), random_state=1,
                                return_info=True)
    perm, _ = mvlib.match_columns(model.M, M)
    np.testing.assert_allclose(M[:, perm], model.M, atol=1e-10)
    np.testing.assert_allclose(info["eigenvalues"][perm], model.M.T @ info["eta"], atol=1e-10)


def test_random_orthogonal_is_orthogonal_and_reproducible():
    Q = random_orthogonal(6, 3)
    np.testing.assert_allclose(Q @ Q.T, np.eye(6), atol=1e-12)
    np.testing.assert_array_equal(Q, random_orthogonal(6, 3))


def test_close_eigenvalues_trigger_retries_with_a_warning():
    rng = np.random.default_rng(5)
    model = MultiViewMixtureModel([0.3, 0.3, 0.4], [rng.standard_normal((6, 3)) for _ in range(3)], kind="gaussian")
    _, T, P = projected_population(model, 3)
    with pytest.warns(EigengapWarning, match=r"succeeded after 3 retries"):
        _, info = mvlib.algorithm_b(T, P[1, 2], P[1, 3], P[2, 3], random_state=2, min_gap=0.6, return_info=True)
    assert info["n_retries"] == 3


def test_identical_components_give_up_with_a_clear_error():
    rng = np.random.default_rng(0)
    M1, M2, M3 = (rng.standard_normal((6, 3)) for _ in range(3))
    M3[:, 1] = M3[:, 0]  # view 3 cannot tell components 0 and 1 apart: B_123 has a double eigenvalue
    model = MultiViewMixtureModel([0.3, 0.3, 0.4], [M1, M2, M3], kind="gaussian")
    Us = view_bases(model.pairs(1, 2), model.pairs(1, 2), 3)  # P13 has rank 2; use a 3-dim basis
    T = model.whitened_triples(*Us)
    P12 = Us[0].T @ model.pairs(1, 2) @ Us[1]
    with pytest.raises(RuntimeError, match=r"too close .* in 4 random rotations"):
        mvlib.algorithm_a(Us[0], P12, T, random_state=0, max_retries=3)


def test_symmetrize_views_maps_views_1_and_2_onto_view_3():
    model = random_multiview_model(4, (8, 7, 6), kind="gaussian", random_state=5)
    Us, T, P = projected_population(model, 4)
    A, B, C = (U.T @ M for U, M in zip(Us, model.means))
    S1, S2 = mvlib.symmetrize_views(P[1, 2], P[1, 3], P[2, 3])
    np.testing.assert_allclose(S1 @ A, C, atol=1e-10)
    np.testing.assert_allclose(S2 @ B, C, atol=1e-10)
    np.testing.assert_allclose(S1 @ P[1, 2] @ S2.T, C @ np.diag(model.weights) @ C.T, atol=1e-10)
    with pytest.raises(ValueError, match="P12 is singular"):
        mvlib.symmetrize_views(np.zeros((4, 4)), P[1, 3], P[2, 3])


def test_view_bases_refuse_rank_deficient_pairs():
    rng = np.random.default_rng(1)
    P = rng.standard_normal((6, 3)) @ rng.standard_normal((3, 5))
    with pytest.raises(ValueError, match=r"n_components=4 exceeds the rank 3 of the pairs matrix \(Condition 3.1\)"):
        view_bases(P, P, 4)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"min_gap": 1.5}, ValueError, "min_gap=1.5 must be a number in"),
        ({"max_retries": -1}, ValueError, "max_retries=-1 must be at least 0"),
        ({"random_state": "x"}, TypeError, "random_state must be None, an int"),
    ],
)
def test_algorithm_options_are_checked(kwargs, exc, match):
    model = random_multiview_model(3, (5, 5, 5), kind="gaussian", random_state=0)
    _, T, P = projected_population(model, 3)
    with pytest.raises(exc, match=match):
        mvlib.algorithm_b(T, P[1, 2], P[1, 3], P[2, 3], **kwargs)


def test_public_functions_do_not_warn_on_clean_population_input():
    model = random_topic_model(3, 10, random_state=0)
    evals, evecs = np.linalg.eigh(model.pairs())
    U = evecs[:, -3:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mvlib.algorithm_a(U, U.T @ model.pairs() @ U, model.whitened_triples(U), random_state=0)


# --------------------------------------------------------------------------- weights
def test_mixture_weights_exact_on_population_means_from_any_view():
    from mvlib.core.observable import mixture_weights

    model = random_multiview_model(3, (6, 5, 4), kind="gaussian", random_state=4)
    mus = [M @ model.weights for M in model.means]
    for v in range(3):   # Appendix B.5: one view suffices
        np.testing.assert_allclose(mixture_weights([model.means[v]], [mus[v]]), model.weights, atol=1e-12)
    np.testing.assert_allclose(mixture_weights(model.means, mus, [1.0, 10.0, 0.1]), model.weights, atol=1e-12)
    with pytest.raises(ValueError, match="scales must be 3 finite positive"):
        mixture_weights(model.means, mus, [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="view_means\\[1\\] has length 4 but means\\[1\\] has 5 rows"):
        mixture_weights(model.means, [mus[0], mus[2], mus[2]])


def test_multiview_weights_do_not_depend_on_the_units_of_one_view():
    model = random_multiview_model(3, (6, 5, 4), kind="gaussian", noise=1.0, random_state=5)
    X, _ = model.sample(4000, random_state=1)
    base = mvlib.MultiViewMixture(3, random_state=0).fit(X)
    for v, c in ((0, 1e3), (2, 1e-3)):
        Xs = [x * c if u == v else x for u, x in enumerate(X)]
        est = mvlib.MultiViewMixture(3, random_state=0).fit(Xs)
        np.testing.assert_allclose(est.weights_, base.weights_, rtol=1e-7)
        np.testing.assert_allclose(est.means_[v], c * base.means_[v], rtol=1e-6, atol=1e-9 * c)
