"""mvlib.core.symbolic.is_zero_polynomial: the same verdict as sympy.expand, on expressions and matrices."""
from __future__ import annotations

import itertools

import pytest
import sympy as sp

from mvlib.core.symbolic import is_zero_polynomial

a, b, c = sp.symbols("a b c")


def test_agrees_with_expand_on_identities_and_non_identities():
    exprs = [(a + b) ** 3 - a**3 - 3 * a**2 * b - 3 * a * b**2 - b**3,
             (a + b) ** 3 - a**3 - b**3,
             (1 - a) * (1 + a) + a**2 - 1,
             sp.Rational(1, 3) * (3 * a - 3 * c) - a + c,
             sp.Rational(1, 3) * (3 * a - 3 * c) - a,
             sp.Integer(0), sp.Integer(2)]
    for e in exprs:
        assert is_zero_polynomial(e) == (sp.expand(e) == 0)


def test_matrix_every_entry_must_vanish():
    M = sp.Matrix([[a, b], [1 - a, 1 - b]])
    assert is_zero_polynomial(sp.ones(1, 2) * M - sp.ones(1, 2))         # columns sum to one
    assert not is_zero_polynomial(M * M - M)


def test_nested_products_of_sums_like_a_chain_sum():
    # a two-state chain: summing over the hidden path equals the matrix product, exactly
    pi = sp.Matrix([a, 1 - a])
    T = sp.Matrix([[b, c], [1 - b, 1 - c]])
    paths = sum(pi[i] * T[j, i] * T[l, j] for i, j, l in itertools.product(range(2), repeat=3))
    assert is_zero_polynomial(paths - (sp.ones(1, 2) * T * T * pi)[0])
    assert not is_zero_polynomial(paths - (sp.ones(1, 2) * T * pi)[0] - a * (b - c))


@pytest.mark.parametrize("bad", [1 / a, sp.sqrt(a) * b, sp.sin(a), sp.Float(0.5) * a])
def test_refuses_non_polynomials(bad):
    with pytest.raises(ValueError, match="polynomial"):
        is_zero_polynomial(bad + b)


def test_docstring_examples_run():
    import doctest

    from mvlib.core import symbolic

    tests = doctest.DocTestFinder().find(symbolic.is_zero_polynomial, "is_zero_polynomial", globs={})
    runner = doctest.DocTestRunner()
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted > 0
