"""Baselines of the kernel chapter: npEM (Benaglia et al. 2009) and the histogram spectral method."""
import numpy as np
import pytest
from scipy import stats

from mvlib.kernel import HistogramSpectral, NonparametricEM, silverman_bandwidth

W_TRUE = np.array([1.0, 2.0, 3.0]) / 6


def sample(m, seed):
    """Three identical 1-d views of N(-4, 1), Gamma(0.8) shifted to 0, N(5, 0.8^2)."""
    rng = np.random.default_rng(seed)
    h = rng.choice(3, size=m, p=W_TRUE)
    views = []
    for _ in range(3):
        x = np.where(h == 0, rng.normal(-4, 1, m), np.where(h == 1, rng.gamma(0.8, 1.0, m),
                                                            rng.normal(5, 0.8, m)))
        views.append(x[:, None])
    return views, h


GRID = np.linspace(-7.95, 8.95, 170)  # avoids the Gamma pole at 0
TRUE = np.stack([stats.norm(-4, 1).pdf(GRID), stats.gamma(0.8).pdf(GRID),
                 stats.norm(5, 0.8).pdf(GRID)], axis=1)


def matched_l1(P):
    """Mean over components of the L1 distance ∫|p - p̂| (grid step 0.1), best matching."""
    from scipy.optimize import linear_sum_assignment
    C = np.abs(TRUE[:, :, None] - P[:, None, :]).sum(0) * (GRID[1] - GRID[0])
    r, c = linear_sum_assignment(C)
    return C[r, c].mean(), c


@pytest.fixture(scope="module")
def data():
    return sample(1500, 0)


@pytest.mark.parametrize("make, tol", [
    (lambda: NonparametricEM(3, random_state=0), 0.45),   # Silverman on pooled data oversmooths
    (lambda: NonparametricEM(3, bandwidth=0.3, random_state=0), 0.25),
    (lambda: HistogramSpectral(3, random_state=0), 0.35),
    (lambda: HistogramSpectral(3, method="tensor", random_state=0), 0.35)])
def test_recovers_components(data, make, tol):
    views, h = data
    est = make().fit(views)
    for v in range(3):
        P = est.conditional_density(GRID, view=v)
        assert P.shape == (GRID.size, 3) and np.all(P >= 0)
        err, perm = matched_l1(P)
        assert err < tol, err
    assert np.allclose(est.weights_.sum(), 1)
    assert np.allclose(np.sort(est.weights_), W_TRUE, atol=0.05)
    # MAP clustering agrees with the hidden labels up to relabelling
    pred = est.predict(views)
    agree = max(np.mean(pred == perm_labels) for perm_labels in
                [np.argsort(perm)[h]] + [np.array(p)[h] for p in
                                         ([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0])])
    assert agree > 0.95
    proba = est.predict_proba(views)
    assert np.allclose(proba.sum(1), 1)
    assert np.isfinite(est.score(views))


def test_densities_integrate_to_one(data):
    views, _ = data
    fine = np.linspace(-12, 14, 5201)
    for est in (NonparametricEM(3, random_state=1).fit(views), HistogramSpectral(3, random_state=1).fit(views)):
        mass = est.conditional_density(fine, view=1).sum(0) * (fine[1] - fine[0])
        assert np.allclose(mass, 1, atol=0.01), mass


def test_npem_fixed_point_and_reproducible(data):
    views, _ = data
    a = NonparametricEM(3, bandwidth=0.4, random_state=3, max_iter=500).fit(views)
    b = NonparametricEM(3, bandwidth=0.4, random_state=3, max_iter=500).fit(views)
    assert a.converged_ and np.array_equal(a.posteriors_, b.posteriors_)
    assert a.bandwidths_ == [0.4] * 3
    # at convergence the weights are the mean posteriors and the posteriors are the E-step
    L = np.log(a.weights_) + sum(np.log(a.conditional_density(views[v], view=v)) for v in range(3))
    Z = np.exp(L - L.max(1, keepdims=True))
    Z /= Z.sum(1, keepdims=True)
    assert np.max(np.abs(Z - a.posteriors_)) < 1e-4


def test_npem_blockwise_equals_cached():
    views, _ = sample(300, 5)
    a = NonparametricEM(2, bandwidth=[0.5, 0.6, 0.7], random_state=0, max_iter=20).fit(views)
    b = NonparametricEM(2, bandwidth=[0.5, 0.6, 0.7], random_state=0, max_iter=20,
                        max_gram_entries=5000).fit(views)
    assert np.allclose(a.posteriors_, b.posteriors_, atol=1e-12)


def test_npem_multidimensional_views():
    rng = np.random.default_rng(2)
    h = rng.integers(2, size=400)
    centres = np.array([[-2.0, 0.0], [2.0, 1.0]])
    views = [centres[h] + 0.7 * rng.standard_normal((400, 2)) for _ in range(3)]
    est = NonparametricEM(2, random_state=0).fit(views)
    pred = est.predict(views)
    assert max(np.mean(pred == h), np.mean(pred != h)) > 0.97
    assert est.conditional_density(np.zeros((5, 2)), view=2).shape == (5, 2)


def test_silverman_bandwidth():
    x = np.random.default_rng(0).standard_normal((10000, 1))
    assert silverman_bandwidth(x) == pytest.approx(0.9 * 10000 ** -0.2, rel=0.05)
    with pytest.raises(ValueError, match="constant"):
        silverman_bandwidth(np.ones((10, 1)))


def test_histogram_cells_and_outside(data):
    views, _ = data
    est = HistogramSpectral(3, n_bins=12, random_state=0).fit(views)
    assert est.edges_[0].shape == (1, 13)
    assert est.cell_probs_[0].shape == (3, 12)
    assert np.allclose(est.cell_probs_[2].sum(1), 1)
    assert np.all(est.conditional_density(np.array([-100.0, 100.0]), view=0) == 0)
    # the density is constant within a cell
    e = est.edges_[0][0]
    inner = np.linspace(e[3] + 1e-9, e[4] - 1e-9, 7)
    dens = est.conditional_density(inner, view=0)
    assert np.allclose(dens, dens[0])


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"bandwidth": -1.0}, ValueError, "bandwidth must be positive"),
    ({"bandwidth": 0.0}, ValueError, "bandwidth must be positive"),
    ({"bandwidth": "scott"}, ValueError, "silverman"),
    ({"bandwidth": [1.0, 1.0]}, ValueError, "2 entries"),
    ({"n_components": 0}, ValueError, "n_components"),
    ({"tol": -1}, ValueError, "tol"),
    ({"random_state": "a"}, TypeError, "random_state"),
])
def test_npem_bad_parameters(data, kwargs, exc, match):
    views, _ = data
    params = {"n_components": 2, **kwargs}
    with pytest.raises(exc, match=match):
        NonparametricEM(**params).fit(views)


def test_bad_views(data):
    views, _ = data
    with pytest.raises(ValueError, match="rows"):
        NonparametricEM(2).fit([views[0], views[1][:-1], views[2]])
    with pytest.raises(ValueError, match="NaN"):
        HistogramSpectral(2).fit([views[0], np.full_like(views[1], np.nan), views[2]])
    with pytest.raises(TypeError):
        HistogramSpectral(2).fit(np.hstack(views))
    with pytest.raises(ValueError, match="max_cells"):
        HistogramSpectral(2, n_bins=20).fit([np.hstack([views[0]] * 3)] * 3)
    with pytest.raises(ValueError, match="n_bins"):
        HistogramSpectral(2, n_bins="many").fit(views)
    est = HistogramSpectral(2, random_state=0).fit(views)
    with pytest.raises(ValueError, match="view=3"):
        est.conditional_density(GRID, view=3)
    with pytest.raises(ValueError, match="columns"):
        est.conditional_density(np.zeros((4, 2)), view=0)
    with pytest.raises(ValueError, match="not fitted"):
        NonparametricEM(2).predict(views)
