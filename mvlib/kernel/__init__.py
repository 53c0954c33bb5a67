"""Kernel embeddings of latent variable models: kernels and low-rank factors, the
kernel spectral algorithm, bandwidth selection, and the nonparametric baselines
(npEM, histogram spectral).

Derived in :doc:`/chapters/07_kernel_embeddings`. The modules of this package are private; these
names are its public surface.
"""
from ._algorithm import (
                         cv_bandwidth,
                         cv_subsample_size,
                         delta_kernel,
                         incomplete_cholesky,
                         kernel_basis,
                         kernel_cholesky,
                         kernel_dirichlet_moments,
                         kernel_features,
                         kernel_spectral_decomposition,
                         kernel_spectral_streamed,
                         loo_kde_loglik,
                         nystrom_factor,
                         rbf_kernel,
                         silverman_bandwidth,
                         smoothing_bias,
                         weighted_density_error,
)
from ._estimator import KernelSpectral
from ._histogram import HistogramSpectral
from ._model import sample_views
from ._npem import NonparametricEM

__all__ = [
    "cv_bandwidth",
    "cv_subsample_size",
    "delta_kernel",
    "HistogramSpectral",
    "incomplete_cholesky",
    "kernel_basis",
    "kernel_cholesky",
    "kernel_dirichlet_moments",
    "kernel_features",
    "kernel_spectral_decomposition",
    "kernel_spectral_streamed",
    "KernelSpectral",
    "loo_kde_loglik",
    "NonparametricEM",
    "nystrom_factor",
    "rbf_kernel",
    "sample_views",
    "silverman_bandwidth",
    "smoothing_bias",
    "weighted_density_error",
]
