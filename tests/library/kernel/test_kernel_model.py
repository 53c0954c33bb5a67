"""Tests of mvlib.kernel.sample_views, the sampler of the symmetric multi-view model (chapter 7)."""
import numpy as np
import pytest
from scipy import stats

from mvlib.kernel import sample_views

COMPONENTS = [stats.norm(-4, 1), stats.gamma(0.8), stats.norm(5, 0.8)]
PI = np.array([1.0, 2.0, 3.0]) / 6


def test_same_draws_as_the_chapters_former_sampler():
    # the chapter's sample_views before the sampler moved to mvlib.kernel
    m, seed = 50, 4
    rng = np.random.default_rng(seed)
    h = rng.choice(3, size=m, p=PI)
    draws = np.stack([d.rvs(size=(m, 3), random_state=rng) for d in COMPONENTS])
    X = draws[h, np.arange(m)]
    views, h2 = sample_views(COMPONENTS, PI, m, seed)
    assert np.array_equal(h, h2)
    assert np.array_equal(np.hstack(views), X)


def test_views_follow_their_component():
    comps = [stats.uniform(0, 1), stats.uniform(10, 1), stats.uniform(20, 1)]
    views, h = sample_views(comps, PI, 3000, np.random.default_rng(1), n_views=4)
    assert len(views) == 4 and all(v.shape == (3000, 1) for v in views)
    for v in views:
        assert np.array_equal(np.floor(v[:, 0] / 10).astype(int), h)
    assert np.abs(np.bincount(h) / 3000 - PI).max() < 0.03     # labels follow the weights
    assert abs(np.corrcoef(views[0][h == 0, 0], views[1][h == 0, 0])[0, 1]) < 0.1  # independent given h


def test_discrete_components_and_errors():
    comps = [stats.rv_discrete(values=([0, 1], [0.9, 0.1])), stats.rv_discrete(values=([0, 1], [0.2, 0.8]))]
    views, h = sample_views(comps, [0.5, 0.5], 200, 0)
    assert set(np.unique(views[0])) <= {0, 1}
    with pytest.raises(ValueError):
        sample_views(comps, [0.5, 0.3], 10, 0)
    with pytest.raises(ValueError):
        sample_views(comps, [1.0], 10, 0)
