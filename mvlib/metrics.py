r"""Permutation-matched parameter errors.

Mixture components are identifiable only up to a relabelling (and
eigenvectors of odd tensors only up to nothing; of matrices up to sign), so
an estimate is compared with the truth after the best matching, found by the
Hungarian algorithm (``scipy.optimize.linear_sum_assignment``) on the matrix
of pairwise column distances. Cost O(d k² + k³).
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from ._validation import check_matrix

__all__ = ["match_columns", "column_errors", "matched_error", "error_text"]


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
    B = check_matrix(estimate, "estimate", shape=A.shape)
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
    B = check_matrix(estimate, "estimate", shape=A.shape)
    perm, signs = match_columns(A, B, sign_invariant=sign_invariant)
    err = np.linalg.norm(A - B[:, perm] * signs, axis=0)
    if relative:
        err = err / np.linalg.norm(A, axis=0)
    return err


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
