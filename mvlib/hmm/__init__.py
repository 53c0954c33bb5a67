"""Hidden Markov models of symbol sequences: window moments, the spectral estimator
(parameters), the observable-operator estimator (likelihoods), sampling, forward
algorithm and Viterbi decoding.

Derived in :doc:`/chapters/06_hidden_markov`. The modules of this package are private; these
names are its public surface.
"""
from ._algorithm import (
                         check_symbol_sequences,
                         forward_log_likelihood,
                         hmm_three_view,
                         hmm_window_moments,
                         project_simplex,
                         random_hmm,
                         refine_window_likelihood,
                         sample_hmm,
                         simplex_least_squares,
                         stationary_distribution,
                         viterbi,
                         window_counts,
                         window_starts,
                         window_views,
)
from ._estimator import SpectralHMM, hmm_from_moments
from ._metrics import parameter_errors
from ._observable import (
                         oo_joint_probability,
                         oo_log_likelihood,
                         oo_operators,
                         oo_operators_from_sequences,
                         oo_start_state,
                         oo_window_moments,
)
from ._oo_estimator import ObservableOperatorHMM

__all__ = [
    "check_symbol_sequences",
    "forward_log_likelihood",
    "hmm_from_moments",
    "hmm_three_view",
    "hmm_window_moments",
    "ObservableOperatorHMM",
    "oo_joint_probability",
    "oo_log_likelihood",
    "oo_operators",
    "oo_operators_from_sequences",
    "oo_start_state",
    "oo_window_moments",
    "parameter_errors",
    "project_simplex",
    "random_hmm",
    "refine_window_likelihood",
    "sample_hmm",
    "simplex_least_squares",
    "SpectralHMM",
    "stationary_distribution",
    "viterbi",
    "window_counts",
    "window_starts",
    "window_views",
]
