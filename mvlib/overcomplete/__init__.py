"""Overcomplete third-order tensors (rank above the dimension): the asymmetric power
updates, their SVD and labelled starts, clustering of restarts, ALS refinement.

Derived in :doc:`/chapters/09_overcomplete`. The modules of this package are private; these
names are its public surface.
"""
from ._algorithm import (
                         ThirdMomentOperator,
                         als_refine,
                         asymmetric_power_updates,
                         cluster_restarts,
                         coherence,
                         labelled_initialization,
                         random_overcomplete_tensor,
                         random_unit_columns,
                         svd_initialization,
)
from ._estimator import OvercompleteTensorDecomposition

__all__ = [
    "als_refine",
    "asymmetric_power_updates",
    "cluster_restarts",
    "coherence",
    "labelled_initialization",
    "OvercompleteTensorDecomposition",
    "random_overcomplete_tensor",
    "random_unit_columns",
    "svd_initialization",
    "ThirdMomentOperator",
]
