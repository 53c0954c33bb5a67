r"""Baselines for nonparametric three-view mixtures that no library provides.

Song, Anandkumar, Dai & Xie (2014, §8) compare their kernel spectral algorithm
(:class:`mvlib.KernelSpectral`) with two methods that estimate the component densities
:math:`p(x_v\mid h)` of a conditionally independent mixture

.. math:: p(x_1,x_2,x_3)=\sum_{h=1}^k\pi_h\prod_{v=1}^3 p_v(x_v\mid h)

without a parametric form:

* :class:`NonparametricEM` — the EM-like algorithm of Benaglia, Chauveau & Hunter (2009)
  ("npEM"): posterior weights, mixing weights and per-component, per-view *weighted*
  kernel density estimates, in turn;
* :class:`HistogramSpectral` — the discretised spectral method (after Kasahara &
  Shimotsu, J. R. Stat. Soc. B 2014, as used by Song et al.): every view is binned, the
  one-hot bin indicators are a discrete three-view mixture,
  :class:`mvlib.MultiViewMixture` recovers the bin probabilities, which become
  piecewise-constant densities.

Both expose ``conditional_density(x, view)`` → (n_points, n_components) like
:class:`mvlib.KernelSpectral`, and ``predict``/``predict_proba``/``score`` on a list of
views. See :doc:`/chapters/07_kernel_embeddings` for the comparison.

For the single-topic (mixture of unigrams) model of :class:`mvlib.SpectralTopicModel`,
:class:`UnigramMixtureEM` is the same-model likelihood baseline: EM for the mixture of
multinomials of Nigam, McCallum, Thrun & Mitchell (2000), from random starts or from the
spectral estimate. See :doc:`/chapters/03_topic_models`.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp
from sklearn.base import DensityMixin

from ._validation import check_counts, check_matrix, check_positive_int, check_random_state, check_views
from ._validation import scale_exponent, scaled, unscale
from .estimators._base import _TINY, _CountData, _Estimator, _MixtureInference, _ProductMixture
from .estimators.multiview import MultiViewMixture
from .estimators.topic import SpectralTopicModel, _project_simplex_rows
from .kernels import _check_bandwidths, rbf_kernel, silverman_bandwidth

__all__ = ["NonparametricEM", "HistogramSpectral", "UnigramMixtureEM", "silverman_bandwidth"]

#: probabilities are floored at this value inside logarithms (unigram-mixture EM)
_LOG_FLOOR = 1e-12


class NonparametricEM(_ProductMixture):
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

    Notes
    -----
    Cost O(m² Σ_v d_v) for the Gram matrices plus O(m² k V) per iteration (one matrix
    product :math:`K_v Z` per view); memory O(m²) per view when cached, O(m k) otherwise.
    """

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

        k = check_positive_int(self.n_components, "n_components")
        max_iter = check_positive_int(self.max_iter, "max_iter")
        n_init = check_positive_int(self.n_init, "n_init")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) or not self.tol >= 0:
            raise ValueError(f"tol must be a number >= 0, got {self.tol!r}")
        rng = check_random_state(self.random_state)
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
            Zw = Z / np.maximum(mass, _TINY)                   # columns sum to 1
            L = np.log(np.maximum(mass / m, _TINY))[None, :]
            for v in range(len(views)):
                L = L + np.log(np.maximum(smooth(v, Zw), _TINY))
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
        Zw = self.posteriors_ / np.maximum(self.posteriors_.sum(0), _TINY)
        return rbf_kernel(x, self._train[view], self.bandwidths_[view]) @ Zw


class HistogramSpectral(_ProductMixture):
    r"""Discretised spectral method: histogram bins + the discrete three-view moment method.

    See :doc:`/chapters/07_kernel_embeddings`, where it is one of the baselines of the
    kernel spectral algorithm (Song et al. 2014, §8, method 4, after Kasahara & Shimotsu
    2014).

    Each view :math:`x_v\in\R^{d_v}` is cut into a regular grid of ``n_bins`` bins per
    coordinate over the range of the training data, and replaced by the one-hot indicator
    :math:`e_{b(x_v)}` of its cell (a vector of length :math:`B^{d_v}`). The indicators
    form a discrete three-view mixture with :math:`E[e_{b(x_v)}\mid h]=(P_v(b\mid h))_b`,
    the probability of each cell under component h (Example 1 of Song et al. 2014: the
    delta kernel), so :class:`mvlib.MultiViewMixture` recovers the cell probabilities and
    the weights. Negative estimated probabilities are clipped and each row is
    renormalised; the density estimate is the piecewise-constant
    :math:`\hat p_v(x\mid h)=\hat P_v(b(x)\mid h)/\mathrm{vol(cell)}` inside the grid and 0
    outside it.

    Parameters
    ----------
    n_components : int
    n_bins : int ≥ 2 or "auto", default "auto"
        Bins per coordinate. ``"auto"``: :math:`\max(k+1,\lceil 2m^{1/3}\rceil)` cells in a
        1-d view, and :math:`\lceil (2m^{1/3})^{1/d_v}\rceil` (at least 2) per coordinate
        otherwise.
    method : {"observable", "tensor"}
        Passed to :class:`mvlib.MultiViewMixture`.
    random_state : None, int or numpy.random.Generator
    max_cells : int, default 4096
        Refuse views with more than this many cells (:math:`B^{d_v}` grows fast).

    Attributes
    ----------
    weights_ : (n_components,)
    cell_probs_ : list of arrays (n_components, B^{d_v}); rows sum to 1
    edges_ : list of arrays (d_v, B + 1), the bin edges of each coordinate
    clipped_mass_ : float, largest fraction of a row's mass that was negative and clipped

    Cost: binning O(m Σ_v d_v), then that of :class:`mvlib.MultiViewMixture` on sparse
    one-hot data, O(m k + Σ_v C_v² k) with :math:`C_v=B^{d_v}` cells.
    """

    def __init__(self, n_components, n_bins="auto", method="observable", random_state=None, *,
                 max_cells=4096):
        self.n_components = n_components
        self.n_bins = n_bins
        self.method = method
        self.random_state = random_state
        self.max_cells = max_cells

    def _bins_for(self, m, d, k):
        if isinstance(self.n_bins, str):
            if self.n_bins != "auto":
                raise ValueError(f"n_bins must be an int >= 2 or 'auto', got {self.n_bins!r}")
            target = 2.0 * m ** (1.0 / 3.0)
            return max(k + 1, int(np.ceil(target))) if d == 1 else max(2, int(np.ceil(target ** (1.0 / d))))
        return check_positive_int(self.n_bins, "n_bins", minimum=2)

    def _cells(self, X, view):
        """Cell index of every row of X in view ``view`` (-1 outside the grid), (n,)."""
        E = self.edges_[view]
        B = E.shape[1] - 1
        idx = np.empty(X.shape, dtype=np.int64)
        inside = np.ones(X.shape[0], dtype=bool)
        for c in range(X.shape[1]):
            j = np.searchsorted(E[c], X[:, c], side="right") - 1
            j[X[:, c] == E[c, -1]] = B - 1                   # the right edge belongs to the last bin
            inside &= (j >= 0) & (j < B)
            idx[:, c] = np.clip(j, 0, B - 1)
        flat = np.ravel_multi_index(idx.T, (B,) * X.shape[1]) if X.shape[1] > 1 else idx[:, 0]
        return np.where(inside, flat, -1)

    def fit(self, views, y=None):
        """Bin ``views = [X1, X2, X3]`` and fit the discrete three-view mixture; returns ``self``."""
        k = check_positive_int(self.n_components, "n_components")
        max_cells = check_positive_int(self.max_cells, "max_cells", minimum=2)
        rng = check_random_state(self.random_state)
        views = check_views(views, n_views=3, min_rows=2, allow_sparse=False)
        m = views[0].shape[0]
        self.n_features_in_ = [X.shape[1] for X in views]
        self.edges_, onehots, volumes = [], [], []
        for v, X in enumerate(views):
            d = X.shape[1]
            B = self._bins_for(m, d, k)
            if B ** d > max_cells:
                raise ValueError(f"view {v} would have {B}**{d} = {B ** d} cells (n_bins={self.n_bins!r}, "
                                 f"n_components={k}), more than max_cells={max_cells}")
            if B ** d < k:
                raise ValueError(f"view {v} has {B ** d} cells, fewer than n_components={k} (rank condition)")
            lo, hi = X.min(0), X.max(0)
            if np.any(hi <= lo):
                raise ValueError(f"X{v + 1} is constant in a coordinate: it cannot be binned")
            if not np.all(np.isfinite(hi - lo)):
                raise ValueError(f"X{v + 1} spans a range wider than float64 holds (max - min overflows); "
                                 f"rescale X{v + 1}")
            self.edges_.append(np.linspace(lo, hi, B + 1).T)
            cells = self._cells(X, v)
            onehots.append(sp.csr_matrix((np.ones(m), (np.arange(m), cells)), shape=(m, B ** d)))
            volumes.append(float(np.prod((hi - lo) / B)))
        mvm = MultiViewMixture(k, method=self.method, random_state=rng).fit(onehots)
        probs = [_project_simplex_rows(P) for P in mvm.means_]
        self.cell_probs_ = [p for p, _ in probs]
        self.clipped_mass_ = max(c for _, c in probs)
        self.weights_ = mvm.weights_
        self._volumes = volumes
        return self

    def conditional_density(self, x, view=0):
        r"""Piecewise-constant :math:`\hat p_v(x\mid h)`, (n_points, n_components); 0 outside the grid.

        ``x`` (n_points, d_v) (a 1-d array for a 1-d view). Cost O(n_points (d_v log B + k)).
        """
        view = self._check_view_index(view)
        x = self._check_points(x, view)
        cells = self._cells(x, view)
        dens = self.cell_probs_[view][:, np.maximum(cells, 0)].T / self._volumes[view]
        dens[cells < 0] = 0.0
        return dens


# ---------------------------------------------------------------------------------------
# EM for the mixture of unigrams (the single-topic model)


class UnigramMixtureEM(_CountData, DensityMixin, _Estimator):
    r"""EM for the mixture of unigrams (single-topic document model), Nigam et al. (2000).

    See :doc:`/chapters/03_topic_models`, where it is the same-model baseline of
    :class:`mvlib.SpectralTopicModel` (from random starts, and started from the spectral
    estimate).

    Model: a document's topic :math:`h\sim w`, its words i.i.d. from :math:`\mu_h`; for
    a count vector :math:`c` (d,), :math:`\log p(c)=\log\sum_h w_h\prod_i\mu_{h,i}^{c_i}`
    (up to the multinomial coefficient, which no parameter changes). EM alternates

    * E-step: responsibilities :math:`r_{n,h}\propto w_h\prod_i\mu_{h,i}^{c_{n,i}}`;
    * M-step (MAP with a symmetric Dirichlet prior, Laplace smoothing as in Nigam et al.
      2000, eqs. 6–7, for ``smoothing=1``):
      :math:`\mu_{h,i}\propto s+\sum_n r_{n,h}c_{n,i}`, :math:`w_h\propto s+\sum_n r_{n,h}`,

    which never decreases the penalised log-likelihood
    :math:`\sum_n\log p(c_n)+s\sum_{h,i}\log\mu_{h,i}+s\sum_h\log w_h` (``objective_``,
    reported per word). It stops when the per-word objective changes by less than ``tol``.

    Parameters
    ----------
    n_components : int
        Number k of topics.
    init : {"random", "spectral"} or array (n_components, n_words), default "random"
        ``"random"``: responsibilities drawn from a flat Dirichlet for every document, then
        an M-step; ``n_init`` such starts, the one with the highest objective is kept.
        ``"spectral"``: start from :class:`mvlib.SpectralTopicModel` (default route, same
        ``random_state``) — its topics and weights give the first E-step (probabilities
        floored at 1e-12 inside logarithms, because the spectral topics have exact zeros).
        An array: initial topic-word rows (non-negative, each row with positive mass;
        renormalised), uniform weights.
    n_init : int, default 5
        Random starts (``init="random"`` only).
    max_iter : int, default 1000
        EM iterations per start.
    tol : float, default 1e-7
        Convergence threshold on the change of the per-word objective (nats).
    smoothing : float ≥ 0, default 1.0
        Dirichlet pseudo-count s added in the M-step (0 gives maximum likelihood; then a
        word absent from every document a topic explains gets probability 0).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    topic_word_ : array (n_components, n_words), rows on the simplex
    weights_ : array (n_components,)
    objective_ : float
        Penalised log-likelihood per word of the kept start at convergence.
    objective_trace_ : list of float
        Its value after every iteration of the kept start.
    n_iter_ : int
        Iterations of the kept start.
    converged_ : bool
        Whether the kept start met ``tol`` within ``max_iter``.

    Notes
    -----
    Cost O(n_iter · (nnz·k + d k)) per start for n documents with nnz non-zero counts.
    ``X`` is not modified.
    """

    def __init__(self, n_components, init="random", *, n_init=5, max_iter=1000, tol=1e-7,
                 smoothing=1.0, random_state=None):
        self.n_components = n_components
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.random_state = random_state

    def _check_params(self):
        k = check_positive_int(self.n_components, "n_components")
        check_positive_int(self.n_init, "n_init")
        check_positive_int(self.max_iter, "max_iter")
        if not (isinstance(self.tol, numbers.Real) and self.tol >= 0):
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}")
        if not (isinstance(self.smoothing, numbers.Real) and np.isfinite(self.smoothing)
                and self.smoothing >= 0):
            raise ValueError(f"smoothing must be a finite non-negative number, got {self.smoothing!r}")
        return k, check_random_state(self.random_state)

    def _m_step(self, X, R):
        s = float(self.smoothing)
        counts = np.asarray((sp.csr_matrix(R.T) @ X).toarray()) + s
        totals = counts.sum(axis=1, keepdims=True)
        if np.any(~(totals > 0)):
            raise RuntimeError("a topic explains no word (set smoothing > 0 or lower n_components)")
        w = R.sum(axis=0) + s
        return counts / totals, w / w.sum()

    @staticmethod
    def _log_joint_of(X, topic_word, weights):
        logB = np.log(np.maximum(topic_word, _LOG_FLOOR))
        logw = np.log(np.maximum(weights, _LOG_FLOOR))
        return np.asarray(X @ logB.T) + logw

    def _objective(self, L, topic_word, weights, n_words):
        s = float(self.smoothing)
        val = float(logsumexp(L, axis=1).sum())
        if s > 0:
            val += s * float(np.log(np.maximum(topic_word, _LOG_FLOOR)).sum()
                             + np.log(np.maximum(weights, _LOG_FLOOR)).sum())
        return val / n_words

    def _run(self, X, topic_word, weights):
        n_words = float(X.sum())
        trace = []
        converged = False
        for it in range(1, int(self.max_iter) + 1):
            L = self._log_joint_of(X, topic_word, weights)
            R = np.exp(L - logsumexp(L, axis=1, keepdims=True))
            topic_word, weights = self._m_step(X, R)
            L = self._log_joint_of(X, topic_word, weights)
            trace.append(self._objective(L, topic_word, weights, n_words))
            if it > 1 and abs(trace[-1] - trace[-2]) < self.tol:
                converged = True
                break
        return topic_word, weights, trace, converged

    def fit(self, X, y=None):
        """Fit by EM to counts ``X`` (n_docs, n_words), dense or sparse; returns ``self``."""
        k, rng = self._check_params()
        X, lengths = check_counts(X, "X", min_length=0, min_rows=2)
        n, d = X.shape
        if not lengths.sum() > 0:
            raise ValueError("X holds no words (every count is zero); there is nothing to fit")
        if k > n:
            raise ValueError(f"n_components={k} exceeds the number of documents {n}")
        starts = []
        if isinstance(self.init, str):
            if self.init == "random":
                for _ in range(int(self.n_init)):
                    R = rng.dirichlet(np.ones(k), size=n)
                    starts.append(self._m_step(X, R))
            elif self.init == "spectral":
                spec = SpectralTopicModel(k, random_state=rng).fit(X)
                starts.append((spec.topic_word_, spec.weights_))
            else:
                raise ValueError(f"init must be 'random', 'spectral' or an array, got {self.init!r}")
        else:
            B0 = check_matrix(self.init, "init", shape=(k, d))
            if np.any(B0 < 0) or np.any(~(B0.sum(axis=1) > 0)):
                raise ValueError("init must hold non-negative rows with positive mass")
            starts.append((B0 / B0.sum(axis=1, keepdims=True), np.full(k, 1.0 / k)))
        best = None
        for B0, w0 in starts:
            out = self._run(X, B0, w0)
            if best is None or out[2][-1] > best[2][-1]:
                best = out
        self.topic_word_, self.weights_, self.objective_trace_, self.converged_ = best
        self.objective_ = float(self.objective_trace_[-1])
        self.n_iter_ = len(self.objective_trace_)
        self.n_features_in_ = d
        return self

    def _log_joint(self, X):
        self._check_fitted("topic_word_")
        X, _ = check_counts(X, "X", min_length=0, min_rows=1)
        self._check_n_features(X.shape[1])
        return X, self._log_joint_of(X, self.topic_word_, self.weights_)

    def predict_proba(self, X):
        r"""Posterior topic probabilities (n_docs, n_components): :math:`r_{n,h}` above. Cost O(nnz·k)."""
        _, L = self._log_joint(X)
        return np.exp(L - logsumexp(L, axis=1, keepdims=True))

    def predict(self, X):
        """Most likely topic of each document, int array (n_docs,)."""
        _, L = self._log_joint(X)
        return np.argmax(L, axis=1)

    def score(self, X, y=None):
        r"""Log-likelihood per word of ``X`` under the fitted model (without the multinomial coefficient)."""
        X, L = self._log_joint(X)
        return float(logsumexp(L, axis=1).sum() / max(float(X.sum()), 1.0))


# --------------------------------------------------------------------------- product-mixture EM
_VIEW_KINDS = ("gaussian", "poisson", "bernoulli")


class ProductMixtureEM(_MixtureInference, DensityMixin, _Estimator):
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

    Notes
    -----
    Cost O(n k Σ_v d_v) per iteration.
    """

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
    def _check_params(self, n_views):
        k = check_positive_int(self.n_components, "n_components")
        kinds = tuple(self.kinds) if isinstance(self.kinds, (list, tuple)) else None
        if kinds is None or len(kinds) != n_views or any(c not in _VIEW_KINDS for c in kinds):
            raise ValueError(f"kinds must list one of {_VIEW_KINDS} per view ({n_views} views), got {self.kinds!r}")
        check_positive_int(self.n_init, "n_init")
        check_positive_int(self.max_iter, "max_iter")
        for name in ("tol", "var_floor"):
            val = getattr(self, name)
            if isinstance(val, bool) or not isinstance(val, numbers.Real) or not val > 0:
                raise ValueError(f"{name}={val!r} must be a positive number")
        return k, kinds, check_random_state(self.random_state)

    @staticmethod
    def _check_data(Xs, kinds):
        for v, (X, kind) in enumerate(zip(Xs, kinds)):
            if kind == "poisson" and (np.any(X < 0) or np.any(X != np.round(X))):
                raise ValueError(f"X{v + 1} must hold non-negative integer counts for kind='poisson'")
            if kind == "bernoulli" and np.any((X != 0) & (X != 1)):
                raise ValueError(f"X{v + 1} must hold 0/1 indicators for kind='bernoulli'")

    def _log_joint_of(self, Xs, kinds, means, variances, weights):
        """(n, k) log w_h + Σ_v log p_v(x_v | h)."""
        L = np.log(np.maximum(weights, _TINY))[None, :].repeat(Xs[0].shape[0], axis=0)
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
        nk = np.maximum(R.sum(axis=0), _TINY)
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
        k, kinds, rng = self._check_params(len(Xs))
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


__all__ += ["ProductMixtureEM"]
