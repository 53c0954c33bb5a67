"""Latent Dirichlet allocation by the method of moments: the Dirichlet-corrected moments,
the generative model and the SpectralLDA estimator.

Derived in :doc:`/chapters/10_dirichlet_ica`. The modules of this package are private; these
names are its public surface.
"""
from ._estimator import SpectralLDA
from ._model import LDAModel
from ._moments import (
                       LDASecondMoment,
                       dirichlet_corrected_third,
                       dirichlet_pairs_product,
                       drop_short_documents,
                       lda_decompose,
                       lda_mean,
                       lda_moment_coefficients,
                       lda_whitened_pairs,
                       lda_whitened_third_moment,
                       randomized_whitening,
                       top_eigenpairs,
)

__all__ = [
    "dirichlet_corrected_third",
    "dirichlet_pairs_product",
    "drop_short_documents",
    "lda_decompose",
    "lda_mean",
    "lda_moment_coefficients",
    "lda_whitened_pairs",
    "lda_whitened_third_moment",
    "LDAModel",
    "LDASecondMoment",
    "randomized_whitening",
    "SpectralLDA",
    "top_eigenpairs",
]
