import numpy as np
import pytest

from mvlib.core.tensors import cp_tensor, cp_to_dense


def random_odeco(k, rng, low=1.0, high=3.0):
    """Random orthogonally decomposable tensor: (T, weights, V)."""
    V, _ = np.linalg.qr(rng.standard_normal((k, k)))
    lam = rng.uniform(low, high, size=k)
    return cp_to_dense(cp_tensor(lam, [V, V, V])), lam, V


@pytest.fixture
def rng():
    return np.random.default_rng(12345)

# tests/claims.py (the claims checker) is imported by tests/test_claims.py.
import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parent))

# Hypothesis profiles: "ci" (few examples, inside make test's time budget) and "long"
# (the full property runs of `make test-long`). Select with HYPOTHESIS_PROFILE=long.
import os as _os

from hypothesis import HealthCheck as _HealthCheck
from hypothesis import settings as _settings

_settings.register_profile(
    "ci", max_examples=20, deadline=None, derandomize=True,
    suppress_health_check=[_HealthCheck.too_slow, _HealthCheck.data_too_large],
)
_settings.register_profile(
    "long", max_examples=300, deadline=None,
    suppress_health_check=[_HealthCheck.too_slow, _HealthCheck.data_too_large],
)
_settings.load_profile(_os.environ.get("HYPOTHESIS_PROFILE", "ci"))
