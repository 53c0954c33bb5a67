"""Three-view mixtures (conditionally independent views): the spectral estimator, the
generative model with exact moments, per-view covariances, the EM baseline and the
errors of a fit against the true view means.

Derived in :doc:`/chapters/04_three_view_mixtures`. The modules of this package are private; these
names are its public surface.
"""
from ._covariances import f123_operator, view_covariances
from ._em import ProductMixtureEM
from ._estimator import MultiViewMixture
from ._metrics import view_errors
from ._model import MultiViewMixtureModel, random_multiview_model

__all__ = [
    "MultiViewMixture",
    "MultiViewMixtureModel",
    "ProductMixtureEM",
    "f123_operator",
    "random_multiview_model",
    "view_covariances",
    "view_errors",
]
