r"""Low-rank kernel embeddings along a latent tree (a tensor-train chain).

The joint embedding :math:`\mathcal C_{X_{1:d}}=\E[\otimes_{j=1}^d\phi(X_j)]` of d
variables whose dependence runs through a chain of hidden variables
:math:`Z_1-Z_2-\dots-Z_{d-1}` has low-rank reshapings
:math:`\mathcal C_{X_{1:k};X_{k+1:d}}` (rank at most the number of hidden states at the
cut). Algorithm 1 of Song & Dai (seed 003) exploits this: SVD of the reshaping
:math:`\mathcal A_1=\mathcal C_{X_1;X_{2:d}}`, keep :math:`\mathcal U_r`, reshape
:math:`\mathcal S_r\mathcal V_r^\top` into :math:`\mathcal B_2`, repeat. The result is a
chain of cores :math:`\mathcal G_1,\dots,\mathcal G_d` — a tensor train, held here as a
:class:`tensorly.tt_tensor.TTTensor`.

* :func:`tt_embedding` runs the chain on an explicit finite tensor and reports the
  truncation error of every step; :func:`reshaping_errors` gives the best rank-r error
  :math:`\epsilon_k` of every reshaping of the tensor itself (the ε of Theorem 1).
* :class:`LatentTreeEmbedding` runs the same chain on the empirical embedding
  :math:`\widehat{\mathcal C}=\frac1n\sum_i\otimes_j\phi(x_j^i)` using kernel matrices
  only (Algorithm 3, eqs. (17)–(21) of seed 003) and evaluates the decomposed embedding
  at new points (eqs. (19)–(20)): with the normalised Gaussian kernel that value is a
  density estimate, with the delta kernel an estimate of a probability table.

The chapter :doc:`/chapters/08_latent_trees` derives and checks all of it.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.linalg as sla
from scipy.special import ndtr
from tensorly.tt_tensor import TTTensor

from ._validation import IllConditionedWarning, check_array, check_positive_int, check_views
from .baselines import _check_bandwidth, silverman_bandwidth
from .estimators.multiview import _Estimator

__all__ = ["tt_embedding", "reshaping_errors", "LatentTreeEmbedding"]


def _check_tensor(C, name="C"):
    if C is None or isinstance(C, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got {type(C).__name__}")
    C = np.asarray(C) if not isinstance(C, np.ndarray) else C
    if C.ndim < 2:
        raise ValueError(f"{name} must have at least 2 modes (one per variable), got ndim={C.ndim}")
    return check_array(C, name, ndim=C.ndim)


def _check_ranks(ranks, n_cuts: int, name="ranks"):
    """An int or a sequence of ``n_cuts`` ints, each >= 1 -> list of ints."""
    if isinstance(ranks, (numbers.Integral, np.integer)) and not isinstance(ranks, bool):
        ranks = [ranks] * n_cuts
    if isinstance(ranks, (str, bytes)) or not hasattr(ranks, "__len__"):
        raise TypeError(f"{name} must be an int or a sequence of ints, got {type(ranks).__name__}")
    ranks = list(ranks)
    if len(ranks) != n_cuts:
        raise ValueError(f"{name} must hold one rank per edge of the chain ({n_cuts}), got {len(ranks)}")
    return [check_positive_int(r, f"{name}[{k}]") for k, r in enumerate(ranks)]


def _truncate(A, r):
    """Rank-r truncated SVD of A: (U_r, S_r, Vt_r, discarded Frobenius error)."""
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = min(r, s.size)
    err = float(np.sqrt(np.sum(s[r:] ** 2)))
    return U[:, :r], s[:r], Vt[:r], err


def tt_embedding(C, ranks, *, return_errors: bool = False):
    r"""Decompose an explicit embedding tensor into a chain of low-rank cores (Algorithm 1).

    Step k takes the SVD of :math:`\mathcal A_k` (the current remainder reshaped as
    (r_{k-1}·n_k) × (n_{k+1}⋯n_d); :math:`\mathcal A_1=\mathcal C_{X_1;X_{2:d}}`), keeps
    the leading ``ranks[k-1]`` left singular vectors as core
    :math:`\mathcal G_k` (shape (r_{k-1}, n_k, r_k)) and continues with
    :math:`\mathcal B_{k+1}=\mathcal S_r\mathcal V_r^\top` (seed 003, Appendix A). This is
    the TT-SVD of ``tensorly.decomposition.tensor_train``; unlike it, the truncation
    error of every step is returned. See :doc:`/chapters/08_latent_trees`.

    Parameters
    ----------
    C : array (n_1, ..., n_d), d ≥ 2
    ranks : int or sequence of d-1 ints ≥ 1
        Rank kept at each edge of the chain; a rank above the size of the reshaping is
        lowered to it (the step is then exact).
    return_errors : bool
        Also return the step errors
        :math:`\delta_k=\|\mathcal A_k-\mathcal U_r\mathcal U_r^\top\mathcal A_k\|_F`.

    Returns
    -------
    tt : tensorly.tt_tensor.TTTensor
        Cores of shapes (r_{k-1}, n_k, r_k) with r_0 = r_d = 1;
        ``tensorly.tt_to_tensor(tt)`` is :math:`\tilde{\mathcal C}`.
    errors : array (d-1,), only with ``return_errors``.
        By orthogonality :math:`\|\mathcal C-\tilde{\mathcal C}\|_F^2=\sum_k\delta_k^2`
        and :math:`\delta_k\le\epsilon_k` (see :func:`reshaping_errors`), which gives
        Theorem 1, :math:`\|\mathcal C-\tilde{\mathcal C}\|\le\sqrt{d-1}\,\max_k\epsilon_k`.

    Cost: d-1 SVDs, the first of an n_1 × (n_2⋯n_d) matrix.
    """
    C = _check_tensor(C)
    shape, d = C.shape, C.ndim
    ranks = _check_ranks(ranks, d - 1)
    cores, errors = [], []
    r_prev, B = 1, C
    for k in range(d - 1):
        A = B.reshape(r_prev * shape[k], -1)
        U, s, Vt, err = _truncate(A, ranks[k])
        cores.append(U.reshape(r_prev, shape[k], U.shape[1]))
        errors.append(err)
        B = s[:, None] * Vt
        r_prev = U.shape[1]
    cores.append(B.reshape(r_prev, shape[-1], 1))
    tt = TTTensor(cores)
    return (tt, np.array(errors)) if return_errors else tt


def reshaping_errors(C, ranks):
    r"""Best rank-r error of every reshaping :math:`\mathcal C_{X_{1:k};X_{k+1:d}}`.

    :math:`\epsilon_k=\min_{\mathrm{rank}\,M\le r_k}\|\mathcal C_{X_{1:k};X_{k+1:d}}-M\|_F`,
    the root sum of squares of the discarded singular values (Eckart–Young); Theorem 1
    of seed 003 (eq. (22)) bounds the error of :func:`tt_embedding` by
    :math:`\sqrt{d-1}\max_k\epsilon_k`. See :doc:`/chapters/08_latent_trees`.

    Parameters
    ----------
    C : array (n_1, ..., n_d)
    ranks : int or sequence of d-1 ints ≥ 1

    Returns
    -------
    array (d-1,) of ε_k. Cost: d-1 SVDs of the unfoldings of C.
    """
    C = _check_tensor(C)
    ranks = _check_ranks(ranks, C.ndim - 1)
    rows = np.cumprod(C.shape)[:-1]
    return np.array([_truncate(C.reshape(m, -1), r)[3] for m, r in zip(rows, ranks)])


class LatentTreeEmbedding(_Estimator):
    r"""Low-rank decomposition of an empirical kernel embedding along a chain (Algorithm 3).

    Decomposes :math:`\widehat{\mathcal C}_{X_{1:d}}=\frac1n\sum_{i=1}^n\otimes_{j=1}^d
    \phi(x_j^i)` into the chain of Algorithm 1 using only kernel matrices (seed 003,
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
        :func:`mvlib.baselines.silverman_bandwidth` for each variable). Ignored for "delta".
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
        from .kernels import delta_kernel, rbf_kernel
        if self.kernel == "delta":
            return delta_kernel(A, B)
        return rbf_kernel(A, B, bandwidth=float(self.bandwidths_[j]), normalize=True)

    # ------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Fit the chain to X: an array (n, d) of d scalar variables or a list of d views
        (n, p_j). Needs d ≥ 2 and n ≥ 2. Returns ``self``."""
        views = self._views(X)
        d, n = len(views), views[0].shape[0]
        if d < 2:
            raise ValueError(f"X must hold at least 2 variables, got {d}")
        if n < 2:
            raise ValueError(f"X has {n} samples but at least 2 are required")
        ranks, bw = self._check_params(views)
        for k, r in enumerate(ranks):
            if r > n:
                raise ValueError(f"ranks[{k}]={r} exceeds the number of samples n={n}")
        self.n_variables_, self.bandwidths_, self._train = d, bw, views
        Ks = [self._gram(j, V, V) for j, V in enumerate(views)]
        # L_j = K_{j+1} ∘ ... ∘ K_d, built from the right
        Ls = [None] * (d - 1)
        acc = Ks[-1]
        for j in range(d - 2, -1, -1):
            Ls[j] = acc
            if j > 0:
                acc = acc * Ks[j]
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
            raise ValueError(f"the Gram matrix of step {j + 1} has a zero diagonal; the data "
                             "carry no signal at this edge")
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
        views = self._views(X, fitted=True)
        return self._contract([self._gram(j, V, T) for j, (V, T)
                               in enumerate(zip(views, self._train))])

    def score_samples(self, X):
        """log max(density, density_floor) of each row, shape (m,)."""
        return np.log(np.maximum(self.density(X), self.density_floor))

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
            a, b = lo[:, None, c:c + p], hi[:, None, c:c + p]
            if self.kernel == "delta":
                w = np.all((T[None] >= a) & (T[None] <= b), axis=2).astype(float)
            else:
                s = self.bandwidths_[j]
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
            G.append(self._gram(j, check_array(g, f"grids[{j}]", ndim=2), T))
        n, d = self._train[0].shape[0], self.n_variables_
        cores = [(G[0] @ self.betas_[0])[None]]
        for j in range(1, d - 1):
            cores.append(np.einsum("ai,qi,ib->aqb", self.gammas_[j - 1], G[j], self.betas_[j]))
        cores.append((self.gammas_[-1] @ G[-1].T / n)[:, :, None])
        return TTTensor(cores)
