"""mvlib.hmm.random_hmm: the random models of chapter 6's numerical checks."""
from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

from mvlib import hmm


def test_draw_order_and_laws():
    # T first, then pi, then O: the order the chapter's checks were written with
    rng, ref = np.random.default_rng(1), np.random.default_rng(1)
    pi, T, O = hmm.random_hmm(4, 7, rng)
    T_ref = 0.5 * np.eye(4) + 0.5 * ref.dirichlet(np.ones(4), 4).T
    assert np.array_equal(T, T_ref)
    assert np.array_equal(pi, ref.dirichlet(np.ones(4)))
    assert np.array_equal(O, ref.dirichlet(np.full(7, 0.5), 4).T)
    assert rng.random() == ref.random()                      # the generator was advanced alike
    for A in (pi[:, None], T, O):
        assert np.all(A >= 0) and np.allclose(A.sum(axis=0), 1)
    assert np.all(np.diag(T) >= 0.5)
    hmm.hmm_three_view(pi, T, O)                             # a valid model for the family


def test_int_seed_is_reproducible_and_arguments_checked():
    a, b = hmm.random_hmm(3, 5, random_state=0), hmm.random_hmm(3, 5, random_state=0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError):
        hmm.random_hmm(0, 5)
    with pytest.raises(TypeError):
        hmm.random_hmm(3, 5.0)


def test_docstring_example_runs():
    result = doctest.testmod(importlib.import_module("mvlib.hmm._algorithm"))
    assert result.failed == 0 and result.attempted > 0
