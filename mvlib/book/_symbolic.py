"""Exact checks of polynomial identities for the chapters' sympy derivations."""
from __future__ import annotations

from functools import reduce
from operator import add, mul

__all__ = ["is_zero_polynomial"]


def is_zero_polynomial(expr) -> bool:
    """Whether a polynomial with rational coefficients is identically zero (exactly, not numerically).

    ``expr`` is a sympy expression or a sympy ``Matrix`` (then every entry must vanish), built
    from symbols and rational numbers by sums, products and non-negative integer powers. It gives
    the same answer as ``sympy.expand(expr) == 0`` (or ``== sympy.zeros(...)``), much faster on
    the nested products of sums that matrix products and chain sums produce: the expression is
    rebuilt bottom-up in the polynomial ring over QQ of its free symbols, each distinct
    subexpression once, so nothing is expanded symbolically.

    Raises ``ValueError`` when an entry is not such a polynomial (a division by a symbol, a
    square root, a function of a symbol, a float).

    Examples
    --------
    >>> import sympy as sp
    >>> from mvlib.book import is_zero_polynomial
    >>> a, b = sp.symbols("a b")
    >>> is_zero_polynomial((a + b) ** 2 - a**2 - 2 * a * b - b**2)
    True
    >>> is_zero_polynomial((a + b) ** 2 - a**2 - b**2)
    False
    >>> is_zero_polynomial(sp.Matrix([[a * (1 - b) + a * b - a, sp.Rational(1, 2) * (2 * a) - a]]))
    True
    """
    import sympy as sp
    from sympy.polys.polyerrors import CoercionFailed

    entries = list(expr) if isinstance(expr, sp.MatrixBase) else [sp.sympify(expr)]
    symbols = sorted(set().union(*(e.free_symbols for e in entries)), key=str)
    if not symbols:
        symbols = [sp.Dummy()]                      # a ring needs one generator
    ring, *gens = sp.ring(symbols, sp.QQ)
    memo = dict(zip(symbols, gens))                 # subexpression -> ring element

    def rebuild(e):
        if e in memo:
            return memo[e]
        if e.is_Add:
            out = reduce(add, map(rebuild, e.args))
        elif e.is_Mul:
            out = reduce(mul, map(rebuild, e.args))
        elif e.is_Pow and e.exp.is_Integer and e.exp > 1:
            out = rebuild(e.base) ** int(e.exp)
        elif e.is_Rational:
            out = ring(e)
        else:
            raise ValueError(f"not a polynomial with rational coefficients: {e}")
        memo[e] = out
        return out

    try:
        return all(rebuild(e) == 0 for e in entries)
    except CoercionFailed as exc:
        raise ValueError(f"not a polynomial with rational coefficients: {exc}") from None
