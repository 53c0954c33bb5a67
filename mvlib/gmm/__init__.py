"""Gaussian mixtures with spherical (per-component) variances from the first three moments.

Derived in :doc:`/chapters/05_gaussian_mixtures`. The modules of this package are private; these
names are its public surface.
"""
from ._estimator import SpectralGMM, spherical_moments, third_order_correction, whitened_third_moment
from ._model import SphericalGMMModel

__all__ = [
    "SpectralGMM",
    "SphericalGMMModel",
    "spherical_moments",
    "third_order_correction",
    "whitened_third_moment",
]
