r"""Sampling the multi-view latent variable model with symmetric views.

A hidden label :math:`h\in\{0,\dots,k-1\}` is drawn with probability :math:`\pi_h`; then
``n_views`` observations are drawn independently from the same conditional law
:math:`P(X\mid h)`, which may be any distribution (Song, Anandkumar, Dai & Xie 2014, eq. (1)):

.. math:: P(x_1,\dots,x_V)=\sum_h\pi_h\prod_{v=1}^V P(x_v\mid h).

See :doc:`/chapters/07_kernel_embeddings`.
"""
from __future__ import annotations

import numpy as np

from ..core.validation import check_array, check_positive_int, check_random_state

__all__ = ["sample_views"]


def sample_views(components, weights, n_samples, random_state=None, *, n_views: int = 3):
    r"""Draw from a mixture whose views share their conditional laws: returns ``(views, h)``.

    Each sample draws :math:`h\sim\pi` and then ``n_views`` independent values from
    ``components[h]``, so :math:`P(x_1,\dots,x_V)=\sum_h\pi_h\prod_vP(x_v\mid h)`
    (eq-ch7-model of :doc:`/chapters/07_kernel_embeddings`).

    Parameters
    ----------
    components : sequence of k frozen ``scipy.stats`` distributions (one-dimensional)
        :math:`P(X\mid h)`; anything with ``rvs(size=..., random_state=...)`` works, discrete
        ones (``scipy.stats.rv_discrete``) included.
    weights : array (k,)
        Mixing weights :math:`\pi_h` (non-negative, summing to one).
    n_samples : int
        m, the number of samples.
    random_state : None, int or numpy Generator
    n_views : int, default 3

    Returns
    -------
    views : list of n_views arrays (n_samples, 1)
        Sample i of view v is ``views[v][i, 0]``.
    h : int array (n_samples,)
        The hidden labels.

    Notes
    -----
    The order of the draws is fixed: the labels first (``rng.choice``), then, for each
    component in turn, an (n_samples, n_views) array of draws, of which sample i keeps the row
    of its own component. So a given seed always gives the same sample, at the cost of
    drawing k times more values than needed. Cost O(k · n_samples · n_views).

    See Also
    --------
    mvlib.KernelSpectral : fits this model from the views.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from mvlib.kernel import sample_views
    >>> views, h = sample_views([stats.norm(-5, 1), stats.norm(5, 1)], [0.5, 0.5], 1000, 0)
    >>> len(views), views[0].shape, h.shape
    (3, (1000, 1), (1000,))
    >>> bool(np.all(np.sign(views[2][:, 0]) == np.where(h == 1, 1, -1)))
    True
    """
    m = check_positive_int(n_samples, "n_samples")
    n_views = check_positive_int(n_views, "n_views")
    w = check_array(weights, "weights", ndim=1)
    if len(components) != w.size:
        raise ValueError(f"{len(components)} components but {w.size} weights")
    if np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError("weights must be non-negative and sum to one")
    rng = check_random_state(random_state)
    h = rng.choice(w.size, size=m, p=w)
    draws = np.stack([d.rvs(size=(m, n_views), random_state=rng) for d in components])
    X = draws[h, np.arange(m)]                      # (m, n_views): row i from component h_i
    return [X[:, [v]] for v in range(n_views)], h
