"""Errors of a fitted three-view mixture against the true view means and weights."""
from __future__ import annotations

import numpy as np

from ..core.metrics import match_columns

__all__ = ["view_errors"]


def view_errors(estimator, means, weights, *, on: int = 2):
    r"""Relative errors of every view's means and the weight error, under ONE relabelling.

    The columns of :math:`\hat M_{\text{on}}` are matched to those of :math:`M_{\text{on}}`
    (Hungarian algorithm, :func:`mvlib.core.metrics.match_columns`), and that single
    permutation π is applied to every view and to the weights, so a fit whose views come
    back in different orders is penalised. Used in :doc:`/chapters/04_three_view_mixtures`.

    Parameters
    ----------
    estimator : fitted estimator with ``means_`` (three arrays (k, d_v)) and ``weights_`` (k,)
    means : list of three arrays (d_v, k)
        The true view mean matrices :math:`M_v`.
    weights : array (k,)
        The true weights.
    on : int, default 2
        The view (0, 1 or 2) on which the permutation is found.

    Returns
    -------
    rel : list of three floats
        :math:`\lVert\hat M_v[:,\pi]-M_v\rVert_F/\lVert M_v\rVert_F` for v = 1, 2, 3.
    weight_error : float
        :math:`\max_h|\hat w_{\pi(h)}-w_h|`.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from mvlib.multiview import view_errors
    >>> means = [np.array([[1.0, 2.0], [0.0, 1.0]])] * 3
    >>> fit = SimpleNamespace(means_=[M[:, ::-1].T for M in means], weights_=np.array([0.6, 0.4]))
    >>> rel, w_err = view_errors(fit, means, [0.4, 0.6])   # the same model, components swapped
    >>> [float(r) for r in rel], float(w_err)
    ([0.0, 0.0, 0.0], 0.0)
    """
    perm, _ = match_columns(means[on], estimator.means_[on].T)
    rel = [np.linalg.norm(estimator.means_[v].T[:, perm] - means[v]) / np.linalg.norm(means[v])
           for v in range(3)]
    return rel, np.abs(estimator.weights_[perm] - np.asarray(weights)).max()
