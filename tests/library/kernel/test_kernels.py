"""Tests of mvlib.kernel and mvlib.KernelSpectral (chapter 7, kernel embeddings)."""
import functools

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import adjusted_rand_score

import mvlib
import mvlib.kernel._algorithm as mk
from mvlib.kernel import cv_bandwidth, loo_kde_loglik


def _mixture_views(m, seed, means=(-4.0, 0.5, 5.0), sds=(1.0, 0.7, 0.8), weights=(1, 2, 3)):
    rng = np.random.default_rng(seed)
    w = np.asarray(weights, float) / np.sum(weights)
    h = rng.choice(len(w), size=m, p=w)
    mu, sd = np.asarray(means)[h], np.asarray(sds)[h]
    return [mu + sd * rng.standard_normal(m) for _ in range(3)], h, w


# ---------------------------------------------------------------- kernels
def test_rbf_blockwise_equals_direct(monkeypatch):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(57, 3)), rng.normal(size=(41, 3))
    s = 0.8
    sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    direct = np.exp(-sq / (2 * s * s)) / (np.sqrt(2 * np.pi) * s) ** 3
    full = mvlib.rbf_kernel(X, Y, bandwidth=s)
    monkeypatch.setattr(mk, "_BLOCK_ENTRIES", 50)  # one row per block
    blocked = mvlib.rbf_kernel(X, Y, bandwidth=s)
    np.testing.assert_allclose(full, direct, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(blocked, full, rtol=1e-13, atol=0)
    np.testing.assert_allclose(mvlib.rbf_kernel(X, Y, bandwidth=s, normalize=False),
                               np.exp(-sq / (2 * s * s)), rtol=1e-12)
    np.testing.assert_allclose(mvlib.rbf_kernel(X, bandwidth=s), mvlib.rbf_kernel(X, X, bandwidth=s))


def test_rbf_is_a_density_and_accepts_1d():
    grid = np.linspace(-8, 8, 4001)
    K = mvlib.rbf_kernel(grid, np.array([0.3, -1.0]), bandwidth=0.6)
    assert K.shape == (4001, 2)
    np.testing.assert_allclose(K.sum(0) * (grid[1] - grid[0]), 1.0, rtol=1e-9)


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, np.inf])
def test_non_positive_bandwidth(bad):
    with pytest.raises(ValueError, match="bandwidth"):
        mvlib.rbf_kernel(np.ones((3, 1)), bandwidth=bad)
    views, _, _ = _mixture_views(60, 0)
    with pytest.raises(ValueError, match="bandwidth"):
        mvlib.KernelSpectral(2, bandwidth=bad).fit(views)
    with pytest.raises(ValueError, match="bandwidth"):
        mvlib.KernelSpectral(2, bandwidth=[1.0, bad, 1.0], symmetric=False).fit(views)


def test_bandwidth_type_errors():
    with pytest.raises(TypeError, match="bandwidth"):
        mvlib.rbf_kernel(np.ones((3, 1)), bandwidth="wide")
    views, _, _ = _mixture_views(60, 0)
    with pytest.raises(ValueError, match="bandwidth"):
        mvlib.KernelSpectral(2, bandwidth="silverman").fit(views)


def test_delta_kernel():
    X = np.array([[0, 1], [2, 3], [0, 1]])
    K = mvlib.delta_kernel(X, np.array([[0, 1], [5, 5]]))
    np.testing.assert_array_equal(K, [[1, 0], [0, 0], [1, 0]])
    np.testing.assert_array_equal(mvlib.delta_kernel([1, 2, 1]), [[1, 0, 1], [0, 1, 0], [1, 0, 1]])


def test_low_rank_factors():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    kern = functools.partial(mvlib.rbf_kernel, bandwidth=0.7)
    K = kern(X, X)
    G, piv = mvlib.incomplete_cholesky(X, kern, 120, return_pivots=True)
    assert np.abs(G @ G.T - K).max() < 1e-4
    np.testing.assert_allclose(np.triu(G[piv], 1), 0.0, atol=1e-10)  # lower triangular at the pivots
    assert len(set(piv.tolist())) == len(piv)
    G2 = mvlib.incomplete_cholesky(X, kern, 30)
    assert G2.shape == (300, 30)
    assert np.trace(K - G2 @ G2.T) < 0.2 * np.trace(K)
    N = mvlib.nystrom_factor(X, kern, 200, random_state=0)
    assert np.linalg.norm(N @ N.T - K) < 0.05 * np.linalg.norm(K)
    np.testing.assert_array_equal(N, mvlib.nystrom_factor(X, kern, 200, random_state=0))
    with pytest.raises(TypeError, match="kernel"):
        mvlib.incomplete_cholesky(X, "rbf", 3)


def test_cholesky_jitter_and_failure():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(20, 3))
    L, eps = mk.kernel_cholesky(A @ A.T + 0.0)  # rank 3: needs jitter
    assert eps > 0
    np.testing.assert_allclose(L @ L.T, A @ A.T + eps * np.eye(20), atol=1e-10)
    indefinite = np.diag([1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="Cholesky.*not positive semi-definite"):
        mk.kernel_cholesky(indefinite)
    with pytest.raises(ValueError, match="symmetric"):
        mk.kernel_cholesky(np.array([[1.0, 0.5], [0.0, 1.0]]))
    # an estimator whose kernel is not positive definite: the exact path reports it
    views, _, _ = _mixture_views(40, 0)
    est = mvlib.KernelSpectral(2, bandwidth=1.0)
    est._kernel_fn = lambda s: (lambda A, B: -np.abs(np.subtract.outer(A[:, 0], B[:, 0])) + 1.0)
    with pytest.raises(ValueError, match="Cholesky"):
        est.fit(views)


def test_weighted_density_error():
    grid = np.linspace(-5, 5, 201)
    dx = grid[1] - grid[0]
    P = np.stack([stats.norm.pdf(grid, -1), stats.norm.pdf(grid, 2)], 1)
    assert mvlib.weighted_density_error(P, P[:, ::-1], [0.3, 0.7], dx) == pytest.approx(0.0, abs=1e-14)
    Q = P + np.array([[0.01, 0.0]])
    err, perm = mvlib.weighted_density_error(P, Q[:, ::-1], [0.3, 0.7], dx, return_permutation=True)
    np.testing.assert_array_equal(perm, [1, 0])
    assert err == pytest.approx(0.3 * np.sqrt(201 * 0.01 ** 2 * dx))
    with pytest.raises(ValueError, match="weights"):
        mvlib.weighted_density_error(P, P, [0.3, 0.7, 0.0], dx)


# ---------------------------------------------------------------- estimator
def test_views_of_different_lengths():
    views, _, _ = _mixture_views(50, 0)
    views[1] = views[1][:40]
    with pytest.raises(ValueError, match="X1 has 50 rows but X2 has 40"):
        mvlib.KernelSpectral(2, bandwidth=1.0).fit(views)


def _with_nan(views):
    bad = [v.copy() for v in views]
    bad[2][3] = np.nan
    return bad


@pytest.mark.parametrize("params, edit, exc, match", [
    ({"n_components": 0}, None, ValueError, "n_components"),
    ({"kernel": "laplace"}, None, ValueError, "kernel"),
    ({"random_state": "x"}, None, TypeError, "random_state"),
    ({"rank": 0}, None, ValueError, "rank"),
    ({"symmetric": "yes"}, None, TypeError, "symmetric"),
    ({}, lambda v: v[:2], ValueError, "views must hold 3"),
    ({}, _with_nan, ValueError, "X3 contains NaN"),
    ({}, lambda v: [None, v[1], v[2]], TypeError, "X1"),
])
def test_bad_parameters(params, edit, exc, match):
    views, _, _ = _mixture_views(50, 0)
    kwargs = {"n_components": 2, "bandwidth": 1.0, **params}
    with pytest.raises(exc, match=match):
        mvlib.KernelSpectral(**kwargs).fit(edit(views) if edit else views)


def test_not_fitted():
    views, _, _ = _mixture_views(50, 0)
    with pytest.raises(ValueError, match="not fitted"):
        mvlib.KernelSpectral(2).predict(views)


def test_recovery_exact_path():
    views, h, w = _mixture_views(400, 3)
    est = mvlib.KernelSpectral(3, random_state=0).fit(views)
    assert est.exact_ and est.rank_[0] == 800
    order = np.argsort([np.sum(est.conditional_density([x])) for x in (-4.0,)])  # smoke
    assert order.shape == (1,)
    np.testing.assert_allclose(np.sort(est.weights_), np.sort(w), atol=0.06)
    grid = np.linspace(-9, 9, 1801)
    p = est.conditional_density(grid)
    assert p.shape == (1801, 3) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(0) * (grid[1] - grid[0]), 1.0, atol=0.03)
    truth = np.stack([stats.norm.pdf(grid, mu, sd) for mu, sd in ((-4, 1), (0.5, 0.7), (5, 0.8))], 1)
    assert mvlib.weighted_density_error(truth, p, w, grid[1] - grid[0]) < 0.2
    acc = np.mean(mvlib.match_columns(np.eye(3)[h], np.eye(3)[est.predict(views)])[0][est.predict(views)] == h)
    assert acc > 0.97
    assert np.isfinite(est.score(views))
    proba = est.predict_proba(views)
    np.testing.assert_allclose(proba.sum(1), 1.0)


def test_reproducible():
    views, _, _ = _mixture_views(300, 4)
    a = mvlib.KernelSpectral(3, random_state=7).fit(views)
    b = mvlib.KernelSpectral(3, random_state=7).fit(views)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.conditional_density(views[0]), b.conditional_density(views[0]))
    c = mvlib.KernelSpectral(3, 0.5, 40, np.random.default_rng(7), symmetric=False).fit(views)
    d = mvlib.KernelSpectral(3, 0.5, 40, np.random.default_rng(7), symmetric=False).fit(views)
    np.testing.assert_array_equal(c.coef_[2], d.coef_[2])
    before = [v.copy() for v in views]
    mvlib.KernelSpectral(3, random_state=7).fit(views)
    for x, y in zip(views, before):
        np.testing.assert_array_equal(x, y)  # inputs not modified


@pytest.mark.parametrize("symmetric", [True, False])
def test_exact_and_low_rank_agree(symmetric):
    views, _, _ = _mixture_views(250, 5)
    ex = mvlib.KernelSpectral(3, bandwidth=0.5, random_state=0, symmetric=symmetric).fit(views)
    lr = mvlib.KernelSpectral(3, bandwidth=0.5, rank=80, random_state=0, symmetric=symmetric).fit(views)
    assert ex.exact_ and not lr.exact_ and max(lr.rank_) <= 80
    grid = np.linspace(-8, 8, 801)
    pe, pl = ex.conditional_density(grid), lr.conditional_density(grid)
    err, perm = mvlib.weighted_density_error(pe, pl, ex.weights_, grid[1] - grid[0], return_permutation=True)
    assert err < 1e-4
    np.testing.assert_allclose(lr.weights_[perm], ex.weights_, atol=1e-5)
    coarse = mvlib.KernelSpectral(3, bandwidth=0.5, rank=15, random_state=0, symmetric=symmetric).fit(views)
    assert mvlib.weighted_density_error(pe, coarse.conditional_density(grid), ex.weights_, grid[1] - grid[0]) > err


def test_delta_kernel_is_the_discrete_method():
    rng = np.random.default_rng(6)
    k, V, m = 3, 7, 4000
    O = rng.dirichlet(0.4 * np.ones(V), size=k).T
    w = np.array([0.2, 0.3, 0.5])
    h = rng.choice(k, size=m, p=w)
    u = rng.random((3, m))
    cdf = np.cumsum(O, axis=0)[:, h]  # (V, m)
    views = [(u[v][None, :] > cdf).sum(0) for v in range(3)]  # integer codes 0..V-1
    est = mvlib.KernelSpectral(k, kernel="delta", random_state=0).fit(views)
    assert est.rank_ == [V] * 3
    # the same steps on one-hot vectors (the discrete moments) give the same estimate
    onehot = [np.eye(V)[x] for x in views]
    out = mk.kernel_spectral_decomposition(*onehot, k, random_state=0)
    direct = out["embeddings"] / out["embeddings"].sum(0)
    np.testing.assert_allclose(est.conditional_density(np.arange(V)), np.maximum(direct, 0), atol=1e-10)
    np.testing.assert_allclose(est.weights_, out["weights"] / out["weights"].sum(), atol=1e-12)
    # and the discrete second moment C is the symmetrised pairs matrix of the one-hot vectors
    P12 = mvlib.pairs(onehot[0], onehot[1])
    W = out["whitening"]
    np.testing.assert_allclose(W.T @ (0.5 * (P12 + P12.T)) @ W, np.eye(k), atol=1e-10)
    assert mvlib.matched_error(O, est.conditional_density(np.arange(V))) < 0.08
    # unseen values have probability 0
    assert np.all(est.conditional_density(np.array([V + 3])) == 0)


def test_asymmetric_views_of_different_dimensions():
    rng = np.random.default_rng(8)
    m = 600
    h = rng.choice(2, size=m, p=[0.4, 0.6])
    X1 = np.where(h == 0, -2.0, 2.0)[:, None] + rng.standard_normal((m, 2)) * 0.7
    X2 = np.where(h == 0, 3.0, 0.0) + rng.gamma(2.0, 0.5, m)
    X3 = np.where(h == 0, 1.0, -1.0)[:, None] * np.array([[1.0, -1.0, 0.5]]) + 0.5 * rng.standard_normal((m, 3))
    est = mvlib.KernelSpectral(2, rank=100, random_state=0, symmetric=False).fit([X1, X2, X3])
    assert est.n_features_in_ == [2, 1, 3]
    assert len(est.bandwidth_) == 3 and all(b > 0 for b in est.bandwidth_)
    pred = est.predict([X1, X2, X3])
    assert max(np.mean(pred == h), np.mean(pred != h)) > 0.97
    with pytest.raises(ValueError, match="symmetric=True"):
        mvlib.KernelSpectral(2).fit([X1, X2, X3])
    with pytest.raises(ValueError, match="x has 1 columns but view 0 has 2"):
        est.conditional_density(np.zeros((3, 1)), view=0)
    with pytest.raises(ValueError, match="view"):
        est.conditional_density(X1, view=3)


def test_cv_bandwidth_prefers_data_scale():
    rng = np.random.default_rng(9)
    x = rng.standard_normal(800)
    ll = loo_kde_loglik(x, [0.01, 0.4, 5.0])
    assert ll[1] > ll[0] and ll[1] > ll[2]
    s = cv_bandwidth(x, random_state=0)
    assert 0.1 < s < 1.0


def test_cv_subsample_grows_sublinearly():
    sizes = [mk.cv_subsample_size(m) for m in (10, 1500, 1501, 10**4, 10**5, 10**6)]
    assert sizes[:2] == [10, 1500] and sizes == sorted(sizes)
    assert sizes[-1] == int(np.ceil(1500 * (10**6 / 1500) ** 0.25)) < 10**4
    with pytest.raises(ValueError, match="m"):
        mk.cv_subsample_size(0)


def test_cv_bandwidth_shrinks_at_the_kde_rate():
    """Ten times the data: the bandwidth shrinks by about 10^(-1/5), not stuck at a cap (the
    cross-validated choice is noisy, so the median ratio over five samples is asserted; over
    seeds 0-19 in groups of five the medians were 0.58 to 0.63 at these sizes)."""
    ratios = []
    for seed in range(5):
        x = np.random.default_rng(seed).standard_normal(50_000)
        ratios.append(cv_bandwidth(x, random_state=0) / cv_bandwidth(x[:5_000], random_state=0))
    assert 0.5 < np.median(ratios) < 0.8          # 10^(-1/5) = 0.63
    # below the base size every row is used and nothing is rescaled
    assert cv_bandwidth(x[:1000], random_state=0) == cv_bandwidth(x[:1000], random_state=1)


def test_loo_likelihood_in_blocks_equals_the_full_matrix():
    x = np.random.default_rng(4).standard_normal((2500, 2))
    K = mvlib.rbf_kernel(x, x, bandwidth=0.7)
    np.fill_diagonal(K, 0.0)
    full = np.mean(np.log(K.sum(axis=1) / (len(x) - 1)))
    assert abs(loo_kde_loglik(x, [0.7])[0] - full) < 1e-12


def test_tensor_route_falls_back_to_algorithm_b():
    """Eight components, 1,000 samples: the symmetrised pairs matrix of the kernel features has
    only seven positive eigenvalues, the tensor route cannot whiten, and the fit falls back to
    Algorithm B with a warning instead of failing (the Gamma setting of the chapter's Figure 3)."""
    rng = np.random.default_rng(0)
    k, m = 8, 1000
    w = np.arange(1, k + 1) / np.arange(1, k + 1).sum()
    h = rng.choice(k, size=m, p=w)
    views = []
    for v in range(3):
        order = np.arange(k) if v == 0 else rng.permutation(k)
        x = np.empty(m)
        for j in range(k):
            loc = 5.0 * order[j]
            dist = stats.gamma(0.8, loc=loc - 1.0) if j % 2 else stats.norm(loc, 0.9)
            x[h == j] = dist.rvs(size=int(np.sum(h == j)), random_state=rng)
        views.append(x)
    with pytest.warns(RuntimeWarning, match="fell back to Algorithm B"):
        est = mvlib.KernelSpectral(k, random_state=0, symmetric=False).fit(views)
    assert est.method_used_ == "observable" and est.weights_.shape == (k,)
    assert adjusted_rand_score(h, est.predict(views)) > 0.8


def test_coordinates_reproduce_algorithm_1_literally():
    """Steps 1-5 of Algorithm 1 written with K, L, R equal the coordinate form used by mvlib."""
    views, _, _ = _mixture_views(120, 10)
    m, k, s = 120, 3, 0.6
    kern = functools.partial(mvlib.rbf_kernel, bandwidth=s)
    pool = np.concatenate(views[:2])[:, None]                     # Φ = (φ(x1^i), φ(x2^i))
    swap = np.concatenate([np.arange(m, 2 * m), np.arange(m)])    # Ψ = Φ with the blocks swapped
    Lc, _ = mk.kernel_cholesky(kern(pool, pool))
    R = Lc.T                                                      # K (+ jitter) = R^T R
    Kj = R.T @ R
    Lmat = Kj[np.ix_(swap, swap)]
    evals, evecs = np.linalg.eigh(R @ Lmat @ R.T / (4 * m * m))
    top = np.argsort(evals)[::-1][:k]
    sig, bt = np.sqrt(evals[top]), evecs[:, top]
    beta = np.linalg.solve(R, bt)
    xi_lit = [(beta.T @ kern(pool, X[:, None])).T / np.sqrt(sig) for X in views]
    # the coordinate form
    C, Lb = mk.kernel_basis(pool, kern)
    F = [mk.kernel_features(X, C, Lb, kern) for X in views]
    out = mk.kernel_spectral_decomposition(*F, k, random_state=0)
    np.testing.assert_allclose(out["sigma"], sig, rtol=1e-8)
    xi = [Fv @ out["whitening"] for Fv in F]
    signs = np.sign(np.sum(xi[0] * xi_lit[0], axis=0))
    for a, b in zip(xi, xi_lit):
        np.testing.assert_allclose(a * signs, b, atol=1e-6 * np.abs(b).max())


def test_too_many_components_and_mixed_bandwidths():
    views, _, _ = _mixture_views(200, 11)
    with pytest.raises(ValueError, match="n_components=9 exceeds the dimension 2"):
        mvlib.KernelSpectral(9, kernel="delta").fit([np.round(v) > 0 for v in views])
    with pytest.raises(ValueError, match="one bandwidth"):
        mvlib.KernelSpectral(2, bandwidth=[0.5, 1.0, 0.5]).fit(views)


def test_delta_kernel_is_the_discrete_method_exactly():
    """On data whose empirical law is exactly a categorical three-view mixture, the delta-kernel
    spectral algorithm (both paths) and the one-hot tensor route return the same table and
    weights as the model, to rounding."""
    from mvlib.core.cubature import categorical_exact_data

    P = [["0.45", "0.20", "0.05"], ["0.30", "0.10", "0.05"], ["0.10", "0.40", "0.05"],
         ["0.05", "0.20", "0.15"], ["0.05", "0.05", "0.30"], ["0.05", "0.05", "0.40"]]
    one_hot, _ = categorical_exact_data(["1/4", "1/4", "1/2"], [P] * 3)
    P_true, w_true = np.array(P, dtype=float), np.array([0.25, 0.25, 0.5])
    symbols = [v.argmax(axis=1)[:, None] for v in one_hot]
    fits = [mvlib.KernelSpectral(3, kernel="delta", random_state=0, symmetric=sym).fit(symbols)
            for sym in (True, False)]
    tables = [(f.conditional_density(np.arange(6)[:, None], view=0), f.weights_) for f in fits]
    mv = mvlib.MultiViewMixture(3, method="tensor", random_state=0).fit(one_hot)
    tables.append((mv.means_[0].T, mv.weights_))
    for table, weights in tables:
        perm, _ = mvlib.match_columns(P_true, table)
        assert np.abs(table[:, perm] - P_true).max() < 1e-10
        assert np.abs(weights[perm] - w_true).max() < 1e-10


def test_smoothing_bias_gaussian_closed_form_and_pole_exponent():
    """For N(0, 1) the smoothed density is N(0, 1 + s²), whose L² distance to N(0, 1) has a
    closed form; for Gamma(0.8), whose density has a pole x^(-0.2) at 0, the bias grows like
    s^(1/2 - 0.2) = s^0.3, not like s²."""
    x = np.linspace(-10, 10, 4001)
    for s in (0.1, 0.3):
        v1, v2 = 1.0, 1.0 + s * s
        exact = np.sqrt(1 / (2 * np.sqrt(np.pi * v1)) + 1 / (2 * np.sqrt(np.pi * v2))
                        - 2 / np.sqrt(2 * np.pi * (v1 + v2)))
        assert abs(mk.smoothing_bias(stats.norm(0, 1), s, x) / exact - 1) < 1e-3
    xg = np.linspace(-2, 8, 10001)           # a grid step well below the smallest s
    s_grid = np.array([0.02, 0.05, 0.1, 0.2])
    b = [mk.smoothing_bias(stats.gamma(0.8), s, xg) for s in s_grid]
    slope = np.polyfit(np.log(s_grid), np.log(b), 1)[0]
    assert 0.25 < slope < 0.4
    with pytest.raises(ValueError, match="bandwidth"):
        mk.smoothing_bias(stats.norm(), 0.0, x)


def test_integral_queries_against_the_truth_and_exact_for_the_delta_kernel():
    """E[f(X)|h] = <f, mu_h> and interval probabilities: exact on exact-moment discrete data;
    close to the truth on a Gaussian mixture sample."""
    from mvlib.core.cubature import categorical_exact_data

    P = [["0.45", "0.20", "0.05"], ["0.30", "0.10", "0.05"], ["0.10", "0.40", "0.05"],
         ["0.05", "0.20", "0.15"], ["0.05", "0.05", "0.30"], ["0.05", "0.05", "0.40"]]
    one_hot, _ = categorical_exact_data(["1/4", "1/4", "1/2"], [P] * 3)
    P_true = np.array(P, dtype=float)
    est = mvlib.KernelSpectral(3, kernel="delta", random_state=0).fit([v.argmax(axis=1) for v in one_hot])
    table = est.conditional_density(np.arange(6)[:, None])
    perm = mvlib.match_columns(P_true, table)[0]
    vals = np.arange(6.0)
    assert np.abs(est.expectation(lambda x: x[:, 0] ** 2)[perm] - vals ** 2 @ P_true).max() < 1e-10
    assert np.abs(est.interval_probability(1, 3)[perm] - P_true[1:4].sum(axis=0)).max() < 1e-10
    # continuous: three Gaussians, means and interval probabilities
    rng = np.random.default_rng(5)
    m, mu, sd = 4000, np.array([-4.0, 0.0, 5.0]), np.array([1.0, 0.7, 0.8])
    h = rng.choice(3, size=m, p=[0.2, 0.3, 0.5])
    views = [mu[h] + sd[h] * rng.standard_normal(m) for _ in range(3)]
    est = mvlib.KernelSpectral(3, random_state=0).fit(views)
    perm = np.argsort(est.expectation(lambda x: x[:, 0]))
    assert np.abs(est.expectation(lambda x: x[:, 0])[perm] - mu).max() < 0.1
    p_true = stats.norm.cdf(1.0, mu, sd) - stats.norm.cdf(-1.0, mu, sd)
    assert np.abs(est.interval_probability(-1.0, 1.0)[perm] - p_true).max() < 0.05
    with pytest.raises(ValueError, match="lower <= upper"):
        est.interval_probability(2.0, 1.0)
    with pytest.raises(TypeError, match="callable"):
        est.expectation(3.0)


def test_streamed_decomposition_equals_the_in_memory_one():
    """Two passes in chunks, features never formed: the same embeddings and weights as the
    in-memory decomposition of the features, to rounding; and KernelSpectral switches to it
    for large samples with the same densities."""
    views, _, _ = _mixture_views(3000, 11)
    views = [v[:, None] for v in views]
    kern = functools.partial(mvlib.rbf_kernel, bandwidth=0.5)
    C, L = mk.kernel_basis(np.concatenate(views[:2]), kern, rank=120)
    F = [mk.kernel_features(X, C, L, kern) for X in views]
    ref = mk.kernel_spectral_decomposition(*F, 3, random_state=0)
    out = mk.kernel_spectral_streamed(views, C, L, kern, 3, chunk=700, random_state=0)
    assert np.abs(out["T"] - ref["T"]).max() < 1e-12
    assert np.abs(out["embeddings"] - ref["embeddings"]).max() < 1e-8
    assert np.abs(out["weights"] - ref["weights"]).max() < 1e-8
    import mvlib.kernel._estimator as ek
    grid = np.linspace(-8, 9, 200)[:, None]
    a = mvlib.KernelSpectral(3, bandwidth=0.5, rank=120, random_state=0).fit(views)
    old = ek.FEATURE_BYTES, ek.STREAM_CHUNK
    try:
        ek.FEATURE_BYTES, ek.STREAM_CHUNK = 1, 700
        b = mvlib.KernelSpectral(3, bandwidth=0.5, rank=120, random_state=0).fit(views)
    finally:
        ek.FEATURE_BYTES, ek.STREAM_CHUNK = old
    assert np.abs(a.conditional_density(grid) - b.conditional_density(grid)).max() < 1e-8
    with pytest.raises(ValueError, match="n_components"):
        mk.kernel_spectral_streamed(views, C, L, kern, 500)


def test_exp_is_skipped_only_where_it_is_exactly_zero():
    """Kernels compute exp only above ``_EXP_ZERO`` (far-apart pairs are skipped): the array is the
    same, bit for bit, as ``np.exp`` of every entry, across the underflow and subnormal range."""
    from mvlib.kernel._algorithm import _EXP_ZERO, _exp_or_zero

    t = np.concatenate([np.linspace(-800.0, -700.0, 200_001), -np.logspace(-3, 6, 1001), [0.0, -np.inf]])
    assert np.array_equal(_exp_or_zero(t, np.empty_like(t)), np.exp(t))
    assert np.exp(_EXP_ZERO) == 0.0 and np.exp(-745.0) > 0.0
    x = np.random.default_rng(0).standard_normal((300, 2)) * 5
    K = mvlib.rbf_kernel(x, x, bandwidth=0.05)        # most pairs far apart: exp skipped
    assert (K == 0).mean() > 0.5 and np.array_equal(K, mvlib.rbf_kernel(x, x[::-1], bandwidth=0.05)[:, ::-1])
