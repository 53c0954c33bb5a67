r"""Tensor algebra for third-order moments, on top of :mod:`tensorly`.

Notation (the book's notation table): for a tensor :math:`T\in\mathbb R^{d_1\times d_2\times d_3}`
and matrices :math:`V_v\in\mathbb R^{d_v\times k_v}`, the multilinear map is

.. math:: T(V_1, V_2, V_3)_{abc} = \sum_{ijl} T_{ijl} (V_1)_{ia} (V_2)_{jb} (V_3)_{lc},

i.e. ``T x_1 V1^T x_2 V2^T x_3 V3^T`` in mode-product notation (Kolda & Bader 2009).
"""
from __future__ import annotations

import itertools

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor
from tensorly.tenalg import multi_mode_dot

from .validation import (
    check_array,
    check_cubic_tensor,
    check_positive_int,
    check_random_state,
    check_vector_or_matrix,
    scale_exponent,
    scaled,
    unscale,
)

__all__ = [
    "multilinear",
    "outer3",
    "symmetric_outer",
    "symmetrize3",
    "cp_tensor",
    "cp_to_dense",
    "symmetrize",
    "random_odeco_tensor",
    "random_symmetric_tensor",
]


def multilinear(T, V1, V2, V3):
    r"""The multilinear map :math:`T(V_1, V_2, V_3)`.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    Parameters
    ----------
    T : array (d1, d2, d3)
    V1, V2, V3 : arrays (d_v, k_v) or 1-d arrays (d_v,)
        A 1-d argument contracts that mode away (e.g. ``T(I, θ, θ)`` is
        ``multilinear(T, np.eye(d), θ, θ)``).

    Returns
    -------
    array of shape (k1, k2, k3) with vector arguments' modes removed.

    Notes
    -----
    Cost O(d1 d2 d3 k1) for the first contraction (largest), through
    ``tensorly.tenalg.multi_mode_dot``.
    """
    T = check_array(tl.to_numpy(T) if tl.is_tensor(T) and not isinstance(T, np.ndarray) else T, "T", ndim=3)
    mats, e = [], scale_exponent(T)
    T = tl.tensor(scaled(T, e))
    for i, V in enumerate((V1, V2, V3)):
        name = f"V{i + 1}"
        V = check_vector_or_matrix(V, name)
        if V.shape[0] != T.shape[i]:
            raise ValueError(f"{name} has {V.shape[0]} rows but T has {T.shape[i]} entries along mode {i + 1}")
        ev = scale_exponent(V)
        e += ev
        V = scaled(V, ev)
        mats.append(V if V.ndim == 1 else V.T)
    out = tl.to_numpy(multi_mode_dot(T, mats, modes=[0, 1, 2]))
    return unscale(out, e, "T, V1, V2, V3", "the multilinear map")



def outer3(a, b, c):
    r"""The rank-one tensor :math:`a\otimes b\otimes c`, shape (len a, len b, len c).

    See :doc:`/chapters/01_multiview_moments` for the derivation and a numerical check.
    """
    return _outer3(a, b, c, ("a", "b", "c"))


def _outer3(a, b, c, names):
    vs = [check_array(x, nm, ndim=1) for x, nm in zip((a, b, c), names)]
    es = [scale_exponent(x) for x in vs]
    out = np.einsum("i,j,l->ijl", *(scaled(x, e) for x, e in zip(vs, es)))
    return unscale(out, sum(es), ", ".join(dict.fromkeys(names)), "the outer product")


def symmetric_outer(v):
    r""":math:`v^{\otimes 3}`.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.
    """
    return _outer3(v, v, v, ("v",) * 3)


def symmetrize3(xi1, xi2, xi3):
    r"""The cyclic symmetrisation of Song et al. (2014), §5.2:

    See :doc:`/chapters/01_multiview_moments` for the derivation and a numerical check.

    .. math:: \otimes[\xi_1,\xi_2,\xi_3] = \xi_1\otimes\xi_2\otimes\xi_3
              + \xi_3\otimes\xi_1\otimes\xi_2 + \xi_2\otimes\xi_3\otimes\xi_1 .

    Arguments are 1-d vectors of one length k, or 2-d arrays (n, k) of n
    samples each, in which case the result is the average over samples
    ``(1/n) Σ_i ⊗[ξ1ⁱ, ξ2ⁱ, ξ3ⁱ]`` computed without (n, k, k, k) arrays
    (cost O(n k³), memory O(k³)).
    """
    names = ("xi1", "xi2", "xi3")
    A, B, C = (check_vector_or_matrix(x, nm) for x, nm in zip((xi1, xi2, xi3), names))
    if not A.ndim == B.ndim == C.ndim:
        raise ValueError("xi1, xi2, xi3 must be all vectors (k,) or all matrices (n, k), got "
                         f"shapes {A.shape}, {B.shape}, {C.shape}")
    for X, nm in zip((B, C), names[1:]):
        if X.shape != A.shape:
            raise ValueError(f"{nm} has shape {X.shape} but xi1 has shape {A.shape}")
    es = [scale_exponent(X) for X in (A, B, C)]
    A, B, C = (scaled(X, e) for X, e in zip((A, B, C), es))
    if A.ndim == 1:
        out = outer3(A, B, C) + outer3(C, A, B) + outer3(B, C, A)
    else:
        from .moments import triple_product
        n = A.shape[0]
        out = (triple_product(A, B, C) + triple_product(C, A, B) + triple_product(B, C, A)) / n
    return unscale(out, sum(es), "xi1, xi2, xi3", "the symmetrised tensor")


def cp_tensor(weights, factors) -> CPTensor:
    """Build (and validate) a :class:`tensorly.cp_tensor.CPTensor`."""
    cp = CPTensor((tl.tensor(np.asarray(weights, float)), [tl.tensor(np.asarray(F, float)) for F in factors]))
    return cp


def cp_to_dense(cp) -> np.ndarray:
    r"""Dense array of a CP tensor :math:`\sum_h \lambda_h a_h\otimes b_h\otimes c_h`."""
    return tl.to_numpy(tl.cp_to_tensor(cp))


def symmetrize(T):
    r"""The symmetric part :math:`\frac16\sum_{\pi\in S_3} T^{\pi}` of a cubic tensor (k, k, k).

    Averages the six transpositions of the modes; a symmetric tensor is
    returned unchanged (up to rounding). Cost O(k³).
    """
    T = check_cubic_tensor(T)
    return sum(T.transpose(p) for p in itertools.permutations(range(3))) / 6


def random_odeco_tensor(k, random_state=None, *, concentration: float = 5.0):
    r"""A random orthogonally decomposable tensor :math:`T=\sum_h\lambda_h v_h^{\otimes3}`.

    The :math:`v_h` are the columns of a Haar-random orthogonal matrix V (k, k);
    :math:`\lambda_h=1/\sqrt{w_h}` with :math:`w\sim\mathrm{Dirichlet}(\text{concentration})`,
    the eigenvalues of a whitened mixture moment (see :doc:`/chapters/02_whitening_power`).

    Returns ``(T, lam, V)`` with T (k, k, k), lam (k,), V (k, k). Cost O(k³).
    """
    k = check_positive_int(k, "k")
    rng = check_random_state(random_state)
    V, R = np.linalg.qr(rng.standard_normal((k, k)))
    V = V * np.sign(np.diag(R))  # Haar measure: fix the signs of the QR factor
    lam = 1 / np.sqrt(rng.dirichlet(np.full(k, float(concentration))))
    return cp_to_dense(cp_tensor(lam, [V, V, V])), lam, V


def random_symmetric_tensor(k, random_state=None):
    r""":func:`symmetrize` of a tensor with i.i.d. N(0, 1) entries: symmetric noise (k, k, k).

    Used as the perturbation E in the robustness experiments of
    :doc:`/chapters/02_whitening_power`. Cost O(k³).
    """
    k = check_positive_int(k, "k")
    return symmetrize(check_random_state(random_state).standard_normal((k, k, k)))
