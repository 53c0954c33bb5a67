"""ProductMixtureEM (split from the former baselines module)."""
from __future__ import annotations


import numpy as np
from scipy.special import gammaln, logsumexp
from sklearn.base import DensityMixin

from ..core.base import TINY, MixtureInferenceMixin, MomentEstimator, ViewsInputMixin
from ..core.validation import (
    Integer,
    PositiveFloat,
    RandomState,
    Unchecked,
    check_matrix,
    check_views,
)
from ._estimator import MultiViewMixture

_VIEW_KINDS = ("gaussian", "poisson", "bernoulli")


class ProductMixtureEM(ViewsInputMixin, MixtureInferenceMixin, DensityMixin, MomentEstimator):
    r"""EM for a multi-view product mixture with Gaussian, Poisson or Bernoulli views.

    See :doc:`/chapters/04_three_view_mixtures` for the comparison with
    :class:`mvlib.MultiViewMixture` (same data, random starts and the spectral start).

    The likelihood baseline for the three-view mixture of chapter 4 when the view laws are
    known: :math:`p(x_1,\dots,x_V)=\sum_{h=1}^k w_h\prod_v p_v(x_v\mid h)` with, per view,

    * ``"gaussian"``: :math:`N(\mu_{v,h},\operatorname{diag}(\sigma^2_{v,h}))`;
    * ``"poisson"``: independent coordinates, :math:`\mathrm{Poisson}(\mu_{v,h,a})`;
    * ``"bernoulli"``: independent coordinates, :math:`\mathrm{Bernoulli}(\mu_{v,h,a})`.

    EM (Dempster, Laird & Rubin 1977): the E-step computes the responsibilities
    :math:`r_{sh}\propto w_h\prod_vp_v(x_{v,s}\mid h)`; the M-step sets
    :math:`w_h=\frac1n\sum_sr_{sh}`, every mean :math:`\mu_{v,h}` to the
    :math:`r_{\cdot h}`-weighted average of :math:`x_v` (the maximum-likelihood update for all
    three families) and the Gaussian variances to the weighted variances (floored at
    ``var_floor``). Rates and probabilities are clipped to
    :math:`[10^{-6},\infty)` and :math:`[10^{-6},1-10^{-6}]` inside logarithms.

    Parameters
    ----------
    n_components : int
    kinds : sequence of {"gaussian", "poisson", "bernoulli"}, one per view
    init : "random", "spectral" or a list of arrays (n_components, d_v)
        ``"random"``: means at ``n_components`` distinct random samples, every Gaussian
        variance at the view's overall variance, uniform weights (``n_init`` starts, the one
        with the highest final log-likelihood is kept). ``"spectral"``: means and weights of
        ``MultiViewMixture(n_components, random_state=...)`` (three views only), Gaussian
        variances from :math:`\widehat{\mathrm{Var}}(x_v)-\sum_hw_h(\mu_{v,h}-\bar\mu_v)^2`
        (floored). An explicit list of means starts there with the variances of ``"random"``.
    n_init : int, default 1 (random starts)
    max_iter : int, default 200
    tol : float, default 1e-6
        Stop when the mean log-likelihood per sample gains less than ``tol``.
    var_floor : float, default 1e-6
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    means_ : list of arrays (n_components, d_v)
    variances_ : list with an array (n_components, d_v) for Gaussian views, None otherwise
    weights_ : array (n_components,)
    log_likelihood_ : float, mean log-likelihood per sample (Poisson terms include
        :math:`-\log x!`); ``log_likelihood_trace_`` one value per iteration
    n_iter_ : int; ``converged_`` : bool

    See Also
    --------
    mvlib.MultiViewMixture : the moment estimate, also a start (``init="spectral"``).
    sklearn.mixture.GaussianMixture : EM for Gaussian mixtures of the concatenated views.
    mvlib.NonparametricEM : EM-like fits when the view laws are unknown.

    Notes
    -----
    Cost O(n k Σ_v d_v) per iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import ProductMixtureEM, match_columns
    >>> rng = np.random.default_rng(0)
    >>> h = rng.choice(2, size=1000, p=[0.4, 0.6])        # hidden component of each sample
    >>> means = [np.array([[-2.0, 0.0], [2.0, 1.0]]),      # Gaussian view
    ...          np.array([[1.0, 5.0], [4.0, 2.0]]),       # Poisson rates
    ...          np.array([[0.2, 0.8], [0.7, 0.3]])]       # Bernoulli probabilities
    >>> views = [means[0][h] + rng.standard_normal((1000, 2)),
    ...          rng.poisson(means[1][h]), rng.binomial(1, means[2][h])]
    >>> em = ProductMixtureEM(2, random_state=0).fit(views)   # kinds: gaussian, poisson, bernoulli
    >>> perm, _ = match_columns(means[1].T, em.means_[1].T)   # align the components
    >>> np.round(em.means_[1][perm])
    array([[1., 5.],
           [4., 2.]])
    >>> np.round(em.weights_[perm], 1)
    array([0.4, 0.6])
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "kinds": Unchecked("one kind per view: checked against the views in fit"),
        "init": Unchecked("'random', 'spectral' or parameters of the data's shapes: checked in fit"),
        "n_init": Integer(),
        "max_iter": Integer(),
        "tol": PositiveFloat(),
        "var_floor": PositiveFloat(),
        "random_state": RandomState(),
    }

    def __init__(self, n_components, kinds=("gaussian", "poisson", "bernoulli"), *, init="random",
                 n_init=1, max_iter=200, tol=1e-6, var_floor=1e-6, random_state=None):
        self.n_components = n_components
        self.kinds = kinds
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.var_floor = var_floor
        self.random_state = random_state

    # ---------------------------------------------------------------- helpers
    def _check_kinds(self, n_views):
        kinds = tuple(self.kinds) if isinstance(self.kinds, (list, tuple)) else None
        if kinds is None or len(kinds) != n_views or any(c not in _VIEW_KINDS for c in kinds):
            raise ValueError(f"kinds must list one of {_VIEW_KINDS} per view ({n_views} views), got {self.kinds!r}")
        return kinds

    @staticmethod
    def _check_data(Xs, kinds):
        for v, (X, kind) in enumerate(zip(Xs, kinds)):
            if kind == "poisson" and (np.any(X < 0) or np.any(X != np.round(X))):
                raise ValueError(f"X{v + 1} must hold non-negative integer counts for kind='poisson'")
            if kind == "bernoulli" and np.any((X != 0) & (X != 1)):
                raise ValueError(f"X{v + 1} must hold 0/1 indicators for kind='bernoulli'")

    def _log_joint_of(self, Xs, kinds, means, variances, weights):
        """(n, k) log w_h + Σ_v log p_v(x_v | h)."""
        L = np.log(np.maximum(weights, TINY))[None, :].repeat(Xs[0].shape[0], axis=0)
        for X, kind, M, V in zip(Xs, kinds, means, variances):
            if kind == "gaussian":
                L += -0.5 * (((X[:, None, :] - M[None]) ** 2 / V[None]).sum(axis=2)
                             + np.log(2 * np.pi * V).sum(axis=1)[None])
            elif kind == "poisson":
                lam = np.maximum(M, 1e-6)
                L += X @ np.log(lam).T - lam.sum(axis=1)[None] - gammaln(X + 1).sum(axis=1)[:, None]
            else:
                p = np.clip(M, 1e-6, 1 - 1e-6)
                L += X @ np.log(p).T + (1 - X) @ np.log1p(-p).T
        return L

    def _m_step(self, Xs, kinds, R):
        nk = np.maximum(R.sum(axis=0), TINY)
        weights = nk / nk.sum()
        means, variances = [], []
        for X, kind in zip(Xs, kinds):
            M = (R.T @ X) / nk[:, None]
            means.append(M)
            if kind == "gaussian":
                V = (R.T @ X ** 2) / nk[:, None] - M ** 2
                variances.append(np.maximum(V, float(self.var_floor)))
            else:
                variances.append(None)
        return means, variances, weights

    def _run(self, Xs, kinds, means, variances, weights):
        trace, converged = [], False
        for it in range(1, int(self.max_iter) + 1):
            L = self._log_joint_of(Xs, kinds, means, variances, weights)
            ll = logsumexp(L, axis=1, keepdims=True)
            trace.append(float(ll.mean()))
            if it > 1 and trace[-1] - trace[-2] < float(self.tol):
                converged = True
                break
            means, variances, weights = self._m_step(Xs, kinds, np.exp(L - ll))
        return means, variances, weights, trace, converged

    def _starts(self, Xs, kinds, k, rng):
        n = Xs[0].shape[0]
        overall = [X.var(axis=0) for X in Xs]

        def default_vars(kinds_):
            return [np.tile(np.maximum(o, float(self.var_floor)), (k, 1)) if c == "gaussian" else None
                    for o, c in zip(overall, kinds_)]

        if isinstance(self.init, str) and self.init == "random":
            out = []
            for _ in range(int(self.n_init)):
                rows = rng.choice(n, size=k, replace=False)
                out.append(([X[rows].astype(float) for X in Xs], default_vars(kinds), np.full(k, 1.0 / k)))
            return out
        if isinstance(self.init, str) and self.init == "spectral":
            if len(Xs) != 3:
                raise ValueError("init='spectral' needs exactly three views (MultiViewMixture)")
            spec = MultiViewMixture(k, random_state=rng).fit(Xs)
            means, w = [M.copy() for M in spec.means_], spec.weights_.copy()
            variances = []
            for X, kind, M, o in zip(Xs, kinds, means, overall):
                if kind == "gaussian":
                    between = (w[:, None] * (M - w @ M) ** 2).sum(axis=0)
                    variances.append(np.tile(np.maximum(o - between, float(self.var_floor)), (k, 1)))
                else:
                    variances.append(None)
            return [(means, variances, np.maximum(w, 1e-3) / np.maximum(w, 1e-3).sum())]
        if isinstance(self.init, str):
            raise ValueError(f"init must be 'random', 'spectral' or a list of mean arrays, got {self.init!r}")
        if not isinstance(self.init, (list, tuple)) or len(self.init) != len(Xs):
            raise ValueError(f"init must hold one (n_components, d_v) array per view ({len(Xs)} views)")
        means = [check_matrix(M, f"init[{v}]", shape=(k, X.shape[1])) for v, (M, X) in enumerate(zip(self.init, Xs))]
        return [(means, default_vars(kinds), np.full(k, 1.0 / k))]

    # ---------------------------------------------------------------- API
    def fit(self, views, y=None):
        """Fit by EM to ``views`` = [X1, ..., XV] (dense arrays sharing their rows); returns ``self``."""
        Xs = [np.asarray(X, dtype=float) for X in check_views(views, n_views=None, allow_sparse=False)]
        p = self._validate_params()
        k, rng = p.n_components, p.random_state
        kinds = self._check_kinds(len(Xs))
        self._check_data(Xs, kinds)
        for v, (X, kind) in enumerate(zip(Xs, kinds), start=1):
            if kind == "gaussian" and np.max(np.abs(X)) >= 2.0 ** 500:
                raise ValueError(f"X{v} (a Gaussian view) holds values up to {np.max(np.abs(X)):.3g}, whose "
                                 f"squares overflow float64; rescale X{v}")
        if k > Xs[0].shape[0]:
            raise ValueError(f"n_components={k} exceeds the number of samples {Xs[0].shape[0]}")
        best = None
        for start in self._starts(Xs, kinds, k, rng):
            out = self._run(Xs, kinds, *start)
            if best is None or out[3][-1] > best[3][-1]:
                best = out
        means, variances, weights, trace, converged = best
        self.means_, self.variances_, self.weights_ = means, variances, weights
        self.log_likelihood_trace_ = trace
        self.log_likelihood_ = float(trace[-1])
        self.n_iter_, self.converged_ = len(trace), converged
        self.kinds_ = kinds
        self.n_features_in_ = [X.shape[1] for X in Xs]
        return self

    def _log_joint(self, views):
        self._check_fitted("means_")
        Xs = [np.asarray(X, dtype=float) for X in check_views(views, n_views=len(self.kinds_),
                                                               allow_sparse=False, min_rows=1)]
        self._check_n_features([X.shape[1] for X in Xs], "views")
        return self._log_joint_of(Xs, self.kinds_, self.means_, self.variances_, self.weights_)
