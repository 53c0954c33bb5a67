"""Shared fixtures, hypothesis profiles and the stage markers of the test tree.

The tree mirrors the project: ``tests/library/<family>/`` (and ``core/``, and ``estimators/``
for the contract every estimator keeps) tests mvlib; ``tests/book/`` the chapters, their claims
and the executed notebooks; ``tests/site/`` the rendered HTML in a browser. Each test gets the
marker of its stage from its folder (``library``, ``book``, ``browser``; the comparison of the
executed notebooks with the recorded ones also ``recorded``), and `make test` selects stages
with ``-m``.
"""
from pathlib import Path as _Path

import numpy as np
import pytest

_TESTS = _Path(__file__).resolve().parent
_STAGES = {"library": "library", "book": "book", "site": "browser"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = _Path(str(item.fspath)).resolve()
        parts = path.relative_to(_TESTS).parts if path.is_relative_to(_TESTS) else ()   # e.g. doctests of mvlib
        if parts and parts[0] in _STAGES:
            item.add_marker(_STAGES[parts[0]])
        if parts and parts[-1] == "test_recorded_outputs.py":
            item.add_marker("recorded")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)

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
