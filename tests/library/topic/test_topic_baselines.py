"""EM for the mixture of unigrams (the same-model baseline of chapter 3) and NPMI coherence."""
import numpy as np
import pytest
import scipy.sparse as sps

import mvlib
from mvlib.topic import UnigramMixtureEM
from mvlib.topic import random_topic_model


@pytest.fixture(scope="module")
def data():
    model = random_topic_model(3, 30, concentration=0.5, random_state=1)
    X, _ = model.sample(4000, doc_length=10, random_state=0)
    return model, X


@pytest.mark.parametrize("init", ["random", "spectral"])
def test_em_recovers_topics_and_converges(data, init):
    model, X = data
    em = UnigramMixtureEM(3, init=init, random_state=0).fit(X)
    assert em.converged_ and em.n_iter_ < em.max_iter
    assert mvlib.matched_error(model.M, em.topic_word_.T) < 0.03
    assert np.allclose(em.topic_word_.sum(axis=1), 1) and np.isclose(em.weights_.sum(), 1)
    perm, _ = mvlib.match_columns(model.M, em.topic_word_.T)
    assert np.abs(em.weights_[perm] - model.weights).max() < 0.03


def test_em_objective_never_decreases(data):
    _, X = data
    em = UnigramMixtureEM(4, n_init=1, tol=0, max_iter=40, random_state=3).fit(X)
    trace = np.array(em.objective_trace_)
    assert trace.size == 40 and not em.converged_
    assert np.all(np.diff(trace) >= -1e-10)


def test_em_from_truth_stays_near_truth_and_scores(data):
    model, X = data
    em = UnigramMixtureEM(3, init=model.M.T, random_state=0).fit(sps.csr_matrix(X))
    assert mvlib.matched_error(model.M, em.topic_word_.T) < 0.03
    post = em.predict_proba(X[:50])
    assert post.shape == (50, 3) and np.allclose(post.sum(axis=1), 1)
    assert em.predict(X[:50]).shape == (50,)
    # the fitted model explains the data better than the unigram distribution
    unigram = np.asarray(X.sum(axis=0)).ravel() / X.sum()
    assert em.score(X) > float((X @ np.log(unigram)).sum() / X.sum())


def test_em_same_random_state_same_result(data):
    _, X = data
    a = UnigramMixtureEM(3, random_state=7).fit(X).topic_word_
    b = UnigramMixtureEM(3, random_state=7).fit(X).topic_word_
    assert np.array_equal(a, b)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_components=0), "n_components"),
    (dict(n_components=2, init="kmeans"), "init"),
    (dict(n_components=2, smoothing=-1.0), "smoothing"),
    (dict(n_components=2, tol=-1.0), "tol"),
    (dict(n_components=2, init=np.ones((3, 30))), "init"),
])
def test_em_bad_parameters(data, kwargs, match):
    _, X = data
    with pytest.raises(ValueError, match=match):
        UnigramMixtureEM(**kwargs).fit(X)


def test_em_rejects_bad_counts():
    with pytest.raises(ValueError, match="X"):
        UnigramMixtureEM(2).fit(np.array([[1, -1], [2, 0]]))
    with pytest.raises(ValueError, match="not fitted"):
        UnigramMixtureEM(2).predict(np.ones((2, 2)))


def test_npmi_hand_computed():
    X = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 0]])
    topics = np.array([[.4, .4, .1, .1], [.1, .1, .4, .4], [.4, .1, .4, .1]])
    got = mvlib.core.metrics.npmi_coherence(topics, X, top=2)
    # words 2, 3: p = 1/2, 1/4, joint 1/4 -> log 2 / log 4
    assert np.allclose(got, [1.0, 0.5, -1.0])
    assert np.allclose(mvlib.core.metrics.npmi_coherence(topics, sps.csr_matrix(X), top=2), got)


def test_npmi_independent_words_near_zero_and_bounds():
    rng = np.random.default_rng(0)
    X = (rng.random((20000, 6)) < 0.3).astype(int)
    got = mvlib.core.metrics.npmi_coherence(np.arange(6, 0, -1)[None, :], X, top=6)
    assert abs(got[0]) < 0.02
    with pytest.raises(ValueError, match="top"):
        mvlib.core.metrics.npmi_coherence(np.ones((1, 6)), X, top=7)
    with pytest.raises(ValueError, match="columns"):
        mvlib.core.metrics.npmi_coherence(np.ones((1, 5)), X)
