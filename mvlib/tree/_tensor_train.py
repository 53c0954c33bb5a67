r"""Low-rank kernel embeddings along a latent tree (a tensor-train chain).

The joint embedding :math:`\mathcal C_{X_{1:d}}=\E[\otimes_{j=1}^d\phi(X_j)]` of d
variables whose dependence runs through a chain of hidden variables
:math:`Z_1-Z_2-\dots-Z_{d-1}` has low-rank reshapings
:math:`\mathcal C_{X_{1:k};X_{k+1:d}}` (rank at most the number of hidden states at the
cut). Algorithm 1 of Song & Dai (2013) exploits this: SVD of the reshaping
:math:`\mathcal A_1=\mathcal C_{X_1;X_{2:d}}`, keep :math:`\mathcal U_r`, reshape
:math:`\mathcal S_r\mathcal V_r^\top` into :math:`\mathcal B_2`, repeat. The result is a
chain of cores :math:`\mathcal G_1,\dots,\mathcal G_d` — a tensor train, held here as a
:class:`tensorly.tt_tensor.TTTensor`.

* :func:`tt_embedding` runs the chain on an explicit finite tensor and reports the
  truncation error of every step; :func:`reshaping_errors` gives the best rank-r error
  :math:`\epsilon_k` of every reshaping of the tensor itself (the ε of Theorem 1).
* :class:`mvlib.LatentTreeEmbedding` (in :mod:`mvlib.tree`) runs the same chain on the empirical embedding
  :math:`\widehat{\mathcal C}=\frac1n\sum_i\otimes_j\phi(x_j^i)` using kernel matrices
  only (Algorithm 3, eqs. (17)–(21) of Song & Dai 2013) and evaluates the decomposed embedding
  at new points (eqs. (19)–(20)): with the normalised Gaussian kernel that value is a
  density estimate, with the delta kernel an estimate of a probability table.

The chapter :doc:`/chapters/08_latent_trees` derives and checks all of it.
"""
from __future__ import annotations

import numbers

import numpy as np
from tensorly.tt_tensor import TTTensor

from ..core.validation import check_array, check_positive_int, scale_exponent, scaled, unscale

__all__ = ["tt_embedding", "reshaping_errors"]


def _check_tensor(C, name="C"):
    if C is None or isinstance(C, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got {type(C).__name__}")
    if not isinstance(C, np.ndarray):
        try:
            C = np.asarray(C)
        except (TypeError, ValueError):   # ragged nested sequences: check_array names them
            return check_array(C, name, ndim=2)
    if C.ndim < 2:
        raise ValueError(f"{name} must have at least 2 modes (one per variable), got ndim={C.ndim}")
    return check_array(C, name, ndim=C.ndim)


def _check_ranks(ranks, n_cuts: int, name="ranks", of=None):
    """An int or a sequence of ``n_cuts`` ints, each >= 1 -> list of ints."""
    if isinstance(ranks, (numbers.Integral, np.integer)) and not isinstance(ranks, bool):
        ranks = [ranks] * n_cuts
    if isinstance(ranks, (str, bytes)) or not hasattr(ranks, "__len__"):
        raise TypeError(f"{name} must be an int or a sequence of ints, got {type(ranks).__name__}")
    ranks = list(ranks)
    if len(ranks) != n_cuts:
        raise ValueError(f"{name} must hold one rank per edge of the chain ({n_cuts}), got {len(ranks)}"
                         + (f" ({of} has {n_cuts + 1} modes)" if of else ""))
    return [check_positive_int(r, f"{name}[{k}]") for k, r in enumerate(ranks)]


def _truncate(A, r):
    """Rank-r truncated SVD of A: (U_r, S_r, Vt_r, discarded Frobenius error)."""
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = min(r, s.size)
    err = float(np.sqrt(np.sum(s[r:] ** 2)))
    return U[:, :r], s[:r], Vt[:r], err


def tt_embedding(C, ranks, *, return_errors: bool = False):
    r"""Decompose an explicit embedding tensor into a chain of low-rank cores (Algorithm 1).

    Step k takes the SVD of :math:`\mathcal A_k` (the current remainder reshaped as
    (r_{k-1}·n_k) × (n_{k+1}⋯n_d); :math:`\mathcal A_1=\mathcal C_{X_1;X_{2:d}}`), keeps
    the leading ``ranks[k-1]`` left singular vectors as core
    :math:`\mathcal G_k` (shape (r_{k-1}, n_k, r_k)) and continues with
    :math:`\mathcal B_{k+1}=\mathcal S_r\mathcal V_r^\top` (Song & Dai 2013, Appendix A). This is
    the TT-SVD of ``tensorly.decomposition.tensor_train``; unlike it, the truncation
    error of every step is returned. See :doc:`/chapters/08_latent_trees`.

    Parameters
    ----------
    C : array (n_1, ..., n_d), d ≥ 2
    ranks : int or sequence of d-1 ints ≥ 1
        Rank kept at each edge of the chain; a rank above the size of the reshaping is
        lowered to it (the step is then exact).
    return_errors : bool
        Also return the step errors
        :math:`\delta_k=\|\mathcal A_k-\mathcal U_r\mathcal U_r^\top\mathcal A_k\|_F`.

    Returns
    -------
    tt : tensorly.tt_tensor.TTTensor
        Cores of shapes (r_{k-1}, n_k, r_k) with r_0 = r_d = 1;
        ``tensorly.tt_to_tensor(tt)`` is :math:`\tilde{\mathcal C}`.
    errors : array (d-1,), only with ``return_errors``.
        By orthogonality :math:`\|\mathcal C-\tilde{\mathcal C}\|_F^2=\sum_k\delta_k^2`
        and :math:`\delta_k\le\epsilon_k` (see :func:`reshaping_errors`), which gives
        Theorem 1, :math:`\|\mathcal C-\tilde{\mathcal C}\|\le\sqrt{d-1}\,\max_k\epsilon_k`.

    Cost: d-1 SVDs, the first of an n_1 × (n_2⋯n_d) matrix.
    """
    C = _check_tensor(C)
    shape, d = C.shape, C.ndim
    ranks = _check_ranks(ranks, d - 1, of="C")
    e = scale_exponent(C)   # extreme scale: decompose C / 2**e (exact); the last core and errors scale back
    C = scaled(C, e)
    cores, errors = [], []
    r_prev, B = 1, C
    for k in range(d - 1):
        A = B.reshape(r_prev * shape[k], -1)
        U, s, Vt, err = _truncate(A, ranks[k])
        cores.append(U.reshape(r_prev, shape[k], U.shape[1]))
        errors.append(err)
        B = s[:, None] * Vt
        r_prev = U.shape[1]
    cores.append(unscale(B.reshape(r_prev, shape[-1], 1), e, "C", "the last core"))
    tt = TTTensor(cores)
    return (tt, unscale(np.array(errors), e, "C", "the errors")) if return_errors else tt


def reshaping_errors(C, ranks):
    r"""Best rank-r error of every reshaping :math:`\mathcal C_{X_{1:k};X_{k+1:d}}`.

    :math:`\epsilon_k=\min_{\mathrm{rank}\,M\le r_k}\|\mathcal C_{X_{1:k};X_{k+1:d}}-M\|_F`,
    the root sum of squares of the discarded singular values (Eckart–Young); Theorem 1
    of Song & Dai 2013 (eq. (22)) bounds the error of :func:`tt_embedding` by
    :math:`\sqrt{d-1}\max_k\epsilon_k`. See :doc:`/chapters/08_latent_trees`.

    Parameters
    ----------
    C : array (n_1, ..., n_d)
    ranks : int or sequence of d-1 ints ≥ 1

    Returns
    -------
    array (d-1,) of ε_k. Cost: d-1 SVDs of the unfoldings of C.
    """
    C = _check_tensor(C)
    ranks = _check_ranks(ranks, C.ndim - 1, of="C")
    e = scale_exponent(C)   # extreme scale: exact powers of two
    C = scaled(C, e)
    rows = np.cumprod(C.shape)[:-1]
    return unscale(np.array([_truncate(C.reshape(m, -1), r)[3] for m, r in zip(rows, ranks)]), e,
                   "C", "the errors")
