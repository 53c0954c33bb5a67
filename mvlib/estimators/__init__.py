"""Estimators with scikit-learn conventions (``fit`` returns ``self``, learned attributes end in ``_``)."""
from .gmm import SpectralGMM
from .multiview import MultiViewMixture
from .topic import SpectralTopicModel

__all__ = ["MultiViewMixture", "SpectralGMM", "SpectralTopicModel"]
from .overcomplete import OvercompleteTensorDecomposition

__all__ += ["OvercompleteTensorDecomposition"]
from .hmm import SpectralHMM
from .oo_hmm import ObservableOperatorHMM

__all__ += ["ObservableOperatorHMM", "SpectralHMM"]
from .kernel import KernelSpectral

__all__ += ["KernelSpectral"]
from .tree import LatentTreeEmbedding

__all__ += ["LatentTreeEmbedding"]
from .lda import SpectralLDA

__all__ += ["SpectralLDA"]
from .ica import TensorICA

__all__ += ["TensorICA"]
