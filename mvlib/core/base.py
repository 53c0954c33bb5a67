"""The estimator floor's shared base: the scikit-learn protocol and helpers every estimator uses.

:class:`MomentEstimator` gives ``get_params``/``set_params``/``repr`` and the fitted check;
:class:`ProductMixture` the inference of a conditionally independent mixture
(``predict``/``predict_proba``/``score`` from per-view ``conditional_density``), shared by
:class:`mvlib.KernelSpectral` and the baselines of :mod:`mvlib.baselines`. The helpers clip
estimated weights and warn when a pairs matrix's k-th singular value is at the level of its
sampling noise (used by the multi-view and topic estimators).
"""
from __future__ import annotations

import functools
import numbers

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.exceptions import NotFittedError

from types import SimpleNamespace

from .scale import MOMENTS, rademacher_slice
from .validation import (
    Integer,
    IllConditionedWarning,
    Options,
    OrNone,
    RandomState,
    Renamed,
    Rule,
    check_array,
    check_n_features,
    min_gap_rule,
    check_views,
    unscale,
    validate_params,
    warn_user,
)

#: the estimation routes of the multi-view and topic estimators
_METHODS = ("observable", "tensor")
#: constraints of the hyper-parameters that several estimators share (their tables include these)
SPECTRAL_CONSTRAINTS = {
    "n_components": Integer(),
    "method": Options(_METHODS),
    "random_state": RandomState(),
    "min_gap": Rule(min_gap_rule),
    "max_retries": Integer(minimum=0),
}
MOMENTS_CONSTRAINTS = {"moments": Options(MOMENTS), "sketch_dim": OrNone(Integer())}   # = core.scale.check_moments
#: densities below this floor count as this floor in logarithms (no log 0)
TINY = 1e-300
#: probabilities below this floor count as this floor in logarithms (topic and LDA models)
LOG_FLOOR = 1e-12
#: warn when more than this fraction of an estimated distribution's mass was negative and clipped
CLIP_WARN = 0.1


class MomentEstimator(BaseEstimator):
    """The scikit-learn estimator protocol shared by every mvlib estimator.

    From ``sklearn.base.BaseEstimator``: ``get_params``/``set_params`` (hyper-parameters are
    the arguments of ``__init__``, stored unchanged and validated only in ``fit``),
    ``sklearn.base.clone``, ``repr`` and pickling. Here: ``__sklearn_tags__`` (unsupervised:
    ``y`` is never required; subclasses state the input they accept), the fitted check
    (``sklearn.exceptions.NotFittedError``, a ``ValueError``, naming the estimator) and the
    check of the number of features seen in ``fit`` (``n_features_in_``: an int for a 2-d
    ``X``; one int per view, in a list, for estimators of lists of views).

    **A fit is all or nothing.** Every ``fit`` a subclass defines is wrapped (in
    ``__init_subclass__``) so that a fit that raises leaves the estimator exactly as it was:
    a fresh estimator stays unfitted (``NotFittedError`` afterwards) and a fitted one keeps its
    previous fitted attributes, ``n_features_in_`` included, bit for bit.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "fit" in cls.__dict__:
            cls.fit = _all_or_nothing(cls.__dict__["fit"])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags

    def set_params(self, **params):
        """Set hyper-parameters (scikit-learn protocol); returns ``self``."""
        valid = list(self.get_params(deep=False))
        for name in params:
            if name.split("__", 1)[0] not in valid:
                raise ValueError(f"{name!r} is not a parameter of {type(self).__name__}; valid: {valid}")
        return super().set_params(**params)

    #: name -> constraint for every hyper-parameter (``mvlib.core.validation``: ``Integer``,
    #: ``Options``, ``Boolean``, ``RandomState``, ``OrNone``, ``Rule``, ``Renamed``, ...)
    _parameter_constraints: dict = {}

    def _validate_params(self):
        """The hyper-parameters checked against ``_parameter_constraints``, in the table's order.

        Returns a namespace of validated values (ints as ``int``, ``random_state`` as a
        ``numpy.random.Generator``, ...); the estimator's own attributes stay as the user set them.
        A former name (``Renamed``) is resolved first: a ``FutureWarning``, and its value
        checked under the new name.
        """
        params = self.get_params(deep=False)
        for old, rule in self._parameter_constraints.items():
            if isinstance(rule, Renamed):
                params[rule.new] = renamed_parameter(self, rule.new, old, unset=rule.unset)
        return SimpleNamespace(**validate_params(params, self._parameter_constraints, type(self).__name__))

    #: fitted attribute -> (power, what it is): fitted on data divided by 2**e, the attribute is
    #: 2**(power * e) times its value on the data (e.g. means 1, variances 2, precisions -2)
    _scale_powers: dict = {}

    def _unscale_fitted(self, e, name="X"):
        """Scale the attributes of ``_scale_powers`` back after a fit on data divided by ``2**e``.

        Extreme-scale rescaling happens here once (the data were divided by
        :func:`mvlib.core.scale.open_source` or the estimator's entry point), so the algorithm
        runs on data of moderate scale. ``e`` is an int, or one int per view (a list: the
        attribute is then a list of per-view arrays, view v named ``f"{name}{v}"``). A value
        float64 cannot hold is refused with a ``ValueError`` naming ``name`` (the fit then
        leaves the estimator as it was). Returns ``self``.
        """
        for attr, (power, what) in self._scale_powers.items():
            value = getattr(self, attr)
            if isinstance(e, (list, tuple)):
                value = [unscale(v, power * ev, f"{name}{i}", what) for i, (v, ev) in enumerate(zip(value, e), 1)]
            else:
                value = unscale(value, power * e, name, what)
            setattr(self, attr, value)
        return self

    def _check_fitted(self, attr):
        """Raise ``NotFittedError`` (a ``ValueError``) unless ``attr`` was set by ``fit``."""
        if not hasattr(self, attr):
            raise NotFittedError(f"this {type(self).__name__} instance is not fitted yet; call fit first")

    def _check_n_features(self, n_features, name="X"):
        """Refuse data whose number of columns differs from the one seen in ``fit``."""
        check_n_features(n_features, self.n_features_in_, type(self).__name__, name)


def _all_or_nothing(fit):
    """Wrap ``fit`` so that, if it raises, the estimator's attributes are restored as they were."""
    if getattr(fit, "_all_or_nothing", False):
        return fit

    @functools.wraps(fit)
    def wrapped(self, *args, **kwargs):
        before = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    wrapped._all_or_nothing = True
    return wrapped



def renamed_parameter(estimator, new: str, old: str, *, unset=None):
    """The value of hyper-parameter ``new``, also accepting its former name ``old``.

    ``old`` defaults to the string ``"deprecated"`` in ``__init__``; when a user passed it, a
    ``FutureWarning`` says so and its value is used (a ``ValueError`` if ``new`` was also given,
    i.e. differs from ``unset``).
    """
    old_value, new_value = getattr(estimator, old), getattr(estimator, new)
    if isinstance(old_value, str) and old_value == "deprecated":
        return new_value
    warn_user(f"{old} was renamed {new} in mvlib 0.2 and will be removed in 0.3: pass "
              f"{new}={old_value!r}", FutureWarning)
    if not (new_value is unset or (isinstance(unset, str) and new_value == unset)):
        raise ValueError(f"{new}={new_value!r} and its former name {old}={old_value!r} were both given; "
                         f"pass {new} only")
    return old_value


def clip_weights(w, what="weights"):
    """Clip estimated mixing weights to >= 0 and renormalise (warning when clipping was needed)."""
    w = np.asarray(w, float).copy()
    if not np.all(np.isfinite(w)):
        raise RuntimeError(f"the estimated {what} are not finite; the moments are too noisy or degenerate")
    if np.any(w < 0):
        warn_user(
            f"{int(np.sum(w < 0))} estimated {what} were negative (smallest {w.min():.3g}) and were "
            "clipped to 0 before renormalising; the sample may be too small for n_components",
            RuntimeWarning,
        )
        w = np.maximum(w, 0.0)
    total = w.sum()
    if not total > 0:
        raise RuntimeError(f"the estimated {what} are all zero or negative; estimation failed")
    return w / total


def clip_to_simplex(B):
    """Clip negative entries to 0 and renormalise each row to sum 1 (not the Euclidean
    projection onto the simplex, which is :func:`mvlib.hmm.project_simplex`).

    Returns the rows and the largest fraction of a row's absolute mass that was clipped.
    Raises ``RuntimeError`` when a row is not finite or has no positive entry.
    """
    pos = np.maximum(B, 0.0)
    neg = np.maximum(-B, 0.0).sum(axis=1)
    total = pos.sum(axis=1)
    if np.any(~(total > 0)) or not np.all(np.isfinite(B)):
        bad = int(np.flatnonzero(~(total > 0) | ~np.all(np.isfinite(B), axis=1))[0])
        raise RuntimeError(
            f"estimated topic {bad} has no positive word mass; the sample is too small or "
            "n_components exceeds the number of topics"
        )
    return pos / total[:, None], float(np.max(neg / (total + neg)))


def power_decomposition(T, k, rng, what="samples"):
    """:func:`mvlib.tensor_power_method` on a whitened third moment; refuses non-positive eigenvalues."""
    from .power import tensor_power_method

    cp = tensor_power_method(T, k, random_state=rng)
    lam, V = np.asarray(cp.weights), np.asarray(cp.factors[0])
    if np.any(lam <= 0):
        raise RuntimeError(
            "the tensor power method found a non-positive eigenvalue; the whitened moment is "
            f"not close to orthogonally decomposable (too few {what} or n_components too large)"
        )
    return lam, V


def rademacher_signs(n):
    """Balanced random signs from a fixed seed (the noise check must not depend on random_state);
    the same signs :func:`mvlib.core.scale.rademacher_slice` gives a Dask worker for its rows."""
    return rademacher_slice(n, 0, n).copy()


def _spectral_norm(A):
    """Largest singular value; Lanczos (ARPACK, deterministic start) for large matrices."""
    if min(A.shape) <= 500:
        return float(sla.svdvals(A)[0])
    return float(spla.svds(A, k=1, v0=np.ones(min(A.shape)), return_singular_vectors=False)[0])


#: warn when the k-th singular value is below this multiple of the complement noise
_NOISE_FACTOR = 1.5


def warn_noise_level(k, s_k, E, L, R, what):
    r"""Warn when the k-th singular value of a pairs matrix is at the level of its sampling noise.

    ``E`` is a symmetrised (Rademacher) copy of the sampling error,
    :math:`\frac1n\sum_i\varepsilon_i x_{a,i}x_{b,i}^\top` with balanced random signs (half the
    difference of the pairs matrices of two random halves of the sample), and ``L``, ``R`` the top
    k−1 left/right singular vectors of the pairs matrix. If there were only k−1 components, the
    k-th singular value would be the largest singular value of the error restricted to the
    complement of ``L`` and ``R``, which :math:`\|(I-LL^\top)E(I-RR^\top)\|_2` estimates; a
    genuine k-th component stands clearly above it. Warns (``IllConditionedWarning``) below
    1.5 times that level.
    """
    if isinstance(E, spla.LinearOperator):     # implicit (large vocabularies): project lazily
        def proj(V, A=L, B=R):              # (I - A Aᵀ) E (I - B Bᵀ) V; E is symmetric
            V = V - B @ (B.T @ V)
            V = np.asarray(E @ V)
            return V - A @ (A.T @ V)
        d = E.shape[0]
        Ec = spla.LinearOperator((d, d), matvec=proj, matmat=proj, dtype=float,
                                 rmatvec=lambda V: proj(V, R, L), rmatmat=lambda V: proj(V, R, L))
        noise = float(spla.svds(Ec, k=1, v0=np.ones(d), return_singular_vectors=False)[0])
    else:
        Ec = E - L @ (L.T @ E)
        Ec = Ec - (Ec @ R) @ R.T
        noise = _spectral_norm(Ec)
    if s_k < _NOISE_FACTOR * noise:
        warn_user(
            f"singular value number {k} ({s_k:.2e}) of {what} is at the level of its sampling noise "
            f"({noise:.2e}, estimated by splitting the sample): n_components={k} may exceed the number "
            "of components these data identify (Condition 3.1), and the weakest components are unreliable",
            IllConditionedWarning,
        )


class CountDataMixin:
    """Tags of estimators of count data: non-negative integer counts, dense or sparse."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True   # non-negative integer counts
        tags.input_tags.sparse = True
        return tags




class MixtureInferenceMixin:
    r"""Inference of a fitted mixture from one hook, written once for every estimator.

    A subclass defines ``_log_joint(X)``: it validates ``X`` (whatever its ``fit`` takes: a 2-d
    array, counts, a list of views) and returns the (n_samples, n_components) array of
    :math:`\log w_h + \log p(x \mid h)`. From it: ``predict_proba`` (the posterior, by
    log-sum-exp), ``predict`` (its arg max), ``score_samples`` (:math:`\log p(x)`) and ``score``
    (their mean).
    """

    def predict_proba(self, X):
        """Posterior probabilities of the components, (n_samples, n_components)."""
        L = self._log_joint(X)
        return np.exp(L - logsumexp(L, axis=1, keepdims=True))

    def predict(self, X):
        """Most probable component of each sample, (n_samples,) ints."""
        return np.argmax(self._log_joint(X), axis=1)

    def score_samples(self, X):
        """Log-likelihood of each sample under the fitted mixture, (n_samples,)."""
        return logsumexp(self._log_joint(X), axis=1)

    def score(self, X, y=None):
        """Average log-likelihood per sample under the fitted mixture."""
        return float(np.mean(self.score_samples(X)))


class ViewsInputMixin:
    """Tags of estimators of a list of dense views (not one 2-d array)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False   # a list of dense views, not one 2-d array
        tags.input_tags.sparse = False
        return tags


class ProductMixture(ViewsInputMixin, MixtureInferenceMixin, DensityMixin, MomentEstimator):
    """Inference shared by the baselines: p(x1, x2, x3) = Σ_h π_h Π_v p_v(x_v | h).

    A density estimator (``score`` is the average log-likelihood) of a list of dense views;
    ``n_features_in_`` is the list of the views' numbers of columns.
    """

    def _check_view_index(self, view):
        self._check_fitted("weights_")
        n_views = len(self.n_features_in_)
        if isinstance(view, bool) or not isinstance(view, (numbers.Integral, np.integer)):
            raise TypeError(f"view must be an int, got {type(view).__name__}")
        if not 0 <= view < n_views:
            raise ValueError(f"view={view} must be in 0..{n_views - 1}")
        return int(view)

    def _check_points(self, x, view):
        d = self.n_features_in_[view]
        x = np.asarray(x, dtype=float) if not isinstance(x, (str, bytes)) and x is not None else x
        if isinstance(x, np.ndarray) and x.ndim == 1 and d == 1:
            x = x[:, None]
        x = check_array(x, "x", ndim=2)
        if x.shape[1] != d:
            raise ValueError(f"x has {x.shape[1]} columns but view {view} has {d}")
        return x

    def _log_joint(self, views):
        self._check_fitted("weights_")
        views = check_views(views, n_views=len(self.n_features_in_), min_rows=1, allow_sparse=False)
        self._check_n_features([X.shape[1] for X in views], "views")
        L = np.log(np.maximum(self.weights_, TINY))[None, :]
        for v, X in enumerate(views):
            L = L + np.log(np.maximum(self.conditional_density(X, view=v), TINY))
        return L

