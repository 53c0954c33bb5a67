"""Cubature data sets: finite point sets whose moments up to order three are exact."""
from __future__ import annotations

import numpy as np

from .validation import check_array, check_positive_int, check_random_state

__all__ = ["gaussian_cubature"]



def _check_view_means(means):
    """The per-view mean matrices (d_v, k) as float arrays, and their common k."""
    if not isinstance(means, (list, tuple)) or len(means) < 1:
        raise TypeError("means must be a list of arrays (d_v, k), one per view")
    Ms = [check_array(M, name=f"means[{v}]", ndim=2) for v, M in enumerate(means)]
    k = Ms[0].shape[1]
    if any(M.shape[1] != k for M in Ms):
        raise ValueError(f"every view's mean matrix needs k = {k} columns, got {[M.shape for M in Ms]}")
    return Ms, k

def gaussian_cubature(means, counts, sigmas):
    r"""Rows whose empirical moments of order ≤ 3 equal those of a spherical Gaussian mixture.

    For component h the 2d points :math:`\mu_h \pm \sigma_h\sqrt{d}\, e_a` (a = 1..d) have
    mean :math:`\mu_h`, covariance :math:`\sigma_h^2 I` and vanishing odd central moments: a
    degree-3 cubature rule for :math:`N(\mu_h, \sigma_h^2 I)` (the sigma points of the
    unscented transform, Julier and Uhlmann 2004). Repeating the points of component h
    ``counts[h]`` times gives the mixture with weights ``counts / counts.sum()``, so
    ``mvlib.pairs``/``triples`` on these rows return the population moments up to rounding.

    Parameters: ``means`` (d, k); ``counts`` (k,) positive integers; ``sigmas`` (k,) ≥ 0.
    Returns an array (2·d·Σcounts, d). Cost O(d² Σcounts).
    Derived in chapter 5 (:doc:`/chapters/05_gaussian_mixtures`), used in chapters 1 and 5.
    """
    M = check_array(means, name="means", ndim=2)
    d, k = M.shape
    counts = np.asarray(counts)
    sigmas = np.asarray(sigmas, dtype=float)
    if counts.shape != (k,) or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 1):
        raise ValueError(f"counts must be {k} positive integers (one per column of means), got {counts!r}")
    if sigmas.shape != (k,) or not np.all(np.isfinite(sigmas)) or np.any(sigmas < 0):
        raise ValueError(f"sigmas must be {k} finite non-negative numbers, got {sigmas!r}")
    star = np.sqrt(d) * np.vstack([np.eye(d), -np.eye(d)])
    return np.vstack([np.tile(M[:, h] + sigmas[h] * star, (int(c), 1)) for h, c in enumerate(counts)])


def multiview_gaussian_cubature(means, counts, sigmas):
    r"""Views whose cross moments (degree ≤ 3 in each view) equal a multi-view Gaussian mixture's.

    In component h, view v is :math:`x_v=\mu_{v,h}+\sigma_{v,h}z_v` with independent
    :math:`z_v\sim N(0,I_{d_v})`. Per view, the :math:`2d_v` points
    :math:`\mu_{v,h}\pm\sigma_{v,h}\sqrt{d_v}\,e_a` are the degree-3 cubature rule of
    :func:`gaussian_cubature`; component h contributes the **Cartesian product** of the
    views' point sets, so the views are independent within a component, as in the model.
    Repeating component h ``counts[h]`` times gives weights ``counts / counts.sum()``.
    Every moment :math:`\E[\prod_v \prod_{a\in A_v} x_{v,a}]` with at most three factors
    from each view — in particular :math:`P_{ab}=\E[x_ax_b^\top]`, :math:`P_{123}`,
    :math:`P_{123}(\eta)` and the within-view :math:`\E[x_vx_v^\top]` — is then exactly the
    population moment of the mixture, so ``mvlib.pairs``/``triples``/``triples_slice`` on
    these rows return it up to rounding.

    Parameters
    ----------
    means : list of arrays (d_v, k)
        The view mean matrices :math:`M_v=[\mu_{v,1}|\cdots|\mu_{v,k}]`.
    counts : array (k,) of positive integers
        Repetitions of each component; the weights are :math:`w_h=c_h/\sum_{h'}c_{h'}`.
    sigmas : float, array (V,) or array (V, k)
        Noise standard deviations :math:`\sigma_{v,h}\ge0` (broadcast to (V, k)).

    Returns
    -------
    list of V arrays, view v of shape :math:`(\sum_h c_h\prod_{u}2d_u,\ d_v)`; row r of
    every view belongs to the same sample. Cost :math:`O(\sum_h c_h\prod_u 2d_u\cdot\sum_v d_v)`.

    Notes
    -----
    Used for the exact check of the Gaussian multi-view moments in chapter 1
    (:doc:`/chapters/01_multiview_moments`).
    """
    Ms, k = _check_view_means(means)
    counts = np.asarray(counts)
    if counts.shape != (k,) or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 1):
        raise ValueError(f"counts must be {k} positive integers (one per component), got {counts!r}")
    V = len(Ms)
    S = np.asarray(sigmas, dtype=float)
    if S.ndim == 1:
        S = S[:, None]               # one sigma per view
    try:
        S = np.broadcast_to(S, (V, k))
    except ValueError as exc:
        raise ValueError(f"sigmas must be a number, {V} numbers or a ({V}, {k}) array, got {sigmas!r}") from exc
    if not np.all(np.isfinite(S)) or np.any(S < 0):
        raise ValueError(f"sigmas must be finite and non-negative, got {sigmas!r}")
    stars = [np.sqrt(M.shape[0]) * np.vstack([np.eye(M.shape[0]), -np.eye(M.shape[0])]) for M in Ms]
    sizes = [2 * M.shape[0] for M in Ms]
    views = [[] for _ in range(V)]
    for h, c in enumerate(counts):
        # index grids of the Cartesian product of the V point sets (row-major)
        grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
        for v in range(V):
            pts = Ms[v][:, h] + S[v, h] * stars[v]          # (2 d_v, d_v)
            views[v].append(np.tile(pts[grids[v].ravel()], (int(c), 1)))
    return [np.vstack(parts) for parts in views]


def categorical_exact_data(weights, means, *, max_rows: int = 10**6):
    r"""One-hot views whose empirical distribution *is* a categorical multi-view mixture.

    The weights and the entries of the mean matrices must be exact rationals (``int``,
    :class:`fractions.Fraction`, sympy ``Rational``, or a decimal/fraction string such as
    ``"0.25"`` or ``"1/3"``; floats are read through their shortest decimal ``repr``).
    Every outcome :math:`(h, i_1, \dots, i_V)` has probability
    :math:`p=w_h\prod_v (M_v)_{i_v h}`; with N the least common denominator of all p, the
    outcome is written :math:`Np` times. Every moment of the rows — pairs, triples,
    within-view moments, of any order — therefore equals the model's population moment.

    Parameters
    ----------
    weights : sequence (k,) of rationals, non-negative, summing to 1.
    means : list of V matrices (d_v, k) of rationals, columns summing to 1.
    max_rows : refuse when N exceeds this (default 10**6).

    Returns
    -------
    ``(views, h)``: a list of V arrays (N, d_v) of one-hot rows, and the labels (N,).
    Cost :math:`O(k\prod_v d_v + N\sum_v d_v)`.

    Notes
    -----
    Used for the exact check of the categorical multi-view moments in chapter 1
    (:doc:`/chapters/01_multiview_moments`).
    """
    import itertools
    import math
    from fractions import Fraction

    def rational(x, what):
        try:
            return Fraction(str(x))
        except (ValueError, ZeroDivisionError) as exc:
            raise ValueError(f"{what} must be an exact rational, got {x!r}") from exc

    w = [rational(x, "weights") for x in np.ravel(np.asarray(weights, dtype=object))]
    k = len(w)
    if any(x < 0 for x in w) or sum(w) != 1:
        raise ValueError(f"weights must be non-negative and sum to exactly 1, got {w}")
    if not isinstance(means, (list, tuple)) or len(means) < 1:
        raise TypeError("means must be a list of matrices (d_v, k), one per view")
    Ms = []
    for v, M in enumerate(means):
        A = np.asarray(M, dtype=object)
        if A.ndim != 2 or A.shape[1] != k:
            raise ValueError(f"means[{v}] must have shape (d_v, {k}), got {A.shape}")
        F = [[rational(A[i, h], f"means[{v}]") for h in range(k)] for i in range(A.shape[0])]
        for h in range(k):
            col = [F[i][h] for i in range(A.shape[0])]
            if any(x < 0 for x in col) or sum(col) != 1:
                raise ValueError(f"column {h} of means[{v}] must be a probability vector, got {col}")
        Ms.append(F)
    dims = [len(F) for F in Ms]
    outcomes = []
    for h in range(k):
        for idx in itertools.product(*(range(d) for d in dims)):
            p = w[h]
            for F, i in zip(Ms, idx):
                p *= F[i][h]
            if p:
                outcomes.append((h, idx, p))
    N = math.lcm(*(p.denominator for _, _, p in outcomes))
    if N > max_rows:
        raise ValueError(f"the exact data set needs {N} rows (> max_rows = {max_rows}); "
                         "use parameters with smaller denominators")
    reps = np.array([int(p * N) for _, _, p in outcomes])
    labels = np.repeat([h for h, _, _ in outcomes], reps)
    views = []
    for v, d in enumerate(dims):
        X = np.zeros((N, d))
        X[np.arange(N), np.repeat([idx[v] for _, idx, _ in outcomes], reps)] = 1.0
        views.append(X)
    return views, labels


__all__ += ["multiview_gaussian_cubature", "categorical_exact_data"]


def product_cubature(means, covs, counts):
    r"""Views whose cross moments (degree ≤ 3 in each view) equal a multi-view Gaussian mixture's
    with full covariances.

    The general-covariance form of :func:`multiview_gaussian_cubature`. In component h, view v
    is :math:`x_v\sim N(\mu_{v,h},\Sigma_{v,h})`, the views independent given h. With
    :math:`\Sigma_{v,h}=L_{v,h}L_{v,h}^\top` (Cholesky), the :math:`2d_v` points

    .. math:: \mu_{v,h}\pm\sqrt{d_v}\,L_{v,h}e_a,\qquad a=1,\dots,d_v,

    have mean :math:`\mu_{v,h}`, covariance :math:`\Sigma_{v,h}` and vanishing third central
    moments (the degree-3 rule of :func:`gaussian_cubature`, mapped by :math:`L_{v,h}`);
    component h contributes the Cartesian product of the views' point sets, repeated
    ``counts[h]`` times, so the weights are ``counts / counts.sum()``. Every moment with at
    most three factors from each view — :math:`P_{ab}`, :math:`P_{123}(\eta)`, and the
    :math:`\E[x_1x_2^\top\langle\phi,x_3\rangle\langle\psi,x_3\rangle]` of the view-covariance
    estimator (:doc:`/chapters/04_three_view_mixtures`) — is then exactly the population
    moment.

    Parameters
    ----------
    means : list of V arrays (d_v, k)
        The view mean matrices :math:`M_v`.
    covs : list of V sequences of k arrays (d_v, d_v)
        ``covs[v][h]`` is :math:`\Sigma_{v,h}`, symmetric positive definite.
    counts : array (k,) of positive integers
        Repetitions of each component.

    Returns
    -------
    list of V arrays, view v of shape :math:`(\sum_h c_h\prod_u 2d_u,\ d_v)`; row r of every
    view belongs to the same sample. Cost :math:`O(\sum_h c_h\prod_u 2d_u\cdot\sum_v d_v)`.

    See Also
    --------
    multiview_gaussian_cubature : spherical noise :math:`\sigma_{v,h}^2 I`.
    random_cov : a random covariance for such a model.

    Examples
    --------
    One component, two one-dimensional views of variances 4 and 9: the rows reproduce the
    means, the variances and the (zero) cross covariance.

    >>> import numpy as np
    >>> from mvlib.core.cubature import product_cubature
    >>> X1, X2 = product_cubature([np.array([[1.0]]), np.array([[-2.0]])],
    ...                           [[np.array([[4.0]])], [np.array([[9.0]])]], [1])
    >>> X1.ravel(), X2.ravel()
    (array([ 3.,  3., -1., -1.]), array([ 1., -5.,  1., -5.]))
    >>> float(X1.var()), float(X2.var()), float(np.mean((X1 - 1) * (X2 + 2)))
    (4.0, 9.0, 0.0)
    """
    Ms, k = _check_view_means(means)
    if len(covs) != len(Ms) or any(len(covs[v]) != k for v in range(len(Ms))):
        raise ValueError(f"covs must hold {len(Ms)} lists of {k} covariance matrices")
    Ls = []
    for v, M in enumerate(Ms):
        d = M.shape[0]
        Sv = [check_array(S, name=f"covs[{v}][{h}]", ndim=2) for h, S in enumerate(covs[v])]
        if any(S.shape != (d, d) or not np.allclose(S, S.T) for S in Sv):
            raise ValueError(f"covs[{v}] must hold symmetric ({d}, {d}) matrices")
        try:
            Ls.append([np.linalg.cholesky(S) for S in Sv])
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"covs[{v}] must hold positive definite matrices") from exc
    counts = np.asarray(counts)
    if counts.shape != (k,) or not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 1):
        raise ValueError(f"counts must be {k} positive integers (one per component), got {counts!r}")
    V = len(Ms)
    rows = [[] for _ in range(V)]
    for h, c in enumerate(counts):
        pts = [Ms[v][:, h] + np.sqrt(Ms[v].shape[0]) * np.vstack([Ls[v][h].T, -Ls[v][h].T])
               for v in range(V)]
        idx = np.meshgrid(*[np.arange(len(p)) for p in pts], indexing="ij")
        for v in range(V):
            rows[v].append(np.tile(pts[v][idx[v].ravel()], (int(c), 1)))
    return [np.vstack(r) for r in rows]


def random_cov(d: int, random_state=None):
    r"""A random covariance :math:`AA^\top/d+0.2\,I` (d, d), A with standard normal entries.

    Well conditioned (every eigenvalue ≥ 0.2) and of order one, for the covariance examples
    of :doc:`/chapters/04_three_view_mixtures` and its script
    ``experiments/multiview_experiments.py``. Draws one ``standard_normal((d, d))``.

    Parameters
    ----------
    d : int ≥ 1
    random_state : None, int or numpy Generator

    Returns
    -------
    array (d, d), symmetric positive definite. Cost O(d³).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.core.cubature import random_cov
    >>> S = random_cov(3, np.random.default_rng(0))
    >>> S.shape, bool(np.allclose(S, S.T)), bool(np.linalg.eigvalsh(S).min() >= 0.2)
    ((3, 3), True, True)
    """
    d = check_positive_int(d, "d")
    A = check_random_state(random_state).standard_normal((d, d))
    return A @ A.T / d + 0.2 * np.eye(d)


__all__ += ["product_cubature", "random_cov"]
