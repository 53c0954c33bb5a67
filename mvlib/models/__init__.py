"""Generative models with ``sample(n, random_state)`` and exact population moments."""
from .multiview import MultiViewMixtureModel, random_multiview_model

__all__ = ["MultiViewMixtureModel", "random_multiview_model"]
from .topic import SingleTopicModel, random_topic_model

__all__ += ["SingleTopicModel", "random_topic_model"]
from .cubature import gaussian_cubature

__all__ += ["gaussian_cubature"]
from .cubature import categorical_exact_data, multiview_gaussian_cubature

__all__ += ["multiview_gaussian_cubature", "categorical_exact_data"]
from .lda import LDAModel

__all__ += ["LDAModel"]
