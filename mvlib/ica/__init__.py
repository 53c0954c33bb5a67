"""Independent component analysis from the fourth cumulant (an order-4 power method).

Derived in :doc:`/chapters/10_dirichlet_ica`. The modules of this package are private; these
names are its public surface.
"""
from ._algorithm import (
                         FourthCumulantOperator,
                         amari_index,
                         fourth_cumulant_contract,
                         fourth_order_power_method,
                         population_fourth_cumulant,
                         sample_kurtosis,
)
from ._estimator import TensorICA

__all__ = [
    "amari_index",
    "fourth_cumulant_contract",
    "fourth_order_power_method",
    "FourthCumulantOperator",
    "population_fourth_cumulant",
    "sample_kurtosis",
    "TensorICA",
]
