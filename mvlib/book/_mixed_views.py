"""The mixed-law three-view case of chapter 4, shared by the chapter and its experiment script."""
from __future__ import annotations

import numpy as np

from mvlib.multiview import MultiViewMixtureModel

__all__ = ["mixed_views_model"]


def mixed_views_model(random_state=2024):
    r"""The three-view mixture with a Gaussian, a Poisson and a Bernoulli view of
    :doc:`/chapters/04_three_view_mixtures` (also ``experiments/multiview_experiments.py``).

    k = 3 components with weights :math:`w=(0.5, 0.3, 0.2)`. The view means are drawn, in this
    order, from ``numpy.random.default_rng(random_state)``: view 1 Gaussian, :math:`M_1` (8, 3)
    with entries :math:`3\,N(0,1)` (unit noise); view 2 Poisson, rates :math:`M_2` (10, 3) from
    Gamma(2, 1.5); view 3 Bernoulli, probabilities :math:`M_3` (12, 3) uniform on [0.1, 0.9].

    Parameters
    ----------
    random_state : int or numpy.random.Generator, default 2024
        A Generator is used as is and advanced, so the caller can go on drawing from it (the
        chapter samples the data from the same generator).

    Returns
    -------
    mvlib.multiview.MultiViewMixtureModel
        ``kind=("gaussian", "poisson", "bernoulli")``; ``means`` the three arrays (d_v, 3).

    Examples
    --------
    >>> from mvlib.book import mixed_views_model
    >>> model = mixed_views_model()
    >>> [M.shape for M in model.means], model.kinds
    ([(8, 3), (10, 3), (12, 3)], ('gaussian', 'poisson', 'bernoulli'))
    >>> (X1, X2, X3), h = model.sample(5, random_state=0)
    >>> X2.shape, set(X3.ravel()) <= {0.0, 1.0}
    ((5, 10), True)
    """
    rng = np.random.default_rng(random_state)
    k = 3
    means = [3 * rng.standard_normal((8, k)),            # Gaussian means
             rng.gamma(2.0, 1.5, size=(10, k)),          # Poisson rates
             rng.uniform(0.1, 0.9, size=(12, k))]        # Bernoulli probabilities
    return MultiViewMixtureModel(np.array([0.5, 0.3, 0.2]), means, kind=("gaussian", "poisson", "bernoulli"))
