r"""Kernels, blockwise Gram matrices and low-rank Gram factors.

The kernel spectral algorithm of Song, Anandkumar, Dai & Xie (2014) embeds each
view in a reproducing kernel Hilbert space. This module holds the kernels

* the normalised Gaussian RBF kernel
  :math:`\kappa(x,x')=\exp(-\|x-x'\|^2/2s^2)/(\sqrt{2\pi}s)^d` — a probability density in
  :math:`x` for every :math:`x'`, so that :math:`\langle\phi(x),\hat\mu_{X|h}\rangle` is a
  kernel density estimate (Song et al. 2014, §4 and Remark 3);
* the delta kernel :math:`\delta(x,x')=[x=x']`, whose feature map is the one-hot encoding
  of a discrete variable (Song et al. 2014, Example 1);

their Gram matrices computed block by block (memory bounded by the block size), and
low-rank factors :math:`K\approx GG^\top` (pivoted incomplete Cholesky, Nyström) that let
m reach the tens of thousands without an m×m array; orthonormal feature coordinates on
those factors (:func:`kernel_basis`, :func:`kernel_features`); steps 2–8 of Algorithm 1 on
such coordinates (:func:`kernel_spectral_decomposition`); bandwidth selection by
leave-one-out likelihood (:func:`cv_bandwidth`); and the weighted density error of the
paper's experiments (:func:`weighted_density_error`). The estimator lives in
:mod:`mvlib.kernel` (:class:`mvlib.KernelSpectral`).

See :doc:`/chapters/07_kernel_embeddings`.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg as sla

from ..core.base import TINY
from ..core.validation import (
    check_alpha0,
    check_array,
    check_bandwidth,
    check_positive_float,
    check_positive_int,
    check_random_state,
    scale_exponent,
    scaled,
    unscale,
)

__all__ = ["rbf_kernel", "delta_kernel", "incomplete_cholesky", "nystrom_factor", "silverman_bandwidth"]

#: entries of one Gram block (rows × columns) computed at once: 2**22 floats = 32 MiB
_BLOCK_ENTRIES = 2 ** 22
#: Nyström drops landmark eigenvalues below this fraction of the largest (they only add noise)
_NYSTROM_RTOL = 1e-10


def _as_points(X, name):
    """1-d arrays are n points in one dimension; returns a float (n, d) array."""
    if X is not None and not isinstance(X, (str, bytes)):
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError):   # ragged nested sequences: check_array names them
            arr = None
        if arr is not None and arr.ndim == 1 and arr.dtype != object:
            X = arr[:, None]
    return check_array(X, name, ndim=2)



def silverman_bandwidth(X):
    r"""Silverman's rule-of-thumb bandwidth for a Gaussian kernel on the rows of X.

    See :doc:`/chapters/07_kernel_embeddings` (it is the default bandwidth of
    :class:`mvlib.NonparametricEM` and the starting point of the cross-validated grid of
    :class:`mvlib.KernelSpectral`).

    For one dimension :math:`s=0.9\,\min(\hat\sigma,\ \mathrm{IQR}/1.34)\,n^{-1/5}`
    (Silverman 1986, eq. 3.31); for d dimensions the normal-reference rule
    :math:`s=\bigl(4/(d+2)\bigr)^{1/(d+4)}\,\bar\sigma\,n^{-1/(d+4)}` with
    :math:`\bar\sigma` the mean of the coordinate standard deviations (one bandwidth for
    all coordinates, as the product kernel uses).

    Parameters
    ----------
    X : array (n, d), n ≥ 2

    Returns
    -------
    float > 0. Raises ``ValueError`` when every coordinate is constant. Cost O(n d).
    """
    X = check_array(X, "X", ndim=2, min_rows=2)
    n, d = X.shape
    e = scale_exponent(X)   # extreme scale: the rule on X / 2**e (exact), scaled back
    if e != 0:
        return float(unscale(silverman_bandwidth(scaled(X, e)), e, "X", "the bandwidth"))
    sd = X.std(axis=0, ddof=1)
    if d == 1:
        q75, q25 = np.percentile(X[:, 0], [75, 25])
        spread = min(sd[0], (q75 - q25) / 1.34) if q75 > q25 else sd[0]
        s = 0.9 * spread * n ** -0.2
    else:
        s = (4.0 / (d + 2)) ** (1.0 / (d + 4)) * float(np.mean(sd)) * n ** (-1.0 / (d + 4))
    if not s > 0:
        raise ValueError("X is constant in every coordinate: no bandwidth can be derived from it")
    return float(s)


def _check_bandwidth_fits(X, s, data="X", name="bandwidth", *, n_points: int = 200):
    """Refuse a Gaussian bandwidth at which the Gram matrix of (the first ``n_points`` rows
    of) X is numerically the identity (s far below the spacing of the points) or constant
    (s far above their spread): no kernel method can learn anything from either."""
    Xm = X[:n_points]
    K = rbf_kernel(Xm, Xm, s, normalize=False)
    off = K[~np.eye(K.shape[0], dtype=bool)]
    if off.size == 0:
        return
    tiny = np.finfo(float).tiny
    if np.any(off < tiny) and not np.any((off >= tiny) & (off < 1.0)):
        raise ValueError(f"{name}={s!r} is far below the spacing of the points of {data}: their Gram "
                         "matrix is the identity")
    if np.all(off > 1.0 - 1e-12) and np.any(Xm != Xm[:1]):
        raise ValueError(f"{name}={s!r} is far above the spread of the points of {data}: their Gram "
                         "matrix is constant")


def _check_bandwidths(bandwidth, name="bandwidth"):
    """'silverman', a positive float, or a list of them (each checked by check_bandwidth)."""
    if isinstance(bandwidth, str):
        if bandwidth != "silverman":
            raise ValueError(f"{name} must be a positive float, a list of them or 'silverman', got {bandwidth!r}")
        return bandwidth
    if isinstance(bandwidth, (list, tuple, np.ndarray)):
        return [check_bandwidth(b, name) for b in bandwidth]
    return check_bandwidth(bandwidth, name)


def _pair(X, Y):
    X = _as_points(X, "X")
    Y = X if Y is None else _as_points(Y, "Y")
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"Y has {Y.shape[1]} columns but X has {X.shape[1]}")
    return X, Y


#: below this exponent exp underflows to exactly 0.0 in float64 (exp(t) < 2**-1075, half the smallest
#: subnormal, for t < -745.14); kernels skip computing exp there, and the result is the same array
_EXP_ZERO = -746.0


def _exp_or_zero(t, out):
    """``out[...] = exp(t)``, computing exp only where ``t > _EXP_ZERO`` (the rest is exactly 0.0 either
    way): the same values as ``np.exp(t)``, without the cost of far-apart pairs (exp costs 20–45 ns an
    element here). Returns ``out``."""
    out.fill(0.0)
    return np.exp(t, out=out, where=t > _EXP_ZERO)


def _row_blocks(n_rows, n_cols):
    step = max(1, _BLOCK_ENTRIES // max(n_cols, 1))
    for s in range(0, n_rows, step):
        yield slice(s, min(s + step, n_rows))


def rbf_kernel(X, Y=None, bandwidth=1.0, normalize=True):
    r"""Gram matrix of the (normalised) Gaussian RBF kernel, shape (n_X, n_Y).

    See :doc:`/chapters/07_kernel_embeddings` for the role of the kernel.

    .. math:: \kappa(x,x')=\frac{\exp\bigl(-\|x-x'\|^2/(2s^2)\bigr)}{(\sqrt{2\pi}\,s)^d}

    (Song et al. 2014, §8: with the normalising constant, :math:`\kappa(\cdot,x')` is the
    density of :math:`N(x', s^2 I_d)`, so embeddings evaluate to kernel density estimates).
    ``normalize=False`` drops the constant :math:`(\sqrt{2\pi}s)^{-d}`.

    Parameters
    ----------
    X : array (n_X, d) or (n_X,) (one-dimensional points)
    Y : array (n_Y, d) or (n_Y,), optional; default ``X``
    bandwidth : float > 0
        The bandwidth s.
    normalize : bool, default True

    Returns
    -------
    ndarray (n_X, n_Y)

    Notes
    -----
    Squared distances come from :math:`\|x\|^2+\|y\|^2-2x^\top y` clipped at 0, computed in
    row blocks of at most 2²² entries, so the temporary memory beyond the output is bounded.
    Cost O(n_X n_Y d).
    """
    s = check_bandwidth(bandwidth)
    X, Y = _pair(X, Y)
    d = X.shape[1]
    e = max(scale_exponent(X), scale_exponent(Y))
    if e != 0:   # points of extreme scale: distances in units of 2**e (exact), bandwidth alike
        X, Y = scaled(X, e), scaled(Y, e)
    s_dist = float(np.ldexp(s, -e))
    extreme = scale_exponent(s_dist) != 0   # s * s would lose precision or leave float64
    if normalize and extreme:
        log2_const = -d * (np.log2(np.sqrt(2.0 * np.pi)) + np.log2(s))
        if not -1022 <= log2_const < 1024:
            raise ValueError(
                f"bandwidth={bandwidth!r} makes the normalising constant (sqrt(2 pi) s)^-d of the "
                f"{d}-dimensional kernel about 1e{int(log2_const * np.log10(2))}, outside float64; "
                "use normalize=False or a bandwidth closer to the scale of the data")
    const = (np.sqrt(2.0 * np.pi) * s) ** (-d) if normalize else 1.0
    nx, ny = X.shape[0], Y.shape[0]
    out = np.empty((nx, ny))
    yy = np.einsum("ij,ij->i", Y, Y)
    xx = np.einsum("ij,ij->i", X, X)
    scale = -0.5 / (s_dist * s_dist) if not extreme else None
    for rows in _row_blocks(nx, ny):
        sq = X[rows] @ Y.T
        sq *= -2.0
        sq += xx[rows, None]
        sq += yy[None, :]
        np.maximum(sq, 0.0, out=sq)
        if extreme:   # divide by s twice: -|x-y|^2 / (2 s^2) without forming s^2
            with np.errstate(over="ignore"):   # overflow to -inf is exp's 0
                sq *= -0.5
                sq /= s_dist
                sq /= s_dist
        else:
            sq *= scale
        _exp_or_zero(sq, out[rows])
    if const != 1.0:
        out *= const
    return out


def delta_kernel(X, Y=None):
    r"""Gram matrix of the delta kernel :math:`\delta(x,x')=[x=x']`, shape (n_X, n_Y).

    See :doc:`/chapters/07_kernel_embeddings`: with this kernel the feature map of a discrete
    variable is its one-hot vector, and the kernel spectral algorithm reduces to the discrete
    spectral method (Song et al. 2014, Example 1).

    Parameters
    ----------
    X : array (n_X, d) or (n_X,)
    Y : array (n_Y, d) or (n_Y,), optional; default ``X``

    Returns
    -------
    float ndarray (n_X, n_Y) of 0/1: entry (i, j) is 1 when row i of X equals row j of Y
    exactly. Rows are mapped to integer codes once (``numpy.unique``), then compared in
    row blocks. Cost O((n_X + n_Y) d log(n_X + n_Y) + n_X n_Y).
    """
    X, Y = _pair(X, Y)
    both = np.concatenate([X, Y], axis=0)
    _, codes = np.unique(both, axis=0, return_inverse=True)
    codes = codes.ravel()
    cx, cy = codes[: X.shape[0]], codes[X.shape[0]:]
    out = np.empty((X.shape[0], Y.shape[0]))
    for rows in _row_blocks(X.shape[0], Y.shape[0]):
        out[rows] = cx[rows, None] == cy[None, :]
    return out


def _kernel_diagonal(X, kernel, chunk=128):
    """diag K(X, X) from small diagonal blocks (no n×n array)."""
    n = X.shape[0]
    diag = np.empty(n)
    for s in range(0, n, chunk):
        blk = np.asarray(kernel(X[s:s + chunk], X[s:s + chunk]), float)
        diag[s:s + chunk] = np.diag(blk)
    return diag


def incomplete_cholesky(X, kernel, rank, tol=1e-10, *, return_pivots=False):
    r"""Pivoted incomplete Cholesky factor G (n, r) with :math:`K\approx GG^\top`.

    See :doc:`/chapters/07_kernel_embeddings` (low-rank path of the kernel spectral algorithm).

    Greedy pivoting (Fine & Scheinberg 2001; Bach & Jordan 2002): at step j the point with
    the largest residual diagonal :math:`K_{ii}-\sum_{l<j}G_{il}^2` becomes the pivot, one
    column :math:`K_{:,p}` is evaluated, and
    :math:`G_{:,j}=(K_{:,p}-G G_{p,:}^\top)/\sqrt{\text{residual}_p}`. The trace of the
    residual :math:`K-GG^\top` equals the sum of the residual diagonal and is what ``tol``
    bounds.

    Parameters
    ----------
    X : array (n, d) or (n,)
    kernel : callable ``(A, B) -> (len A, len B) Gram block``,
        e.g. ``functools.partial(rbf_kernel, bandwidth=0.5)``.
    rank : int ≥ 1
        Maximal number of columns r (capped at n).
    tol : float ≥ 0
        Stop early once the largest residual diagonal falls below ``tol`` times the trace of K.
    return_pivots : bool
        Also return the pivot indices ``P`` (r',). ``G[P]`` is lower triangular with
        :math:`G_PG_P^\top=K_{PP}`, so :math:`GG^\top=K_{:P}K_{PP}^{-1}K_{P:}` (the Nyström
        approximation on the pivots) and a new point has the coordinates
        :math:`g(x)=G_P^{-1}K_{P,x}` (see :func:`mvlib.kernel.kernel_features`).

    Returns
    -------
    G : ndarray (n, r'), r' ≤ rank (fewer when the residual is already below the tolerance).
    P : int ndarray (r',), only with ``return_pivots=True``.

    Notes
    -----
    Cost O(n r² + n r d) time (r kernel columns), O(n r) memory; the n×n Gram matrix is
    never formed.
    """
    X = _as_points(X, "X")
    rank = check_positive_int(rank, "rank")
    if not callable(kernel):
        raise TypeError(f"kernel must be a callable (A, B) -> Gram block, got {type(kernel).__name__}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol >= 0:
        raise ValueError(f"tol must be a non-negative float, got {tol!r}")
    n = X.shape[0]
    r = min(rank, n)
    resid = _kernel_diagonal(X, kernel).copy()
    if not np.all(np.isfinite(resid)):
        raise ValueError("kernel returned NaN or infinity on the diagonal K(x, x)")
    total = float(resid.sum())
    G = np.zeros((n, r))
    pivots = np.zeros(r, dtype=int)
    used = 0
    for j in range(r):
        p = int(np.argmax(resid))
        pivots[j] = p
        if resid[p] <= max(tol * total, 0.0) or resid[p] <= 0:
            break
        col = np.asarray(kernel(X, X[p:p + 1]), float).ravel()
        if not np.all(np.isfinite(col)):
            raise ValueError("kernel returned NaN or infinity")
        col -= G[:, :j] @ G[p, :j]
        G[:, j] = col / np.sqrt(resid[p])
        resid -= G[:, j] ** 2
        resid[p] = 0.0
        np.maximum(resid, 0.0, out=resid)
        used = j + 1
    return (G[:, :used], pivots[:used]) if return_pivots else G[:, :used]


def nystrom_factor(X, kernel, rank, random_state=None):
    r"""Nyström factor G (n, r) with :math:`K\approx GG^\top = K_{:,I}K_{I,I}^{+}K_{I,:}`.

    See :doc:`/chapters/07_kernel_embeddings` (low-rank path of the kernel spectral algorithm).

    r landmarks I are drawn uniformly without replacement (Williams & Seeger 2001);
    :math:`G=K_{:,I}U\Lambda^{-1/2}` from the eigendecomposition
    :math:`K_{I,I}=U\Lambda U^\top`, dropping eigenvalues below :math:`10^{-10}\lambda_{\max}`.

    Parameters
    ----------
    X : array (n, d) or (n,)
    kernel : callable ``(A, B) -> Gram block``
    rank : int ≥ 1, number of landmarks (capped at n)
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    ndarray (n, r'), r' ≤ rank. Cost O(n r d + n r² + r³) time, O(n r) memory.
    """
    X = _as_points(X, "X")
    rank = check_positive_int(rank, "rank")
    if not callable(kernel):
        raise TypeError(f"kernel must be a callable (A, B) -> Gram block, got {type(kernel).__name__}")
    rng = check_random_state(random_state)
    n = X.shape[0]
    r = min(rank, n)
    idx = np.sort(rng.choice(n, size=r, replace=False))
    C = np.asarray(kernel(X, X[idx]), float)
    W = 0.5 * (C[idx] + C[idx].T)
    evals, evecs = sla.eigh(W)
    keep = evals > max(_NYSTROM_RTOL * max(evals.max(), 0.0), 0.0)
    if not np.any(keep):
        raise ValueError("the kernel matrix of the landmarks is zero: nystrom_factor cannot build a factor")
    return C @ (evecs[:, keep] / np.sqrt(evals[keep]))


__all__ += ["weighted_density_error", "smoothing_bias"]


def smoothing_bias(dist, bandwidth, x):
    r"""Population smoothing error :math:`\lVert p*\mathcal N(0,s^2)-p\rVert_{L^2}` of a 1-d density on a grid.

    See :doc:`/chapters/07_kernel_embeddings` (Remark 3 of Song et al. 2014 and densities with a
    pole). ``dist``: a frozen ``scipy.stats`` continuous distribution (``cdf``, ``pdf``,
    ``support``); ``bandwidth`` s > 0; ``x`` (n,) a uniform grid (points equal to a finite
    end of the support are dropped, where the density may be infinite). The convolution
    :math:`\int\varphi_s(x-y)\,dF(y)` is a sum over the exact masses :math:`F(b)-F(a)` of
    the cells of a fine partition — uniform, plus geometric cells towards a finite lower
    end of the support, so that a pole :math:`p(y)\sim y^{-\alpha}` is integrated
    correctly — each placed at its midpoint; the norm is the Riemann sum with the grid step.
    For a smooth p it behaves like :math:`\tfrac{s^2}{2}\lVert p''\rVert`; near a pole
    :math:`y^{-\alpha}` (0 < α < 1/2) like :math:`s^{1/2-\alpha}`. Returns a float.
    Cost O(n · 10⁴).
    """
    s = check_positive_float(bandwidth, "bandwidth")
    x = np.asarray(x, dtype=float).ravel()
    if x.size < 2 or not np.all(np.isfinite(x)) or np.any(np.diff(x) <= 0):
        raise ValueError("x must be an increasing grid of at least 2 finite points")
    lo_s, hi_s = dist.support()
    lo, hi = x[0] - 8 * s, x[-1] + 8 * s
    parts = [np.linspace(max(lo, lo_s), min(hi, hi_s), 8001)]
    if np.isfinite(lo_s) and lo < lo_s:
        parts.append(lo_s + np.geomspace(1e-9, min(1.0, hi - lo_s), 1000))
    edges = np.unique(np.concatenate(parts))
    mass = np.diff(dist.cdf(edges))
    mid = 0.5 * (edges[1:] + edges[:-1])
    keep = ~np.isin(x, [lo_s, hi_s])
    xs, dx = x[keep], x[1] - x[0]
    smooth = np.empty(xs.size)
    for a in range(0, xs.size, 256):                      # blocks: memory O(256 · 10⁴)
        z = (xs[a:a + 256, None] - mid[None, :]) / s
        t = -0.5 * z * z
        smooth[a:a + 256] = _exp_or_zero(t, np.empty_like(t)) @ mass / (np.sqrt(2 * np.pi) * s)
    return float(np.sqrt(np.sum((smooth - dist.pdf(xs)) ** 2) * dx))


def weighted_density_error(p_true, p_hat, weights, dx=1.0, *, return_permutation=False):
    r"""Weighted density error :math:`\sum_h\pi_h\bigl(\Delta x\sum_j(p(x_j|h)-\hat p(x_j|h))^2\bigr)^{1/2}`.

    See :doc:`/chapters/07_kernel_embeddings` (the error measure of Song et al. 2014, §8,
    Figure 3), after matching the estimated components to the true ones.

    Parameters
    ----------
    p_true : array (n_grid, k)
        True conditional densities :math:`p(x_j\mid h)` on a uniform grid :math:`x_1..x_{n}`.
    p_hat : array (n_grid, k)
        Estimated densities on the same grid, components in any order.
    weights : array (k,)
        True mixing weights :math:`\pi_h` (non-negative).
    dx : float > 0, default 1.0
        Grid step :math:`\Delta x`; with the step the inner sum is a Riemann sum, so the value
        approximates :math:`\sum_h\pi_h\|p(\cdot|h)-\hat p(\cdot|h)\|_{L^2}` and does not depend
        on the grid size. ``dx=1`` gives the paper's plain sum over grid points.
    return_permutation : bool
        Also return ``perm`` with ``p_hat[:, perm]`` aligned to ``p_true``.

    Returns
    -------
    float (and perm, int array (k,)). The matching minimises the weighted error itself
    (Hungarian algorithm on the k×k matrix :math:`\pi_h\,\|p_h-\hat p_{h'}\|`). Cost
    O(n_grid k² + k³).
    """
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    from ..core.validation import check_matrix

    P = check_matrix(p_true, "p_true")
    Q = check_matrix(p_hat, "p_hat", shape=P.shape, by="p_true")
    w = check_array(weights, "weights", ndim=1)
    if w.shape[0] != P.shape[1]:
        raise ValueError(f"weights has length {w.shape[0]} but p_true has {P.shape[1]} columns")
    if np.any(w < 0):
        raise ValueError("weights must be non-negative")
    dx = check_bandwidth(dx, "dx")
    # extreme scales: densities and weights in units of powers of two (exact), error scaled back
    e = scale_exponent(np.array([np.max(np.abs(P)), np.max(np.abs(Q))]))
    ew, ex = scale_exponent(w), scale_exponent(dx, even=True)
    P, Q, w, dx = scaled(P, e), scaled(Q, e), scaled(w, ew), float(scaled(dx, ex))
    cost = w[:, None] * cdist(P.T, Q.T) * np.sqrt(dx)
    rows, perm = linear_sum_assignment(cost)
    err = float(unscale(cost[rows, perm].sum(), e + ew + ex // 2, "p_true, p_hat, weights", "the error"))
    return (err, perm) if return_permutation else err


__all__ += ["kernel_cholesky", "kernel_basis", "kernel_features", "kernel_spectral_decomposition",
            "kernel_spectral_streamed"]

#: relative jitters (times the mean diagonal) tried in turn by :func:`kernel_cholesky`
_JITTERS = (0.0, 1e-12, 1e-10, 1e-8, 1e-6)


def kernel_cholesky(K, *, jitters=_JITTERS):
    r"""Lower-triangular L with :math:`LL^\top = K+\epsilon I` (Algorithm 1, step 1: :math:`K=R^\top R`, :math:`R=L^\top`).

    See :doc:`/chapters/07_kernel_embeddings`.

    Gram matrices of smooth kernels are numerically singular, so the jitter
    :math:`\epsilon=j\cdot\overline{K_{ii}}` grows through ``jitters`` (relative values) until
    the factorisation succeeds.

    Parameters
    ----------
    K : array (n, n), symmetric positive semi-definite
    jitters : sequence of floats ≥ 0, tried in order

    Returns
    -------
    L : ndarray (n, n) lower triangular, and the absolute jitter ε used (float).

    Raises
    ------
    ValueError
        ``K`` not square, not finite, or not positive semi-definite: the Cholesky
        factorisation fails even with the largest jitter (the message names the smallest
        eigenvalue). Cost O(n³/3) per attempt.
    """
    from ..core.validation import check_matrix

    K = check_matrix(K, "K", square=True)
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(float(np.abs(K).max()), 1e-300)):
        raise ValueError("K must be symmetric (a Gram matrix); its Cholesky factorisation is undefined")
    scale = float(np.mean(np.diag(K)))
    if not scale > 0:
        raise ValueError(f"K must have a positive diagonal (a Gram matrix), mean diagonal is {scale:.3g}")
    for j in jitters:
        eps = float(j) * scale
        try:
            L = sla.cholesky(K + eps * np.eye(K.shape[0]), lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
        return L, eps
    lam_min = float(sla.eigvalsh(K, subset_by_index=[0, 0])[0])
    raise ValueError(
        f"the Cholesky factorisation K = R^T R failed even with jitter {max(jitters):.0e} x mean diagonal: "
        f"K is not positive semi-definite (smallest eigenvalue {lam_min:.3e}); check the kernel and its bandwidth"
    )


def kernel_basis(X, kernel, rank=None, *, tol=1e-12):
    r"""Centres and a triangular factor giving orthonormal coordinates of :math:`\phi(x)`.

    See :doc:`/chapters/07_kernel_embeddings` (exact and low-rank paths).

    Returns ``(C, L)`` with centres :math:`C` (r, d) and lower-triangular :math:`L` (r, r),
    :math:`LL^\top\approx K_{CC}`, such that :math:`g(x)=L^{-1}K_{C,x}\in\mathbb R^r`
    (:func:`kernel_features`) satisfies :math:`g(x)^\top g(y)=\langle P\phi(x),P\phi(y)\rangle`
    with P the orthogonal projection onto :math:`\mathrm{span}\{\phi(c)\}`.

    * ``rank=None`` — exact path: all n points are centres and L comes from
      :func:`kernel_cholesky` of the full Gram matrix (with jitter), i.e. the
      :math:`R^\top` of Algorithm 1 of Song et al. (2014). Cost O(n²d + n³/3), memory O(n²).
    * ``rank=r`` — low-rank path: the pivots of :func:`incomplete_cholesky` are the centres
      and L its rows at the pivots (stops earlier when the residual trace is below ``tol``).
      Cost O(n r² + n r d), memory O(n r); the n×n Gram matrix is never formed.

    Parameters
    ----------
    X : array (n, d) or (n,)
    kernel : callable (A, B) -> Gram block
    rank : None or int ≥ 1
    tol : float ≥ 0, early stop of the incomplete Cholesky

    Returns
    -------
    C : ndarray (r, d); L : ndarray (r, r) lower triangular.
    """
    X = _as_points(X, "X")
    if rank is None:
        L, _ = kernel_cholesky(np.asarray(kernel(X, X), float))
        return X, L
    G, piv = incomplete_cholesky(X, kernel, rank, tol=tol, return_pivots=True)
    return X[piv], np.tril(G[piv])


def kernel_features(x, centres, L, kernel, *, chunk=4096):
    r"""Coordinates :math:`g(x)=L^{-1}K_{C,x}` of the points x, shape (n_x, r).

    See :doc:`/chapters/07_kernel_embeddings` and :func:`kernel_basis`. For the exact
    path these are the columns of :math:`R^{-\top}K_{:x}` of Algorithm 1 (for a data point
    :math:`x_i`, row i of L). Computed ``chunk`` points at a time: cost O(n_x r (d + r)),
    memory O(chunk · r).
    """
    x = _as_points(x, "x")
    if x.shape[1] != centres.shape[1]:
        raise ValueError(f"x has {x.shape[1]} columns but the kernel basis has {centres.shape[1]}")
    out = np.empty((x.shape[0], L.shape[0]))
    for s in range(0, x.shape[0], chunk):
        Kc = np.asarray(kernel(centres, x[s:s + chunk]), float)
        out[s:s + chunk] = sla.solve_triangular(L, Kc, lower=True, check_finite=False).T
    return out


def kernel_spectral_decomposition(F1, F2, F3, n_components, *, random_state=None, n_restarts=20,
                                  n_iterations=100, alpha0=None):
    r"""Steps 2–8 of the kernel spectral algorithm on feature coordinates (views with one conditional law).

    See :doc:`/chapters/07_kernel_embeddings` (Song et al. 2014, §5.2, Algorithm 1).

    With orthonormal coordinates :math:`F_v` (m, r) of the features :math:`\phi(x_v^i)` (from
    :func:`kernel_features`; for the exact path :math:`F=R^\top`), the empirical
    second-order embedding :math:`\hat C_{X_1X_2}=\frac1{2m}\Phi\Psi^\top` has the coordinates

    .. math:: C=\tfrac1{2m}(F_1^\top F_2+F_2^\top F_1),\qquad
              CC^\top=\tfrac1{4m^2}RLR^\top ,

    so the eigenvectors :math:`\tilde\beta` of Algorithm 1 step 2 are those of C and
    :math:`\hat\sigma` its eigenvalues. The whitening :math:`W=\tilde\beta\hat S^{-1/2}`
    (:func:`mvlib.whitening_matrix` of C: the k algebraically largest eigenvalues, which are
    the k largest :math:`|\hat\sigma|` whenever the population C — positive semi-definite — is
    resolved) gives :math:`\xi(x)=W^\top g(x)=\hat S^{-1/2}\beta^\top K_{:x}`; then

    .. math:: \hat T=\frac1{3m}\sum_i\otimes[\xi(x_1^i),\xi(x_2^i),\xi(x_3^i)]

    (:func:`mvlib.symmetrize3`, accumulated in chunks, never larger than k×k×k besides the
    m×k features), :func:`mvlib.tensor_power_method`, and
    :math:`\mu_{X|h}=(W^\top)^+\hat v_h\hat\lambda_h` (:func:`mvlib.dewhiten`; the coordinates
    of :math:`A=\beta\hat S^{1/2}\hat M\operatorname{diag}(\hat\lambda)`),
    :math:`\hat\pi_h=\hat\lambda_h^{-2}`.

    With ``alpha0`` (a Dirichlet prior on the proportions of each row's components) the
    three rows are exchangeable observations of one group and the moments are the
    α₀-corrected ones of :func:`kernel_dirichlet_moments` (all three pairs and all six
    orders of the triples); ``weights`` are then the Dirichlet parameters
    :math:`\hat\alpha_h=4\alpha_0(\alpha_0+1)/((\alpha_0+2)^2\hat\lambda_h^2)` and the
    embeddings carry the extra factor :math:`(\alpha_0+2)/2`.

    Parameters
    ----------
    F1, F2, F3 : arrays (m, r), coordinates of the three views in one basis
    n_components : int k ≤ r
    random_state : None, int or Generator (power-method starts)
    n_restarts, n_iterations : int, passed to :func:`mvlib.tensor_power_method`
    alpha0 : None or float > 0
        ``None``: one component per row (Algorithm 1). A float: the concentration
        :math:`\alpha_0=\sum_h\alpha_h` of a Dirichlet prior (see above).

    Returns
    -------
    dict with ``weights`` (k,) (raw :math:`\hat\lambda^{-2}`, not normalised; with ``alpha0``
    the raw :math:`\hat\alpha`), ``embeddings``
    (r, k) coordinates of :math:`\hat\mu_{X|h}`, ``eigenvalues`` :math:`\hat\lambda` (k,),
    ``whitening`` W (r, k), ``sigma`` (k,) and the tensor ``T`` (k, k, k).
    Cost O(m r² + r³ + m k³ + restarts · k⁴), memory O(m r + r² + k³); with ``alpha0`` the
    pairs and triples cost three and two times as much.
    """
    from ..core.tensors import symmetrize3
    from ..core.validation import check_views

    F1, F2, F3 = check_views([F1, F2, F3], names=["F1", "F2", "F3"], allow_sparse=False)
    if not (F1.shape[1] == F2.shape[1] == F3.shape[1]):
        raise ValueError(f"F1, F2, F3 must share their columns (one basis), got {F1.shape[1]}, "
                         f"{F2.shape[1]}, {F3.shape[1]}")
    m = F1.shape[0]
    k = check_positive_int(n_components, "n_components")
    if k > F1.shape[1]:
        raise ValueError(f"n_components={k} exceeds the dimension {F1.shape[1]} of the kernel features")
    if alpha0 is not None:
        a = check_alpha0(alpha0, allow_none=True)
        P = F1.T @ F2 + F1.T @ F3 + F2.T @ F3
        total = F1.sum(axis=0) + F2.sum(axis=0) + F3.sum(axis=0)
        W, sigma, pairs_w, u = _whiten_dirichlet(P, total, m, k, a)
        xi = [F @ W for F in (F1, F2, F3)]
        T = _dirichlet_tensor(_full_symmetric_triples(xi), pairs_w, u, a)
        return _spectral_tail(T, W, sigma, k, random_state, n_restarts, n_iterations, alpha0=a)
    W, sigma = _whiten_pairs(F1.T @ F2, m, k)
    xi = [F @ W for F in (F1, F2, F3)]
    T = symmetrize3(*xi) / 3.0
    return _spectral_tail(T, W, sigma, k, random_state, n_restarts, n_iterations)



__all__ += ["kernel_dirichlet_moments"]


def kernel_dirichlet_moments(F1, F2, F3, alpha0):
    r"""The α₀-corrected second and third order embeddings in feature coordinates.

    See :doc:`/chapters/07_kernel_embeddings`. Rows of :math:`F_v` (m, r) are the coordinates
    of :math:`\phi(x_v)` for three exchangeable observations :math:`x_1,x_2,x_3` of one group
    whose component proportions are :math:`\theta\sim\mathrm{Dir}(\alpha)`,
    :math:`\alpha_0=\sum_h\alpha_h` (each observation draws :math:`h\sim\theta`, then
    :math:`x\sim P(x|h)`). With :math:`\mu_h=E[\phi(x)|h]`, :math:`m_1=E[\phi(x_1)]`
    (estimated by the mean of the features of all three views), :math:`E_2` the average of
    :math:`\phi(x_a)\otimes\phi(x_b)` over the six ordered pairs of distinct observations and
    :math:`E_3` the average of :math:`\phi(x_a)\otimes\phi(x_b)\otimes\phi(x_c)` over the six
    orders of the three (Song et al. 2014, §7; Anandkumar et al. 2012, Theorem 3.5):

    .. math::

       \mathcal M_2 &= E_2-\tfrac{\alpha_0}{\alpha_0+1}m_1\otimes m_1
          = \sum_h \frac{\alpha_h}{\alpha_0(\alpha_0+1)}\mu_h^{\otimes2},\\
       \mathcal M_3 &= E_3-\tfrac{\alpha_0}{\alpha_0+2}\bigl(E_2\otimes m_1+
          (\text{its two other placements of } m_1)\bigr)
          +\tfrac{2\alpha_0^2}{(\alpha_0+1)(\alpha_0+2)}m_1^{\otimes3}
          = \sum_h \frac{2\alpha_h}{\alpha_0(\alpha_0+1)(\alpha_0+2)}\mu_h^{\otimes3}.

    With the delta kernel (one-hot features) these are the LDA moments of
    :mod:`mvlib.lda` on documents of three words. Returns ``(M2, M3)``, (r, r) and
    (r, r, r) arrays — for small r only (checks and teaching; the estimator whitens first and
    never forms the r×r×r array). Cost O(m r³), memory O(r³).
    """
    from ..core.validation import check_views

    F1, F2, F3 = check_views([F1, F2, F3], names=["F1", "F2", "F3"], allow_sparse=False)
    if not (F1.shape[1] == F2.shape[1] == F3.shape[1]):
        raise ValueError(f"F1, F2, F3 must share their columns (one basis), got {F1.shape[1]}, "
                         f"{F2.shape[1]}, {F3.shape[1]}")
    a = check_positive_float(alpha0, "alpha0")
    m = F1.shape[0]
    P = F1.T @ F2 + F1.T @ F3 + F2.T @ F3
    E2 = (P + P.T) / (6.0 * m)
    m1 = (F1.sum(axis=0) + F2.sum(axis=0) + F3.sum(axis=0)) / (3.0 * m)
    M2 = E2 - a / (a + 1.0) * np.outer(m1, m1)
    return M2, _dirichlet_tensor(_full_symmetric_triples([F1, F2, F3]), E2, m1, a)


def _full_symmetric_triples(xi):
    """Average over samples and over the six orders of ξ1 ⊗ ξ2 ⊗ ξ3, (k, k, k)."""
    from ..core.tensors import symmetrize3

    return (symmetrize3(*xi) + symmetrize3(xi[0], xi[2], xi[1])) / 6.0


def _whiten_dirichlet(P, total, m, k, alpha0):
    """Whitening of M2 = E2 − α0/(α0+1) m1 m1ᵀ from P = Σ of the three cross products F_aᵀF_b
    (a < b) and total = Σ of the features of the three views; returns W, σ, WᵀE2W and Wᵀm1."""
    from ..core.whitening import whitening_matrix

    E2 = (P + P.T) / (6.0 * m)
    m1 = total / (3.0 * m)
    M2 = E2 - alpha0 / (alpha0 + 1.0) * np.outer(m1, m1)
    try:
        W, sigma = whitening_matrix(M2, k, return_eigenvalues=True)
    except ValueError as exc:
        raise ValueError(f"n_components={k} exceeds the rank of the alpha0-corrected second-order "
                         f"embedding M2 (Condition 3.1; {exc})") from None
    return W, sigma, W.T @ E2 @ W, W.T @ m1


def _dirichlet_tensor(E3, E2, u, alpha0):
    """M3 = E3 − α0/(α0+2) (E2⊗u + two other placements) + 2α0²/((α0+1)(α0+2)) u⊗u⊗u (any coordinates)."""
    Pu = E2[:, :, None] * u[None, None, :]
    corr = Pu + np.transpose(Pu, (0, 2, 1)) + np.transpose(Pu, (2, 0, 1))
    uuu = u[:, None, None] * u[None, :, None] * u[None, None, :]
    a = float(alpha0)   # 2a²/((a+1)(a+2)) as a product of ratios: no overflow at any a
    return E3 - a / (a + 2.0) * corr + 2.0 * (a / (a + 1.0)) * (a / (a + 2.0)) * uuu


def _whiten_pairs(P, m, k):
    """Whitening W (r, k) and eigenvalues of C = (P + Pᵀ)/2m, P = F1ᵀF2 (step 2 of Algorithm 1)."""
    from ..core.whitening import whitening_matrix

    C = (P + P.T) / (2.0 * m)
    try:
        return whitening_matrix(C, k, return_eigenvalues=True)
    except ValueError as exc:
        raise ValueError(f"n_components={k} exceeds the rank of the second-order embedding C_X1X2 "
                         f"(Condition 3.1; {exc})") from None


def _spectral_tail(T, W, sigma, k, random_state, n_restarts, n_iterations, alpha0=None):
    """Tensor power method on the whitened T and un-whitening (steps 6–8 of Algorithm 1).

    With ``alpha0``: M2 = Σ c α_h μ_h μ_hᵀ, M3 = Σ c' α_h μ_h^⊗3 give whitened vectors
    v_h = √(c α_h) Wᵀμ_h and eigenvalues λ_h = c' α_h / (c α_h)^{3/2}, hence
    α_h = c'² / (c³ λ_h²) = 4α0(α0+1)/((α0+2)² λ_h²) and
    μ_h = (Wᵀ)⁺ v_h / √(c α_h) = (Wᵀ)⁺ v_h λ_h c/c' = (Wᵀ)⁺ v_h λ_h (α0+2)/2."""
    from ..core.power import tensor_power_method
    from ..core.whitening import dewhiten

    cp = tensor_power_method(T, k, n_restarts=n_restarts, n_iterations=n_iterations,
                             random_state=random_state)
    lam, V = np.asarray(cp.weights, float), np.asarray(cp.factors[0], float)
    if np.any(lam <= 0):
        raise RuntimeError(
            "the tensor power method found a non-positive eigenvalue: the whitened third-order "
            "embedding is not close to orthogonally decomposable (too few samples, a bandwidth "
            "far from the data scale, or n_components too large"
            + (", or alpha0 far from the concentration of the groups)" if alpha0 is not None else ")")
        )
    if alpha0 is not None:
        a = float(alpha0)
        return {"weights": 4.0 * (a / (a + 2.0)) * ((a + 1.0) / (a + 2.0)) / lam ** 2,
                "embeddings": dewhiten(W, V, lam) * ((a + 2.0) / 2.0), "eigenvalues": lam,
                "whitening": W, "sigma": sigma, "T": T}
    return {"weights": lam ** -2.0, "embeddings": dewhiten(W, V, lam), "eigenvalues": lam,
            "whitening": W, "sigma": sigma, "T": T}


def kernel_spectral_streamed(views, centres, L, kernel, n_components, *, chunk=50_000,
                             random_state=None, n_restarts=20, n_iterations=100, alpha0=None):
    r""":func:`kernel_spectral_decomposition` reading the samples in chunks, for large m.

    See :doc:`/chapters/07_kernel_embeddings` (the low-rank path at scale). ``views``: three
    arrays (m, d) of one conditional law; ``centres`` (r, d) and ``L`` (r, r) from
    :func:`kernel_basis`; ``kernel`` the kernel callable. The features
    :math:`F_v=K_{C,X_v}^\top L^{-\top}` are never formed. Two passes over the samples, ``chunk``
    rows at a time:

    1. :math:`Q=\sum_i K_{C,x_1^i}K_{C,x_2^i}^\top` (r×r), then
       :math:`F_1^\top F_2=L^{-1}QL^{-\top}` and the whitening W of
       :math:`C=\frac1{2m}(F_1^\top F_2+F_2^\top F_1)`;
    2. with :math:`V=L^{-\top}W` (r×k), :math:`\xi_v=K_{C,X_v}^\top V` (k numbers per sample)
       and the whitened triples :math:`\frac1{3m}\sum_i\otimes[\xi_1^i,\xi_2^i,\xi_3^i]`.

    With ``alpha0`` (Dirichlet prior, see :func:`kernel_dirichlet_moments`) pass 1 also sums
    the three cross products and the kernel columns (for :math:`m_1`), pass 2 all six orders
    of the triples.

    Same result as :func:`kernel_spectral_decomposition` on :func:`kernel_features` of the
    views, up to rounding (the test suite checks it). Cost O(m r (d + r) + m r k + m k³), memory
    O(chunk · r + r² + k³).
    """
    from ..core.tensors import symmetrize3
    from ..core.validation import check_views

    X1, X2, X3 = check_views(list(views), n_views=3, names=["X1", "X2", "X3"], allow_sparse=False)
    k = check_positive_int(n_components, "n_components")
    chunk = check_positive_int(chunk, "chunk")
    L = np.asarray(L, dtype=float)
    r, m = L.shape[0], X1.shape[0]
    if k > r:
        raise ValueError(f"n_components={k} exceeds the dimension {r} of the kernel features")
    a0 = check_alpha0(alpha0, allow_none=True)
    Q = np.zeros((r, r))
    total = np.zeros(r)
    for a in range(0, m, chunk):                               # pass 1
        K1 = np.asarray(kernel(centres, X1[a:a + chunk]), float)
        K2 = np.asarray(kernel(centres, X2[a:a + chunk]), float)
        Q += K1 @ K2.T
        if a0 is not None:
            K3 = np.asarray(kernel(centres, X3[a:a + chunk]), float)
            Q += K1 @ K3.T + K2 @ K3.T
            total += K1.sum(axis=1) + K2.sum(axis=1) + K3.sum(axis=1)
    P = sla.solve_triangular(L, sla.solve_triangular(L, Q, lower=True).T, lower=True).T
    if a0 is not None:
        W, sigma, pairs_w, u = _whiten_dirichlet(P, sla.solve_triangular(L, total, lower=True), m, k, a0)
    else:
        W, sigma = _whiten_pairs(P, m, k)
    V = sla.solve_triangular(L, W, lower=True, trans="T")
    T = np.zeros((k, k, k))
    for a in range(0, m, chunk):                               # pass 2
        xi = [np.asarray(kernel(centres, X[a:a + chunk]), float).T @ V for X in (X1, X2, X3)]
        if a0 is not None:
            T += _full_symmetric_triples(xi) * (xi[0].shape[0] / m)
        else:
            T += symmetrize3(*xi) * (xi[0].shape[0] / m)
    if a0 is not None:
        return _spectral_tail(_dirichlet_tensor(T, pairs_w, u, a0), W, sigma, k, random_state, n_restarts,
                              n_iterations, alpha0=a0)
    return _spectral_tail(T / 3.0, W, sigma, k, random_state, n_restarts, n_iterations)


__all__ += ["loo_kde_loglik", "cv_bandwidth", "cv_subsample_size"]

#: bandwidth grid of the cross-validation: Silverman's rule times these factors
CV_FACTORS = 2.0 ** np.arange(-3.0, 1.01, 0.5)
#: the bandwidth search runs on n_cv(m) = min(m, ⌈CV_BASE_POINTS·(m/CV_BASE_POINTS)^CV_GROWTH⌉)
#: rows of an m-row sample (:func:`cv_subsample_size`): all rows up to 1500, 2,410 at
#: m = 10⁴, 7,622 at m = 10⁶
CV_BASE_POINTS = 1500
CV_GROWTH = 0.25
#: rows per block of the leave-one-out likelihood
_LOO_BLOCK = 1024
#: densities below this floor count as this floor in logarithms


def loo_kde_loglik(X, bandwidths):
    r"""Leave-one-out log-likelihood of a Gaussian kernel density estimate, one per bandwidth.

    See :doc:`/chapters/07_kernel_embeddings` (bandwidth selection of :class:`mvlib.KernelSpectral`).

    :math:`\frac1n\sum_i\log\frac1{n-1}\sum_{j\ne i}\kappa_s(x_i,x_j)` with the normalised RBF
    kernel :func:`mvlib.rbf_kernel`. X (n, d); bandwidths (b,) → array (b,). Cost O(b n² d),
    memory O(1024 n) (rows in blocks).
    """
    X = _as_points(X, "X")
    n = X.shape[0]
    if n < 2:
        raise ValueError("X needs at least 2 rows for a leave-one-out likelihood")
    out = []
    for s in np.atleast_1d(np.asarray(bandwidths, float)):
        dens = np.empty(n)
        for a in range(0, n, _LOO_BLOCK):                 # rows in blocks: memory O(block · n)
            b = min(a + _LOO_BLOCK, n)
            K = rbf_kernel(X[a:b], X, bandwidth=float(s))
            K[np.arange(b - a), np.arange(a, b)] = 0.0     # leave each point out
            dens[a:b] = K.sum(axis=1) / (n - 1)
        out.append(float(np.mean(np.log(np.maximum(dens, TINY)))))
    return np.array(out)


def cv_subsample_size(m):
    r"""Rows used by :func:`cv_bandwidth` for an m-row sample: :math:`\min(m,\lceil 1500\,(m/1500)^{1/4}\rceil)`.

    Sublinear, so that the O(n_cv²) leave-one-out likelihood stays affordable at m = 10⁶
    (n_cv = 7,622), yet growing with m, unlike a fixed cap. Returns an int.
    """
    m = check_positive_int(m, "m")
    if m <= CV_BASE_POINTS:
        return m
    return min(m, int(np.ceil(CV_BASE_POINTS * (m / CV_BASE_POINTS) ** CV_GROWTH)))


def cv_bandwidth(X, random_state=None):
    r"""Bandwidth maximising the leave-one-out KDE likelihood on a log grid around Silverman's rule.

    See :doc:`/chapters/07_kernel_embeddings`. The grid is Silverman's bandwidth
    (:func:`mvlib.silverman_bandwidth`) times :math:`2^{-3},2^{-2.5},\dots,2^{1}`, refined by
    the vertex of the parabola through the best grid point and its two neighbours (in
    log s); the likelihood is :func:`loo_kde_loglik` on :math:`n_{cv}` = :func:`cv_subsample_size` (m) rows drawn
    without replacement (all rows when m ≤ 1500). A bandwidth chosen on :math:`n_{cv}` rows
    suits :math:`n_{cv}` points, not m: it is rescaled by the rate of the AMISE-optimal
    bandwidth of a kernel density estimate in d dimensions,
    :math:`s(m)=s(n_{cv})\,(n_{cv}/m)^{1/(4+d)}` (Silverman 1986, §3.3; it assumes a smooth
    density — at a pole the optimal bandwidth shrinks faster). Song et al. (2014, §8) choose
    the bandwidth by cross-validated likelihood of the fitted model; the KDE likelihood of
    the pooled view is a cheap stand-in (one kernel matrix per grid point, no refits).
    X (m, d). Returns a float > 0. Cost O(9 n_cv² d), memory O(n_cv²).
    """

    X = _as_points(X, "X")
    rng = check_random_state(random_state)
    m, d = X.shape
    n_cv = cv_subsample_size(m)
    if n_cv < m:
        X = X[np.sort(rng.choice(m, n_cv, replace=False))]
    grid = silverman_bandwidth(X) * CV_FACTORS
    ll = loo_kde_loglik(X, grid)
    i = int(np.argmax(ll))
    log_s = float(np.log(grid[i]))
    if 0 < i < grid.size - 1:       # vertex of the parabola through the best point and its neighbours
        a, b, c = ll[i - 1], ll[i], ll[i + 1]
        curvature = a - 2 * b + c
        if curvature < 0:
            step = float(np.log(grid[i + 1] / grid[i]))
            log_s += 0.5 * step * (a - c) / curvature
    return float(np.exp(log_s)) * (n_cv / m) ** (1.0 / (4 + d))
