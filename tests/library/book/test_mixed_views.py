"""mvlib.book.mixed_views_model: chapter 4's Gaussian/Poisson/Bernoulli three-view mixture."""
from __future__ import annotations

import numpy as np

from mvlib.book import mixed_views_model


def test_means_are_the_hand_written_draw_in_view_order():
    rng = np.random.default_rng(2024)
    expected = [3 * rng.standard_normal((8, 3)), rng.gamma(2.0, 1.5, size=(10, 3)),
                rng.uniform(0.1, 0.9, size=(12, 3))]
    model = mixed_views_model()
    assert model.kinds == ("gaussian", "poisson", "bernoulli")
    assert np.array_equal(model.weights, [0.5, 0.3, 0.2])
    assert all(np.array_equal(M, E) for M, E in zip(model.means, expected))
    assert all(np.array_equal(M, E) for M, E in zip(mixed_views_model(2024).means, expected))


def test_a_generator_is_advanced_so_the_caller_continues_from_it():
    gen = np.random.default_rng(7)
    model = mixed_views_model(gen)
    after = gen.standard_normal(4)                      # the draw that follows the 3 mean matrices
    ref = np.random.default_rng(7)
    ref.standard_normal((8, 3))
    ref.gamma(2.0, 1.5, size=(10, 3))
    ref.uniform(0.1, 0.9, size=(12, 3))
    assert np.array_equal(after, ref.standard_normal(4))
    assert not np.array_equal(model.means[0], mixed_views_model(8).means[0])
