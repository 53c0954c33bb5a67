r"""Whitening from a second moment, and its inverse.

For a symmetric positive semi-definite :math:`M_2=\sum_h w_h\mu_h\mu_h^\top` of rank k,
:math:`W=U_k S_k^{-1/2}` (top-k eigenpairs) satisfies :math:`W^\top M_2 W=I_k`, and
:math:`v_h=\sqrt{w_h}\,W^\top\mu_h` are orthonormal (Anandkumar et al. 2014 §4.3;
Song et al. 2014 §5.1 step 1). The means come back as
:math:`\mu_h=\lambda_h (W^\top)^{+} v_h` with :math:`\lambda_h=1/\sqrt{w_h}`.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .validation import check_array, check_matrix, check_rank, scale_exponent, scaled, unscale, warn_ill_conditioned

__all__ = ["whitening_matrix", "dewhiten"]


def whitening_matrix(M2, rank, *, rtol: float | None = None, return_eigenvalues: bool = False):
    r"""Whitening matrix W (d, rank) with :math:`W^\top M_2 W = I`.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    Parameters
    ----------
    M2 : array (d, d)
        A second moment. If it is not exactly symmetric (empirical pairs of two
        exchangeable views), its symmetric part :math:`(M_2+M_2^\top)/2` is used, as
        in Song et al. 2014 §11.2.1.
    rank : int
        Number of components k; must not exceed the numerical rank of M2.
    rtol : float, optional
        Eigenvalues below ``rtol * max|eigenvalue|`` count as zero; default
        ``d * machine epsilon``.
    return_eigenvalues : bool
        Also return the kept eigenvalues (descending).

    Raises
    ------
    ValueError
        ``rank`` larger than d or than the numerical rank of M2 (the k-th
        eigenvalue is not clearly positive).

    Warns
    -----
    IllConditionedWarning
        When the kept eigenvalues span more than 8 orders of magnitude.

    Cost: one symmetric eigendecomposition, O(d³) (``scipy.linalg.eigh`` with
    ``subset_by_index``).
    """
    M2 = check_matrix(M2, "M2", square=True)
    d = M2.shape[0]
    rank = check_rank(rank, "rank", d, "the dimension of M2")
    e = scale_exponent(M2, even=True)   # extreme scale: whiten M2 / 2**e (exact), W scales by 2**(-e/2)
    if e != 0:
        W, evals = whitening_matrix(scaled(M2, e), rank, rtol=rtol, return_eigenvalues=True)
        W = unscale(W, -e // 2, "M2", "the whitening matrix")
        evals = unscale(evals, e, "M2", "the eigenvalues")
        return (W, evals) if return_eigenvalues else W
    S = 0.5 * (M2 + M2.T)
    evals_all = sla.eigvalsh(S)
    scale = np.max(np.abs(evals_all))
    tol = (d * np.finfo(float).eps if rtol is None else rtol) * max(scale, np.finfo(float).tiny)
    num_rank = int(np.sum(evals_all > tol))
    if rank > num_rank:
        raise ValueError(
            f"rank={rank} exceeds the numerical rank {num_rank} of M2 "
            f"(its {rank}-th largest eigenvalue {np.sort(evals_all)[::-1][rank - 1]:.3e} is not above {tol:.1e})"
        )
    evals, evecs = sla.eigh(S, subset_by_index=[d - rank, d - 1])
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    warn_ill_conditioned(evals[0] / evals[-1], "M2 restricted to its top-rank eigenspace")
    # fix the sign of each eigenvector (largest entry positive) for reproducibility
    signs = np.sign(evecs[np.argmax(np.abs(evecs), axis=0), np.arange(rank)])
    evecs = evecs * signs
    W = evecs / np.sqrt(evals)
    return (W, evals) if return_eigenvalues else W


def dewhiten(W, V, weights=None):
    r"""Undo whitening: :math:`\mu_h = \lambda_h (W^\top)^{+} v_h`.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    Parameters
    ----------
    W : array (d, k) whitening matrix
    V : array (k, m) whitened unit vectors (columns)
    weights : array (m,), optional
        Eigenvalues :math:`\lambda_h` of the whitened tensor; omitted means 1.

    Returns
    -------
    array (d, m). Cost O(d k² + d k m).
    """
    W = check_matrix(W, "W")
    V = check_matrix(V, "V")
    if V.shape[0] != W.shape[1]:
        raise ValueError(f"V has {V.shape[0]} rows but W has {W.shape[1]} columns")
    if weights is not None:
        weights = check_array(weights, "weights", ndim=1)
        if weights.shape[0] != V.shape[1]:
            raise ValueError(f"weights has length {weights.shape[0]} but V has {V.shape[1]} columns")
    # extreme scales: exact powers of two
    ew, ev = scale_exponent(W), scale_exponent(V)
    el = scale_exponent(weights) if weights is not None else 0
    B = np.linalg.pinv(scaled(W, ew).T)
    out = B @ scaled(V, ev)
    if weights is not None:
        out = out * scaled(weights, el)[None, :]
    return unscale(out, ev + el - ew, "W, V, weights", "the un-whitened vectors")


__all__ += ["symmetrize_views"]


def symmetrize_views(P12, P13, P23):
    r"""Matrices :math:`S_1=P_{32}P_{12}^{-1}`, :math:`S_2=P_{31}P_{21}^{-1}` that make views 1, 2 look like view 3.

    See :doc:`/chapters/02_whitening_power` for whitening; the symmetrisation is
    Song et al. 2014, Appendix 9 and Anandkumar et al. 2014 §3.3
    (chapter: Topic models and observable operators).

    For a three-view mixture with :math:`P_{ab}=M_a\operatorname{diag}(w)M_b^\top`
    (square, invertible: use projected coordinates
    :math:`U_a^\top P_{ab}U_b` with k columns), :math:`\tilde x_1=S_1x_1` and
    :math:`\tilde x_2=S_2x_2` satisfy :math:`E[\tilde x_v\mid h=j]=\mu_{3,j}`, hence

    .. math:: E[\tilde x_1\otimes\tilde x_2]=M_3\operatorname{diag}(w)M_3^\top,\qquad
              E[\tilde x_1\otimes\tilde x_2\otimes x_3]=\sum_j w_j\,\mu_{3,j}^{\otimes3},

    the symmetric moments the tensor power method needs. Since
    :math:`S_1M_1=M_3` and :math:`S_2M_2=M_3`, the other views' means come back as
    :math:`M_1=S_1^{-1}M_3` and :math:`M_2=S_2^{-1}M_3`, in the same column order.

    Parameters
    ----------
    P12, P13, P23 : arrays (k, k)
        Cross moments of the (projected) views; ``P12`` must be invertible.

    Returns
    -------
    S1, S2 : arrays (k, k)

    Notes
    -----
    Cost O(k³) (two linear solves).
    """
    P12 = check_matrix(P12, "P12", square=True)
    k = P12.shape[0]
    P13 = check_matrix(P13, "P13", shape=(k, k))
    P23 = check_matrix(P23, "P23", shape=(k, k))
    es = [scale_exponent(P) for P in (P12, P13, P23)]   # extreme scales: exact powers of two
    P12, P13, P23 = (scaled(P, e) for P, e in zip((P12, P13, P23), es))
    s = sla.svdvals(P12)
    if not s[-1] > k * np.finfo(float).eps * s[0]:
        raise ValueError(f"P12 is singular (smallest singular value {s[-1]:.1e}); views cannot be symmetrised")
    warn_ill_conditioned(s[0] / s[-1], "P12")
    S1 = sla.solve(P12.T, P23).T   # P32 P12^{-1} = (P12^{-T} P23)^T
    S2 = sla.solve(P12, P13).T     # P31 P21^{-1} = (P12^{-1} P13)^T
    return (unscale(S1, es[2] - es[0], "P12, P23", "S1"), unscale(S2, es[1] - es[0], "P12, P13", "S2"))
