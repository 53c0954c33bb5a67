"""mvlib: spectral and tensor method-of-moments estimators for latent variable models.

The library is one shared core and one package per model family (each family holds its
algorithm, its generative model, its estimator and its baselines; its modules are private and
its ``__init__`` lists its public names):

- :mod:`mvlib.core` — tensor algebra, moments and accumulators, whitening, the tensor power
  method, observable operators, Jennrich's algorithm, data sources and sketches, validation,
  metrics, progress bars, cubature (exact-moment data), sympy helpers and the estimator base;
- :mod:`mvlib.multiview` — three-view mixtures (chapters 1 and 4);
- :mod:`mvlib.topic` — single-topic models (chapter 3);
- :mod:`mvlib.lda` — latent Dirichlet allocation (chapter 10);
- :mod:`mvlib.gmm` — spherical Gaussian mixtures (chapter 5);
- :mod:`mvlib.ica` — independent component analysis (chapter 10);
- :mod:`mvlib.overcomplete` — overcomplete tensor decomposition (chapter 9);
- :mod:`mvlib.hmm` — hidden Markov models (chapter 6);
- :mod:`mvlib.kernel` — kernel embeddings and nonparametric mixtures (chapter 7);
- :mod:`mvlib.tree` — latent trees (chapter 8).

The names below are the most used ones, importable from ``mvlib`` itself.
"""
from . import core, gmm, hmm, ica, kernel, lda, multiview, overcomplete, topic, tree

# core
from .core.jennrich import jennrich
from .core.metrics import column_errors, match_columns, matched_error
from .core.moments import (CountPairsOperator, MomentAccumulator, count_pairs, count_triples_slice,
                           count_whitened_triples, pairs, triples, triples_slice, whitened_triples)
from .core.observable import algorithm_a, algorithm_b, observable_operator
from .core.power import power_iteration, symmetric_spectral_norm, tensor_power_method
from .core.progress import progress
from .core.scale import (SketchedCountMoments, SketchedMoments, SketchedViewMoments, reduce_rows,
                         row_chunks, sketch_matrix)
from .core.tensors import multilinear, outer3, symmetric_outer, symmetrize3
from .core.validation import IllConditionedWarning
from .core.whitening import dewhiten, symmetrize_views, whitening_matrix
# families
from .multiview import MultiViewMixture, ProductMixtureEM, view_covariances
from .topic import SpectralTopicModel, UnigramMixtureEM
from .lda import SpectralLDA
from .gmm import SpectralGMM
from .ica import TensorICA
from .overcomplete import (OvercompleteTensorDecomposition, ThirdMomentOperator, als_refine,
                           asymmetric_power_updates, cluster_restarts, labelled_initialization,
                           random_overcomplete_tensor, svd_initialization)
from .hmm import ObservableOperatorHMM, SpectralHMM
from .kernel import (HistogramSpectral, KernelSpectral, NonparametricEM, delta_kernel,
                     incomplete_cholesky, nystrom_factor, rbf_kernel, silverman_bandwidth,
                     weighted_density_error)
from .tree import LatentTreeEmbedding, reshaping_errors, tt_embedding

__version__ = "0.1.0"

__all__ = [
    # core
    "CountPairsOperator", "IllConditionedWarning", "MomentAccumulator", "SketchedCountMoments",
    "SketchedMoments", "SketchedViewMoments", "algorithm_a", "algorithm_b", "column_errors",
    "count_pairs", "count_triples_slice", "count_whitened_triples", "dewhiten", "jennrich",
    "match_columns", "matched_error", "multilinear", "observable_operator", "outer3", "pairs",
    "power_iteration", "progress", "reduce_rows", "row_chunks", "sketch_matrix", "symmetric_outer",
    "symmetric_spectral_norm", "symmetrize3", "symmetrize_views", "tensor_power_method", "triples",
    "triples_slice", "whitened_triples", "whitening_matrix",
    # multiview
    "MultiViewMixture", "ProductMixtureEM", "view_covariances",
    # topic
    "SpectralTopicModel", "UnigramMixtureEM",
    # lda
    "SpectralLDA",
    # gmm
    "SpectralGMM",
    # ica
    "TensorICA",
    # overcomplete
    "OvercompleteTensorDecomposition", "ThirdMomentOperator", "als_refine", "asymmetric_power_updates",
    "cluster_restarts", "labelled_initialization", "random_overcomplete_tensor", "svd_initialization",
    # hmm
    "ObservableOperatorHMM", "SpectralHMM",
    # kernel
    "HistogramSpectral", "KernelSpectral", "NonparametricEM", "delta_kernel", "incomplete_cholesky",
    "nystrom_factor", "rbf_kernel", "silverman_bandwidth", "weighted_density_error",
    # tree
    "LatentTreeEmbedding", "reshaping_errors", "tt_embedding",
]
