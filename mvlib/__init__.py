"""mvlib: spectral and tensor method-of-moments estimators for multi-view latent variable models.

The core: tensor algebra on tensorly (:mod:`mvlib.tensors`), empirical and whitened
moments (:mod:`mvlib.moments`), whitening (:mod:`mvlib.whitening`), the robust tensor
power method (:mod:`mvlib.power`), observable operators (:mod:`mvlib.observable`),
matched error metrics (:mod:`mvlib.metrics`), generative models with exact population
moments (:mod:`mvlib.models`) and sympy helpers (:mod:`mvlib.symbolic`). On top of it:
topic models, three-view mixtures, spherical Gaussian mixtures and HMMs
(:mod:`mvlib.estimators`, :mod:`mvlib.hmm`), kernel embeddings (:mod:`mvlib.kernels`),
latent trees (:mod:`mvlib.tree`), overcomplete models (:mod:`mvlib.overcomplete`) and
the baselines no library provides (:mod:`mvlib.baselines`).
"""
from . import metrics, models, moments, power, symbolic, tensors, whitening
from ._progress import progress
from ._validation import IllConditionedWarning
from .metrics import column_errors, match_columns, matched_error
from .moments import MomentAccumulator, pairs, triples, triples_slice, whitened_triples
from .power import power_iteration, symmetric_spectral_norm, tensor_power_method
from .tensors import multilinear, outer3, symmetric_outer, symmetrize3
from .whitening import dewhiten, whitening_matrix

__version__ = "0.1.0"

__all__ = [
    "IllConditionedWarning",
    "MomentAccumulator",
    "column_errors",
    "dewhiten",
    "match_columns",
    "matched_error",
    "multilinear",
    "outer3",
    "pairs",
    "power_iteration",
    "progress",
    "symmetric_outer",
    "symmetric_spectral_norm",
    "symmetrize3",
    "tensor_power_method",
    "triples",
    "triples_slice",
    "whitened_triples",
    "whitening_matrix",
]

from . import estimators, observable
from .estimators import MultiViewMixture, SpectralGMM, SpectralTopicModel
from .jennrich import jennrich
from .moments import CountPairsOperator, count_pairs, count_triples_slice, count_whitened_triples
from .observable import algorithm_a, algorithm_b, observable_operator
from .whitening import symmetrize_views

__all__ += [
    "MultiViewMixture",
    "SpectralGMM",
    "SpectralTopicModel",
    "algorithm_a",
    "algorithm_b",
    "CountPairsOperator",
    "count_pairs",
    "count_triples_slice",
    "count_whitened_triples",
    "jennrich",
    "observable_operator",
    "symmetrize_views",
]

from .covariances import view_covariances

__all__ += ["view_covariances"]

from . import overcomplete
from .estimators import OvercompleteTensorDecomposition
from .overcomplete import (
    ThirdMomentOperator,
    als_refine,
    asymmetric_power_updates,
    cluster_restarts,
    labelled_initialization,
    random_overcomplete_tensor,
    svd_initialization,
)

__all__ += [
    "OvercompleteTensorDecomposition",
    "ThirdMomentOperator",
    "als_refine",
    "asymmetric_power_updates",
    "cluster_restarts",
    "labelled_initialization",
    "random_overcomplete_tensor",
    "svd_initialization",
]

from . import baselines
from .baselines import HistogramSpectral, NonparametricEM, ProductMixtureEM, UnigramMixtureEM
from .kernels import silverman_bandwidth

__all__ += ["HistogramSpectral", "NonparametricEM", "ProductMixtureEM", "UnigramMixtureEM", "silverman_bandwidth"]

from . import hmm, oo_hmm
from .estimators import ObservableOperatorHMM, SpectralHMM

__all__ += ["ObservableOperatorHMM", "SpectralHMM"]

from . import tree
from .estimators import LatentTreeEmbedding
from .tree import reshaping_errors, tt_embedding

__all__ += ["LatentTreeEmbedding", "reshaping_errors", "tt_embedding"]

from . import kernels
from .estimators import KernelSpectral
from .kernels import delta_kernel, incomplete_cholesky, nystrom_factor, rbf_kernel, weighted_density_error

__all__ += [
    "KernelSpectral",
    "delta_kernel",
    "incomplete_cholesky",
    "nystrom_factor",
    "rbf_kernel",
    "weighted_density_error",
]

from . import lda_moments
from .estimators import SpectralLDA

__all__ += ["SpectralLDA"]

from . import ica
from .estimators import TensorICA

__all__ += ["TensorICA"]

from . import scale
from .scale import (SketchedCountMoments, SketchedMoments, SketchedViewMoments, reduce_rows, row_chunks,
                    sketch_matrix)

__all__ += ["SketchedCountMoments", "SketchedMoments", "SketchedViewMoments", "reduce_rows", "row_chunks",
            "sketch_matrix"]
