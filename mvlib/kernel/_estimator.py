r"""Nonparametric three-view mixtures by kernel embeddings: :class:`KernelSpectral`.

Song, Anandkumar, Dai & Xie (2014): a hidden :math:`h\in[k]` with :math:`P(h)=\pi_h`;
given h the views :math:`x_1,x_2,x_3` are independent with densities :math:`p_v(x\mid h)`
of no parametric form. Each density is represented by its kernel embedding
:math:`\mu_{X_v|h}=E[\phi(x_v)\mid h]`; the second and third order embeddings factor
through them (Song et al. 2014, eqs. 8–11), and whitening + the tensor power method recover them.
With ``alpha0`` each row is a group of three exchangeable observations whose component
proportions follow a Dirichlet prior (Song et al. 2014, §7), and the embeddings are the
α₀-corrected ones of Anandkumar et al. (2012, Theorem 3.5).
See :doc:`/chapters/07_kernel_embeddings`.
"""
from __future__ import annotations

import functools

import numpy as np
import scipy.linalg as sla

from ..core.base import TINY, ProductMixture, clip_weights
from ..core.validation import (
    Boolean,
    Integer,
    Options,
    OrNone,
    RandomState,
    Rule,
    check_alpha0,
    check_bandwidth,
    check_views,
    column_if_vector,
    warn_user,
)
from ..multiview import MultiViewMixture
from ._algorithm import (
    _check_bandwidth_fits,
    cv_bandwidth,
    delta_kernel,
    kernel_basis,
    kernel_features,
    kernel_spectral_decomposition,
    kernel_spectral_streamed,
    rbf_kernel,
)

__all__ = ["KernelSpectral"]

#: rank=None uses the exact path (full Cholesky) when the basis has at most this many points
EXACT_MAX_POINTS = 1000
#: default rank of the low-rank path (incomplete Cholesky pivots per basis)
DEFAULT_RANK = 300
#: the low-rank path searches its pivots among at most this many points (a random subset)
BASIS_MAX_POINTS = 20_000
#: with symmetric views, features larger than this (3 · m · r · 8 bytes) are streamed
FEATURE_BYTES = 256 * 2**20
#: rows per chunk of the streamed features
STREAM_CHUNK = 50_000
_KERNELS = ("rbf", "delta")


def _check_view_bandwidths(value, name):
    """'cv', a positive float, or a list of three of them (one per view)."""
    if isinstance(value, str):
        if value != "cv":
            raise ValueError(f"{name} must be 'cv', a positive float or a list of 3, got {value!r}")
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != 3:
            raise ValueError(f"{name} must hold one value per view (3), got {len(value)}")
        return [b if isinstance(b, str) and b == "cv" else check_bandwidth(b, name) for b in value]
    return check_bandwidth(value, name)


def _check_optional_alpha0(value):
    return check_alpha0(value, allow_none=True)


class KernelSpectral(ProductMixture):
    r"""Nonparametric multi-view mixture by the kernel spectral algorithm (Song et al. 2014).

    See :doc:`/chapters/07_kernel_embeddings` for the derivation, checks and experiments.

    Parameters
    ----------
    n_components : int
        Number k of mixture components.
    bandwidth : "cv", float > 0, or a list of three of them, default "cv"
        Bandwidth s of the normalised RBF kernel
        :math:`\exp(-\|x-x'\|^2/2s^2)/(\sqrt{2\pi}s)^d` (:func:`mvlib.rbf_kernel`).
        ``"cv"``: per view (per pooled sample when ``symmetric``), the maximiser of the
        leave-one-out KDE likelihood on a log grid around Silverman's rule
        (:func:`mvlib.kernel.cv_bandwidth`). Ignored for ``kernel="delta"``. A list gives one
        value per view (``symmetric=True`` needs them equal: one feature space).
    rank : None or int ≥ 1, default None
        ``None``: exact path (full Cholesky of the Gram matrix, Algorithm 1) when the basis
        has at most 1000 points (m ≤ 500 with ``symmetric=True``, m ≤ 333 with ``alpha0``,
        m ≤ 1000 otherwise),
        otherwise the low-rank path with rank 300. An int: the low-rank path with at most
        ``rank`` incomplete-Cholesky pivots (:func:`mvlib.kernel.kernel_basis`). The
        low-rank path searches its pivots among at most 20,000 of the points (a random
        subset when there are more), and with ``symmetric=True`` it streams the m × r
        features in chunks of 50,000 rows when they would exceed 256 MiB, so that time is
        O(m r) and memory O(r² + 50,000 r) whatever m is (tested to m = 10⁶ in
        ``bench/bench_kernel.py``). With ``symmetric=False`` the features of each view are
        held in memory (m × r each).
    random_state : None, int or numpy.random.Generator
        Power-method starts, bandwidth subsample.
    kernel : {"rbf", "delta"}, default "rbf"
        ``"delta"``: :func:`mvlib.delta_kernel` for discrete (e.g. integer-coded) views; the
        algorithm is then the discrete spectral method on one-hot vectors (Example 1) and
        :meth:`conditional_density` returns probabilities of the observed values (0 for
        values never seen in fitting). Always exact (pivoted Cholesky stops at the number of
        distinct values).
    symmetric : bool, default True
        ``True``: the three views share one conditional law :math:`p(x|h)` (Song et al. §5);
        Φ and Ψ stack views 1 and 2 (2m points) and :func:`mvlib.kernel.kernel_spectral_decomposition`
        runs Algorithm 1. ``False``: views with different conditional laws (and possibly
        different dimensions and bandwidths): one kernel basis per view, views 1 and 2
        symmetrised to view 3 (Appendix 9) in those coordinates by
        :class:`mvlib.MultiViewMixture` (``method="tensor"``). At some bandwidths the
        symmetrised pairs matrix of the sample has fewer than k positive eigenvalues (it is
        positive semi-definite only in the population), and the tensor route cannot whiten;
        the fit then falls back to Algorithm B on the same kernel features
        (``MultiViewMixture(method="observable")``, which needs no symmetrisation) with a
        ``RuntimeWarning``, and ``method_used_`` says which route ran.
    n_restarts : int, default 20
        Random starts of the tensor power method per component.
    alpha0 : None or float > 0, default None
        ``None``: each row's three views come from one hidden component (the model above).
        A float: the concentration :math:`\alpha_0=\sum_h\alpha_h` of a Dirichlet prior —
        each row is a **group** of three exchangeable observations (distinct draws of one
        group, e.g. three words of a document, three cells of a patient), the group draws
        proportions :math:`\theta\sim\mathrm{Dir}(\alpha)` and each observation draws
        :math:`h\sim\theta`, then :math:`x\sim p(x\mid h)`; see "Dirichlet prior" below.
        Needs ``symmetric=True`` (one conditional law). :math:`\alpha_0\to0` recovers the
        one-component model (α₀ = 1e-8 differs from ``None`` only by the averaging over all
        pairs and orders and by the basis, built from the three views).

    Attributes
    ----------
    weights_ : array (n_components,)
        Mixing weights :math:`\hat\pi_h=\hat\lambda_h^{-2}`, clipped to ≥ 0, summing to 1.
        With ``alpha0``: the expected proportions :math:`\hat\alpha_h/\sum_j\hat\alpha_j`
        (:math:`\approx\hat\alpha_h/\alpha_0`).
    alpha_ : array (n_components,), only with ``alpha0``
        The estimated Dirichlet parameters
        :math:`\hat\alpha_h=4\alpha_0(\alpha_0+1)/((\alpha_0+2)^2\hat\lambda_h^2)`; their
        sum estimates α₀ (equal in the population).
    bandwidth_ : list of 3 floats (the bandwidths used per view; NaN for the delta kernel)
    centres_ : list of 3 arrays (r_v, d_v)
        Basis points c of each view's density estimate.
    coef_ : list of 3 arrays (r_v, n_components)
        :math:`\hat p_v(x\mid h)=\sum_c \mathrm{coef}_{ch}\,\kappa(c, x)` before clipping.
    n_features_in_ : list of 3 ints
    rank_ : list of 3 ints
        Basis sizes r_v.
    exact_ : bool
        Whether the exact path (full Cholesky) was used.
    method_used_ : str
        ``"algorithm1"`` (``symmetric=True``), ``"tensor"`` or ``"observable"`` (the fallback
        of ``symmetric=False``, see above).

    Methods: ``fit(views)``; ``conditional_density(x, view=0)`` → (n_points, n_components);
    ``predict_proba(views)``, ``predict(views)`` (MAP component
    :math:`\arg\max_h\hat\pi_h\prod_v\hat p_v(x_v|h)`) and ``score(views)`` (average
    log-likelihood, densities floored at 1e-300), all on lists of three views whose
    one-dimensional entries may be 1-d arrays.

    Densities: :math:`\hat p(x|h)=\langle\phi(x),\hat\mu_{X|h}\rangle` is a signed
    combination of kernels; its coefficients are scaled to sum to 1 (with the normalised RBF
    kernel the estimate then integrates to 1, with the delta kernel it sums to 1 over the
    observed values) and :meth:`conditional_density` clips negative values to 0 (no further
    renormalisation: the clipped mass is small where the fit is good).

    See Also
    --------
    mvlib.NonparametricEM : the npEM baseline (Benaglia et al. 2009).
    mvlib.HistogramSpectral : the discretised baseline.
    mvlib.MultiViewMixture : the discrete method that the delta kernel reproduces.
    mvlib.LatentTreeEmbedding : kernel embeddings decomposed along a latent tree.

    Notes
    -----
    Dirichlet prior (``alpha0``). With :math:`\mu_h=E[\phi(x)\mid h]`,
    :math:`m_1=E[\phi(x_1)]`, Song et al. (2014, §7) and Anandkumar et al. (2012, Theorem
    3.5) give

    .. math::

       \mathcal M_2 &= E[\phi(x_1)\otimes\phi(x_2)]-\tfrac{\alpha_0}{\alpha_0+1}m_1\otimes m_1
          = \sum_h \tfrac{\alpha_h}{\alpha_0(\alpha_0+1)}\mu_h^{\otimes2},\\
       \mathcal M_3 &= E[\phi(x_1)\otimes\phi(x_2)\otimes\phi(x_3)]
          -\tfrac{\alpha_0}{\alpha_0+2}\bigl(E[\phi(x_1)\otimes\phi(x_2)\otimes m_1]
          +E[\phi(x_1)\otimes m_1\otimes\phi(x_2)]+E[m_1\otimes\phi(x_1)\otimes\phi(x_2)]\bigr)
          +\tfrac{2\alpha_0^2}{(\alpha_0+1)(\alpha_0+2)}m_1^{\otimes3}
          = \sum_h \tfrac{2\alpha_h}{\alpha_0(\alpha_0+1)(\alpha_0+2)}\mu_h^{\otimes3}.

    They are estimated in the explicit feature coordinates :math:`g(x)` of the kernel basis
    (:func:`mvlib.kernel.kernel_dirichlet_moments`): :math:`\hat m_1` the mean feature of
    all three views, the pairs averaged over the six ordered pairs and the triples over the
    six orders (the views are exchangeable), the corrections rank-one updates of the whitened
    moments; the basis is built from the three views pooled (3m points: exact path for
    m ≤ 333). Algorithm 1 then runs unchanged on :math:`\mathcal M_2,\mathcal M_3`: with
    :math:`c=1/(\alpha_0(\alpha_0+1))`, :math:`c'=2/(\alpha_0(\alpha_0+1)(\alpha_0+2))`, the
    whitened components are :math:`v_h=\sqrt{c\alpha_h}W^\top\mu_h` with eigenvalues
    :math:`\lambda_h=c'\alpha_h/(c\alpha_h)^{3/2}`, so
    :math:`\alpha_h=4\alpha_0(\alpha_0+1)/((\alpha_0+2)^2\lambda_h^2)` and
    :math:`\mu_h=\tfrac{\alpha_0+2}{2}\lambda_h(W^\top)^+v_h`. With the delta kernel this is
    the spectral LDA of :mod:`mvlib.lda` on documents of three words.
    :meth:`conditional_density`, :meth:`expectation` and :meth:`interval_probability` are
    unchanged (the per-component law :math:`p(x\mid h)`). Group inference uses the Dirichlet
    model with the estimated :math:`\hat\alpha` (:math:`\hat\alpha_0=\sum_h\hat\alpha_h`):
    :meth:`score` is the average log-likelihood of a group, the log of
    :math:`p(x_1,x_2,x_3)=\sum_{h_1h_2h_3}E[\theta_{h_1}\theta_{h_2}\theta_{h_3}]\prod_v\hat p(x_v\mid h_v)`
    (in closed form, O(k) per group); :meth:`predict_proba` the posterior mean proportions
    :math:`E[\theta\mid x_1,x_2,x_3]=(\hat\alpha+\sum_v P(h_v=\cdot\mid x_1,x_2,x_3))/(\hat\alpha_0+3)`
    (rows sum to 1; they tend to the one-component posterior as :math:`\alpha_0\to0`); :meth:`predict` its arg max, the dominant component. A single
    observation's component posterior uses the expected proportions as the prior:
    :math:`P(h\mid x)\propto\hat w_h\,\hat p(x\mid h)` with :math:`\hat w` = ``weights_``.

    Cost, m samples, basis size r (2m or m exact, ≤ rank low-rank): O(r m d + r² m + r³)
    for the features and whitening, O(m k³) for the tensor, memory O(m r). With ``alpha0``:
    3m basis points (exact path), three cross products instead of one (O(3 m r²)) and the
    six orders of the triples (O(2 m k³)); inference O(n k) per view.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import KernelSpectral
    >>> rng = np.random.default_rng(0)
    >>> h = rng.choice(2, size=200, p=[0.3, 0.7])            # hidden component of each row
    >>> views = [np.where(h == 0, rng.normal(-3, 1, 200), rng.gamma(2, 1, 200))[:, None]
    ...          for _ in range(3)]                          # x | h: N(-3, 1) or Gamma(2, 1)
    >>> ks = KernelSpectral(2, random_state=0).fit(views)
    >>> np.round(np.sort(ks.weights_), 1)
    array([0.3, 0.7])
    >>> np.round(np.sort(ks.expectation(lambda x: x[:, 0])))  # E[x | h] of each component
    array([-3.,  2.])
    >>> ks.conditional_density(np.linspace(-6, 8, 50)).shape
    (50, 2)
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "bandwidth": Rule(_check_view_bandwidths),
        "rank": OrNone(Integer()),
        "random_state": RandomState(),
        "kernel": Options(_KERNELS),
        "symmetric": Boolean(),
        "n_restarts": Integer(),
        "alpha0": Rule(_check_optional_alpha0, takes_name=False),
    }

    def __init__(self, n_components, bandwidth="cv", rank=None, random_state=None, *,
                 kernel="rbf", symmetric=True, n_restarts=20, alpha0=None):
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.rank = rank
        self.random_state = random_state
        self.kernel = kernel
        self.symmetric = symmetric
        self.n_restarts = n_restarts
        self.alpha0 = alpha0

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        """The validated hyper-parameters: (k, one bandwidth or 'cv' per view, rng, alpha0)."""
        p = self._validate_params()
        if p.alpha0 is not None and not p.symmetric:
            raise ValueError("alpha0 needs symmetric=True: the observations of a group are exchangeable "
                             "(one conditional law p(x|h))")
        bws = p.bandwidth if isinstance(p.bandwidth, list) else [p.bandwidth] * 3
        return p.n_components, bws, p.random_state, p.alpha0

    def _views(self, views, min_rows):
        if isinstance(views, (list, tuple)):
            views = [column_if_vector(X) for X in views]
        return check_views(views, n_views=3, min_rows=min_rows, allow_sparse=False)

    # ------------------------------------------------------------------ fit
    def _kernel_fn(self, s):
        if self.kernel == "delta":
            return delta_kernel
        return functools.partial(rbf_kernel, bandwidth=s)

    def _basis(self, X, kern, rng):
        """(centres, L, exact) for the points X; the low-rank pivots are searched among at most
        BASIS_MAX_POINTS of them (drawn by ``rng``) so that large samples stay O(m r) in time."""
        if self.kernel == "delta":  # one pivot per distinct value: exact, O(n · n_values) memory
            n_values = np.unique(X, axis=0).shape[0]
            return (*kernel_basis(X, kern, rank=n_values, tol=0.0), True)
        exact = self.rank is None and X.shape[0] <= EXACT_MAX_POINTS
        rank = None if exact else (DEFAULT_RANK if self.rank is None else self.rank)
        if not exact and X.shape[0] > BASIS_MAX_POINTS:
            X = X[np.sort(rng.choice(X.shape[0], BASIS_MAX_POINTS, replace=False))]
        return (*kernel_basis(X, kern, rank=rank), exact)

    def fit(self, views, y=None):
        """Fit to ``views = [X1, X2, X3]`` (each (m, d_v), or (m,) for one dimension); returns ``self``.

        With ``alpha0`` row i of view v is the v-th observation of group i."""
        k, bws, rng, alpha0 = self._check_params()
        Xs = self._views(views, min_rows=2)
        d = [X.shape[1] for X in Xs]
        if self.symmetric and len(set(d)) != 1:
            raise ValueError(f"symmetric=True needs views of one dimension, got X1, X2, X3 with {d} columns")
        if self.symmetric and len({str(b) for b in bws}) != 1:
            raise ValueError(f"symmetric=True uses one bandwidth for the three views, got bandwidth={self.bandwidth!r}")
        if self.symmetric:
            pooled = np.concatenate(Xs, axis=0)
            s = np.nan if self.kernel == "delta" else (
                cv_bandwidth(pooled, rng) if bws[0] == "cv" else bws[0])
            if self.kernel != "delta":
                _check_bandwidth_fits(pooled, s, "X1, X2, X3")
            kern = self._kernel_fn(s)
            # the basis spans views 1 and 2 (Algorithm 1); with a Dirichlet prior all three
            # (exchangeable observations, m1 the mean of the three)
            C, L, exact = self._basis(np.concatenate(Xs[:2] if alpha0 is None else Xs, axis=0), kern, rng)
            m, r = Xs[0].shape[0], C.shape[0]
            extra = {} if alpha0 is None else {"alpha0": alpha0}
            if 3 * m * r * 8 <= FEATURE_BYTES:      # the m × r features of the three views fit
                Fs = [kernel_features(X, C, L, kern) for X in Xs]
                out = kernel_spectral_decomposition(*Fs, k, random_state=rng, n_restarts=self.n_restarts,
                                                    **extra)
            else:                                   # never form them: two passes in chunks
                out = kernel_spectral_streamed(Xs, C, L, kern, k, chunk=STREAM_CHUNK, random_state=rng,
                                               n_restarts=self.n_restarts, **extra)
            coef = sla.solve_triangular(L, out["embeddings"], lower=True, trans="T")
            coefs, centres, bandwidths = [coef] * 3, [C] * 3, [float(s)] * 3
            raw_weights = out["weights"]
            method_used = "algorithm1"
        else:
            bandwidths = [np.nan if self.kernel == "delta" else (cv_bandwidth(X, rng) if b == "cv" else b)
                          for X, b in zip(Xs, bws)]
            for v, (X, s) in enumerate(zip(Xs, bandwidths), start=1):
                if self.kernel != "delta":
                    _check_bandwidth_fits(X, s, f"X{v}")
            bases = [self._basis(X, self._kernel_fn(s), rng) for X, s in zip(Xs, bandwidths)]
            Fs = [kernel_features(X, C, L, self._kernel_fn(s)) for X, (C, L, _), s in zip(Xs, bases, bandwidths)]
            try:
                mv = MultiViewMixture(k, method="tensor", random_state=rng).fit(Fs)
                method_used = "tensor"
            except (RuntimeError, ValueError) as exc:   # symmetrised pairs matrix not PSD here
                warn_user(f"the tensor route failed ({exc}); fell back to Algorithm B on the same "
                              "kernel features (MultiViewMixture(method='observable'))",
                              RuntimeWarning)
                mv = MultiViewMixture(k, method="observable", random_state=rng).fit(Fs)
                method_used = "observable"
            coefs = [sla.solve_triangular(L, M.T, lower=True, trans="T") for (C, L, _), M in zip(bases, mv.means_)]
            centres = [C for C, _, _ in bases]
            exact = all(e for _, _, e in bases)
            raw_weights = mv.weights_
        self.weights_ = clip_weights(raw_weights)
        if alpha0 is None:
            self.__dict__.pop("alpha_", None)    # a refit without the prior drops it
        else:                                   # α̂_h ∝ λ_h⁻²: the proportions do not involve α0
            self.alpha_ = np.asarray(raw_weights, float).copy()
            self.weights_ = clip_weights(out["eigenvalues"] ** -2.0)
        self.coef_ = [self._normalise(c) for c in coefs]
        self.centres_ = centres
        self.bandwidth_ = [float(b) for b in bandwidths]
        self.rank_ = [c.shape[0] for c in centres]
        self.exact_ = bool(exact)
        self.method_used_ = method_used
        self.n_features_in_ = d
        return self

    @staticmethod
    def _normalise(coef):
        total = coef.sum(axis=0)
        bad = ~(np.abs(total) > 1e-12)
        if np.any(bad):
            raise RuntimeError("an estimated embedding has zero total mass; estimation failed")
        return coef / total

    # ------------------------------------------------------------------ inference
    def conditional_density(self, x, view=0):
        r"""Estimated :math:`\hat p_v(x\mid h)=\max(\langle\phi(x),\hat\mu_{X_v|h}\rangle,0)`, (n_points, n_components).

        See :doc:`/chapters/07_kernel_embeddings`. ``x`` (n_points, d_v) or (n_points,) for a
        one-dimensional view; ``view`` in 0, 1, 2 (all equal when ``symmetric``). Cost
        O(n_points r d).
        """
        v = self._check_view_index(view)
        x = self._check_points(x, v)
        K = self._kernel_fn(self.bandwidth_[v])(x, self.centres_[v])
        return np.maximum(K @ self.coef_[v], 0.0)

    def expectation(self, f, view=0):
        r"""Integral queries :math:`\widehat{\mathbb E}[f(X_v)\mid h]=\langle f,\hat\mu_{X_v|h}\rangle`, (n_components,).

        See :doc:`/chapters/07_kernel_embeddings` (eq. 1 of Song et al. 2014: an expectation is
        an inner product with the embedding). The estimated embedding is
        :math:`\hat\mu_{X|h}=\sum_c\mathrm{coef}_{ch}\,\phi(c)`, so by the reproducing property
        the query is :math:`\sum_c\mathrm{coef}_{ch}f(c)` — exact for f in the RKHS, an
        approximation for smooth f (moments such as :math:`x` or :math:`x^2`; no smoothing
        bias enters, unlike integrals of :meth:`conditional_density`). With the delta kernel
        it is the sum of f over the estimated probability table. ``f`` maps an array (n, d_v)
        of points to n values. Cost O(r_v) evaluations of f plus O(r_v k).
        """
        v = self._check_view_index(view)
        if not callable(f):
            raise TypeError(f"f must be callable, got {type(f).__name__}")
        vals = np.asarray(f(self.centres_[v]), dtype=float)
        if vals.shape != (self.centres_[v].shape[0],):
            raise ValueError(f"f must map ({self.centres_[v].shape[0]}, {self.n_features_in_[v]}) points "
                             f"to ({self.centres_[v].shape[0]},) values, got shape {vals.shape}")
        return vals @ self.coef_[v]

    def interval_probability(self, lower, upper, view=0):
        r"""Estimated :math:`\Pr[\text{lower}\le X_v\le\text{upper}\mid h]` of a one-dimensional view, (n_components,).

        See :doc:`/chapters/07_kernel_embeddings`. The integral of :math:`\langle\phi(x),\hat
        \mu_{X|h}\rangle` over the interval, in closed form: with the normalised RBF kernel
        :math:`\sum_c\mathrm{coef}_{ch}\,[\Phi((u-c)/s)-\Phi((l-c)/s)]` (the probability under
        the kernel-smoothed density, so it carries the smoothing bias :math:`O(s^2)` at the
        ends); with the delta kernel the sum of the estimated probabilities of the values in
        the interval. Negative values of the density are not clipped here. Cost O(r_v k).
        """
        from scipy.special import ndtr

        v = self._check_view_index(view)
        if self.n_features_in_[v] != 1:
            raise ValueError(f"interval_probability needs a one-dimensional view; view {view} has "
                             f"{self.n_features_in_[v]} columns")
        lo, hi = float(lower), float(upper)
        if np.isnan(lo) or np.isnan(hi) or not lo <= hi:
            raise ValueError(f"need lower <= upper, got lower={lower!r}, upper={upper!r}")
        c = self.centres_[v][:, 0]
        if self.kernel == "delta":
            mass = ((c >= lo) & (c <= hi)).astype(float)
        else:
            s = self.bandwidth_[v]
            mass = ndtr((hi - c) / s) - ndtr((lo - c) / s)
        return mass @ self.coef_[v]

    # predict_proba, predict (MAP component) and score (average log-likelihood) come from
    # the product-mixture inference shared with the baselines: log π_h + Σ_v log p̂_v(x_v|h);
    # with a Dirichlet prior (alpha_ fitted) from the group model below.

    def _dirichlet_fitted(self):
        self._check_fitted("weights_")
        return getattr(self, "alpha_", None) is not None

    def _group_terms(self, views):
        r"""Closed-form group inference under θ ~ Dir(α̂): returns (log p(x1, x2, x3) (n,),
        posterior mean proportions E[θ | x1, x2, x3] (n, k)).

        E[θ_a θ_b θ_c] α̂₀^{(3)} = α_aα_bα_c + δ_ab α_aα_c + δ_ac α_aα_b + δ_bc α_aα_b + 2δ_abc α_a
        (α̂₀^{(3)} = α̂₀(α̂₀+1)(α̂₀+2)). With α = s w (s = α̂₀, w = α̂/α̂₀), q_v = p̂(x_v|·)/t_v
        (t_v the row maximum), S_v = w·q_v, D_uv = w·(q_u∘q_v), E = w·(q_1∘q_2∘q_3):
        p = Π_v t_v (s² S1S2S3 + s (D12S3 + D13S2 + D23S1) + 2E) / ((s+1)(s+2)), and
        P(h_1 = j | x) ∝ w_j q_1j (s² S2S3 + s (q_2j S3 + q_3j S2 + D23) + 2 q_2j q_3j) (likewise
        h_2, h_3), each quadratic in s evaluated divided by s² when s ≥ 1 (no overflow at any α̂₀).
        """
        views = self._views(views, min_rows=1)
        self._check_n_features([X.shape[1] for X in views], "views")
        alpha = np.asarray(self.alpha_, float)
        s = float(alpha.sum())
        w = alpha / s

        def quadratic(c2, c1, c0):      # s² c2 + s c1 + c0, divided by s² when s ≥ 1
            return c2 + c1 / s + c0 / (s * s) if s >= 1.0 else s * s * c2 + s * c1 + c0

        logt, q = [], []
        for v, X in enumerate(views):
            p = np.maximum(self.conditional_density(X, view=v), TINY)
            t = p.max(axis=1, keepdims=True)
            logt.append(np.log(t[:, 0]))
            q.append(p / t)
        S = [qv @ w for qv in q]
        D = {(0, 1): (q[0] * q[1]) @ w, (0, 2): (q[0] * q[2]) @ w, (1, 2): (q[1] * q[2]) @ w}
        E = (q[0] * q[1] * q[2]) @ w
        Z = np.maximum(quadratic(S[0] * S[1] * S[2], D[0, 1] * S[2] + D[0, 2] * S[1] + D[1, 2] * S[0], 2.0 * E),
                       TINY)
        counts = np.zeros_like(q[0])
        for v in range(3):
            u, x = [j for j in range(3) if j != v]
            counts += w * q[v] * quadratic((S[u] * S[x])[:, None],
                                           q[u] * S[x][:, None] + q[x] * S[u][:, None] + D[u, x][:, None],
                                           2.0 * q[u] * q[x])
        counts /= Z[:, None]
        norm = quadratic(1.0, 3.0, 2.0)     # (s+1)(s+2), scaled like Z
        loglik = np.log(Z) - np.log(norm) + logt[0] + logt[1] + logt[2]
        post = s * w[None, :] + counts      # α̂ + Σ_v P(h_v = · | x), normalised (α̂₀ + 3)
        return loglik, post / post.sum(axis=1, keepdims=True)

    def predict_proba(self, views):
        r"""Posterior probabilities of the components, (n_samples, n_components).

        Without ``alpha0``: :math:`P(h\mid x_1,x_2,x_3)`. With ``alpha0``: the posterior mean
        proportions :math:`E[\theta\mid x_1,x_2,x_3]=(\hat\alpha+\sum_vP(h_v=\cdot\mid x))
        /(\hat\alpha_0+3)` of each group (see the class docstring). Cost O(n r k).
        """
        if not self._dirichlet_fitted():
            return super().predict_proba(views)
        return self._group_terms(views)[1]

    def predict(self, views):
        """Most probable component (without ``alpha0``), or the dominant component of each group
        (arg max of :meth:`predict_proba`, with ``alpha0``); (n_samples,) ints."""
        if not self._dirichlet_fitted():
            return super().predict(views)
        return np.argmax(self.predict_proba(views), axis=1)

    def score_samples(self, views):
        r"""Log-likelihood of each sample (of each group with ``alpha0``: the Dirichlet model's
        :math:`\log p(x_1,x_2,x_3)`, see the class docstring), (n_samples,); densities floored at
        1e-300. ``score`` is their mean."""
        if not self._dirichlet_fitted():
            return super().score_samples(views)
        loglik, _ = self._group_terms(views)
        return np.asarray(loglik, dtype=float)

    def _log_joint(self, views):
        # 1-d views are one-dimensional samples, as in fit
        return super()._log_joint(self._views(views, min_rows=1))
