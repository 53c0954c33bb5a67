r"""The robust tensor power method (Anandkumar et al. 2014, Algorithm 1; Song et al.
2014, Appendix 10, Algorithm 2, differs only in its thresholded deflation).

For a (nearly) orthogonally decomposable symmetric tensor
:math:`T=\sum_{h=1}^k\lambda_h v_h^{\otimes3}` with orthonormal :math:`v_h` and
:math:`\lambda_h>0`, the map :math:`\theta\mapsto T(I,\theta,\theta)/\|T(I,\theta,\theta)\|`
has the :math:`v_h` as attracting fixed points (quadratic convergence). The
robust method draws L starts uniformly on the sphere, runs N iterations from
each, keeps the start maximising :math:`T(\theta,\theta,\theta)`, refines it for N
more iterations, sets :math:`\lambda=T(v,v,v)` and deflates
:math:`T\leftarrow T-\lambda v^{\otimes 3}`. This is Algorithm 1 of Anandkumar et al.
(2014) with full deflation, and the result that covers it is their Theorem 5.1: for
symmetric :math:`\hat T=T+E` with :math:`\|E\|\le\varepsilon\le C_1\lambda_{\min}/k`,
:math:`N\ge C_2(\log k+\log\log(\lambda_{\max}/\varepsilon))` and
:math:`L=\mathrm{poly}(k)\log(1/\delta)` restarts, with probability at least 1 − δ,
:math:`\|v_h-\hat v_h\|\le 8\varepsilon/\lambda_h`, :math:`|\lambda_h-\hat\lambda_h|\le 5\varepsilon`
and :math:`\|T-\sum_h\hat\lambda_h\hat v_h^{\otimes3}\|\le 55\varepsilon` (up to a permutation).
Theorem 3 of Song et al. (2014) states the same bounds for Algorithm 2, whose
deflation is conditional on a threshold :math:`\xi\ge 25\varepsilon`; it does not cover
the full deflation used here (:math:`\xi=0`).

Here every deflation step runs all L restarts as one batched operation: the
L updates :math:`T(I,\theta_r,\theta_r)` are one matrix product of the packed
mode-1 unfolding of T (k × k(k+1)/2, using the symmetry of modes 2 and 3) with
the packed products :math:`(\theta_{r,j}\theta_{r,l})_{j\le l}` (L × k(k+1)/2).
Cost per iteration O(L k³/2), memory O(L k² + k³). Each run stops early once an
update moves it by less than ``tol``, so N is an upper bound on its iterations.
See :doc:`/chapters/02_whitening_power` for the statements, with their hypotheses, and
the measurements.
"""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor
from threadpoolctl import ThreadpoolController

from .validation import (
    check_cubic_tensor,
    check_positive_int,
    check_random_state,
    check_rank,
    check_tol,
    check_vector_or_matrix,
    scale_exponent,
    scaled,
    unscale,
)

__all__ = ["tensor_power_method", "power_iteration", "symmetric_spectral_norm"]

#: up to this k the power iterations run with one BLAS thread
_SINGLE_THREAD_MAX_K = 100




class PackedContraction:
    r"""T(I, θ, θ) for many θ at once, using the symmetry of modes 2 and 3.

    :math:`T(I,\theta,\theta)=\sum_{j\le l}c_{jl}\,S_{ijl}\theta_j\theta_l` with
    :math:`S=(T+T^{\top_{23}})/2` and :math:`c_{jl}=2-\delta_{jl}`: exact for any T
    (only the part of T symmetric in modes 2, 3 acts on θ⊗θ), and half the
    arithmetic of the mode-1 unfolding (k × k(k+1)/2 instead of k × k²).
    """

    def __init__(self, T):
        k = T.shape[0]
        self.k = k
        self.j, self.l = np.triu_indices(k)
        coef = np.where(self.j == self.l, 1.0, 2.0)
        S = 0.5 * (T + np.transpose(T, (0, 2, 1)))
        self.coef = coef
        self.P = np.ascontiguousarray(S[:, self.j, self.l] * coef)  # (k, k(k+1)/2)

    def apply(self, Theta):
        """Rows T(I, θ_r, θ_r) for the rows of Theta (R, k). Cost O(R k³ / 2)."""
        return (Theta[:, self.j] * Theta[:, self.l]) @ self.P.T

    def deflate(self, lam, v):
        """T ← T − λ v⊗v⊗v (in packed form; O(k³/2))."""
        self.P -= lam * np.outer(v, v[self.j] * v[self.l] * self.coef)


def _iterate(op, Theta, n_iterations, tol):
    """Batched power iterations with a per-row convergence mask (rows stop independently)."""
    Theta = Theta.copy()
    active = np.arange(Theta.shape[0])
    for _ in range(n_iterations):
        if active.size == 0:
            break
        current = Theta[active]
        Y = op.apply(current)
        norms = np.linalg.norm(Y, axis=1)
        ok = norms > np.finfo(float).tiny
        Y[ok] /= norms[ok, None]
        Y[~ok] = current[~ok]  # T(I,θ,θ)=0: nothing to follow, keep θ
        Theta[active] = Y
        if tol > 0:
            active = active[np.linalg.norm(Y - current, axis=1) > tol]
    return Theta


_CONTROLLER = None


def blas_limit(k):
    """One BLAS thread for small tensors: their products are too small to share,
    and a spinning second thread costs more than it gives (bench/bench_core.py).
    The controller (a scan of the loaded libraries, ~1 ms) is built once."""
    global _CONTROLLER
    if k > _SINGLE_THREAD_MAX_K:
        return nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def power_iteration(T, theta, *, n_iterations: int = 100, tol: float = 1e-10):
    r"""Run the power map :math:`\theta\leftarrow T(I,\theta,\theta)/\|\cdot\|` from given starts.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    Parameters
    ----------
    T : array (k, k, k)
    theta : array (k,) or (R, k)
        One start, or R starts iterated together (batched); each row stops
        on its own once an update moves it by less than ``tol``, so the
        batched result equals running the rows one at a time.

    Returns
    -------
    array of the shape of ``theta``: unit vectors after the iterations.
    Cost O(R k³) per iteration.
    """
    T = check_cubic_tensor(T)
    theta = check_vector_or_matrix(theta, "theta")
    single = theta.ndim == 1
    Theta = theta[None, :] if single else theta
    if Theta.shape[1] != T.shape[0]:
        raise ValueError(f"theta has length {Theta.shape[1]} but T has dimension {T.shape[0]}")
    n_iterations = check_positive_int(n_iterations, "n_iterations", minimum=0)
    tol = check_tol(tol)
    Theta = scaled(Theta, scale_exponent(Theta))   # unit starts: the scale of theta is irrelevant
    norms = np.linalg.norm(Theta, axis=1)
    if np.any(norms == 0):
        raise ValueError("theta has a zero row; starts must be non-zero vectors")
    T = scaled(T, scale_exponent(T))   # the power map is invariant to the scale of T
    with blas_limit(T.shape[0]):
        out = _iterate(PackedContraction(T), Theta / norms[:, None], n_iterations, tol)
    return out[0] if single else out


def random_sphere(rng, n, k):
    X = rng.standard_normal((n, k))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def tensor_power_method(T, rank, *, n_restarts: int = 10, n_iterations: int = 100,
                        tol: float = 1e-10, random_state=None) -> CPTensor:
    r"""Robust tensor power method with deflation; all restarts of a step batched.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    Parameters
    ----------
    T : array-like or tensorly tensor (k, k, k)
        Symmetric (or nearly so, e.g. an empirical whitened moment).
    rank : int
        Number of eigenpairs to extract, 1 ≤ rank ≤ k.
    n_restarts : int, default 10
        Starts drawn uniformly on the unit sphere per deflation step (L).
    n_iterations : int, default 100
        Power iterations per start, and again for the refinement (N).
    tol : float, default 1e-10
        A start stops once an update moves it by less than ``tol`` (2-norm).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    tensorly.cp_tensor.CPTensor
        ``(weights, [V, V, V])`` with eigenvalues λ (rank,) in extraction
        order and unit eigenvectors as the columns of V (k, rank), so that
        :math:`T\approx\sum_h\lambda_h v_h^{\otimes3}`.

    Notes
    -----
    Cost O(rank · (L + 1) · N · k³) time (early stopping usually cuts N to
    a handful), O(L k² + k³) memory.
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    rank = check_rank(rank, "rank", k, "the dimension k of T")
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_iterations = check_positive_int(n_iterations, "n_iterations")
    tol = check_tol(tol)
    rng = check_random_state(random_state)

    e = scale_exponent(T)   # T / 2**e has a moderate scale; the eigenvalues are scaled back
    weights = np.empty(rank)
    V = np.empty((k, rank))
    op = PackedContraction(scaled(T, e))
    with blas_limit(k):
        for i in range(rank):
            Theta = _iterate(op, random_sphere(rng, n_restarts, k), n_iterations, tol)
            values = np.einsum("ri,ri->r", op.apply(Theta), Theta)  # T(θ,θ,θ) per start
            v = _iterate(op, Theta[[np.argmax(values)]], n_iterations, tol)[0]
            lam = float(v @ op.apply(v[None, :])[0])
            weights[i], V[:, i] = lam, v
            op.deflate(lam, v)
    weights = unscale(weights, e, "T", "the eigenvalues")
    return CPTensor((tl.tensor(weights), [tl.tensor(V), tl.tensor(V.copy()), tl.tensor(V.copy())]))


def symmetric_spectral_norm(T, *, n_restarts: int = 200, n_iterations: int = 200,
                            random_state=None) -> float:
    r"""Estimate :math:`\|T\|=\max_{\|u\|=1}|T(u,u,u)|` of a symmetric tensor.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    The maximum over many runs of the plain (unshifted) power iteration, run on
    T and on −T (for a symmetric T, T(−u, −u, −u) = −T(u, u, u), so the second
    sign only adds restarts). It is a lower bound that equals the norm when a run
    reaches the global maximiser (for symmetric tensors the spectral norm is
    attained at u = v = w, Banach 1938); computing it exactly is NP-hard in
    general (Hillar and Lim 2013). On tensors that are not orthogonally
    decomposable the unshifted iteration need not converge; the shifted symmetric
    higher-order power method (SS-HOPM, Kolda and Mayo 2011) is the standard
    convergent variant. Use it to evaluate the ε of perturbation bounds; the
    Frobenius norm is a guaranteed upper bound. Cost O(n_restarts · n_iterations · k³).
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    rng = check_random_state(random_state)
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_iterations = check_positive_int(n_iterations, "n_iterations")
    e = scale_exponent(T)
    op = PackedContraction(scaled(T, e))
    best = 0.0
    with blas_limit(k):
        for sign in (1.0, -1.0):
            op.P *= sign  # maximise T(u,u,u), then -T(u,u,u)
            Theta = _iterate(op, random_sphere(rng, n_restarts, k), n_iterations, 1e-12)
            best = max(best, float(np.max(np.abs(np.einsum("ri,ri->r", op.apply(Theta), Theta)))))
    return float(unscale(best, e, "T", "the spectral norm"))
