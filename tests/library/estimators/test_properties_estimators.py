"""Property tests of the estimators: exact recovery from population moments, reproducibility, pickling.

Every recovery property draws random models from the family stated in its docstring (hypothesis
chooses the sizes and a seed; the entries come from ``numpy.random.default_rng(seed)``), builds a
data set whose empirical moments *are* the model's population moments, and checks that the
estimator returns the model's parameters to 1e-8 (up to the order of the components):

* Gaussian views: the cubature data sets of :mod:`mvlib.models` (``gaussian_cubature``,
  ``multiview_gaussian_cubature``), exact up to third order;
* categorical views, documents and kernel estimators: ``categorical_exact_data``, where every
  outcome is repeated in proportion to its (rational) probability, so the empirical law is the
  model's law; the kernel estimators use the delta kernel on these discrete data;
* HMMs: sequences of three symbols repeated in proportion to the exact window law (the law of
  ``mvlib.hmm.hmm_window_moments``).

Conditioning bounds are enforced by construction or by redrawing inside the seeded generator.
The overcomplete estimator is held to a stated success rate instead of exactness. The number of
models per property is the hypothesis profile's (tests/conftest.py: "ci" by default, "long"
under ``HYPOTHESIS_PROFILE=long``).
"""
import pickle
from fractions import Fraction

import numpy as np
import pytest
import tensorly as tl
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

import mvlib
from mvlib import hmm
from mvlib.hmm import hmm_from_moments
from mvlib.core.cubature import categorical_exact_data, gaussian_cubature, multiview_gaussian_cubature
from mvlib.overcomplete import random_overcomplete_tensor

SEEDS = st.integers(0, 2**32 - 1)
STATES = st.integers(0, 2**31 - 1)
#: exponents e of the scale 10^e applied to real-valued data (third moments stay inside float64)
SCALES = st.integers(-30, 30)


@pytest.fixture(scope="module", autouse=True)
def _one_blas_thread():
    """Small problems: one BLAS thread (two threads on a shared CPU make the many small
    products of these fits tens of times slower, without changing what is tested)."""
    with threadpool_limits(1, user_api="blas"):
        yield


pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::UserWarning",
                                        "ignore::mvlib.IllConditionedWarning")


# --------------------------------------------------------------------------- families
def orthogonal(rng, k):
    """A Haar-distributed orthogonal k×k matrix."""
    Q, R = np.linalg.qr(rng.standard_normal((k, k)))
    return Q * np.sign(np.diag(R))


def conditioned(rng, d, k, low, high):
    """A (d, k) matrix U diag(s) Vᵀ with Haar U, V and singular values s uniform in [low, high]."""
    return orthogonal(rng, d)[:, :k] @ np.diag(rng.uniform(low, high, k)) @ orthogonal(rng, k).T


def composition(rng, total, parts, minimum=0):
    """Random integers ≥ ``minimum`` summing to ``total`` (a random composition)."""
    rest = total - parts * minimum
    cuts = np.sort(rng.integers(0, rest + 1, size=parts - 1))
    return np.diff(np.concatenate([[0], cuts, [rest]])) + minimum


def stochastic_counts(rng, d, k, q, min_sigma=0.1):
    """Integer (d, k) matrix C with columns summing to q: the distributions C/q, redrawn until
    σ_k(C/q) ≥ ``min_sigma`` and every row is non-zero (every symbol has positive probability)."""
    for _ in range(10_000):
        C = np.stack([composition(rng, q, d) for _ in range(k)], axis=1)
        if np.all(C.sum(axis=1) > 0) and np.linalg.svd(C / q, compute_uv=False)[-1] >= min_sigma:
            return C
    raise AssertionError("no matrix of the family found")  # pragma: no cover


def fractions(C, q):
    return [[Fraction(int(c), q) for c in row] for row in np.atleast_2d(C)]


def order(truth, estimate, **kw):
    """Permutation putting the columns of ``estimate`` in the order of the columns of ``truth``."""
    perm, _ = mvlib.match_columns(truth, estimate, **kw)
    return perm


def assert_identical(a, b, path="est"):
    """Fitted attributes equal bit for bit (arrays, lists, dicts, CP tensors, numbers)."""
    if isinstance(a, (list, tuple)) or isinstance(a, tl.cp_tensor.CPTensor):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_identical(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            assert_identical(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, (np.ndarray, float, np.floating)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=path)
    else:
        assert a == b, path


def fitted_attributes(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}


def assert_same_fit(a, b):
    A, B = fitted_attributes(a), fitted_attributes(b)
    assert A and A.keys() == B.keys()
    assert_identical(A, B)


def assert_pickle_round_trip(est, *queries):
    """A pickled fitted estimator has the same parameters, attributes and answers."""
    clone = pickle.loads(pickle.dumps(est))
    assert type(clone) is type(est)
    assert repr(clone.get_params()) == repr(est.get_params())
    assert_same_fit(est, clone)
    for name, args in queries:
        assert_identical(getattr(est, name)(*args), getattr(clone, name)(*args), name)


# --------------------------------------------------------------------------- topic model
def topic_model(rng, k, extra):
    """Single-topic model: k topics over d = max(2, k + extra) words; word probabilities multiples
    of 1/6 with σ_k(M) ≥ 0.1; topic weights multiples of 1/20, each ≥ 0.05."""
    d = max(2, k + extra)
    C = stochastic_counts(rng, d, k, 6)
    wc = composition(rng, 20, k, 1)
    (X1, X2, X3), _ = categorical_exact_data([Fraction(int(c), 20) for c in wc], [fractions(C, 6)] * 3)
    X = (X1 + X2 + X3).astype(np.int64)  # documents of three words: every ordered triple is exact
    return X, C / 6, wc / 20


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(1, 3), extra=st.integers(0, 3), unused=st.integers(0, 2), seed=SEEDS, state=STATES)
def test_topic_model_exact_recovery(method, k, extra, unused, seed, state):
    """Family: see ``topic_model`` (k in 1..3, d in max(2, k)..k+3, σ_k(M) ≥ 0.1, weights ≥ 0.05),
    plus 0..2 words of probability 0 (columns of zeros); documents of three words in the exact
    proportions of the model. The topics, the weights and the posterior of each document come
    back to 1e-8; the input is not modified."""
    X, M, w = topic_model(np.random.default_rng(seed), k, extra)
    X = np.hstack([X, np.zeros((X.shape[0], unused), dtype=X.dtype)])
    M = np.vstack([M, np.zeros((unused, k))])
    X0 = X.copy()
    est = mvlib.SpectralTopicModel(k, method=method, random_state=state).fit(X)
    np.testing.assert_array_equal(X, X0)  # the input is not modified
    perm = order(M, est.topic_word_.T)
    np.testing.assert_allclose(est.topic_word_[perm], M.T, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.weights_[perm], w, atol=1e-8, rtol=0)
    # the posterior of each document is the true model's (probabilities floored at 1e-12)
    L = X @ np.log(np.maximum(M, 1e-12)) + np.log(w)
    post = np.exp(L - L.max(axis=1, keepdims=True))
    np.testing.assert_allclose(est.predict_proba(X)[:, perm], post / post.sum(axis=1, keepdims=True),
                               atol=1e-8, rtol=0)


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(1, 3), extra=st.integers(0, 2), lengths=st.sets(st.integers(3, 5), min_size=1),
       seed=SEEDS, state=STATES)
def test_topic_model_exact_recovery_documents_of_several_lengths(method, k, extra, lengths, seed, state):
    """Family: single-topic models with k in 1..3 topics over d = max(2, k + extra) words, word
    probabilities multiples of 1/3 with σ_k(M) ≥ 0.1, weights multiples of 1/20 (each ≥ 0.05);
    for every length L in a non-empty subset of {3, 4, 5}, the documents of L words in their
    exact proportions (every ordered L-tuple of words is exact), all lengths pooled. The unbiased
    count moments are exact, and the topics and weights come back to 1e-8."""
    rng = np.random.default_rng(seed)
    d = max(2, k + extra)
    C = stochastic_counts(rng, d, k, 3)
    wc = composition(rng, 20, k, 1)
    w = [Fraction(int(c), 20) for c in wc]
    docs = []
    for L in sorted(lengths):
        views, _ = categorical_exact_data(w, [fractions(C, 3)] * L)
        docs.append(sum(views).astype(np.int64))
    X = np.vstack(docs)
    est = mvlib.SpectralTopicModel(k, method=method, random_state=state).fit(X)
    perm = order(C / 3, est.topic_word_.T)
    np.testing.assert_allclose(est.topic_word_[perm], C.T / 3, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.weights_[perm], wc / 20, atol=1e-8, rtol=0)


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(2, 3), extra=st.integers(1, 3), seed=SEEDS, state=STATES)
def test_topic_model_reproducible_and_picklable(method, k, extra, seed, state):
    """Family: ``topic_model`` with every document's counts perturbed (each word count gets one
    more with probability 0.1, so the moments are noisy). Same random_state (an int, or a fresh
    Generator from it) → bit-identical fit; dense and CSR input agree; pickling round-trips."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X, _, _ = topic_model(rng, k, extra)
    X = X + (rng.random(X.shape) < 0.1)
    a = mvlib.SpectralTopicModel(k, method=method, random_state=state).fit(X)
    b = mvlib.SpectralTopicModel(k, method=method, random_state=state).fit(X)
    c = mvlib.SpectralTopicModel(k, method=method, random_state=np.random.default_rng(state)).fit(X)
    assert_same_fit(a, b)
    assert_same_fit(a, c)
    s = mvlib.SpectralTopicModel(k, method=method, random_state=state).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(s.topic_word_, a.topic_word_, atol=1e-10, rtol=0)
    assert_pickle_round_trip(a, ("predict_proba", (X[:20],)), ("predict", (X[:20],)))


# --------------------------------------------------------------------------- multi-view mixture
def gaussian_views(rng, k, extras):
    """Three Gaussian views: M_v (d_v, k), d_v = k + extra_v, singular values in [0.1, 1];
    weights c/Σc with c in 1..6 (smallest ≥ 1/(1 + 6(k-1)) ≥ 0.076 for k ≤ 3); noise standard
    deviations σ_{v,h} uniform in [0, 1]."""
    Ms = [conditioned(rng, k + e, k, 0.1, 1.0) for e in extras]
    counts = rng.integers(1, 7, size=k)
    sig = rng.uniform(0.0, 1.0, size=(3, k))
    return multiview_gaussian_cubature(Ms, counts, sig), Ms, counts / counts.sum()


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(1, 3), extras=st.tuples(*[st.integers(0, 2)] * 3), e=SCALES, seed=SEEDS,
       state=STATES)
def test_multiview_mixture_exact_recovery(method, k, extras, e, seed, state):
    """Family: see ``gaussian_views`` (k in 1..3, d_v in k..k+2, σ_k(M_v) ≥ 0.1, weights ≥ 0.076),
    data = the cubature rule of the multi-view Gaussian mixture (exact cross moments), every view
    multiplied by 10^e, e in -30..30. The means of all three views (in one component order,
    relative to 10^e) and the weights come back to 1e-8; the inputs are not modified."""
    views, Ms, w = gaussian_views(np.random.default_rng(seed), k, extras)
    c = 10.0 ** e
    views = [V * c for V in views]
    copies = [V.copy() for V in views]
    est = mvlib.MultiViewMixture(k, method=method, random_state=state).fit(views)
    for V, V0 in zip(views, copies):
        np.testing.assert_array_equal(V, V0)  # the inputs are not modified
    perm = order(Ms[2], est.means_[2].T / c)
    for M, Mhat in zip(Ms, est.means_):
        np.testing.assert_allclose(Mhat[perm].T / c, M, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.weights_[perm], w, atol=1e-8, rtol=0)


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(2, 3), seed=SEEDS, state=STATES)
def test_multiview_mixture_reproducible_and_picklable(method, k, seed, state):
    """Family: ``gaussian_views`` with d_v = k + 1, its cubature rows plus N(0, 0.01²) noise
    (inexact moments). Same random_state → bit-identical fit; pickling round-trips; the same
    views as CSR matrices give the dense fit."""
    rng = np.random.default_rng(seed)
    views, _, _ = gaussian_views(rng, k, (1, 1, 1))
    views = [V + 0.01 * rng.standard_normal(V.shape) for V in views]
    a = mvlib.MultiViewMixture(k, method=method, random_state=state).fit(views)
    b = mvlib.MultiViewMixture(k, method=method, random_state=state).fit(views)
    c = mvlib.MultiViewMixture(k, method=method, random_state=np.random.default_rng(state)).fit(views)
    assert_same_fit(a, b)
    assert_same_fit(a, c)
    assert_pickle_round_trip(a)
    import scipy.sparse as sp

    s = mvlib.MultiViewMixture(k, method=method, random_state=state).fit([sp.csr_matrix(V) for V in views])
    for Ma, Ms in zip(a.means_, s.means_):  # CSR views give the dense fit
        np.testing.assert_allclose(Ms, Ma, atol=1e-10, rtol=0)


# --------------------------------------------------------------------------- spherical GMM
def spherical_mixture(rng, k, extra):
    """Spherical Gaussian mixture in d = k + 1 + extra ≥ k dimensions: means (d, k) with singular
    values in [1, 3], weights c/Σc with c in 1..6 (≥ 1/(1 + 6(k-1)) ≥ 0.05 for k ≤ 4), standard
    deviations σ_h uniform in [0.1, 0.3]. Data: the cubature rule with every count × 50
    (n ≥ 100 d k rows, so the rank check's noise level 6σ̄²√(d/n) ≤ 0.054/√k stays below the
    k-th eigenvalue of M2, ≥ w_min σ_k(M)² ≥ 1/(1 + 6(k-1)))."""
    d = k + 1 + extra
    M = conditioned(rng, d, k, 1.0, 3.0)
    counts = rng.integers(1, 7, size=k)
    sig = rng.uniform(0.1, 0.3, size=k)
    return gaussian_cubature(M, counts * 50, sig), M, counts / counts.sum(), sig


@given(k=st.integers(1, 4), extra=st.integers(-1, 2), e=SCALES, seed=SEEDS, state=STATES)
def test_spherical_gmm_exact_recovery(k, extra, e, seed, state):
    """Family: see ``spherical_mixture`` (k in 1..4, d in k..k+3), the data multiplied by 10^e,
    e in -30..30. Means, weights and the per-component variances come back to 1e-8 (relative
    to 10^e and 10^2e; Hsu & Kakade 2013, Theorem 2), and the posteriors are those of
    scikit-learn's GaussianMixture holding the same parameters."""
    X, M, w, sig = spherical_mixture(np.random.default_rng(seed), k, extra)
    c = 10.0 ** e
    est = mvlib.SpectralGMM(k, random_state=state).fit(X * c)
    perm = order(M, est.means_.T / c)
    np.testing.assert_allclose(est.means_[perm].T / c, M, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.weights_[perm], w, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.covariances_[perm] / c ** 2, sig ** 2, atol=1e-8, rtol=0)
    # the posteriors are those of scikit-learn's GaussianMixture holding the same parameters
    # (in the units of the unscaled data)
    from sklearn.mixture import GaussianMixture

    gm = GaussianMixture(k, covariance_type="spherical")
    gm.weights_, gm.means_, gm.covariances_ = est.weights_, est.means_ / c, est.covariances_ / c ** 2
    gm.precisions_cholesky_ = 1 / np.sqrt(gm.covariances_)
    np.testing.assert_allclose(est.predict_proba(X[::7] * c), gm.predict_proba(X[::7]), atol=1e-8, rtol=0)


@given(k=st.integers(2, 3), seed=SEEDS, state=STATES)
def test_spherical_gmm_reproducible_and_picklable(k, seed, state):
    """Family: ``spherical_mixture`` (extra = 1), 2000 rows drawn from its cubature rows plus
    N(0, 0.05²) noise. Same random_state → bit-identical fit; pickling round-trips."""
    rng = np.random.default_rng(seed)
    X, _, _, _ = spherical_mixture(rng, k, 1)
    X = X[rng.integers(0, X.shape[0], 2000)] + 0.05 * rng.standard_normal((2000, X.shape[1]))
    a = mvlib.SpectralGMM(k, random_state=state).fit(X)
    b = mvlib.SpectralGMM(k, random_state=state).fit(X)
    c = mvlib.SpectralGMM(k, random_state=np.random.default_rng(state)).fit(X)
    assert_same_fit(a, b)
    assert_same_fit(a, c)
    assert_pickle_round_trip(a, ("predict_proba", (X[:30],)), ("score", (X[:30],)))


# --------------------------------------------------------------------------- HMM
def hmm_windows(rng, k, extra, q=4, min_sigma=0.1):
    """Categorical HMM: k states, d = max(2, k + extra) symbols; emission columns O and transition
    columns T (column-stochastic) in multiples of 1/4 with σ_k(O) ≥ 0.1 and σ_k(T) ≥ 0.1
    (``min_sigma``); the
    initial law π0 in multiples of 1/(4k), each ≥ 1/(4k). Data: sequences of three symbols,
    each window (a, b, c) repeated in proportion to its exact probability Σ π0_i O_ai T_ji O_bj
    T_lj O_cl (as in ``mvlib.hmm.hmm_window_moments``)."""
    d = max(2, k + extra)
    O, T = stochastic_counts(rng, d, k, q, min_sigma), stochastic_counts(rng, k, k, q, min_sigma)
    pi = composition(rng, q * k, k, 1)
    P = np.einsum("i,ai,ji,bj,lj,cl->abc", pi, O, T, O, T, O)  # integers over (qk) q^5
    P = P // np.gcd.reduce(P[P > 0])
    a, b, c = np.unravel_index(np.repeat(np.arange(d ** 3), P.ravel()), (d, d, d))
    X = np.stack([a, b, c], axis=1).reshape(-1, 1)
    return X, np.full(int(P.sum()), 3), O / q, T / q, pi / (q * k)


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(1, 3), extra=st.integers(0, 2), unused=st.integers(0, 2), seed=SEEDS, state=STATES)
def test_spectral_hmm_exact_recovery(method, k, extra, unused, seed, state):
    """Family: see ``hmm_windows`` (k in 1..3, d in max(2, k)..k+2), the alphabet declared with
    0..2 more symbols that never occur (``n_symbols``). The exact window moments of
    ``mvlib.hmm`` equal those of the data, and ``hmm_from_moments`` recovers O and T from them;
    the estimator's emissions, transitions, initial law (from the first symbols) and window
    weights come back to 1e-8, and its log-likelihood is the true model's."""
    X, lengths, O, T, pi = hmm_windows(np.random.default_rng(seed), k, extra)
    O = np.vstack([O, np.zeros((unused, k))])
    d = O.shape[0]
    (X1, X2, X3), _ = hmm.window_views(X, lengths, d)
    P12, P13, P23, P123 = hmm.hmm_window_moments(pi, T, O)
    np.testing.assert_allclose(mvlib.pairs(X1, X3), P13, atol=1e-12, rtol=0)
    np.testing.assert_allclose(mvlib.triples(X1, X2, X3), P123, atol=1e-12, rtol=0)
    Om, Tm = hmm_from_moments(P12, P13, P23, P123, k, random_state=state)  # from the law itself
    pm = order(O, Om)
    np.testing.assert_allclose(Om[:, pm], O, atol=1e-8, rtol=0)
    np.testing.assert_allclose(Tm[np.ix_(pm, pm)], T, atol=1e-8, rtol=0)
    est = mvlib.SpectralHMM(k, random_state=state, method=method, n_symbols=d,
                            start="first").fit(X, lengths)
    perm = order(O, est.emissionprob_.T)
    np.testing.assert_allclose(est.emissionprob_[perm], O.T, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.transmat_[np.ix_(perm, perm)], T.T, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.startprob_[perm], pi, atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.weights_[perm], T @ pi, atol=1e-8, rtol=0)
    # the log-likelihood is the true model's, as hmmlearn computes it
    from hmmlearn.hmm import CategoricalHMM

    true = CategoricalHMM(n_components=k, n_features=d, init_params="")
    true.startprob_, true.transmat_, true.emissionprob_ = pi, T.T, O.T
    sub, sub_lengths = X[:3 * 50], lengths[:50]
    np.testing.assert_allclose(est.score(sub, sub_lengths), true.score(sub, sub_lengths), rtol=1e-8)


@pytest.mark.parametrize("method", ["observable", "tensor"])
@given(k=st.integers(2, 3), seed=SEEDS, state=STATES)
def test_spectral_hmm_reproducible_and_picklable(method, k, seed, state):
    """Family: ``hmm_windows`` (d = k + 1, σ_k(O) and σ_k(T) ≥ 0.3): its exact windows, repeated
    to at least 1000, followed
    by 20 sequences of length 20 sampled from the model (inexact moments). Same random_state →
    bit-identical fit; pickling round-trips."""
    rng = np.random.default_rng(seed)
    Xw, lw, O, T, pi = hmm_windows(rng, k, 1, min_sigma=0.3)
    r = -(-1000 // lw.size)
    Xs, ls = hmm.sample_hmm(pi, T, O, 20, 20, random_state=rng)[:2]
    X, lengths = np.concatenate([np.tile(Xw, (r, 1)), Xs]), np.concatenate([np.tile(lw, r), ls])
    kw = dict(method=method, n_symbols=k + 1)
    a = mvlib.SpectralHMM(k, random_state=state, **kw).fit(X, lengths)
    b = mvlib.SpectralHMM(k, random_state=state, **kw).fit(X, lengths)
    c = mvlib.SpectralHMM(k, random_state=np.random.default_rng(state), **kw).fit(X, lengths)
    assert_same_fit(a, b)
    assert_same_fit(a, c)
    assert_pickle_round_trip(a, ("score", (Xs, ls)), ("predict", (Xs, ls)))


# --------------------------------------------------------------------------- kernel estimators
def discrete_views(rng, k, extra, symmetric, q=5):
    """Three categorical views over d = max(2, k + extra) values each (when ``symmetric``, one
    conditional law for all views) or over d_v = max(2, k + e_v) values, e_v uniform in 0..2,
    offset by 10 v (views with different laws and alphabets), as integer codes: conditional laws
    in multiples of 1/5 with σ_k ≥ 0.1, weights multiples of 1/20, each ≥ 0.05, every outcome in
    its exact proportion."""
    if symmetric:
        Cs = [stochastic_counts(rng, max(2, k + extra), k, q)] * 3
    else:
        Cs = [stochastic_counts(rng, max(2, k + int(rng.integers(0, 3))), k, q) for _ in range(3)]
    wc = composition(rng, 20, k, 1)
    views, _ = categorical_exact_data([Fraction(int(c), 20) for c in wc], [fractions(C, q) for C in Cs])
    offsets = [0, 0, 0] if symmetric else [0, 10, 20]
    codes = [V.argmax(axis=1).astype(float) + o for V, o in zip(views, offsets)]
    return codes, [C / q for C in Cs], wc / 20, offsets


@pytest.mark.parametrize("symmetric", [True, False])
@given(k=st.integers(1, 3), extra=st.integers(0, 2), seed=SEEDS, state=STATES)
def test_kernel_spectral_delta_kernel_exact_recovery(symmetric, k, extra, seed, state):
    """Family: see ``discrete_views`` (k in 1..3, alphabets of max(2, k)..k+2 values). With the
    delta kernel the conditional densities are the conditional probabilities of each value,
    and they, the weights and the posteriors come back to 1e-8 (Song et al. 2014, Example 1)."""
    codes, Ms, w, offsets = discrete_views(np.random.default_rng(seed), k, extra, symmetric)
    est = mvlib.KernelSpectral(k, kernel="delta", symmetric=symmetric, random_state=state).fit(codes)
    perm = order(Ms[0], est.conditional_density(np.arange(Ms[0].shape[0]) + offsets[0], view=0))
    for v in range(3):
        P = est.conditional_density(np.arange(Ms[v].shape[0], dtype=float) + offsets[v], view=v)
        np.testing.assert_allclose(P[:, perm], Ms[v], atol=1e-8, rtol=0)
    np.testing.assert_allclose(est.weights_[perm], w, atol=1e-8, rtol=0)
    # the posterior of each sample is the true model's
    idx = [(x - o).astype(int) for x, o in zip(codes, offsets)]
    joint = w * np.prod([M[i] for M, i in zip(Ms, idx)], axis=0)
    np.testing.assert_allclose(est.predict_proba(codes)[:, perm], joint / joint.sum(axis=1, keepdims=True),
                               atol=1e-8, rtol=0)


@pytest.mark.parametrize("kernel", ["delta", "rbf"])
@given(k=st.integers(2, 3), seed=SEEDS, state=STATES)
def test_kernel_spectral_reproducible_and_picklable(kernel, k, seed, state):
    """Family: ``discrete_views`` (symmetric, d = k + 1): the exact rows for the delta kernel;
    for the RBF kernel 150 of them drawn at random plus N(0, 0.2²) noise, with the
    cross-validated bandwidth (which draws its own subsample). Same random_state →
    bit-identical fit; pickling round-trips."""
    rng = np.random.default_rng(seed)
    codes, _, _, _ = discrete_views(rng, k, 1, True)
    if kernel == "rbf":
        rows = rng.integers(0, codes[0].shape[0], 150)
        codes = [c[rows] + 0.2 * rng.standard_normal(150) for c in codes]
    a = mvlib.KernelSpectral(k, kernel=kernel, random_state=state).fit(codes)
    b = mvlib.KernelSpectral(k, kernel=kernel, random_state=state).fit(codes)
    c = mvlib.KernelSpectral(k, kernel=kernel, random_state=np.random.default_rng(state)).fit(codes)
    assert_same_fit(a, b)
    assert_same_fit(a, c)
    queries = [x[:20] for x in codes]
    assert_pickle_round_trip(a, ("predict_proba", (queries,)), ("score", (queries,)))


# --------------------------------------------------------------------------- latent tree
def latent_class_table(rng, n_vars, k):
    """A latent class model (every chain edge of TT rank ≤ k): n_vars variables with alphabets
    of max(2, k)..3 values, conditional laws in multiples of 1/3 with σ_k ≥ 0.1, weights multiples of
    1/3 (each ≥ 1/3). Data: every outcome in its exact proportion (at most 3⁵ rows)."""
    dims = [int(rng.integers(max(2, k), 4)) for _ in range(n_vars)]
    Cs = [stochastic_counts(rng, d, k, 3) for d in dims]
    wc = composition(rng, 3, k, 1)
    views, _ = categorical_exact_data([Fraction(int(c), 3) for c in wc], [fractions(C, 3) for C in Cs])
    X = np.stack([V.argmax(axis=1) for V in views], axis=1).astype(float)
    letters = "abcdefgh"[:n_vars]
    P = np.einsum("h," + ",".join(f"{c}h" for c in letters) + "->" + letters, wc / 3, *[C / 3 for C in Cs])
    return X, P, dims


@given(n_vars=st.integers(3, 4), k=st.integers(1, 3), seed=SEEDS)
def test_latent_tree_delta_kernel_reproduces_the_probability_table(n_vars, k, seed):
    """Family: see ``latent_class_table`` (3..4 variables, k in 1..3 latent classes). With the
    delta kernel and ranks k the decomposed embedding is the model's probability table: its
    values at every outcome, its TT form on the alphabets, its total mass and the marginal law
    of each variable (box integrals) equal the model's to 1e-8."""
    X, P, dims = latent_class_table(np.random.default_rng(seed), n_vars, k)
    est = mvlib.LatentTreeEmbedding(k, kernel="delta").fit(X)
    grids = [np.arange(d, dtype=float) for d in dims]
    points = np.stack(np.meshgrid(*grids, indexing="ij"), axis=-1).reshape(-1, n_vars)
    np.testing.assert_allclose(est.density(points), P.ravel(), atol=1e-8, rtol=0)
    np.testing.assert_allclose(tl.tt_to_tensor(est.to_tt(grids)), P, atol=1e-8, rtol=0)
    assert est.ranks_ == [k] * (n_vars - 1)
    # integral queries: total mass 1, and the marginal law of each variable
    lower, upper = np.full((1, n_vars), -np.inf), np.full((1, n_vars), np.inf)
    np.testing.assert_allclose(est.box_probability(lower, upper), [1.0], atol=1e-8, rtol=0)
    for j, dj in enumerate(dims):
        lo, hi = np.repeat(lower, dj, axis=0), np.repeat(upper, dj, axis=0)
        lo[:, j] = hi[:, j] = np.arange(dj)
        marginal = P.sum(axis=tuple(i for i in range(n_vars) if i != j))
        np.testing.assert_allclose(est.box_probability(lo, hi), marginal, atol=1e-8, rtol=0)


@given(n_vars=st.integers(3, 4), seed=SEEDS)
def test_latent_tree_reproducible_and_picklable(n_vars, seed):
    """Family: ``latent_class_table`` (k = 2) and, for the RBF kernel, its rows plus N(0, 0.3²)
    noise with Silverman bandwidths. Two fits are bit-identical; pickling round-trips."""
    rng = np.random.default_rng(seed)
    X, _, _ = latent_class_table(rng, n_vars, 2)
    for kernel, data in (("delta", X), ("rbf", X + 0.3 * rng.standard_normal(X.shape))):
        kw = dict(kernel=kernel, bandwidth="silverman")
        a = mvlib.LatentTreeEmbedding(2, **kw).fit(data)
        b = mvlib.LatentTreeEmbedding(2, **kw).fit(data)
        assert_same_fit(a, b)
        assert_pickle_round_trip(a, ("density", (data[:10],)))


# --------------------------------------------------------------------------- overcomplete
def sign_free_errors(A, F):
    perm = order(A, F, sign_invariant=True)
    G = F[:, perm]
    return np.minimum(np.linalg.norm(A - G, axis=0), np.linalg.norm(A + G, axis=0)), perm


#: the overcomplete family and its stated success rates (measured on seeds 0..299: on average
#: 89% of the components recovered, all of them in 68% of the models; seeds 0..19: 87%, 65%)
OVERCOMPLETE_DIMS = (20, 24)
OVERCOMPLETE_RATIO = 1.2
MIN_MEAN_RECOVERED = 0.8
MIN_ALL_RECOVERED = 0.5


def test_overcomplete_success_rate():
    """Family: T = Σ_j w_j a_j^⊗3 (``random_overcomplete_tensor``) with d uniform in 20..24,
    k = ⌈1.2 d⌉ > d components i.i.d. uniform on the sphere, weights uniform in [1, 2]; default
    estimator (SVD starts, Procedure 2, CP-ALS), random_state = the model's seed. Stated success
    rate over the models (as many as the hypothesis profile's examples): on average ≥ 80% of the
    components recovered (sign-free factor error < 0.05 and weight within 10%), and all of them
    in ≥ 50% of the models."""
    n_models = settings.default.max_examples
    recovered = []
    for seed in range(n_models):
        rng = np.random.default_rng(seed)
        d = int(rng.integers(OVERCOMPLETE_DIMS[0], OVERCOMPLETE_DIMS[1] + 1))
        k = int(np.ceil(OVERCOMPLETE_RATIO * d))
        T, w, A = random_overcomplete_tensor(d, k, rng, weights=rng.uniform(1.0, 2.0, k))
        est = mvlib.OvercompleteTensorDecomposition(k, random_state=seed).fit(T)
        err, perm = sign_free_errors(A, est.factors_)
        recovered.append(np.mean((err < 0.05) & (np.abs(est.weights_[perm] - w) < 0.1 * w)))
    recovered = np.array(recovered)
    assert recovered.mean() >= MIN_MEAN_RECOVERED, recovered
    assert np.mean(recovered == 1.0) >= MIN_ALL_RECOVERED, recovered


def _odeco_in(rng, k, d, lam_max):
    V = orthogonal(rng, d)[:, :k]
    lam = rng.uniform(1.0, lam_max, k)
    return np.einsum("h,ih,jh,lh->ijl", lam, V, V, V), lam, V


@given(k=st.integers(1, 6), seed=SEEDS)
def test_overcomplete_exact_on_orthogonal_tensors(k, seed):
    """Family: odeco T = Σ_h λ_h v_h^⊗3 in d = k + 2 dimensions (V with orthonormal columns,
    Haar), λ_h uniform in [1, 3] (λ_max/λ_min ≤ 3). Exact tensors with orthogonal components are
    recovered to 1e-8 by the default estimator. (With λ_h in [1, 10] the weak components can be
    missed: see the next test.)"""
    rng = np.random.default_rng(seed)
    T, lam, V = _odeco_in(rng, k, k + 2, 3.0)
    est = mvlib.OvercompleteTensorDecomposition(k, random_state=seed).fit(T)
    err, perm = sign_free_errors(V, est.factors_)
    assert np.max(err) < 1e-8, err
    np.testing.assert_allclose(est.weights_[perm], lam, rtol=1e-8)


@pytest.mark.xfail(strict=True, reason=(
    "OvercompleteTensorDecomposition misses weak orthogonal components: on an exact odeco "
    "tensor (k=6, d=8, weights 1.39..8.66) Procedure 2 finds 4 of 6 centres in 120 restarts "
    "and the CP-ALS refinement started from random columns does not complete them"))
def test_overcomplete_recovers_weak_orthogonal_components():
    """The model of seed 186 of the family above with λ_h uniform in [1, 10] (k = 6, d = 8). With
    that range, of k = 1..6 × seeds 0..149 the models (seed 103, k = 6) and (135, 6) fail too,
    and of k = 6 × seeds 0..299 also 186 and 208; with λ_h in [1, 3] none of the 900 fail."""
    rng = np.random.default_rng(186)
    T, lam, V = _odeco_in(rng, 6, 8, 10.0)
    est = mvlib.OvercompleteTensorDecomposition(6, random_state=186).fit(T)
    err, _ = sign_free_errors(V, est.factors_)
    assert np.max(err) < 1e-8, err


@given(d=st.integers(4, 8), seed=SEEDS, state=STATES)
def test_overcomplete_reproducible_and_picklable(d, seed, state):
    """Family: ``random_overcomplete_tensor`` with d in 4..8, k = d + 1, unit weights, plus
    symmetric N(0, 0.01²) noise. Same random_state → bit-identical fit; pickling round-trips."""
    import itertools

    rng = np.random.default_rng(seed)
    T, _, _ = random_overcomplete_tensor(d, d + 1, rng)
    E = 0.01 * rng.standard_normal(T.shape)
    T = T + sum(np.transpose(E, p) for p in itertools.permutations(range(3))) / 6
    a = mvlib.OvercompleteTensorDecomposition(d + 1, random_state=state).fit(T)
    b = mvlib.OvercompleteTensorDecomposition(d + 1, random_state=state).fit(T)
    c = mvlib.OvercompleteTensorDecomposition(d + 1, random_state=np.random.default_rng(state)).fit(T)
    assert_same_fit(a, b)
    assert_same_fit(a, c)
    assert_pickle_round_trip(a)


@given(k=st.integers(1, 4), extra=st.integers(0, 3), e=SCALES, seed=SEEDS)
def test_third_moment_operator_is_the_lemma1_moment_of_cubature_data(k, extra, e, seed):
    """Family: spherical mixtures N(a_j, ζ² I) with one variance for all components (means
    (d, k), d = k + extra, singular values in [0.1, 1], weights c/Σc with c in 1..6, ζ uniform in
    [0.1, 1]), data = their cubature rule (exact third moments), everything scaled by 10^e,
    e in -30..30. The operator of Lemma 1 (Anandkumar, Ge & Janzamin 2015) with ζ² is exactly
    Σ_j w_j a_j^⊗3: densely, through its contractions T(I, b, c), its slices T(I, I, θ) and its
    values T(a, b, c), all to 1e-8 relative to the tensor's scale."""
    from mvlib.overcomplete import ThirdMomentOperator

    rng = np.random.default_rng(seed)
    d = k + extra
    c = 10.0 ** e
    A = conditioned(rng, d, k, 0.1, 1.0) * c
    counts = rng.integers(1, 7, size=k)
    w = counts / counts.sum()
    zeta = rng.uniform(0.1, 1.0) * c
    X = gaussian_cubature(A, counts, np.full(k, zeta))
    op = ThirdMomentOperator(X, zeta ** 2)
    want = np.einsum("j,aj,bj,cj->abc", w, A, A, A)
    tol = 1e-8 * c ** 3
    np.testing.assert_allclose(op.to_dense(), want, atol=tol, rtol=0)
    B, C = rng.standard_normal((2, 5, d))
    for got, ref in ((op.contract(0, B, C), np.einsum("abc,rb,rc->ra", want, B, C)),
                     (op.slice(B[0]), np.einsum("abc,c->ab", want, B[0])),
                     (op.value(B, C, B), np.einsum("abc,ra,rb,rc->r", want, B, C, B))):
        np.testing.assert_allclose(got, ref, atol=tol * 10, rtol=0)
