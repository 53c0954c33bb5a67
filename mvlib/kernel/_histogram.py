"""HistogramSpectral (split from the former baselines module)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core.base import SPECTRAL_CONSTRAINTS, ProductMixture, clip_to_simplex
from ..core.validation import Integer, RandomState, Rule, check_positive_int, check_views
from ..multiview import MultiViewMixture


def _check_n_bins(value, name):
    """'auto' or an int >= 2."""
    if isinstance(value, str):
        if value != "auto":
            raise ValueError(f"{name} must be an int >= 2 or 'auto', got {value!r}")
        return value
    return check_positive_int(value, name, minimum=2)


class HistogramSpectral(ProductMixture):
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

    See Also
    --------
    mvlib.KernelSpectral : the kernel spectral algorithm it is compared with.
    mvlib.NonparametricEM : the other baseline, npEM.
    mvlib.MultiViewMixture : the discrete method applied to the cell indicators.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import HistogramSpectral
    >>> rng = np.random.default_rng(0)
    >>> h = rng.choice(2, size=200, p=[0.3, 0.7])
    >>> views = [np.where(h == 0, rng.normal(-3, 1, 200), rng.gamma(2, 1, 200))[:, None]
    ...          for _ in range(3)]                          # x | h: N(-3, 1) or Gamma(2, 1)
    >>> hist = HistogramSpectral(2, random_state=0).fit(views)
    >>> np.round(np.sort(hist.weights_), 1)
    array([0.3, 0.7])
    >>> hist.conditional_density(np.linspace(-6, 8, 50)).shape
    (50, 2)
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "n_bins": Rule(_check_n_bins),
        "method": SPECTRAL_CONSTRAINTS["method"],
        "random_state": RandomState(),
        "max_cells": Integer(minimum=2),
    }

    def __init__(self, n_components, n_bins="auto", method="observable", random_state=None, *,
                 max_cells=4096):
        self.n_components = n_components
        self.n_bins = n_bins
        self.method = method
        self.random_state = random_state
        self.max_cells = max_cells

    def _bins_for(self, m, d, k):
        n_bins = _check_n_bins(self.n_bins, "n_bins")
        if isinstance(n_bins, str):   # "auto"
            target = 2.0 * m ** (1.0 / 3.0)
            return max(k + 1, int(np.ceil(target))) if d == 1 else max(2, int(np.ceil(target ** (1.0 / d))))
        return n_bins

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
        p = self._validate_params()
        k, max_cells, rng = p.n_components, p.max_cells, p.random_state
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
        probs = [clip_to_simplex(P) for P in mvm.means_]
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
