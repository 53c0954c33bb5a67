"""KernelSpectral with a Dirichlet prior (alpha0): groups of exchangeable observations.

Song et al. (2014, §7); the α₀-corrected moments of Anandkumar et al. (2012, Theorem 3.5).
With the delta kernel the feature space is the one-hot space and the estimator is the
spectral LDA of mvlib.lda on documents of three words (checked exactly, on the
population and on a sample); on continuous groups the prior is what makes the component
densities right (measured against alpha0=None over seeds).
"""
import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import linear_sum_assignment

import mvlib
import mvlib.kernel._algorithm as mk
import mvlib.kernel._estimator as ek
import mvlib.lda._moments as lm


# ---------------------------------------------------------------- data
def _lda_triples(topics, alpha, n, rng):
    """n groups of three words: θ ~ Dir(α), each word h ~ θ, x ~ topics[h]. Returns (n, 3) ints."""
    theta = rng.dirichlet(alpha, size=n)
    h = (rng.random((n, 3, 1)) > np.cumsum(theta, axis=1)[:, None, :]).sum(-1)
    h = np.minimum(h, len(alpha) - 1)
    cum = np.cumsum(topics, axis=1)
    x = (rng.random((n, 3, 1)) > cum[h]).sum(-1)
    return np.minimum(x, topics.shape[1] - 1)


def _population_triples():
    """Every triple (x1, x2, x3) repeated in exact proportion to its LDA probability.

    Topics are multiples of 1/4 over 5 words and α = (1/4, 1/4, 1/2) (α₀ = 1), so
    P(x1, x2, x3) = Σ_abc E[θ_aθ_bθ_c] μ_a(x1) μ_b(x2) μ_c(x3) is a multiple of 1/24576
    (E[θ_aθ_bθ_c] = Π rising factorials of α / (α₀(α₀+1)(α₀+2))): 24576 rows whose empirical
    law *is* the population law, exchangeable in the three positions."""
    quarters = np.array([[2, 1, 1, 0, 0], [0, 1, 0, 2, 1], [1, 0, 0, 1, 2]])
    alpha = [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]
    a0 = sum(alpha)
    k, d = quarters.shape

    def moment(t):
        used, out = [0] * k, Fraction(1)
        for h in t:
            out *= alpha[h] + used[h]
            used[h] += 1
        return out / (a0 * (a0 + 1) * (a0 + 2))

    E = {t: moment(t) for t in itertools.product(range(k), repeat=3)}
    rows, probs = [], []
    for x in itertools.product(range(d), repeat=3):
        p = sum(e * Fraction(int(np.prod([quarters[t[v], x[v]] for v in range(3)])), 64) for t, e in E.items())
        if p:
            rows.append(x)
            probs.append(p)
    assert sum(probs) == 1
    den = int(np.lcm.reduce([p.denominator for p in probs]))
    X = np.repeat(np.array(rows), [int(p * den) for p in probs], axis=0)
    return X, quarters / 4.0, np.array([0.25, 0.25, 0.5])


def _topics_of(est, d):
    """(k, d) word probabilities of a delta-kernel fit (values never seen stay 0)."""
    out = np.zeros((est.n_components, d))
    out[:, est.centres_[0][:, 0].astype(int)] = est.coef_[0].T
    return out


def _match(A, B):
    """Rows of A matched to rows of B by L1 distance; returns (row order of A, L1 per row)."""
    C = np.abs(A[:, None, :] - B[None, :, :]).sum(-1)
    r, c = linear_sum_assignment(C)
    order = r[np.argsort(c)]
    return order, C[order, np.arange(B.shape[0])]


# ---------------------------------------------------------------- (a) delta kernel = LDA
def test_delta_kernel_recovers_lda_exactly_from_the_population():
    X, topics, alpha = _population_triples()
    views = [X[:, v] for v in range(3)]
    est = mvlib.KernelSpectral(3, kernel="delta", alpha0=1.0, random_state=0).fit(views)
    order, l1 = _match(_topics_of(est, 5), topics)
    assert l1.max() < 1e-10                                    # measured 2.8e-15
    np.testing.assert_allclose(est.alpha_[order], alpha, atol=1e-10)
    np.testing.assert_allclose(est.weights_[order], alpha / alpha.sum(), atol=1e-10)
    # ignoring the prior, the same population is decomposed into mixtures of the topics
    plain = mvlib.KernelSpectral(3, kernel="delta", random_state=0).fit(views)
    assert _match(_topics_of(plain, 5), topics)[1].max() > 0.2  # measured 0.35


def test_delta_kernel_moments_and_fit_equal_lda_on_the_same_triples():
    rng = np.random.default_rng(5)
    d, alpha = 8, np.array([0.3, 0.3, 0.4])
    topics = rng.dirichlet(np.full(d, 0.5), size=3)
    words = _lda_triples(topics, alpha, 3000, rng)
    counts = np.zeros((3000, d))
    for v in range(3):
        np.add.at(counts, (np.arange(3000), words[:, v]), 1.0)
    # the corrected moments on one-hot features are the LDA moments (Theorem 3.5)
    M2, M3 = mk.kernel_dirichlet_moments(*[np.eye(d)[words[:, v]] for v in range(3)], 1.0)
    op = lm.LDASecondMoment(counts, 1.0)
    np.testing.assert_allclose(M2, op @ np.eye(d), rtol=0, atol=1e-14)
    W = rng.standard_normal((d, 3))
    np.testing.assert_allclose(np.einsum("abc,ai,bj,ck->ijk", M3, W, W, W),
                               lm.lda_whitened_third_moment(counts, W, 1.0), rtol=0, atol=1e-13)
    # ... and so are the decompositions (whitening bases differ only by a rotation)
    mu, a_lda, _ = lm.lda_decompose(op, lambda W: lm.lda_whitened_third_moment(counts, W, 1.0), 3, 1.0,
                                    random_state=0)
    est = mvlib.KernelSpectral(3, kernel="delta", alpha0=1.0, random_state=0).fit([words[:, v] for v in range(3)])
    order, l1 = _match(_topics_of(est, d), mu / mu.sum(axis=1, keepdims=True))
    assert l1.max() < 1e-9                                     # measured 3.7e-13
    np.testing.assert_allclose(est.alpha_[order], a_lda, rtol=1e-9)


# ---------------------------------------------------------------- (b) continuous groups
DISTS = [stats.norm(-2.0, 0.5), stats.norm(1.0, 0.7), stats.gamma(2.0, loc=3.0, scale=0.6)]
ALPHA = np.array([0.3, 0.3, 0.4])     # α₀ = 1
GRID = np.linspace(-5.0, 9.0, 701)


def _groups(n, seed, alpha=ALPHA):
    """n groups of three observations: θ ~ Dir(α), h ~ θ, x ~ DISTS[h]; returns views and θ."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(alpha, size=n)
    h = np.minimum((rng.random((n, 3, 1)) > np.cumsum(theta, axis=1)[:, None, :]).sum(-1), 2)
    x = np.empty((n, 3))
    for j, dist in enumerate(DISTS):
        x[h == j] = dist.rvs(size=int(np.sum(h == j)), random_state=rng)
    return [x[:, v] for v in range(3)], theta


def _errors(est):
    P = np.stack([dist.pdf(GRID) for dist in DISTS], axis=1)
    dx = GRID[1] - GRID[0]
    Q = est.conditional_density(GRID)
    wde, perm = mvlib.weighted_density_error(P, Q, ALPHA, dx, return_permutation=True)
    return wde, np.abs(P - Q[:, perm]).sum(axis=0) * dx, perm


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continuous_groups_prior_beats_no_prior(seed):
    # measured over seeds 0-11 (n = 5000 groups, cv bandwidth, low-rank path, rank 300):
    # with alpha0=1: weighted density error 0.035-0.049, L1 per component ≤ 0.125,
    # max |α̂_h - α_h| ≤ 0.035, Σα̂ in [0.970, 1.041]; alpha0=None: error 0.166-0.189, L1 ≥ 0.35
    views, theta = _groups(5000, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = mvlib.KernelSpectral(3, alpha0=1.0, random_state=seed).fit(views)
        plain = mvlib.KernelSpectral(3, random_state=seed).fit(views)
    wde, l1, perm = _errors(est)
    wde0, l10, _ = _errors(plain)
    assert np.abs(est.alpha_[perm] - ALPHA).max() < 0.06
    assert abs(est.alpha_.sum() - 1.0) < 0.08
    np.testing.assert_allclose(est.weights_, est.alpha_ / est.alpha_.sum())
    assert wde < 0.07 and l1.max() < 0.2
    assert wde < 0.4 * wde0 and l1.max() < l10.min()
    # the posterior mean proportions of a group are closer to its θ than the prior mean
    post = est.predict_proba([v[:500] for v in views])
    np.testing.assert_allclose(post.sum(axis=1), 1.0, atol=1e-12)
    err_post = np.abs(post[:, perm] - theta[:500]).sum(axis=1).mean()
    err_prior = np.abs(ALPHA[None, :] - theta[:500]).sum(axis=1).mean()
    assert err_post < 0.75 * err_prior


def test_exact_and_streamed_paths():
    views, _ = _groups(300, 7)
    est = mvlib.KernelSpectral(3, bandwidth=0.3, alpha0=1.0, random_state=0).fit(views)
    assert est.exact_ and est.rank_ == [900] * 3              # basis: the three views pooled
    big, _ = _groups(3000, 8)
    kw = dict(bandwidth=0.3, rank=40, alpha0=1.0, random_state=0)
    ref = mvlib.KernelSpectral(3, **kw).fit(big)
    old = ek.FEATURE_BYTES, ek.STREAM_CHUNK
    try:
        ek.FEATURE_BYTES, ek.STREAM_CHUNK = 1, 700
        streamed = mvlib.KernelSpectral(3, **kw).fit(big)
    finally:
        ek.FEATURE_BYTES, ek.STREAM_CHUNK = old
    np.testing.assert_allclose(streamed.alpha_, ref.alpha_, rtol=1e-8)
    np.testing.assert_allclose(streamed.coef_[0], ref.coef_[0], rtol=1e-7, atol=1e-10)


def test_group_inference_against_brute_force_and_the_one_component_limit():
    views, _ = _groups(2000, 3)
    est = mvlib.KernelSpectral(3, bandwidth=0.3, rank=40, alpha0=1.0, random_state=0).fit(views)
    test = [v[:40] for v in views]
    a = est.alpha_
    a0 = a.sum()
    p = [np.maximum(est.conditional_density(X), 1e-300) for X in test]
    total, counts = np.zeros(40), np.zeros((40, 3))
    for t in itertools.product(range(3), repeat=3):          # Σ over h1, h2, h3 of E[θθθ] Π p
        used, num = [0, 0, 0], 1.0
        for h in t:
            num *= a[h] + used[h]
            used[h] += 1
        term = num / (a0 * (a0 + 1) * (a0 + 2)) * p[0][:, t[0]] * p[1][:, t[1]] * p[2][:, t[2]]
        total += term
        for v in range(3):
            counts[:, t[v]] += term
    assert est.score(test) == pytest.approx(np.mean(np.log(total)), rel=1e-12)
    np.testing.assert_allclose(est.predict_proba(test), (a + counts / total[:, None]) / (a0 + 3), rtol=1e-10)
    np.testing.assert_array_equal(est.predict(test), np.argmax(est.predict_proba(test), axis=1))
    # α₀ → 0: every observation of a group from one component; E[θ|x] tends to that component's
    # posterior. The mixed terms are O(α₀ · density ratios), so the check runs on groups
    # (x, x, x) at points where every component's density is at least 1e-3 of the largest.
    tiny = mvlib.KernelSpectral(3)
    tiny.__dict__.update({k: v for k, v in est.__dict__.items() if k.endswith("_")})
    tiny.alpha_ = est.weights_ * 1e-12
    x = np.linspace(-4.0, 7.0, 1101)
    q = est.conditional_density(x)
    x = x[q.min(axis=1) >= 1e-3 * q.max(axis=1)]
    assert x.size >= 20
    test = [x, x, x]
    plain_posterior = mvlib.core.base.ProductMixture.predict_proba(tiny, test)
    np.testing.assert_allclose(tiny.predict_proba(test), plain_posterior, atol=1e-6)


# ---------------------------------------------------------------- (c) bad values
@pytest.mark.parametrize("bad, exc", [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError),
                                      (np.inf, ValueError), ("1", TypeError), (True, TypeError),
                                      ([1.0], TypeError)])
def test_bad_alpha0(bad, exc):
    views, _ = _groups(60, 0)
    with pytest.raises(exc, match="alpha0"):
        mvlib.KernelSpectral(3, bandwidth=0.3, alpha0=bad).fit(views)


def test_alpha0_needs_symmetric_views():
    views, _ = _groups(60, 0)
    with pytest.raises(ValueError, match="alpha0 needs symmetric=True"):
        mvlib.KernelSpectral(3, bandwidth=0.3, alpha0=1.0, symmetric=False).fit(views)
    with pytest.raises(ValueError, match="alpha0"):
        mk.kernel_spectral_decomposition(*[np.eye(4)] * 3, 2, alpha0=-1.0)


# ---------------------------------------------------------------- (d) alpha0=None unchanged
def _old_views(m, seed):
    r = np.random.default_rng(seed)
    h = r.choice(3, m, p=[1 / 6, 2 / 6, 3 / 6])
    mu, sd = np.array([-4, 0.5, 5.0])[h], np.array([1, 0.7, 0.8])[h]
    return [mu + sd * r.standard_normal(m) for _ in range(3)]


@pytest.mark.parametrize("params, m, seed, weights, score", [
    # computed with the code before alpha0 existed (commit 155ab68)
    (dict(bandwidth=0.6), 300, 301, [0.1697549273378599, 0.4061219297957648, 0.4241231428663753],
     -4.607549434382471),
    (dict(bandwidth=0.6, rank=30), 2000, 2002, [0.1559319063758167, 0.31789685866986644, 0.5261712349543168],
     -4.70217251698994),
    (dict(kernel="delta"), 300, 304, [0.20128562043253423, 0.3296585135716036, 0.469055865995862],
     -4.8152292226405216),
])
def test_no_prior_is_the_previous_estimator(params, m, seed, weights, score):
    views = _old_views(m, seed)
    if params.get("kernel") == "delta":
        views = [np.round(v) for v in views]
    est = mvlib.KernelSpectral(3, random_state=1, **params).fit(views)
    np.testing.assert_allclose(est.weights_, weights, rtol=1e-9)
    assert est.score(views) == pytest.approx(score, rel=1e-9)
    same = mvlib.KernelSpectral(3, random_state=1, alpha0=None, **params).fit(views)
    np.testing.assert_array_equal(same.weights_, est.weights_)
    np.testing.assert_array_equal(same.coef_[0], est.coef_[0])
    assert not hasattr(est, "alpha_")


def test_refit_without_prior_drops_alpha():
    views, _ = _groups(300, 1)
    est = mvlib.KernelSpectral(3, bandwidth=0.3, rank=30, alpha0=1.0, random_state=0).fit(views)
    assert est.alpha_.shape == (3,)
    est.set_params(alpha0=None).fit(views)
    assert not hasattr(est, "alpha_")
    np.testing.assert_array_equal(
        est.predict_proba(views),
        mvlib.KernelSpectral(3, bandwidth=0.3, rank=30, random_state=0).fit(views).predict_proba(views))
