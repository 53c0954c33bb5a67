r"""The spherical Gaussian mixture (Hsu & Kakade 2013, §2).

A hidden component :math:`h\in[k]` with :math:`\Pr[h]=w_h`; given h,
:math:`x=\mu_h+\sigma_h z` with :math:`z\sim N(0,I_d)`. The population quantities the
estimator recovers (Theorem 2; derived and checked in :doc:`/chapters/05_gaussian_mixtures`):

.. math:: \bar\sigma^2=\sum_h w_h\sigma_h^2,\qquad
          \tilde m=\sum_h w_h\sigma_h^2\mu_h,\qquad
          \mathcal M_2=\sum_h w_h\mu_h\mu_h^\top .
"""
from __future__ import annotations

import numpy as np

from ..core.validation import check_array, check_matrix, check_positive_int, check_random_state

__all__ = ["SphericalGMMModel"]


class SphericalGMMModel:
    """Mixture of spherical Gaussians with known parameters: samples and population moments.

    Parameters
    ----------
    weights : array (k,)
        Mixing weights, positive, summing to 1.
    means : array (d, k)
        Component means :math:`\\mu_h` as columns.
    sigmas : array (k,)
        Standard deviations :math:`\\sigma_h > 0` (one per component, the same in every direction).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.gmm import SphericalGMMModel
    >>> model = SphericalGMMModel([0.3, 0.7], np.array([[0.0, 4.0], [0.0, 4.0]]), [1.0, 0.5])
    >>> X, h = model.sample(1000, random_state=0)
    >>> X.shape, h.shape
    ((1000, 2), (1000,))
    >>> float(model.sigma2_bar)
    0.475
    """

    def __init__(self, weights, means, sigmas):
        w = check_array(weights, "weights", ndim=1)
        if np.any(w <= 0) or not np.isclose(w.sum(), 1.0, atol=1e-10):
            raise ValueError("weights must be positive and sum to 1")
        M = check_matrix(means, "means", shape=(None, w.size))
        s = check_array(sigmas, "sigmas", ndim=1)
        if s.size != w.size:
            raise ValueError(f"sigmas must have one entry per component ({w.size}), got {s.size}")
        if np.any(s <= 0):
            raise ValueError("sigmas must be positive (standard deviations)")
        self.weights, self.means, self.sigmas = w, M, s

    @property
    def n_components(self) -> int:
        return self.weights.size

    @property
    def n_features(self) -> int:
        return self.means.shape[0]

    @property
    def sigma2_bar(self) -> float:
        r""":math:`\bar\sigma^2=\sum_h w_h\sigma_h^2`."""
        return float(self.weights @ self.sigmas**2)

    def mean(self) -> np.ndarray:
        r""":math:`E[x]=\sum_h w_h\mu_h`, shape (d,)."""
        return self.means @ self.weights

    def m_tilde(self) -> np.ndarray:
        r""":math:`\tilde m=\sum_h w_h\sigma_h^2\mu_h`, shape (d,)."""
        return self.means @ (self.weights * self.sigmas**2)

    def second_moment(self) -> np.ndarray:
        r""":math:`\mathcal M_2=\sum_h w_h\mu_h\mu_h^\top`, shape (d, d)."""
        return (self.means * self.weights) @ self.means.T

    def sample(self, n_samples: int, random_state=None):
        """Draw ``n_samples`` points: returns ``(X, h)``, X (n_samples, d) and labels h (n_samples,).

        The component labels are drawn first, then one standard normal matrix (n_samples, d),
        so a given generator state always yields the same sample. Cost O(n d).
        """
        n = check_positive_int(n_samples, "n_samples")
        rng = check_random_state(random_state)
        h = rng.choice(self.n_components, size=n, p=self.weights)
        X = self.means[:, h].T + self.sigmas[h, None] * rng.standard_normal((n, self.n_features))
        return X, h
