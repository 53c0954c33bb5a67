"""Single-topic models of documents: the spectral estimator (observable operators or
tensor power), the generative model and the unigram-mixture EM baseline.

Derived in :doc:`/chapters/03_topic_models`. The modules of this package are private; these
names are its public surface.
"""
from ._em import UnigramMixtureEM
from ._estimator import SpectralTopicModel
from ._model import SingleTopicModel, random_topic_model

__all__ = [
    "random_topic_model",
    "SingleTopicModel",
    "SpectralTopicModel",
    "UnigramMixtureEM",
]
