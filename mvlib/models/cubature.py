"""Cubature data sets: finite point sets whose moments up to order three are exact."""
from __future__ import annotations

import numpy as np

from .._validation import check_array

__all__ = ["gaussian_cubature"]


def gaussian_cubature(means, counts, sigmas):
    r"""Rows whose empirical moments of order ≤ 3 equal those of a spherical Gaussian mixture.

    For component h the 2d points :math:`\mu_h \pm \sigma_h\sqrt{d}\, e_a` (a = 1..d) have
    mean :math:`\mu_h`, covariance :math:`\sigma_h^2 I` and vanishing odd central moments: a
    degree-3 cubature rule for :math:`N(\mu_h, \sigma_h^2 I)` (the sigma points of the
    unscented transform, Julier and Uhlmann 2004). Repeating the points of component h
    ``counts[h]`` times gives the mixture with weights ``counts / counts.sum()``, so
    ``mvlib.pairs``/``triples`` on these rows return the population moments up to rounding.

    Parameters: ``means`` (d, k); ``counts`` (k,) positive integers; ``sigmas`` (k,) ≥ 0.
    Returns an array (2·d·Σcounts, d). Cost O(d² Σcounts).
    Derived in chapter 5 (:doc:`/chapters/05_gaussian_mixtures`), used in chapters 1 and 5.
    """
    M = check_array(means, name="means", ndim=2)
    d, k = M.shape
    counts = np.asarray(counts)
    sigmas = np.asarray(sigmas, dtype=float)
    if counts.shape != (k,) or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 1):
        raise ValueError(f"counts must be {k} positive integers (one per column of means), got {counts!r}")
    if sigmas.shape != (k,) or not np.all(np.isfinite(sigmas)) or np.any(sigmas < 0):
        raise ValueError(f"sigmas must be {k} finite non-negative numbers, got {sigmas!r}")
    star = np.sqrt(d) * np.vstack([np.eye(d), -np.eye(d)])
    return np.vstack([np.tile(M[:, h] + sigmas[h] * star, (int(c), 1)) for h, c in enumerate(counts)])
