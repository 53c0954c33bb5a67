"""NonparametricEM (split from the former baselines module)."""
from __future__ import annotations


import numpy as np
from scipy.special import logsumexp

from ..core.base import TINY, ProductMixture
from ..core.validation import (
    Integer,
    NonNegativeFloat,
    RandomState,
    Rule,
    check_views,
    scale_exponent,
    scaled,
)
from ._algorithm import _check_bandwidths, rbf_kernel, silverman_bandwidth


class NonparametricEM(ProductMixture):
    r"""The EM-like algorithm ("npEM") of Benaglia, Chauveau & Hunter (2009).

    See :doc:`/chapters/07_kernel_embeddings`, where it is one of the baselines of the
    kernel spectral algorithm (Song et al. 2014, §8, method 2).

    The model is a k-component mixture whose views (blocks of coordinates) are
    independent given the component, with unknown densities :math:`f_{hv}`. Starting from
    posterior weights :math:`z^{(0)}` (a k-means partition of the concatenated,
    standardised views, as Benaglia et al. recommend), each iteration computes
    (Benaglia et al. 2009, §3, the npEM algorithm):

    .. math::
       \pi_h &= \tfrac1m\textstyle\sum_i z_{ih}
         &&\text{(M-step)}\\
       f_{hv}(u) &= \frac{1}{m\pi_h}\textstyle\sum_i z_{ih}\,\kappa_{s_v}(u, x_v^i)
         &&\text{(weighted KDE)}\\
       z_{ih} &\propto \pi_h\textstyle\prod_v f_{hv}(x_v^i)
         &&\text{(E-step)}

    with the normalised Gaussian kernel
    :math:`\kappa_s(u,x)=\exp(-\|u-x\|^2/2s^2)/(\sqrt{2\pi}s)^{d_v}`. Unlike EM it
    maximises no likelihood, and can collapse onto fewer components.

    Parameters
    ----------
    n_components : int
    bandwidth : "silverman", float > 0, or a list of one float per view
        ``"silverman"``: :func:`silverman_bandwidth` of each view's pooled data.
    max_iter : int, default 200
    tol : float, default 1e-6
        Stop when no posterior weight changes by more than ``tol``.
    n_init : int, default 1
        k-means restarts of the initial partition.
    random_state : None, int or numpy.random.Generator
    max_gram_entries : int, default 2**25
        The m × m Gram matrices of all views are kept in memory when they hold at most
        this many entries in total (one exp per entry, once); otherwise they are
        recomputed in row blocks in every iteration.

    Attributes
    ----------
    weights_ : (n_components,)
    posteriors_ : (m, n_components) final posterior weights :math:`z`
    bandwidths_ : list of floats, one per view
    n_iter_ : int
    converged_ : bool

    See Also
    --------
    mvlib.KernelSpectral : the kernel spectral algorithm it is compared with.
    mvlib.HistogramSpectral : the other baseline, a discretised spectral method.
    mvlib.ProductMixtureEM : EM when the view laws are Gaussian, Poisson or Bernoulli.

    Notes
    -----
    Cost O(m² Σ_v d_v) for the Gram matrices plus O(m² k V) per iteration (one matrix
    product :math:`K_v Z` per view); memory O(m²) per view when cached, O(m k) otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import NonparametricEM
    >>> rng = np.random.default_rng(0)
    >>> h = rng.choice(2, size=200, p=[0.3, 0.7])
    >>> views = [np.where(h == 0, rng.normal(-3, 1, 200), rng.gamma(2, 1, 200))[:, None]
    ...          for _ in range(3)]                          # x | h: N(-3, 1) or Gamma(2, 1)
    >>> npem = NonparametricEM(2, random_state=0).fit(views)
    >>> np.round(np.sort(npem.weights_), 1)
    array([0.3, 0.7])
    >>> npem.conditional_density(np.linspace(-6, 8, 50)).shape
    (50, 2)
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "bandwidth": Rule(_check_bandwidths),
        "max_iter": Integer(),
        "tol": NonNegativeFloat(),
        "n_init": Integer(),
        "random_state": RandomState(),
        "max_gram_entries": Integer(),
    }

    def __init__(self, n_components, bandwidth="silverman", *, max_iter=200, tol=1e-6, n_init=1,
                 random_state=None, max_gram_entries=2 ** 25):
        self.n_components = n_components
        self.bandwidth = bandwidth
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.random_state = random_state
        self.max_gram_entries = max_gram_entries

    def _bandwidths(self, views):
        bw = _check_bandwidths(self.bandwidth)
        if isinstance(bw, str):
            return [silverman_bandwidth(X) for X in views]
        if isinstance(bw, (list, tuple, np.ndarray)):
            if len(bw) != len(views):
                raise ValueError(f"bandwidth has {len(bw)} entries but there are {len(views)} views")
            return [float(b) for b in bw]
        return [float(bw)] * len(views)

    def fit(self, views, y=None):
        """Run npEM on ``views = [X1, X2, X3]`` (each (m, d_v), same rows); returns ``self``."""
        from sklearn.cluster import KMeans

        p = self._validate_params()
        k, max_iter, n_init, rng = p.n_components, p.max_iter, p.n_init, p.random_state
        views = check_views(views, n_views=None, min_rows=2, allow_sparse=False)
        m = views[0].shape[0]
        if k > m:
            raise ValueError(f"n_components={k} exceeds the number of samples {m}")
        bws = self._bandwidths(views)
        self.n_features_in_ = [X.shape[1] for X in views]

        Z0 = np.hstack(views)
        Z0 = scaled(Z0, scale_exponent(Z0))   # extreme scale: exact power of two before standardising
        Z0 = (Z0 - Z0.mean(0)) / np.where(Z0.std(0) > 0, Z0.std(0), 1.0)
        labels = KMeans(k, n_init=n_init, random_state=int(rng.integers(2 ** 31 - 1))).fit_predict(Z0)
        Z = np.eye(k)[labels]

        cache = m * m * len(views) <= self.max_gram_entries
        grams = [rbf_kernel(X, X, s) for X, s in zip(views, bws)] if cache else None
        block = max(1, int(self.max_gram_entries // max(m, 1)))

        def smooth(v, Zw):
            # (K_v @ Zw): the weighted KDE sums at the sample points of view v
            if cache:
                return grams[v] @ Zw
            X, s = views[v], bws[v]
            return np.vstack([rbf_kernel(X[a:a + block], X, s) @ Zw for a in range(0, m, block)])

        converged = False
        for it in range(1, max_iter + 1):
            mass = Z.sum(0)                                    # m π_h
            Zw = Z / np.maximum(mass, TINY)                   # columns sum to 1
            L = np.log(np.maximum(mass / m, TINY))[None, :]
            for v in range(len(views)):
                L = L + np.log(np.maximum(smooth(v, Zw), TINY))
            Z_new = np.exp(L - logsumexp(L, axis=1, keepdims=True))
            delta = float(np.max(np.abs(Z_new - Z)))
            Z = Z_new
            if delta <= self.tol:
                converged = True
                break
        self.posteriors_ = Z
        self.weights_ = Z.mean(0)
        self.bandwidths_ = bws
        self.n_iter_ = it
        self.converged_ = converged
        self._train = [X.copy() for X in views]
        return self

    def conditional_density(self, x, view=0):
        r"""Weighted KDE :math:`\hat f_{hv}(x)=\sum_i z_{ih}\kappa_{s_v}(x,x_v^i)/\sum_i z_{ih}`.

        ``x`` (n_points, d_v) (a 1-d array for a 1-d view); returns (n_points, n_components).
        Cost O(n_points m (d_v + k)).
        """
        view = self._check_view_index(view)
        x = self._check_points(x, view)
        Zw = self.posteriors_ / np.maximum(self.posteriors_.sum(0), TINY)
        return rbf_kernel(x, self._train[view], self.bandwidths_[view]) @ Zw
