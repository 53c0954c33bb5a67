"""The kernel Algorithm 3 of Song & Dai as an estimator: :class:`LatentTreeEmbedding`.

The chain algebra (:func:`mvlib.tt_embedding`, :func:`mvlib.reshaping_errors`) lives in
:mod:`mvlib.tree`; this module holds the estimator that runs it on kernel matrices of a
sample. See :doc:`/chapters/08_latent_trees`.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.linalg as sla
from scipy.special import ndtr
from sklearn.base import DensityMixin
from tensorly.tt_tensor import TTTensor

from .._validation import IllConditionedWarning, check_array, check_n_features, check_views, scale_exponent, scaled, unscale
from ..kernels import _check_bandwidth, delta_kernel, rbf_kernel, silverman_bandwidth
from ..tree import _check_ranks
from ._base import _Estimator

__all__ = ["LatentTreeEmbedding"]


class LatentTreeEmbedding(DensityMixin, _Estimator):
    r"""Low-rank decomposition of an empirical kernel embedding along a chain (Algorithm 3).

    Decomposes :math:`\widehat{\mathcal C}_{X_{1:d}}=\frac1n\sum_{i=1}^n\otimes_{j=1}^d
    \phi(x_j^i)` into the chain of Algorithm 1 using only kernel matrices (Song & Dai 2013,
    Appendix A). With :math:`K_j^{ii'}=k(x_j^i,x_j^{i'})` and
    :math:`L_j=K_{j+1}\circ\dots\circ K_d`, step j solves the generalised eigenproblem

    .. math:: \tfrac1{n^2}\tilde K_jL_j\tilde K_j\beta=\lambda\tilde K_j\beta

    through the Cholesky factor :math:`\tilde K_j+\text{jitter}\,I=R^\top R` (eq. (17)),
    keeps the reduced features :math:`\gamma=\beta^\top\tilde K_j` (eq. (18)) and moves on
    with :math:`\tilde K_{j+1}=\Gamma\circ K_{j+1}`, :math:`\Gamma=\gamma^\top\gamma`
    (eq. (21)); :math:`\tilde K_1=K_1`. Evaluating the decomposed embedding at
    :math:`(\phi(x_1),\dots,\phi(x_d))` contracts the cores of eqs. (19)–(20). See
    :doc:`/chapters/08_latent_trees`.

    Parameters
    ----------
    ranks : int or sequence of d-1 ints ≥ 1
        Rank kept at each edge of the chain (the number of hidden states at that edge).
    kernel : {"rbf", "delta"}
        "rbf": the normalised Gaussian kernel of :func:`mvlib.kernels.rbf_kernel`, so the
        evaluated embedding is a density; "delta": :func:`mvlib.kernels.delta_kernel`,
        so it is a probability table (discrete data).
    bandwidth : float, sequence of d floats, or "silverman"
        Gaussian bandwidth per variable ("silverman": the rule of
        :func:`mvlib.kernels.silverman_bandwidth` for each variable). Ignored for "delta".
    jitter : float ≥ 0
        Added to the diagonal, relative to its mean, before each Cholesky factorisation.
    density_floor : float > 0
        A low-rank embedding can be negative at some points; :meth:`score_samples` takes
        the logarithm of ``max(density, density_floor)``.

    Attributes
    ----------
    n_variables_ : int (d)
    ranks_ : list of d-1 ints actually kept
    singular_values_ : list of d-1 arrays, the singular values of each step
    betas_ : list of d-1 arrays (n, r_j), the coefficients β (θ^i are their rows)
    gammas_ : list of d-1 arrays (r_j, n), the reduced features γ^i as columns
    bandwidths_ : array (d,) (rbf only)
    n_features_in_ : int (the columns of a 2-d X) or list of d ints (the columns of each view
        when X is a list of views)

    Cost: O(d n²) for the kernel matrices and O(n³) per step (Cholesky, eigenproblem),
    memory O(d n²); :meth:`density` costs O(m n Σ r_j) for m points.
    """

    def __init__(self, ranks, kernel: str = "rbf", bandwidth=1.0, *, jitter: float = 1e-10,
                 density_floor: float = 1e-12):
        self.ranks = ranks
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.jitter = jitter
        self.density_floor = density_floor

    # ------------------------------------------------------------------ input
    def _views(self, X, name="X", fitted=False):
        if isinstance(X, (list, tuple)):
            views = check_views(list(X), n_views=None, allow_sparse=False, min_rows=1,
                                names=[f"{name}[{j}]" for j in range(len(X))])
        else:
            X = check_array(X, name, ndim=2)
            views = [X[:, [j]] for j in range(X.shape[1])]
        if fitted:
            if len(views) != self.n_variables_:
                if not isinstance(X, (list, tuple)):   # the columns of a 2-d X are the variables
                    check_n_features(len(views), self.n_variables_, type(self).__name__, name)
                raise ValueError(f"{name} has {len(views)} variables but the model was fitted on "
                                 f"{self.n_variables_}")
            for j, (V, T) in enumerate(zip(views, self._train)):
                if V.shape[1] != T.shape[1]:
                    raise ValueError(f"variable {j} of {name} has {V.shape[1]} columns but "
                                     f"{T.shape[1]} in the training data")
        return views

    def _check_params(self, views):
        if self.kernel not in ("rbf", "delta"):
            raise ValueError(f"kernel must be 'rbf' or 'delta', got {self.kernel!r}")
        for nm in ("jitter", "density_floor"):
            v = getattr(self, nm)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v < 0:
                raise ValueError(f"{nm} must be a finite number >= 0, got {v!r}")
        if not self.density_floor > 0:
            raise ValueError(f"density_floor must be positive, got {self.density_floor!r}")
        d = len(views)
        ranks = _check_ranks(self.ranks, d - 1)
        if self.kernel == "delta":
            return ranks, None
        bw = self.bandwidth
        if isinstance(bw, str):
            if bw != "silverman":
                raise ValueError(f"bandwidth must be 'silverman', a positive float or one per variable, got {bw!r}")
            bw = [silverman_bandwidth(V) for V in views]
        elif isinstance(bw, (list, tuple, np.ndarray)):
            if len(bw) != d:
                raise ValueError(f"bandwidth must hold one value per variable ({d}), got {len(bw)}")
            bw = [_check_bandwidth(b, f"bandwidth[{j}]") for j, b in enumerate(bw)]
        else:
            bw = [_check_bandwidth(bw)] * d
        return ranks, np.asarray(bw, dtype=float)

    def _gram(self, j, A, B):
        if self.kernel == "delta":
            return delta_kernel(A, B)
        return rbf_kernel(A, B, bandwidth=float(self._bandwidths_internal[j]), normalize=True)

    # ------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Fit the chain to X: an array (n, d) of d scalar variables or a list of d views
        (n, p_j). Needs d ≥ 2 and n ≥ 2. Returns ``self``."""
        views = self._views(X)
        d, n = len(views), views[0].shape[0]
        if d < 2:
            raise ValueError(f"X must hold at least 2 variables, got {d} (n_features={d})")
        if n < 2:
            raise ValueError(f"X has {n} samples but at least 2 are required")
        ranks, bw = self._check_params(views)
        for k, r in enumerate(ranks):
            if r > n:
                raise ValueError(f"ranks[{k}]={r} exceeds the number of samples n={n}")
        # Variables of extreme magnitude are divided by exact powers of two (none for ordinary
        # data, whose arithmetic is unchanged): the chain is fitted in those units, densities
        # are multiplied back by the matching power, probabilities need nothing.
        exps = [scale_exponent(V) if self.kernel == "rbf" else 0 for V in views]
        views = [scaled(V, e) for V, e in zip(views, exps)]
        self._exponents = exps
        self._density_exponent = -sum(e * V.shape[1] for e, V in zip(exps, views))
        self._bandwidths_internal = None if bw is None else np.ldexp(bw, -np.asarray(exps))
        if bw is not None and not np.all(np.isfinite(self._bandwidths_internal) & (self._bandwidths_internal > 0)):
            raise ValueError(f"X has magnitudes near 2**{max(exps, key=abs)} but bandwidth={self.bandwidth!r}: "
                             "the bandwidth relative to the data cannot be held in float64; rescale X and "
                             "the bandwidth together")
        self.n_variables_, self.bandwidths_, self._train = d, bw, views
        self.n_features_in_ = [V.shape[1] for V in views] if isinstance(X, (list, tuple)) else d
        Ks = [self._gram(j, V, V) for j, V in enumerate(views)]
        # L_j = K_{j+1} ∘ ... ∘ K_d, built from the right
        Ls = [None] * (d - 1)
        acc = Ks[-1]
        for j in range(d - 2, -1, -1):
            Ls[j] = acc
            if j > 0:
                acc = acc * Ks[j]
        if not all(np.all(np.isfinite(M)) for M in Ks + Ls):
            raise ValueError(f"the products of the normalised Gram matrices overflow float64: the kernel "
                             f"values 1/(sqrt(2 pi) s)^p at bandwidth={self.bandwidth!r} are too large; "
                             "rescale X (and the bandwidth) towards 1")
        Kt = Ks[0]
        self.betas_, self.gammas_, self.singular_values_ = [], [], []
        for j in range(d - 1):
            beta, lam = self._step(Kt, Ls[j], ranks[j], j)
            gamma = beta.T @ Kt                           # eq. (18)/(21)
            self.betas_.append(beta)
            self.gammas_.append(gamma)
            self.singular_values_.append(np.sqrt(np.maximum(lam, 0.0)))
            if j < d - 2:
                Kt = (gamma.T @ gamma) * Ks[j + 1]        # Γ ∘ K_{j+1}
        self.ranks_ = [b.shape[1] for b in self.betas_]
        return self

    def _step(self, Kt, L, r, j):
        """Leading r solutions of (1/n²) K L K β = λ K β via K + jitter I = RᵀR (eq. (17))."""
        n = Kt.shape[0]
        scale = float(np.mean(np.diag(Kt)))
        if not scale > 0:
            raise ValueError(f"the Gram matrix of step {j + 1} has a zero diagonal: the data carry "
                             "no signal at this edge, or the normalised kernel values 1/(sqrt(2 pi) s)^p "
                             f"underflow float64 at bandwidth={self.bandwidth!r}; rescale X (and the "
                             "bandwidth) towards 1")
        try:
            R = sla.cholesky(Kt + self.jitter * scale * np.eye(n), lower=False)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"the Cholesky factorisation of the Gram matrix of step {j + 1} failed with "
                f"jitter={self.jitter!r}; increase jitter (e.g. to 1e-8)") from None
        M = R @ L @ R.T / n ** 2
        lam, vec = sla.eigh((M + M.T) / 2.0, subset_by_index=[n - r, n - 1])
        lam, vec = lam[::-1], vec[:, ::-1]
        if lam[-1] <= max(1e-12, 100.0 * self.jitter) * max(lam[0], 0.0):
            warnings.warn(
                f"ranks[{j}]={r} exceeds the numerical rank of the reshaping at step {j + 1} "
                f"(its {r}-th singular value is {np.sqrt(max(lam[-1], 0.0)):.1e}, the first "
                f"{np.sqrt(max(lam[0], 0.0)):.1e}); the extra directions carry only noise",
                IllConditionedWarning, stacklevel=3)
        beta = sla.solve_triangular(R, vec, lower=False)   # β = R^{-1} β̃
        return beta, lam

    # -------------------------------------------------------------- queries
    def _contract(self, Kq):
        r"""Contract the chain with per-variable kernel rows Kq[j] (m, n): eqs. (19)–(20)."""
        n = Kq[0].shape[1]
        v = Kq[0] @ self.betas_[0]                        # G_1 •_1 φ(x_1): (m, r_1)
        for j in range(1, self.n_variables_ - 1):
            v = ((v @ self.gammas_[j - 1]) * Kq[j]) @ self.betas_[j]
        return np.sum((v @ self.gammas_[-1]) * Kq[-1], axis=1) / n

    def density(self, X):
        r"""The decomposed embedding evaluated at new points, :math:`\tilde{\mathcal C}
        (\phi(x_1),\dots,\phi(x_d))`, shape (m,).

        With the normalised Gaussian kernel this is a density estimate of the joint
        distribution (the full-rank case is the product-kernel density estimate); with
        the delta kernel it is an estimated probability. May be slightly negative: a
        low-rank embedding is not constrained to be non-negative. Cost O(m n Σ r_j).
        See :doc:`/chapters/08_latent_trees`.
        """
        self._check_fitted("betas_")
        return unscale(self._density_internal(X), self._density_exponent, "X", "the density")

    def _density_internal(self, X):
        """The density in the fitted units (data divided by ``2**self._exponents``)."""
        views = [scaled(V, e) for V, e in zip(self._views(X, fitted=True), self._exponents)]
        return self._contract([self._gram(j, V, T) for j, (V, T)
                               in enumerate(zip(views, self._train))])

    def score_samples(self, X):
        """log max(density, density_floor) of each row, shape (m,).

        For data of extreme magnitude (beyond 2**±100, rescaled by exact powers of two at
        ``fit``) the floor applies to the density in the rescaled units, so the scores of
        data multiplied by s are those of the original data minus D·log s (D columns).
        """
        self._check_fitted("betas_")
        internal = np.log(np.maximum(self._density_internal(X), self.density_floor))
        return internal + self._density_exponent * np.log(2.0)

    def score(self, X, y=None):
        """Average of :meth:`score_samples` (a held-out log-likelihood)."""
        return float(np.mean(self.score_samples(X)))

    def box_probability(self, lower, upper):
        r"""Integral of the decomposed embedding over boxes (an integral query).

        Each kernel row :math:`k(x_j^i,\cdot)` is replaced by its integral over
        ``[lower_j, upper_j]`` (for the normalised Gaussian kernel a difference of normal
        CDFs per coordinate; for the delta kernel an indicator), then the chain is
        contracted as in :meth:`density`. ±inf bounds integrate a variable out, so
        ``lower=-inf, upper=+inf`` in all but some variables gives marginal probabilities.

        Parameters
        ----------
        lower, upper : arrays (m, D) with D the total number of columns of the views

        Returns
        -------
        array (m,). Cost O(m n Σ r_j).
        """
        self._check_fitted("betas_")
        D = sum(T.shape[1] for T in self._train)
        lo = check_array(lower, "lower", ndim=2, finite=False)
        hi = check_array(upper, "upper", ndim=2, finite=False)
        for nm, A in (("lower", lo), ("upper", hi)):
            if A.shape[1] != D:
                raise ValueError(f"{nm} has {A.shape[1]} columns but the data have {D}")
            if np.any(np.isnan(A)):
                raise ValueError(f"{nm} contains NaN")
        if lo.shape != hi.shape:
            raise ValueError(f"lower has shape {lo.shape} but upper has {hi.shape}")
        if np.any(lo > hi):
            raise ValueError("lower must not exceed upper")
        Kq, c = [], 0
        for j, T in enumerate(self._train):
            p = T.shape[1]
            e = self._exponents[j]
            a, b = np.ldexp(lo[:, None, c:c + p], -e), np.ldexp(hi[:, None, c:c + p], -e)
            if self.kernel == "delta":
                w = np.all((T[None] >= a) & (T[None] <= b), axis=2).astype(float)
            else:
                s = self._bandwidths_internal[j]
                w = np.prod(ndtr((b - T[None]) / s) - ndtr((a - T[None]) / s), axis=2)
            Kq.append(w)
            c += p
        return self._contract(Kq)

    def to_tt(self, grids):
        r"""The decomposed embedding evaluated on a product grid, as a TTTensor.

        ``grids[j]`` is an array (m_j,) or (m_j, p_j) of points for variable j. Core j is
        the matrix of eq. (19) at every grid point, shape (r_{j-1}, m_j, r_j), so
        ``tensorly.tt_to_tensor`` gives the (m_1, ..., m_d) table of :meth:`density` values
        without evaluating every combination. With the delta kernel and the alphabets as
        grids this is the low-rank probability table. See :doc:`/chapters/08_latent_trees`.
        """
        self._check_fitted("betas_")
        if not isinstance(grids, (list, tuple)) or len(grids) != self.n_variables_:
            raise ValueError(f"grids must be a list of {self.n_variables_} arrays (one per variable)")
        G = []
        for j, (g, T) in enumerate(zip(grids, self._train)):
            g = np.asarray(g, dtype=float)
            g = g[:, None] if g.ndim == 1 else g
            G.append(self._gram(j, scaled(check_array(g, f"grids[{j}]", ndim=2), self._exponents[j]), T))
        n, d = self._train[0].shape[0], self.n_variables_
        cores = [unscale((G[0] @ self.betas_[0])[None], self._density_exponent, "grids", "the density")]
        for j in range(1, d - 1):
            cores.append(np.einsum("ai,qi,ib->aqb", self.gammas_[j - 1], G[j], self.betas_[j]))
        cores.append((self.gammas_[-1] @ G[-1].T / n)[:, :, None])
        return TTTensor(cores)
