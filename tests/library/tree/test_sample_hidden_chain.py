"""mvlib.tree.sample_hidden_chain: the hidden chain of chapter 8, sampled by inverse CDF."""
from __future__ import annotations

import doctest
import importlib
import itertools

import numpy as np
import pytest

from mvlib.tree import sample_hidden_chain

PI = np.array([0.5, 0.3, 0.2])
T = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
O = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])


def test_draw_order_first_state_then_symbol_and_next_state_per_step():
    rng, ref = np.random.default_rng(5), np.random.default_rng(5)
    X = sample_hidden_chain(PI, T, O, 50, 4, rng)
    h = ref.choice(3, size=50, p=PI)
    for j in range(4):
        assert np.array_equal(X[:, j], (ref.random(50)[:, None] > np.cumsum(O[h], 1)).sum(1))
        h = (ref.random(50)[:, None] > np.cumsum(T[h], 1)).sum(1)
    assert rng.random() == ref.random()                    # the generator was advanced alike


def test_frequencies_match_the_chain_law():
    n, d = 200_000, 3
    X = sample_hidden_chain(PI, T, O, n, d, random_state=0)
    assert X.dtype.kind == "i" and X.shape == (n, d)
    # the exact law of (X_1, X_2, X_3): a sum over the hidden paths
    P = np.zeros((3,) * d)
    for hs in itertools.product(range(3), repeat=d):
        w = PI[hs[0]] * np.prod([T[a, b] for a, b in zip(hs[:-1], hs[1:])])
        P += w * np.einsum("i,j,k->ijk", O[hs[0]], O[hs[1]], O[hs[2]])
    freq = np.zeros_like(P)
    np.add.at(freq, tuple(X.T), 1 / n)
    assert np.abs(freq - P).max() < 5 * np.sqrt(P.max() / n)


def test_identity_emissions_give_the_states_and_bad_input_is_refused():
    X = sample_hidden_chain(PI, T, np.eye(3), 1000, 5, random_state=1)
    # with identity emissions the first symbol is the first state, whose law is PI
    assert abs(np.mean(X[:, 0] == 0) - 0.5) < 0.05
    with pytest.raises(ValueError):
        sample_hidden_chain(PI, T[:2], O, 10, 3)
    with pytest.raises(ValueError):
        sample_hidden_chain(PI, T * 2, O, 10, 3)
    with pytest.raises(ValueError):
        sample_hidden_chain(PI, T, O, 0, 3)


def test_docstring_example_runs():
    module = importlib.import_module("mvlib.tree._latent_tree")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
