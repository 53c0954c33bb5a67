"""The estimator base: warnings point at the caller, and a fit is all or nothing (the
all-or-nothing test of every estimator is in tests/library/estimators/test_sklearn_conformance.py)."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import mvlib
from mvlib.core.base import MomentEstimator
from mvlib.core.validation import IllConditionedWarning, warn_user


def test_a_warning_deep_inside_a_fit_points_at_the_callers_line():
    rng = np.random.default_rng(0)
    S = np.column_stack([rng.laplace(size=400), rng.uniform(-1.7, 1.7, size=400)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mvlib.TensorICA(2, random_state=0).fit(S @ np.array([[1.0, 0.4], [0.3, 1.0]]).T)
    found = [w for w in caught if issubclass(w.category, IllConditionedWarning)]
    assert found and all(w.filename == __file__ for w in found), [(w.filename, w.lineno) for w in caught]


def test_warn_user_outside_mvlib_points_at_its_own_caller():
    with pytest.warns(UserWarning, match="here") as rec:
        warn_user("here")
    assert rec[0].filename == __file__


class _Toy(MomentEstimator):
    def __init__(self, fail=False):
        self.fail = fail

    def fit(self, X):
        self.n_features_in_ = np.asarray(X).shape[1]
        self.mean_ = np.mean(X, axis=0)
        if self.fail:
            raise ValueError("fails after setting two attributes")
        return self

    def transform(self, X):
        self._check_fitted("mean_")
        return np.asarray(X) - self.mean_


def test_a_subclass_fit_that_raises_restores_the_attributes():
    toy = _Toy(fail=True)
    with pytest.raises(ValueError, match="fails after"):
        toy.fit(np.ones((3, 2)))
    assert vars(toy) == {"fail": True}
    with pytest.raises(NotFittedError):
        toy.transform(np.ones((1, 2)))
    toy.set_params(fail=False).fit(np.zeros((3, 2)))
    toy.set_params(fail=True)
    with pytest.raises(ValueError):
        toy.fit(np.ones((3, 5)))
    assert toy.n_features_in_ == 2 and np.array_equal(toy.mean_, np.zeros(2))
    assert _Toy.fit.__name__ == "fit" and _Toy.fit.__doc__ is None
