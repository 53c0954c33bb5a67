r"""Sympy constructions shared by the chapters.

The chapters derive moment identities from the generative model, not from the
formulas they are meant to check: :func:`discrete_expectation` sums an
expression over every outcome of (h, x1, x2, x3) weighted by its probability,
so :math:`E[x_1x_2^\top]` comes out as an explicit polynomial in the parameters
which is then compared with :math:`M_1\operatorname{diag}(w)M_2^\top`.
"""
from __future__ import annotations

import itertools
from functools import reduce
from operator import add, mul

import numpy as np
import sympy as sp

__all__ = [
    "is_zero_polynomial",
    "mixture_symbols",
    "discrete_expectation",
    "cp_array",
    "sym_multilinear",
    "array_equal",
]


def mixture_symbols(k: int, dims=(2, 2, 2), *, names=("a", "b", "c")):
    r"""Symbols for a k-component three-view mixture.

    Returns ``(w, [M1, M2, M3])``: ``w`` a k×1 sympy Matrix of positive symbols
    :math:`w_1..w_k`, ``M_v`` a :math:`d_v\times k` Matrix with entries named
    ``a_{i,j}``, ``b_{i,j}``, ``c_{i,j}`` for views 1, 2, 3.
    """
    w = sp.Matrix(k, 1, lambda j, _: sp.Symbol(f"w_{j + 1}", positive=True))
    Ms = [sp.Matrix(d, k, lambda i, j, nm=nm: sp.Symbol(f"{nm}_{{{i + 1},{j + 1}}}", real=True))
          for nm, d in zip(names, dims)]
    return w, Ms


def discrete_expectation(f, w, Ms):
    r""":math:`E[f(x_1,x_2,x_3)]` for categorical views, by summing over all outcomes.

    ``f`` maps three one-hot column vectors (sympy Matrices) to a sympy
    expression, Matrix or Array; the sum is over h and the indices of the
    three observed words, with probability :math:`w_h (M_1)_{ih}(M_2)_{jh}(M_3)_{lh}`.
    Cost: k·d1·d2·d3 evaluations of f (small sizes only).
    """
    dims = [M.shape[0] for M in Ms]
    total = None
    for h in range(w.shape[0]):
        for idx in itertools.product(*(range(d) for d in dims)):
            p = w[h] * Ms[0][idx[0], h] * Ms[1][idx[1], h] * Ms[2][idx[2], h]
            xs = [sp.Matrix(d, 1, lambda r, _, i=i: 1 if r == i else 0) for d, i in zip(dims, idx)]
            value = f(*xs)
            term = value.applyfunc(lambda e: e * p) if isinstance(value, sp.NDimArray) else value * p
            total = term if total is None else total + term
    return total


def cp_array(w, factors):
    r"""The sympy Array :math:`\sum_h w_h\, a_h\otimes b_h\otimes c_h` (columns of the factors)."""
    A, B, C = factors
    shape = (A.shape[0], B.shape[0], C.shape[0])
    return sp.Array([[[sum(w[h] * A[i, h] * B[j, h] * C[l, h] for h in range(w.shape[0]))
                       for l in range(shape[2])] for j in range(shape[1])] for i in range(shape[0])])


def sym_multilinear(T, V1, V2, V3):
    r""":math:`T(V_1,V_2,V_3)` for a sympy Array T and sympy Matrices :math:`V_v` (d_v × k_v)."""
    d1, d2, d3 = T.shape
    k1, k2, k3 = V1.shape[1], V2.shape[1], V3.shape[1]
    return sp.Array([[[sum(T[i, j, l] * V1[i, a] * V2[j, b] * V3[l, c]
                           for i in range(d1) for j in range(d2) for l in range(d3))
                       for c in range(k3)] for b in range(k2)] for a in range(k1)])


def array_equal(A, B) -> bool:
    """True when every entry of ``A - B`` simplifies to zero (sympy Arrays or Matrices)."""
    A, B = sp.Array(A), sp.Array(B)
    if A.shape != B.shape:
        return False
    return all(sp.simplify(a - b) == 0 for a, b in zip(sp.flatten(A), sp.flatten(B)))


def simplex_subs(*Ms) -> dict:
    r"""Substitutions making every column of each ``M`` a probability vector.

    The last entry of column j becomes :math:`1-\sum_{i<d}M_{ij}`, so an
    expectation from :func:`discrete_expectation` can use that the
    probabilities of all outcomes of an unobserved view sum to one. Apply with
    ``expr.subs(simplex_subs(M3))``.
    """
    return {M[M.shape[0] - 1, j]: 1 - sum(M[i, j] for i in range(M.shape[0] - 1))
            for M in Ms for j in range(M.shape[1])}


__all__ += ["simplex_subs"]


def array_equal_rational(A, B) -> bool:
    r"""True when every entry of ``A - B`` cancels to zero as a rational function.

    A faster alternative to :func:`array_equal` for entries that are rational
    functions of symbols and of powers of symbols (e.g. :math:`\sqrt{w_h}`):
    ``sympy.cancel`` brings each difference to one reduced fraction, which is
    zero exactly when the identity holds. Identities that need
    trigonometric or nested-radical rewriting may be missed (a ``False``
    then only means "not shown"); use :func:`array_equal` for those.
    """
    A, B = sp.Array(A), sp.Array(B)
    if A.shape != B.shape:
        return False
    # expand settles (Laurent) polynomials quickly; cancel handles true fractions
    return all(sp.expand(a - b) == 0 or sp.cancel(sp.together(a - b)) == 0
               for a, b in zip(sp.flatten(A), sp.flatten(B)))


def sym_power_update(T, theta):
    r"""The power-method update :math:`T(I,\theta,\theta)` (un-normalised) as a column Matrix.

    ``T`` a sympy Array (k, k, k), ``theta`` a k × 1 sympy Matrix;
    entry i is :math:`\sum_{j,l}T_{ijl}\theta_j\theta_l`.
    """
    k = T.shape[0]
    return sp.Matrix(k, 1, lambda i, _: sum(T[i, j, l] * theta[j] * theta[l]
                                            for j in range(k) for l in range(k)))


__all__ += ["array_equal_rational", "sym_power_update"]


def isserlis(idx) -> sp.Expr:
    r""":math:`\E[z_{a_1}\cdots z_{a_r}]` for :math:`z\sim N(0, I)` (Isserlis' theorem).

    ``idx`` is a tuple of (symbolic or integer) indices; the result is the sum over
    all pairings of the indices of products of Kronecker deltas
    (Isserlis 1918): zero for odd r, :math:`\delta_{ij}` for r = 2.
    Cost: (r-1)!! terms.
    """
    idx = tuple(idx)
    if len(idx) == 0:
        return sp.Integer(1)
    if len(idx) % 2:
        return sp.Integer(0)
    first, rest = idx[0], idx[1:]
    return sp.Add(*[sp.KroneckerDelta(first, rest[p]) * isserlis(rest[:p] + rest[p + 1:])
                    for p in range(len(rest))])


def gaussian_expectation(expr, z) -> sp.Expr:
    r""":math:`\E[\text{expr}]` for a polynomial in the coordinates ``z[a]`` of :math:`z\sim N(0,I)`.

    ``z`` is the :class:`sympy.IndexedBase` whose entries are the standard normal
    coordinates; every other symbol is a constant. Each monomial is expanded and its
    product of ``z`` factors replaced by :func:`isserlis`. Indices may be symbolic
    (a formula for any dimension) or integers.

    ``z`` may also be a list or tuple of IndexedBases, e.g. ``(z1, z2, z3)``: these are
    *independent* standard normal vectors (the noises of different views), so the
    expectation of a monomial is the product over the bases of the Isserlis sums of
    their own factors — two coordinates of different bases are never paired, whatever
    their indices. Used in chapter 5 (:doc:`/chapters/05_gaussian_mixtures`, one
    vector) and chapter 1 (:doc:`/chapters/01_multiview_moments`, one per view).
    """
    bases = tuple(z) if isinstance(z, (list, tuple)) else (z,)
    total = sp.Integer(0)
    for term in sp.Add.make_args(sp.expand(expr)):
        idx = {b: [] for b in bases}
        coeff = sp.Integer(1)
        for factor in sp.Mul.make_args(term):
            base, power = factor.as_base_exp()
            if isinstance(base, sp.Indexed) and base.base in idx:
                idx[base.base] += [base.indices[0]] * int(power)
            else:
                coeff *= factor
        for b in bases:
            coeff *= isserlis(tuple(idx[b]))
        total += coeff
    return sp.expand(total)


__all__ += ["isserlis", "gaussian_expectation"]


def gaussian_mixture_expectation(f, w, Ms, sigmas, z):
    r""":math:`E[f(x_1,x_2,x_3)]` for a Gaussian multi-view mixture, by Isserlis' theorem.

    The Gaussian counterpart of :func:`discrete_expectation`. In component h (probability
    :math:`w_h`) view v is :math:`x_v=\mu_{v,h}+\sigma_{v,h}z_v`, with independent
    :math:`z_v\sim N(0, I_{d_v})` and :math:`\mu_{v,h}` the h-th column of :math:`M_v` (the
    multi-view model of Anandkumar, Hsu and Kakade 2012, §3.1, with spherical noise per view
    and component). The result is

    .. math:: E[f(x_1,x_2,x_3)]=\sum_h w_h\,E\big[f(\mu_{1,h}+\sigma_{1,h}z_1,\ \dots)\big],

    each inner expectation taken entry by entry by :func:`gaussian_expectation` (Isserlis
    1918), so any polynomial ``f`` gives an exact polynomial in the parameters.

    Parameters
    ----------
    f : callable
        Maps V column vectors (sympy Matrices (d_v, 1)) to a sympy Matrix or Array whose
        entries are polynomials in them.
    w : sympy Matrix (k, 1)
        Weights :math:`w_h`.
    Ms : list of V sympy Matrices (d_v, k)
        Means :math:`M_v=[\mu_{v,1}|\cdots|\mu_{v,k}]`.
    sigmas : sympy Matrix (V, k)
        Noise standard deviations :math:`\sigma_{v,h}`.
    z : list of V :class:`sympy.IndexedBase`
        The standard normal vectors :math:`z_v` (independent of each other).

    Returns
    -------
    sympy Matrix or Array, the shape of ``f``'s value. Cost: k evaluations of ``f``, plus
    per entry and component an Isserlis sum ((r-1)!! terms for r normal factors).

    See Also
    --------
    discrete_expectation : the same for categorical views.

    Examples
    --------
    One component of dimension one: :math:`E[x_1^2]=\mu^2+\sigma^2` and
    :math:`E[x_1x_2]=\mu_1\mu_2`.

    >>> import sympy as sp
    >>> from mvlib.core.symbolic import gaussian_mixture_expectation, mixture_symbols
    >>> w, Ms = mixture_symbols(1, (1, 1, 1))
    >>> sig = sp.Matrix(3, 1, sp.symbols("s_1:4", positive=True))
    >>> zs = [sp.IndexedBase(f"z_{v}") for v in (1, 2, 3)]
    >>> gaussian_mixture_expectation(lambda x1, x2, x3: x1 * x1.T, w, Ms, sig, zs)
    Matrix([[w_1*(a_{1,1}**2 + s_1**2)]])
    >>> gaussian_mixture_expectation(lambda x1, x2, x3: x1 * x2.T, w, Ms, sig, zs)
    Matrix([[a_{1,1}*b_{1,1}*w_1]])
    """
    total = None
    for c in range(w.shape[0]):
        xs = [sp.Matrix(M.shape[0], 1, lambda a, _, v=v, M=M: M[a, c] + sigmas[v, c] * z[v][a])
              for v, M in enumerate(Ms)]
        value = f(*xs).applyfunc(lambda e: w[c] * gaussian_expectation(e, z))
        total = value if total is None else total + value
    return total


__all__ += ["gaussian_mixture_expectation"]


def as_float_array(expr, values=None):
    r"""A sympy Matrix, Array or expression, evaluated exactly at ``values``, as a float array.

    The bridge from a derivation to numbers: the substitution :math:`s\mapsto` ``values[s]`` is
    made in exact arithmetic (rationals stay rationals), and only the result is rounded to
    floats, entry by entry. Every free symbol must receive a value.

    Parameters
    ----------
    expr : sympy Matrix (m, n), Array of any shape, or scalar expression
    values : dict symbol -> number, optional

    Returns
    -------
    numpy float array of the shape of ``expr`` (0-d for a scalar). Cost: one substitution per
    entry.

    Examples
    --------
    >>> import sympy as sp
    >>> from mvlib.core.symbolic import as_float_array
    >>> a = sp.Symbol("a")
    >>> as_float_array(sp.Matrix([[a, 1], [a**2, sp.Rational(1, 4)]]), {a: sp.Rational(1, 2)})
    array([[0.5 , 1.  ],
           [0.25, 0.25]])
    """
    A = sp.Array(expr) if isinstance(expr, (sp.MatrixBase, sp.NDimArray, list, tuple)) else expr
    value = A.subs(values or {}) if isinstance(A, sp.Basic) else A
    if isinstance(value, sp.NDimArray):
        return np.array(value.tolist(), dtype=float)
    return np.array(float(value))


__all__ += ["as_float_array"]


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
    >>> from mvlib.core.symbolic import is_zero_polynomial
    >>> a, b = sp.symbols("a b")
    >>> is_zero_polynomial((a + b) ** 2 - a**2 - 2 * a * b - b**2)
    True
    >>> is_zero_polynomial((a + b) ** 2 - a**2 - b**2)
    False
    >>> is_zero_polynomial(sp.Matrix([[a * (1 - b) + a * b - a, sp.Rational(1, 2) * (2 * a) - a]]))
    True
    """
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
