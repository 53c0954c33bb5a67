r"""Permutation-matched parameter errors, and the NPMI coherence of topics.

Mixture components are identifiable only up to a relabelling (and
eigenvectors of odd tensors only up to nothing; of matrices up to sign), so
an estimate is compared with the truth after the best matching, found by the
Hungarian algorithm (``scipy.optimize.linear_sum_assignment``) on the matrix
of pairwise column distances. Cost O(d k² + k³).

Topic quality without ground truth: :func:`npmi_coherence` (Bouma 2009), computed on
reference (e.g. held-out) documents.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from .validation import check_matrix, scale_exponent, scaled, unscale

__all__ = ["match_columns", "column_errors", "matched_error", "error_text", "npmi_coherence"]


def match_columns(true, estimate, *, sign_invariant: bool = False):
    r"""Permutation (and signs) aligning the columns of ``estimate`` with ``true``.

    Used throughout the book, first in :doc:`/chapters/02_whitening_power`.

    Parameters
    ----------
    true, estimate : arrays (d, k) with components as columns
    sign_invariant : bool
        Treat a column and its negative as the same (eigenvectors of matrices).

    Returns
    -------
    perm : int array (k,)
        ``estimate[:, perm]`` is aligned with ``true``.
    signs : array (k,) of ±1
        Multiply the permuted columns by these (all ones unless ``sign_invariant``).
    """
    A = check_matrix(true, "true")
    B = check_matrix(estimate, "estimate", shape=A.shape, by="true")
    e = _common_exponent(A, B)   # extreme scales: distances in units of 2**e (exact)
    A, B = scaled(A, e), scaled(B, e)
    cost = cdist(A.T, B.T)
    if sign_invariant:
        cost_neg = cdist(A.T, -B.T)
        flip = cost_neg < cost
        cost = np.where(flip, cost_neg, cost)
    rows, perm = linear_sum_assignment(cost)
    signs = np.ones(A.shape[1])
    if sign_invariant:
        signs = np.where(flip[rows, perm], -1.0, 1.0)
    return perm, signs


def column_errors(true, estimate, *, sign_invariant: bool = False, relative: bool = False):
    r"""Per-component errors :math:`\|a_j-\hat a_{\pi(j)}\|_2` after the best matching π.

    Used throughout the book, first in :doc:`/chapters/02_whitening_power`.

    With ``relative=True`` each error is divided by :math:`\|a_j\|_2`.
    Returns an array (k,) in the column order of ``true``.
    """
    A = check_matrix(true, "true")
    B = check_matrix(estimate, "estimate", shape=A.shape, by="true")
    e = _common_exponent(A, B)   # extreme scales: errors in units of 2**e (exact)
    A, B = scaled(A, e), scaled(B, e)
    perm, signs = match_columns(A, B, sign_invariant=sign_invariant)
    err = np.linalg.norm(A - B[:, perm] * signs, axis=0)
    if relative:
        norms = np.linalg.norm(A, axis=0)
        if np.any(norms == 0):
            raise ValueError(f"true has a zero column ({int(np.flatnonzero(norms == 0)[0])}); "
                             "relative errors are undefined")
        return err / norms
    return unscale(err, e, "true, estimate", "the errors")


def _common_exponent(A, B):
    return scale_exponent(np.array([np.max(np.abs(A)), np.max(np.abs(B))]))


def matched_error(true, estimate, *, sign_invariant: bool = False, relative: bool = False) -> float:
    """The largest of :func:`column_errors`: one number for "all components recovered".

    Used throughout the book, first in :doc:`/chapters/02_whitening_power`.
    """
    return float(np.max(column_errors(true, estimate, sign_invariant=sign_invariant, relative=relative)))


def error_text(value, floor: float = 1e-12) -> str:
    r"""Text for a measured numerical error that prints the same on every machine.

    Used by the chapters (first in :doc:`/chapters/02_whitening_power`) to print the size of
    an error that an ``assert`` has already checked. Errors at the level of rounding
    (1e-16 .. 1e-13) differ in their leading digit between CPUs and BLAS builds, and the
    book's outputs are compared digit by digit, so values below ``floor`` print as
    ``"< floor"``; larger values print with two significant digits as ``"= 1.2e-05"``.

    Parameters
    ----------
    value : float ≥ 0 (an absolute or relative error)
    floor : float > 0, default 1e-12

    Returns
    -------
    str, e.g. ``"< 1e-12"`` or ``"= 3.4e-07"``. Cost O(1).
    """
    value, floor = float(value), float(floor)
    if not floor > 0:
        raise ValueError(f"floor={floor!r} must be positive")
    if np.isnan(value):
        raise ValueError("value is NaN")
    return f"< {floor:.0e}" if value < floor else f"= {value:.1e}"


def npmi_coherence(topic_word, X_ref, *, top: int = 10):
    r"""NPMI coherence of each topic's top words, from document co-occurrence in ``X_ref``.

    Used in :doc:`/chapters/03_topic_models` to compare topic models on held-out documents.

    For the ``top`` most probable words :math:`v_1,\dots,v_T` of a topic (ties broken by
    word index), with :math:`p(v)` and :math:`p(v,v')` the fractions of the reference
    documents that contain :math:`v`, resp. both words, the normalised pointwise mutual
    information of Bouma (2009) is

    .. math:: \mathrm{NPMI}(v,v') = \frac{\log\frac{p(v,v')}{p(v)\,p(v')}}{-\log p(v,v')}
              \in[-1, 1],

    −1 for words that never co-occur (its limit as :math:`p(v,v')\to0`, also used when a word
    is absent from ``X_ref``), +1 for words that always occur together (and when
    :math:`p(v,v')=1`). A topic's coherence is the mean over its :math:`T(T-1)/2` pairs. Unlike
    UMass (Mimno et al. 2011), which is computed on the training documents and rewards
    frequent words, NPMI on held-out documents measures whether the top words co-occur
    beyond chance in text the model has not seen.

    Parameters
    ----------
    topic_word : array (k, n_words), one topic per row (any non-negative scores)
    X_ref : array or scipy.sparse (n_docs, n_words), counts (only presence is used)
    top : int ≥ 2, default 10

    Returns
    -------
    array (k,) of mean NPMI per topic. Cost O(nnz + k T² n_docs).
    """
    B = check_matrix(topic_word, "topic_word")
    if sp.issparse(X_ref):
        present = (sp.csr_matrix(X_ref) > 0).astype(float).toarray()
    else:
        Xr = np.asarray(X_ref, dtype=float)
        if Xr.ndim != 2:
            raise ValueError(f"X_ref must be 2-dimensional, got ndim={Xr.ndim}")
        if not np.all(np.isfinite(Xr)):
            raise ValueError("X_ref contains NaN or infinite values")
        present = (Xr > 0).astype(float)
    n_docs, d = present.shape
    if d != B.shape[1]:
        raise ValueError(f"topic_word has {B.shape[1]} words but X_ref has {d} columns")
    if n_docs < 1:
        raise ValueError("X_ref has no documents")
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 2 <= top <= d:
        raise ValueError(f"top must be an integer in [2, {d}], got {top!r}")
    out = np.empty(B.shape[0])
    iu = np.triu_indices(top, 1)
    for h, row in enumerate(B):
        v = np.argsort(-row, kind="stable")[:top]
        P = present[:, v]
        p1 = P.mean(axis=0)
        p12 = (P.T @ P / n_docs)[iu]
        pa, pb = p1[iu[0]], p1[iu[1]]
        with np.errstate(divide="ignore", invalid="ignore"):
            npmi = np.log(p12 / (pa * pb)) / -np.log(p12)
        npmi = np.where(p12 <= 0, -1.0, np.where(p12 >= 1, 1.0, npmi))
        out[h] = float(npmi.mean())
    return out


def relative_error(estimate, truth) -> float:
    r"""Relative Frobenius error :math:`\|\hat P-P\|_F/\|P\|_F` of an estimate, any shape.

    Used for the sampling error of empirical moments in :doc:`/chapters/01_multiview_moments`
    (:math:`\hat P` = ``mvlib.pairs``, ``triples`` or ``triples_slice``, P the population moment).

    Parameters
    ----------
    estimate, truth : arrays of the same shape; ``truth`` not zero.

    Returns
    -------
    float. Cost O(size).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.core.metrics import relative_error
    >>> relative_error(np.array([[3.0, 0.0], [0.0, 4.0]]), np.array([[3.0, 0.0], [0.0, 5.0]]))
    0.171...
    """
    estimate, truth = np.asarray(estimate, dtype=float), np.asarray(truth, dtype=float)
    if estimate.shape != truth.shape:
        raise ValueError(f"estimate has shape {estimate.shape} but truth has {truth.shape}")
    norm = np.linalg.norm(truth)
    if norm == 0:
        raise ValueError("truth is zero; the relative error is undefined")
    return float(np.linalg.norm(estimate - truth) / norm)


def largest_sine(A, B) -> float:
    r"""Sine of the largest principal angle between the column spaces of A and B.

    With :math:`Q_A, Q_B` orthonormal bases of the two spaces (QR), this is
    :math:`\sin\Theta_{\max}=\|Q_A-Q_B Q_B^\top Q_A\|_2` (Golub and Van Loan, *Matrix
    Computations*, §6.4.3): 0 for the same space, 1 when some direction of one is orthogonal
    to the other. Used in :doc:`/chapters/01_multiview_moments` to measure how well the top
    singular vectors of an empirical :math:`\hat P_{12}` span the columns of :math:`M_1`.

    Parameters
    ----------
    A, B : arrays (d, r) of full column rank r ≤ d.

    Returns
    -------
    float in [0, 1]. Cost O(d r²).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.core.metrics import largest_sine
    >>> A = np.array([[1.0], [0.0]])
    >>> largest_sine(A, np.array([[2.0], [0.0]])), largest_sine(A, np.array([[1.0], [1.0]]))
    (0.0, 0.707...)
    """
    A = check_matrix(A, "A")
    B = check_matrix(B, "B", shape=A.shape, by="A")
    Qa, Qb = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    return float(np.linalg.norm(Qa - Qb @ (Qb.T @ Qa), 2))


__all__ += ["relative_error", "largest_sine"]
