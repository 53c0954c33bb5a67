"""Every estimator states the conditions on its hyper-parameters in one table.

``_parameter_constraints`` (name -> constraint of ``mvlib.core.validation``) has an entry for
every parameter of ``__init__`` (``Unchecked`` says where a condition needs the data, ``Renamed``
marks a former name); ``MomentEstimator._validate_params`` applies it at the start of ``fit``.
Here each constraint is tried on values it must refuse, without fitting: the error names the
parameter, and the defaults pass.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import mvlib
from mvlib.core import validation as V
from mvlib.core.base import MomentEstimator

ESTIMATORS = {name: getattr(mvlib, name) for name in mvlib.__all__
              if inspect.isclass(getattr(mvlib, name)) and issubclass(getattr(mvlib, name), BaseEstimator)}
FIRST = {"LatentTreeEmbedding": ([1, 1],)}   # the required first argument of each estimator


def _make(name, **params):
    est = ESTIMATORS[name](*FIRST.get(name, (2,)))
    return est.set_params(**params)


def test_every_estimator_is_collected():
    assert len(ESTIMATORS) == 14, sorted(ESTIMATORS)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_table_covers_every_parameter(name):
    table = ESTIMATORS[name]._parameter_constraints
    params = list(_make(name).get_params(deep=False))
    assert set(table) == set(params), (set(params) ^ set(table))
    for key, rule in table.items():
        assert callable(rule), f"{name}._parameter_constraints[{key!r}] is not a constraint: {rule!r}"
        if isinstance(rule, V.Unchecked):
            assert "fit" in rule.reason, f"{name}.{key}: say where the data-dependent check happens"


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_defaults_pass_and_keep_the_user_values(name):
    est = _make(name)
    before = est.get_params(deep=False)
    p = est._validate_params()
    assert isinstance(getattr(p, "random_state", np.random.default_rng()), np.random.Generator)
    assert est.get_params(deep=False) == before   # validated values are returned, not stored


def _bad_values(rule):
    """(value, exception) pairs the constraint must refuse."""
    if isinstance(rule, V.OrNone):
        return _bad_values(rule.constraint)
    if isinstance(rule, V.Integer):
        return [(rule.minimum - 1, ValueError), (1.5, TypeError), (True, TypeError)]
    if isinstance(rule, V.Options):
        return [("no-such-option", ValueError)]
    if isinstance(rule, V.Boolean):
        return [("yes", TypeError)]
    if isinstance(rule, V.PositiveFloat):
        return [(0.0, ValueError), (-1.0, ValueError), (np.inf, ValueError), ("1", TypeError)]
    if isinstance(rule, V.NonNegativeFloat):
        return [(-1e-3, ValueError), (np.nan, ValueError), (None, TypeError)]
    if isinstance(rule, V.RandomState):
        return [(-1, ValueError), ("seed", TypeError)]
    return []


CASES = [(name, key, value, exc) for name in sorted(ESTIMATORS)
         for key, rule in ESTIMATORS[name]._parameter_constraints.items()
         for value, exc in _bad_values(rule)]


def test_the_cases_cover_the_kinds_of_constraint():
    assert len(CASES) > 150, len(CASES)


@pytest.mark.parametrize("name,key,value,exc", CASES, ids=[f"{n}-{k}-{v!r}" for n, k, v, _ in CASES])
def test_bad_value_is_refused_naming_the_parameter(name, key, value, exc):
    est = _make(name, **{key: value})
    with pytest.raises(exc) as info:
        est._validate_params()
    if key != "random_state":   # check_random_state's message names what it accepts instead
        assert key in str(info.value), str(info.value)


@pytest.mark.parametrize("name", ["SpectralHMM", "ObservableOperatorHMM"])
def test_former_name_is_resolved_before_the_table(name):
    est = ESTIMATORS[name](n_states=3)
    with pytest.warns(FutureWarning, match="n_states was renamed n_components"):
        assert est._validate_params().n_components == 3
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="n_components"):
        ESTIMATORS[name](n_states=0)._validate_params()


def test_a_missing_entry_is_reported_as_a_bug_of_the_estimator():
    class Broken(MomentEstimator):
        _parameter_constraints = {"a": V.Integer()}

        def __init__(self, a=1, b=2):
            self.a, self.b = a, b

    with pytest.raises(TypeError, match=r"Broken._parameter_constraints has no entry for \['b'\]"):
        Broken()._validate_params()


def test_options_are_worded_as_before():
    with pytest.raises(ValueError, match=r"^start must be 'auto', 'first' or 'stationary', got 'x'$"):
        mvlib.SpectralHMM(2, start="x")._validate_params()
    with pytest.raises(ValueError, match=r"^method must be one of \('observable', 'tensor'\), got 'x'$"):
        mvlib.MultiViewMixture(2, method="x")._validate_params()
