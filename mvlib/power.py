r"""The robust tensor power method (Song et al. 2014, Appendix 10, Algorithm 2;
Anandkumar et al. 2014, Algorithm 1).

For a (nearly) orthogonally decomposable symmetric tensor
:math:`T=\sum_{h=1}^k\lambda_h v_h^{\otimes3}` with orthonormal :math:`v_h` and
:math:`\lambda_h>0`, the map :math:`\theta\mapsto T(I,\theta,\theta)/\|T(I,\theta,\theta)\|`
has the :math:`v_h` as attracting fixed points (quadratic convergence). The
robust method draws L starts uniformly on the sphere, runs N iterations from
each, keeps the start maximising :math:`T(\theta,\theta,\theta)`, refines it for N
more iterations, sets :math:`\lambda=T(v,v,v)` and deflates
:math:`T\leftarrow T-\lambda v^{\otimes 3}`. Theorem 3 of Song et al. (2014)
(Anandkumar et al. 2014, Thm. 5.1) bounds the error by
:math:`\|v_h-\hat v_h\|\le 8\epsilon/\lambda_h` and :math:`|\lambda_h-\hat\lambda_h|\le 5\epsilon`
when :math:`\|T-\hat T\|\le\epsilon` is small enough.

Here every deflation step runs all L restarts as one batched operation: the
L updates :math:`T(I,\theta_r,\theta_r)` are one matrix product of the mode-1
unfolding of T (k × k²) with the row-wise Kronecker products
:math:`\theta_r\otimes\theta_r` (L × k²). Cost per iteration O(L k³), memory
O(L k² + k³). Deflation is applied to the whole tensor (the ``ξ = 0``
variant of Algorithm 2's conditional deflation, which is what the analysis
of Anandkumar et al. 2014 uses).
"""
from __future__ import annotations

import numbers

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor

from ._validation import (
    check_array,
    check_cubic_tensor,
    check_positive_int,
    check_random_state,
    check_rank,
)

__all__ = ["tensor_power_method", "power_iteration", "symmetric_spectral_norm"]


def _check_tol(tol):
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
        raise TypeError(f"tol must be a real number, got {type(tol).__name__}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol={tol} must be a finite number >= 0")
    return float(tol)


def _apply(T1, Theta):
    r"""Rows :math:`T(I,\theta_r,\theta_r)` for the rows of Theta (R, k); T1 is T unfolded (k, k²)."""
    R, k = Theta.shape
    kr = (Theta[:, :, None] * Theta[:, None, :]).reshape(R, k * k)
    return kr @ T1.T


def _iterate(T1, Theta, n_iterations, tol):
    """Batched power iterations with a per-row convergence mask (rows stop independently)."""
    Theta = Theta.copy()
    active = np.arange(Theta.shape[0])
    n_done = np.zeros(Theta.shape[0], dtype=int)
    for _ in range(n_iterations):
        if active.size == 0:
            break
        Y = _apply(T1, Theta[active])
        norms = np.linalg.norm(Y, axis=1)
        ok = norms > np.finfo(float).tiny
        Y[ok] /= norms[ok, None]
        Y[~ok] = Theta[active][~ok]  # T(I,θ,θ)=0: nothing to follow, keep θ
        change = np.linalg.norm(Y - Theta[active], axis=1)
        Theta[active] = Y
        n_done[active] += 1
        active = active[change > tol]
    return Theta, n_done


def power_iteration(T, theta, *, n_iterations: int = 100, tol: float = 1e-10):
    r"""Run the power map :math:`\theta\leftarrow T(I,\theta,\theta)/\|\cdot\|` from given starts.

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
    theta = np.asarray(theta, dtype=float)
    single = theta.ndim == 1
    Theta = check_array(theta[None, :] if single else theta, "theta", ndim=2)
    if Theta.shape[1] != T.shape[0]:
        raise ValueError(f"theta has length {Theta.shape[1]} but T has dimension {T.shape[0]}")
    n_iterations = check_positive_int(n_iterations, "n_iterations", minimum=0)
    tol = _check_tol(tol)
    norms = np.linalg.norm(Theta, axis=1)
    if np.any(norms == 0):
        raise ValueError("theta has a zero row; starts must be non-zero vectors")
    out, _ = _iterate(tl.unfold(tl.tensor(T), 0), Theta / norms[:, None], n_iterations, tol)
    return out[0] if single else out


def _sphere(rng, n, k):
    X = rng.standard_normal((n, k))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def tensor_power_method(T, rank, *, n_restarts: int = 10, n_iterations: int = 100,
                        tol: float = 1e-10, random_state=None) -> CPTensor:
    r"""Robust tensor power method with deflation; all restarts of a step batched.

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

    Cost O(rank · (L + 1) · N · k³) time (early stopping usually cuts N to
    a handful), O(L k² + k³) memory.
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    rank = check_rank(rank, "rank", k, "the dimension k of T")
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_iterations = check_positive_int(n_iterations, "n_iterations")
    tol = _check_tol(tol)
    rng = check_random_state(random_state)

    weights = np.empty(rank)
    V = np.empty((k, rank))
    residual = T.copy()
    for i in range(rank):
        T1 = tl.unfold(residual, 0)  # mode-1 unfolding, k × k²
        Theta, _ = _iterate(T1, _sphere(rng, n_restarts, k), n_iterations, tol)
        values = np.einsum("ri,ri->r", _apply(T1, Theta), Theta)  # T(θ,θ,θ) per start
        best = Theta[np.argmax(values)][None, :]
        v = _iterate(T1, best, n_iterations, tol)[0][0]
        lam = float(v @ (T1 @ np.kron(v, v)))
        weights[i], V[:, i] = lam, v
        residual = residual - lam * np.einsum("i,j,l->ijl", v, v, v)
    return CPTensor((tl.tensor(weights), [tl.tensor(V), tl.tensor(V.copy()), tl.tensor(V.copy())]))


def symmetric_spectral_norm(T, *, n_restarts: int = 200, n_iterations: int = 200,
                            random_state=None) -> float:
    r"""Estimate :math:`\|T\|=\max_{\|u\|=1}|T(u,u,u)|` of a symmetric tensor.

    The maximum over many power-iteration runs (with both signs). It is a
    lower bound that equals the norm when a run reaches the global maximiser
    (for symmetric tensors the spectral norm is attained at u = v = w, Banach
    1938). Use it to evaluate the ε of perturbation bounds; the Frobenius norm
    is a guaranteed upper bound. Cost O(n_restarts · n_iterations · k³).
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    rng = check_random_state(random_state)
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_iterations = check_positive_int(n_iterations, "n_iterations")
    T1 = tl.unfold(T, 0)
    best = 0.0
    for sign in (1.0, -1.0):
        Theta, _ = _iterate(sign * T1, _sphere(rng, n_restarts, k), n_iterations, 1e-12)
        best = max(best, float(np.max(np.abs(np.einsum("ri,ri->r", _apply(T1, Theta), Theta)))))
    return best
