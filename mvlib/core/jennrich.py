r"""Jennrich's algorithm: a symmetric CP decomposition from two random slices.

Harshman (1970) credits the idea to R. I. Jennrich; Leurgans, Ross and Abel (1993)
analysed it. For a symmetric tensor :math:`T=\sum_{h=1}^k\lambda_h v_h^{\otimes3}`
(k × k × k, linearly independent :math:`v_h`, e.g. a whitened third moment, whose
:math:`v_h` are orthonormal) and two vectors :math:`a, b`, the slices

.. math::

    T(I,I,a)=V\operatorname{diag}(\lambda_h\langle v_h,a\rangle)V^\top,\qquad
    T(I,I,b)=V\operatorname{diag}(\lambda_h\langle v_h,b\rangle)V^\top

give :math:`T(I,I,a)\,T(I,I,b)^{-1}=V\operatorname{diag}(\langle v_h,a\rangle/\langle v_h,b\rangle)V^{-1}`,
whose eigenvectors are the :math:`v_h` as soon as the ratios are distinct, which holds
with probability one for random a, b. It is the same simultaneous diagonalisation as
Algorithm B of Anandkumar, Hsu and Kakade (2012) (chapter
:doc:`/chapters/04_three_view_mixtures`), where the slices are P123(η) of three views.
"""
from __future__ import annotations

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor

from .validation import check_cubic_tensor, check_random_state, check_rank, scale_exponent, scaled, unscale

__all__ = ["jennrich"]


def jennrich(T, rank, *, random_state=None) -> CPTensor:
    r"""Symmetric CP decomposition by simultaneous diagonalisation of two random slices.

    See :doc:`/chapters/02_whitening_power` for the derivation and the comparison with
    :func:`mvlib.tensor_power_method`; the same idea is Algorithm B of
    :doc:`/chapters/04_three_view_mixtures`.

    Steps (Harshman 1970; Leurgans, Ross and Abel 1993):

    1. If ``rank < k``, project onto the top-``rank`` left singular subspace U (k, rank)
       of the mode-1 unfolding, :math:`T\leftarrow T(U,U,U)` (rank × rank × rank).
    2. Draw :math:`a, b\sim N(0, I)` and form the slices
       :math:`T_a=T(I,I,a)`, :math:`T_b=T(I,I,b)` (symmetrised in their two modes).
    3. The eigenvectors of :math:`T_a T_b^{-1}=V\operatorname{diag}(\langle v_h,a\rangle/
       \langle v_h,b\rangle)V^{-1}` are the :math:`v_h` (real parts, unit columns).
    4. The weights: :math:`V^{-1}T_aV^{-\top}=\operatorname{diag}(\lambda_h\langle v_h,a\rangle)`,
       so :math:`\lambda_h` is its h-th diagonal entry divided by :math:`\langle v_h,a\rangle`;
       the sign of each :math:`v_h` is chosen so that :math:`\lambda_h>0`.

    Parameters
    ----------
    T : array-like or tensorly tensor (k, k, k)
        Symmetric (or nearly so), of CP rank ``rank`` with linearly independent factors;
        a whitened third moment :math:`\mathcal{M}_3(W,W,W)` is the intended input.
    rank : int
        Number of components, 1 ≤ rank ≤ k.
    random_state : None, int or numpy.random.Generator
        Draws the two slicing directions a, b.

    Returns
    -------
    tensorly.cp_tensor.CPTensor
        ``(weights, [V, V, V])`` like :func:`mvlib.tensor_power_method`: λ (rank,) sorted
        in decreasing order, unit columns of V (k, rank), :math:`T\approx\sum_h\lambda_h
        v_h^{\otimes3}`. Exact (to rounding) on an exactly decomposable T.

    Cost: O(k³) for the two contractions and the eigendecomposition when
    ``rank = k``; the projection of step 1 adds O(k⁴). No iterations, no restarts, but
    the error under a perturbation E grows with the conditioning of :math:`T_b` and
    with 1/(gap between the ratios :math:`\langle v_h,a\rangle/\langle v_h,b\rangle`),
    which the tensor power method does not pay.
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    rank = check_rank(rank, "rank", k, "the dimension k of T")
    rng = check_random_state(random_state)
    e = scale_exponent(T)   # extreme scale: decompose T / 2**e (exact); the weights come back
    T = scaled(T, e)

    U = None
    core = T
    if rank < k:
        unfolding = T.reshape(k, k * k)
        evals, evecs = np.linalg.eigh(unfolding @ unfolding.T)
        U = evecs[:, ::-1][:, :rank]
        core = np.einsum("abc,ai,bj,cl->ijl", T, U, U, U, optimize=True)

    a, b = rng.standard_normal((2, rank))
    Ta = np.einsum("ijl,l->ij", core, a)
    Tb = np.einsum("ijl,l->ij", core, b)
    Ta, Tb = 0.5 * (Ta + Ta.T), 0.5 * (Tb + Tb.T)
    if np.linalg.matrix_rank(Tb) < rank:
        raise ValueError(
            f"T has rank below rank={rank}: its slice T(I, I, b) is singular, so rank "
            "exceeds the number of linearly independent components of T"
        )
    # eigenvectors of Ta Tb^{-1}: solve instead of forming the inverse
    mu, Vz = np.linalg.eig(np.linalg.solve(Tb.T, Ta.T).T)
    # Under noise two nearly equal ratios can turn into a complex-conjugate pair; the
    # real and imaginary parts of one eigenvector of the pair span its real subspace.
    Vc = np.real(Vz).copy()
    for p in np.flatnonzero(mu.imag > 0):
        q = int(np.argmin(np.abs(mu - np.conj(mu[p]))))
        Vc[:, q] = np.imag(Vz[:, p])
    Vc /= np.linalg.norm(Vc, axis=0, keepdims=True)
    D = np.diag(np.linalg.solve(Vc, np.linalg.solve(Vc, Ta).T))  # diag(V^-1 Ta V^-T)
    lam = D / (Vc.T @ a)
    signs = np.where(lam < 0, -1.0, 1.0)
    lam, Vc = lam * signs, Vc * signs
    order = np.argsort(-lam, kind="stable")
    lam, Vc = lam[order], Vc[:, order]
    V = Vc if U is None else U @ Vc
    V = V / np.linalg.norm(V, axis=0, keepdims=True)
    lam = unscale(lam, e, "T", "the weights")
    return CPTensor((tl.tensor(lam), [tl.tensor(V), tl.tensor(V.copy()), tl.tensor(V.copy())]))
