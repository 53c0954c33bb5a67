"""Every public name of mvlib at 855a17c keeps a home (issue 26).

``mvlib.__all__`` holds the 64 names it held at commit 855a17c, each importable from ``mvlib``;
every public function and class of the modules of 855a17c is reachable at the one new home the
README's changes section gives (its family package, or its public core module). Removed on
purpose, and listed in the README: ``contract_vectors``.
"""
import importlib

import pytest

import mvlib

ALL_AT_855A17C = [
    "CountPairsOperator", "HistogramSpectral", "IllConditionedWarning", "KernelSpectral", "LatentTreeEmbedding", "MomentAccumulator",
    "MultiViewMixture", "NonparametricEM", "ObservableOperatorHMM", "OvercompleteTensorDecomposition", "ProductMixtureEM", "SketchedCountMoments",
    "SketchedMoments", "SketchedViewMoments", "SpectralGMM", "SpectralHMM", "SpectralLDA", "SpectralTopicModel",
    "TensorICA", "ThirdMomentOperator", "UnigramMixtureEM", "algorithm_a", "algorithm_b", "als_refine",
    "asymmetric_power_updates", "cluster_restarts", "column_errors", "count_pairs", "count_triples_slice", "count_whitened_triples",
    "delta_kernel", "dewhiten", "incomplete_cholesky", "jennrich", "labelled_initialization", "match_columns",
    "matched_error", "multilinear", "nystrom_factor", "observable_operator", "outer3", "pairs",
    "power_iteration", "progress", "random_overcomplete_tensor", "rbf_kernel", "reduce_rows", "reshaping_errors",
    "row_chunks", "silverman_bandwidth", "sketch_matrix", "svd_initialization", "symmetric_outer", "symmetric_spectral_norm",
    "symmetrize3", "symmetrize_views", "tensor_power_method", "triples", "triples_slice", "tt_embedding",
    "view_covariances", "weighted_density_error", "whitened_triples", "whitening_matrix",
]

#: new home -> the public names of the former modules that now live there
HOMES = {
    "mvlib.core.cubature": [
        "categorical_exact_data", "gaussian_cubature", "multiview_gaussian_cubature",
    ],
    "mvlib.core.jennrich": [
        "jennrich",
    ],
    "mvlib.core.metrics": [
        "column_errors", "error_text", "match_columns", "matched_error", "npmi_coherence",
    ],
    "mvlib.core.moments": [
        "CountPairsOperator", "MomentAccumulator", "SymmetricOperator", "count_mean", "count_pairs",
        "count_triples", "count_triples_slice", "count_whitened_triples", "pairs", "triples",
        "triples_slice", "whitened_triples",
    ],
    "mvlib.core.observable": [
        "EigengapWarning", "algorithm_a", "algorithm_b", "mixture_weights", "observable_operator",
        "projected_operator", "random_orthogonal", "view_bases",
    ],
    "mvlib.core.power": [
        "power_iteration", "symmetric_spectral_norm", "tensor_power_method",
    ],
    "mvlib.core.progress": [
        "progress", "progress_enabled",
    ],
    "mvlib.core.scale": [
        "SketchedCountMoments", "SketchedMoments", "SketchedViewMoments", "SourceCountPairs", "Sums",
        "check_moments", "count_documents", "default_sketch_dim", "is_dask_array", "is_stream",
        "n_features_of", "rademacher_slice", "reduce_rows", "require_two_passes", "resolve_sketch",
        "row_chunks", "row_signs", "sketch_dewhiten", "sketch_matrix", "source_kind",
        "source_rows",
    ],
    "mvlib.core.symbolic": [
        "array_equal", "array_equal_rational", "cp_array", "discrete_expectation", "gaussian_expectation",
        "isserlis", "mixture_symbols", "simplex_subs", "sym_multilinear", "sym_power_update",
    ],
    "mvlib.core.tensors": [
        "cp_tensor", "cp_to_dense", "multilinear", "outer3", "random_odeco_tensor",
        "random_symmetric_tensor", "symmetric_outer", "symmetrize", "symmetrize3",
    ],
    "mvlib.core.validation": [
        "IllConditionedWarning", "add_scaled", "check_array", "check_counts", "check_cubic_tensor",
        "check_identifiable_rank", "check_matrix", "check_n_features", "check_positive_float", "check_positive_int",
        "check_random_state", "check_rank", "check_vector_or_matrix", "check_views", "column_if_vector",
        "scale_exponent", "scaled", "unscale", "warn_ill_conditioned",
    ],
    "mvlib.core.whitening": [
        "dewhiten", "symmetrize_views", "whitening_matrix",
    ],
    "mvlib.gmm": [
        "SpectralGMM", "spherical_moments", "third_order_correction", "whitened_third_moment",
    ],
    "mvlib.hmm": [
        "ObservableOperatorHMM", "SpectralHMM", "check_symbol_sequences", "forward_log_likelihood", "hmm_from_moments",
        "hmm_three_view", "hmm_window_moments", "oo_joint_probability", "oo_log_likelihood", "oo_operators",
        "oo_operators_from_sequences", "oo_start_state", "oo_window_moments", "project_simplex", "refine_window_likelihood",
        "sample_hmm", "simplex_least_squares", "stationary_distribution", "viterbi", "window_counts",
        "window_starts", "window_views",
    ],
    "mvlib.ica": [
        "FourthCumulantOperator", "TensorICA", "amari_index", "fourth_cumulant_contract", "fourth_order_power_method",
        "population_fourth_cumulant", "sample_kurtosis",
    ],
    "mvlib.kernel": [
        "HistogramSpectral", "KernelSpectral", "NonparametricEM", "cv_bandwidth", "cv_subsample_size",
        "delta_kernel", "incomplete_cholesky", "kernel_basis", "kernel_cholesky", "kernel_dirichlet_moments",
        "kernel_features", "kernel_spectral_decomposition", "kernel_spectral_streamed", "loo_kde_loglik", "nystrom_factor",
        "rbf_kernel", "silverman_bandwidth", "smoothing_bias", "weighted_density_error",
    ],
    "mvlib.lda": [
        "LDAModel", "LDASecondMoment", "SpectralLDA", "dirichlet_corrected_third", "dirichlet_pairs_product",
        "drop_short_documents", "lda_decompose", "lda_mean", "lda_moment_coefficients", "lda_whitened_pairs",
        "lda_whitened_third_moment", "randomized_whitening", "top_eigenpairs",
    ],
    "mvlib.multiview": [
        "MultiViewMixture", "MultiViewMixtureModel", "ProductMixtureEM", "random_multiview_model", "view_covariances",
        "view_errors",
    ],
    "mvlib.overcomplete": [
        "OvercompleteTensorDecomposition", "ThirdMomentOperator", "als_refine", "asymmetric_power_updates", "cluster_restarts",
        "labelled_initialization", "random_overcomplete_tensor", "svd_initialization",
    ],
    "mvlib.topic": [
        "SingleTopicModel", "SpectralTopicModel", "UnigramMixtureEM", "random_topic_model",
    ],
    "mvlib.tree": [
        "LatentTree", "LatentTreeEmbedding", "LatentTreeModel", "TreeTensorNetwork", "binary_tree",
        "chain_ranks", "edge_errors", "edge_ranks", "random_latent_tree_model", "random_tree",
        "reshaping_errors", "symmetric_tree_model", "tree_decomposition", "tt_embedding",
    ],
}


def test_the_public_list_is_unchanged():
    assert sorted(mvlib.__all__) == sorted(ALL_AT_855A17C)
    for name in ALL_AT_855A17C:
        assert getattr(mvlib, name) is not None, name


@pytest.mark.parametrize("home", sorted(HOMES))
def test_every_former_public_name_has_its_home(home):
    module = importlib.import_module(home)
    missing = [n for n in HOMES[home] if not hasattr(module, n)]
    assert not missing, f"{home} lacks {missing}"


def test_family_packages_list_what_they_export():
    for home in HOMES:
        module = importlib.import_module(home)
        public = getattr(module, "__all__", None)
        if home.startswith("mvlib.core."):
            continue   # core modules are public modules; their __all__ lists their headline names
        assert public is not None and set(HOMES[home]) <= set(public), home
