"""SpectralTopicModel and MultiViewMixture: accuracy targets, conventions, bad input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import mvlib
from mvlib.multiview import MultiViewMixtureModel
from mvlib.topic import random_topic_model

METHODS = ["observable", "tensor"]


# --------------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def topic_data():
    """The target: 20,000 documents of 10 words, 50 words, 5 topics (Dirichlet(0.3) topics, Dirichlet(2) weights)."""
    model = random_topic_model(5, 50, concentration=0.3, weight_concentration=2.0, random_state=0)
    X, h = model.sample(20000, 10, random_state=100)
    return model, X, h


@pytest.fixture(scope="module")
def gaussian_data():
    """The target: three Gaussian views, d_v = 20, k = 4, weights 0.1-0.4, means N(0, I), unit noise, n = 50,000."""
    rng = np.random.default_rng(0)
    model = MultiViewMixtureModel([0.1, 0.2, 0.3, 0.4], [rng.standard_normal((20, 4)) for _ in range(3)],
                                  kind="gaussian", noise=1.0)
    views, h = model.sample(50000, random_state=1000)
    return model, views, h


@pytest.fixture(scope="module")
def small_views():
    rng = np.random.default_rng(1)
    model = MultiViewMixtureModel([0.3, 0.3, 0.4], [3 * rng.standard_normal((5, 3)) for _ in range(3)], kind="gaussian")
    views, _ = model.sample(2000, random_state=2)
    return views


@pytest.fixture(scope="module")
def small_docs():
    X, _ = random_topic_model(3, 8, concentration=0.3, random_state=3).sample(1000, 8, random_state=4)
    return X


def topic_l1_errors(model, est):
    perm, _ = mvlib.match_columns(model.topic_word.T, est.topic_word_.T)
    return np.abs(model.topic_word - est.topic_word_[perm]).sum(axis=1), perm


# --------------------------------------------------------------------------- accuracy targets
@pytest.mark.parametrize("method", METHODS)
def test_topic_model_target(topic_data, method):
    model, X, h = topic_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the target fit needs no retries, clipping or rank warnings
        est = mvlib.SpectralTopicModel(5, method=method, random_state=0).fit(X)
    errors, perm = topic_l1_errors(model, est)
    assert errors.mean() < 0.06 and errors.max() < 0.15, errors
    assert est.topic_word_.shape == (5, 50)
    np.testing.assert_allclose(est.topic_word_.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(est.topic_word_ >= 0)
    np.testing.assert_allclose(est.weights_.sum(), 1.0, atol=1e-12)
    assert np.abs(est.weights_[perm] - model.weights).max() < 0.02
    # the most likely topic agrees with the true one for most documents (10 words each)
    agree = np.mean(perm[h] == est.predict(X))
    assert agree > 0.9
    proba = est.predict_proba(X[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(np.argmax(proba, axis=1), est.predict(X[:50]))


def test_topic_model_algorithm_a_variant(topic_data):
    model, X, _ = topic_data
    est = mvlib.SpectralTopicModel(5, variant="A", random_state=0).fit(X)
    errors, _ = topic_l1_errors(model, est)
    assert errors.mean() < 0.06 and errors.max() < 0.15, errors


@pytest.mark.parametrize("method", METHODS)
def test_multiview_target(gaussian_data, method):
    model, views, _ = gaussian_data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = mvlib.MultiViewMixture(4, method=method, random_state=0).fit(views)
    assert [M.shape for M in est.means_] == [(4, 20)] * 3
    perm, _ = mvlib.match_columns(model.means[0], est.means_[0].T)  # one order, taken from view 1
    for M, Mhat in zip(model.means, est.means_):
        rel = np.linalg.norm(M - Mhat[perm].T, axis=0) / np.linalg.norm(M, axis=0)
        assert rel.max() < 0.05, rel
    assert np.abs(est.weights_[perm] - model.weights).max() < 0.03
    np.testing.assert_allclose(est.weights_.sum(), 1.0, atol=1e-12)


# --------------------------------------------------------------------------- conventions
@pytest.mark.parametrize("method", METHODS)
def test_same_random_state_same_result(small_views, small_docs, method):
    a = mvlib.MultiViewMixture(3, method=method, random_state=7).fit(small_views)
    b = mvlib.MultiViewMixture(3, method=method, random_state=7).fit(small_views)
    for Ma, Mb in zip(a.means_, b.means_):
        np.testing.assert_array_equal(Ma, Mb)
    c = mvlib.MultiViewMixture(3, method=method, random_state=np.random.default_rng(7)).fit(small_views)
    assert mvlib.matched_error(a.means_[0].T, c.means_[0].T) < 1e-8
    t1 = mvlib.SpectralTopicModel(3, method=method, random_state=3).fit(small_docs)
    t2 = mvlib.SpectralTopicModel(3, method=method, random_state=3).fit(small_docs)
    np.testing.assert_array_equal(t1.topic_word_, t2.topic_word_)
    np.testing.assert_array_equal(t1.weights_, t2.weights_)


@pytest.mark.parametrize("method", METHODS)
def test_fit_returns_self_and_leaves_inputs_alone(small_views, small_docs, method):
    views = [X.copy() for X in small_views]
    est = mvlib.MultiViewMixture(3, method=method, random_state=0)
    assert est.fit(views) is est
    for X, X0 in zip(views, small_views):
        np.testing.assert_array_equal(X, X0)
    docs = small_docs.copy()
    dense = small_docs.toarray()
    dense0 = dense.copy()
    topic = mvlib.SpectralTopicModel(3, method=method, random_state=0)
    assert topic.fit(docs) is topic
    assert (docs != small_docs).nnz == 0
    mvlib.SpectralTopicModel(3, method=method, random_state=0).fit(dense)
    np.testing.assert_array_equal(dense, dense0)


@pytest.mark.parametrize("method", METHODS)
def test_dense_and_sparse_input_agree(small_views, small_docs, method):
    a = mvlib.SpectralTopicModel(3, method=method, random_state=1).fit(small_docs)
    b = mvlib.SpectralTopicModel(3, method=method, random_state=1).fit(small_docs.toarray())
    np.testing.assert_allclose(a.topic_word_, b.topic_word_, atol=1e-10)
    c = mvlib.MultiViewMixture(3, method=method, random_state=1).fit([sp.csr_matrix(X) for X in small_views])
    d = mvlib.MultiViewMixture(3, method=method, random_state=1).fit(small_views)
    for Mc, Md in zip(c.means_, d.means_):
        np.testing.assert_allclose(Mc, Md, atol=1e-8)


def test_params_protocol():
    est = mvlib.MultiViewMixture(3, method="tensor", random_state=2)
    assert est.get_params()["method"] == "tensor"
    assert est.set_params(n_components=4) is est and est.n_components == 4
    assert repr(est) == "MultiViewMixture(method='tensor', n_components=4, random_state=2)"
    with pytest.raises(ValueError, match="'foo' is not a parameter of MultiViewMixture"):
        est.set_params(foo=1)
    assert mvlib.SpectralTopicModel(2).get_params()["variant"] == "B"


def test_predict_checks(small_docs):
    est = mvlib.SpectralTopicModel(3)
    with pytest.raises(ValueError, match="not fitted yet"):
        est.predict(small_docs)
    est.fit(small_docs)
    with pytest.raises(ValueError, match="X has 5 features, but SpectralTopicModel is expecting 8 features as input"):
        est.predict(np.ones((2, 5)))
    assert est.predict(np.zeros((2, 8), dtype=int)).shape == (2,)  # empty documents: the prior decides


# --------------------------------------------------------------------------- rank and noise
@pytest.mark.parametrize("method", METHODS)
def test_n_components_above_rank_of_pairs(method):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((300, 3))
    views = [Z @ rng.standard_normal((3, 6)) for _ in range(3)]  # every pairs matrix has rank 3
    with pytest.raises(ValueError, match=r"n_components=4 exceeds the rank 3 of the pairs matrix \(Condition 3.1\)"):
        mvlib.MultiViewMixture(4, method=method).fit(views)
    with pytest.raises(ValueError, match=r"n_components=7 exceeds the rank \d of the pairs matrix"):
        mvlib.MultiViewMixture(7, method=method).fit(views)
    docs, _ = random_topic_model(3, 3, concentration=1.0, random_state=0).sample(2000, 5, random_state=0)
    X = sp.hstack([docs, sp.csr_matrix((2000, 3))]).tocsr()  # words 3..5 never occur: Pairs has rank 3
    with pytest.raises(ValueError, match=r"n_components=4 exceeds the rank 3 of the pairs matrix \(Condition 3.1\)"):
        mvlib.SpectralTopicModel(4, method=method).fit(X)
    with pytest.raises(ValueError, match=r"n_components=9 exceeds the rank \d of the pairs matrix"):
        mvlib.SpectralTopicModel(9, method=method).fit(X)


def test_too_many_components_for_the_sample_warn(gaussian_data, topic_data):
    _, views, _ = gaussian_data
    with pytest.warns(mvlib.IllConditionedWarning, match="singular value number 5 .* at the level of its sampling noise"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = mvlib.MultiViewMixture(5, random_state=0).fit([X[:5000] for X in views])
    assert np.all(np.isfinite(est.weights_))
    _, X, _ = topic_data
    with pytest.warns(mvlib.IllConditionedWarning, match="singular value number 6"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mvlib.SpectralTopicModel(6, random_state=0).fit(X[:5000])
    with pytest.raises(ValueError, match="n_components=5 exceeds the rank 4 of the pairs matrix"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mvlib.MultiViewMixture(5, method="tensor", random_state=0).fit(views)


# --------------------------------------------------------------------------- bad input
def _views(n=20, dims=(4, 4, 4)):
    rng = np.random.default_rng(0)
    return [rng.standard_normal((n, d)) for d in dims]


def _with(v, i, X):
    v = list(v)
    v[i] = X
    return v


_nan = _views()
_nan[1][3, 2] = np.nan
_inf = _views()
_inf[2][0, 0] = -np.inf


@pytest.mark.parametrize(
    "views,kwargs,exc,match",
    [
        (None, {}, TypeError, "views must be a list of 3 arrays, got NoneType"),
        (["a", "b", "c"], {}, TypeError, "X1 must be an array of numbers, got str"),
        (np.ones((3, 10, 4)), {}, TypeError, "views must be a list of 3 arrays, got ndarray"),
        (_views()[:2], {}, ValueError, "views must hold 3 arrays, got 2"),
        (_with(_views(), 1, np.ones(20)), {}, ValueError, "X2 must be 2-dimensional"),
        (_with(_views(), 0, np.ones((0, 4))), {}, ValueError, "X1 has 0 rows but at least 2 are required"),
        ([X[:1] for X in _views()], {}, ValueError, "X1 has 1 rows but at least 2 are required"),
        (_nan, {}, ValueError, "X2 contains NaN or infinity"),
        (_inf, {}, ValueError, "X3 contains NaN or infinity"),
        (_with(_views(), 1, _views(n=21)[1]), {}, ValueError, "X1 has 20 rows but X2 has 21"),
        (_views(), {"n_components": 0}, ValueError, "n_components=0 must be at least 1"),
        (_views(), {"n_components": 2.0}, TypeError, "n_components must be an int, got float"),
        (_views(), {"n_components": 5}, ValueError, "n_components=5 exceeds the rank 4 of the pairs matrix"),
        (_views(), {"method": "em"}, ValueError, "method must be one of"),
        (_views(), {"random_state": "seed"}, TypeError, "random_state must be None, an int or a numpy.random.Generator"),
        (_views(), {"random_state": 1.5}, TypeError, "random_state must be None, an int"),
    ],
)
def test_multiview_bad_input(views, kwargs, exc, match):
    params = {"n_components": 2, **kwargs}
    with pytest.raises(exc, match=match):
        mvlib.MultiViewMixture(**params).fit(views)


def _docs(n=12, d=6):
    return np.random.default_rng(0).integers(0, 3, size=(n, d)) + np.eye(n, d, dtype=int) * 3


_neg = _docs()
_neg[4, 1] = -1
_frac = _docs().astype(float)
_frac[2, 3] = 0.5
_short = _docs()
_short[7] = [1, 1, 0, 0, 0, 0]
_nan_docs = _docs().astype(float)
_nan_docs[0, 0] = np.nan


@pytest.mark.parametrize(
    "X,kwargs,exc,match",
    [
        (None, {}, TypeError, "X must be an array of numbers, got None"),
        (["a", "b"], {}, TypeError, "X must hold real numbers"),
        (np.ones(6), {}, ValueError, "X must be 2-dimensional"),
        (np.ones((0, 6)), {}, ValueError, "X has 0 rows but at least 2 are required"),
        (_docs()[:1], {}, ValueError, "X has 1 rows but at least 2 are required"),
        (_nan_docs, {}, ValueError, "X contains NaN or infinity"),
        (_neg, {}, ValueError, "X must hold non-negative counts, but document 4 has a negative entry"),
        (sp.csr_matrix(_neg), {}, ValueError, "non-negative counts, but document 4"),
        (_frac, {}, ValueError, "X must hold integer counts, but document 2 has the entry 0.5 for word 3"),
        (_short, {}, ValueError, "document 7 has 2 words; third-order moments need at least 3"),
        (_docs(), {"n_components": 0}, ValueError, "n_components=0 must be at least 1"),
        (_docs(), {"n_components": "3"}, TypeError, "n_components must be an int, got str"),
        (_docs(), {"n_components": 7}, ValueError, r"n_components=7 exceeds the rank \d of the pairs matrix"),
        (_docs(), {"method": None}, ValueError, "method must be one of"),
        (_docs(), {"variant": "C"}, ValueError, "variant must be 'A' or 'B'"),
        (_docs(), {"random_state": [1]}, TypeError, "random_state must be None, an int"),
        (_docs(), {"min_gap": -0.1}, ValueError, "min_gap=-0.1 must be a number in"),
    ],
)
def test_topic_model_bad_input(X, kwargs, exc, match):
    params = {"n_components": 2, **kwargs}
    with pytest.raises(exc, match=match):
        mvlib.SpectralTopicModel(**params).fit(X)


# --------------------------------------------------------------------------- product-mixture EM baseline
def _mixed_views(n, seed):
    gen = np.random.default_rng(2024)
    M = [3 * gen.standard_normal((8, 3)), gen.gamma(2.0, 1.5, size=(10, 3)), gen.uniform(0.1, 0.9, size=(12, 3))]
    w = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(seed)
    h = rng.choice(3, size=n, p=w)
    X = [M[0][:, h].T + rng.standard_normal((n, 8)), rng.poisson(M[1][:, h].T).astype(float),
         (rng.random((n, 12)) < M[2][:, h].T).astype(float)]
    return M, w, X


def test_product_mixture_em_recovers_the_mixed_model_from_both_starts():
    from mvlib.multiview import ProductMixtureEM

    M, w, X = _mixed_views(5000, 1)
    fits = [ProductMixtureEM(3, init="spectral", random_state=0).fit(X),
            ProductMixtureEM(3, init="random", n_init=3, random_state=0).fit(X)]
    for em in fits:
        perm, _ = mvlib.match_columns(M[0], em.means_[0].T)
        for Mv, Mh in zip(M, em.means_):
            assert np.linalg.norm(Mh[perm].T - Mv) / np.linalg.norm(Mv) < 0.05
        assert np.abs(em.weights_[perm] - w).max() < 0.03
        assert np.all(np.diff(em.log_likelihood_trace_) > -1e-9)       # EM never decreases it
        assert em.variances_[1] is None and em.variances_[0].shape == (3, 8)
        np.testing.assert_allclose(em.predict_proba(X).sum(axis=1), 1.0)
        assert abs(em.score(X) - em.log_likelihood_) < 1e-3
    assert abs(fits[0].log_likelihood_ - fits[1].log_likelihood_) < 1e-4


def test_product_mixture_em_bad_input():
    from mvlib.multiview import ProductMixtureEM

    _, _, X = _mixed_views(200, 2)
    with pytest.raises(ValueError, match="kinds must list one of"):
        ProductMixtureEM(3, kinds=("gaussian", "poisson")).fit(X)
    with pytest.raises(ValueError, match="X2 must hold non-negative integer counts"):
        ProductMixtureEM(3).fit([X[0], X[1] + 0.5, X[2]])
    with pytest.raises(ValueError, match="X3 must hold 0/1 indicators"):
        ProductMixtureEM(3).fit([X[0], X[1], 2 * X[2]])
    with pytest.raises(ValueError, match="init must be 'random', 'spectral'"):
        ProductMixtureEM(3, init="kmeans").fit(X)
    with pytest.raises(ValueError, match="X1 has 200 rows but X2 has 199"):
        ProductMixtureEM(3).fit([X[0], X[1][:199], X[2]])
