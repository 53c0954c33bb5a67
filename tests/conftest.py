import numpy as np
import pytest



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
