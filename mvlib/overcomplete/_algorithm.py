r"""Overcomplete tensor decomposition by alternating asymmetric power updates.

Anandkumar, Ge & Janzamin (2015), "Provable learning of overcomplete latent
variable models". A third-order tensor

.. math:: T=\sum_{j=1}^k w_j\,a_j\otimes b_j\otimes c_j,\qquad T\in\mathbb R^{d\times d\times d},

with incoherent (e.g. random unit) components is decomposed even when k > d,
where whitening (and the orthogonal power method of :mod:`mvlib.core.power`) fails:

* **Algorithm 1** (eq. 1): from unit starts :math:`(a,b,c)` iterate, all three
  updates using the previous iterate,

  .. math:: a\leftarrow\frac{T(I,b,c)}{\|T(I,b,c)\|},\quad
            b\leftarrow\frac{T(a,I,c)}{\|T(a,I,c)\|},\quad
            c\leftarrow\frac{T(a,b,I)}{\|T(a,b,I)\|},

  and set :math:`\hat w=T(a,b,c)` (:func:`asymmetric_power_updates`). On a
  symmetric tensor started at a = b = c the three updates coincide and eq. (1)
  is the symmetric update :math:`u\leftarrow T(I,u,u)/\|T(I,u,u)\|` of
  Theorem 1 ("with symmetric updates"), a third of the cost.
* **Procedure 2**: among the L results, take the one with the largest
  :math:`|T(a,b,c)|`, run N more updates from it, call it a cluster centre and
  drop every remaining result within ε/2 of it (distance between unit vectors
  up to sign, in any mode); repeat k times (:func:`cluster_restarts`). No
  deflation: T is never modified.
* **Procedure 3**: unsupervised starts from the top singular pair
  :math:`(u_1, v_1)` of a random slice :math:`T(I,I,\theta)`,
  :math:`\theta\sim N(0,I_d)`, and :math:`c=T(u_1,v_1,I)/\|\cdot\|`
  (:func:`svd_initialization`). Theorem 2: enough of these starts land in the
  basin of every component when k ≤ Cd.
* **Semi-supervised starts** (Theorem 1): the normalised means of a few
  labelled samples per component (:func:`labelled_initialization`); then no
  clustering is needed, start j gives component j.
* **Lemma 1 / eq. (2)** (Hsu & Kakade): for a mixture of spherical Gaussians
  with known variance ζ²,

  .. math:: M_3=E[x^{\otimes3}]-\zeta^2\sum_{i=1}^d\big(E[x]\otimes e_i\otimes e_i
            +e_i\otimes E[x]\otimes e_i+e_i\otimes e_i\otimes E[x]\big)
            =\sum_j w_j a_j^{\otimes 3}.

  :class:`ThirdMomentOperator` applies the empirical :math:`M_3` to vectors
  straight from the data, never forming a d×d×d array.

Everything that touches T goes through three batched contractions: for R
restarts stacked as the rows of U, V (R, d), ``contract(mode, U, V)`` returns the
rows :math:`T(I,u_r,v_r)` (mode 0), :math:`T(u_r,I,v_r)` (mode 1) or
:math:`T(u_r,v_r,I)` (mode 2). For an explicit tensor this is the mode
unfolding times the row-wise Khatri–Rao product, O(R d³); for data it is
:math:`\frac1n X^\top\big((XU^\top)\circ(XV^\top)\big)` minus the closed-form
correction, O(R n d). The public functions take factor matrices with the
components as **columns** (d, R), as ``factors_`` of the estimator.

The estimator wrapping all of this is
:class:`mvlib.OvercompleteTensorDecomposition`
(derived in :doc:`/chapters/09_overcomplete`).
"""
from __future__ import annotations

import numbers

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor

from ..core.power import blas_limit
from ..core.validation import (
    check_array,
    check_cubic_tensor,
    check_matrix,
    check_positive_int,
    check_random_state,
    check_tol,
    scale_exponent,
    scaled,
    unscale,
)

__all__ = [
    "ThirdMomentOperator",
    "asymmetric_power_updates",
    "svd_initialization",
    "cluster_restarts",
    "labelled_initialization",
    "als_refine",
    "random_overcomplete_tensor",
    "random_unit_columns",
    "coherence",
]

#: entries of the largest temporary (rows × d² Khatri–Rao block, or rows × samples)
_BLOCK = 2 ** 22
_TINY = np.finfo(float).tiny


# ---------------------------------------------------------------------------- operators
class _DenseTensor:
    """Batched contractions of an explicit (d, d, d) tensor.

    ``exponent``: the tensor given by the caller is ``T * 2**exponent`` (see :func:`_as_operator`).
    """

    exponent = 0

    def __init__(self, T, *, symmetric: bool | None = None):
        T = np.asarray(T, dtype=float)
        d = T.shape[0]
        self.dim = d
        self.T = T
        # mode-m unfoldings with the two other modes flattened in their natural order
        self._unf = [T.reshape(d, d * d),
                     np.ascontiguousarray(T.transpose(1, 0, 2)).reshape(d, d * d),
                     np.ascontiguousarray(T.transpose(2, 0, 1)).reshape(d, d * d)]
        if symmetric is None:
            scale = max(np.linalg.norm(T), _TINY)
            symmetric = all(np.linalg.norm(T - T.transpose(p)) <= 1e-10 * scale
                            for p in ((1, 0, 2), (0, 2, 1)))
        self.symmetric = bool(symmetric)
        self._packed = None

    def contract(self, mode, U, V):
        R, d = U.shape
        out = np.empty((R, d))
        step = max(1, _BLOCK // (d * d))
        M = self._unf[mode]
        for s in range(0, R, step):
            kr = (U[s:s + step, :, None] * V[s:s + step, None, :]).reshape(-1, d * d)
            out[s:s + step] = kr @ M.T
        return out

    def contract_sym(self, U):
        """Rows T(I, u, u) using the symmetry of modes 2 and 3 (half the arithmetic)."""
        if self._packed is None:
            from ..core.power import PackedContraction
            self._packed = PackedContraction(self.T)
        P = self._packed
        R = U.shape[0]
        out = np.empty_like(U)
        step = max(1, _BLOCK // P.P.shape[1])
        for s in range(0, R, step):
            out[s:s + step] = P.apply(U[s:s + step])
        return out

    def slices(self, Theta):
        """The matrices T(I, I, θ_r), shape (R, d, d)."""
        d = self.dim
        return (self.T.reshape(d * d, d) @ Theta.T).T.reshape(-1, d, d)


class ThirdMomentOperator:
    r"""The (corrected) empirical third moment of data, applied without any d×d×d array.

    For samples :math:`x_1,\dots,x_n` (rows of X) with mean :math:`m` and a known
    spherical noise variance :math:`\zeta^2` (``noise_variance``, 0 for the plain
    third moment), the operator represents the symmetric tensor

    .. math:: \hat M_3=\frac1n\sum_{s=1}^n x_s^{\otimes 3}
              -\zeta^2\sum_{i=1}^d\big(m\otimes e_i\otimes e_i+e_i\otimes m\otimes e_i
              +e_i\otimes e_i\otimes m\big),

    the empirical version of Anandkumar, Ge & Janzamin 2015, Lemma 1 / eq. (2) (Hsu & Kakade 2013),
    whose population value is :math:`\sum_j w_j a_j^{\otimes 3}` for a mixture of
    spherical Gaussians :math:`N(a_j, \zeta^2 I)`. Its contractions are computed
    from the data in closed form:

    .. math:: \hat M_3(I,b,c)=\tfrac1n X^\top\big((Xb)\circ(Xc)\big)
              -\zeta^2\big(m\langle b,c\rangle+\langle m,b\rangle c+\langle m,c\rangle b\big),

    O(n d) per vector pair (batched over many pairs as matrix products, samples
    streamed in blocks) and O(n d) memory for X itself. Used by
    :meth:`mvlib.OvercompleteTensorDecomposition.fit_moments`; the power method it
    feeds is derived in :doc:`/chapters/02_whitening_power`
    (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    X : array (n, d), n ≥ 1
    noise_variance : float ≥ 0
        The known ζ² of Lemma 1 (0: no correction).

    Attributes
    ----------
    dim : int d;  n_samples : int n;  mean : (d,);  noise_variance : float;
    shape : (d, d, d);  symmetric : True
    """

    symmetric = True

    def __init__(self, X, noise_variance=0.0):
        X = check_array(X, "X", ndim=2, min_rows=1)  # kept by reference, never modified
        self.noise_variance = _check_variance(noise_variance)
        self.X = X
        self.n_samples, self.dim = X.shape
        # data of extreme scale are used as X / 2**e (exact); results are scaled back by 2**(3e)
        self._e = e = scale_exponent(X)
        self._Xs = scaled(X, e)
        self._ms = self._Xs.mean(axis=0)
        self._zs = float(np.ldexp(self.noise_variance, -2 * e))
        self.mean = unscale(self._ms, e, "X", "the mean")
        self.shape = (self.dim,) * 3

    def __repr__(self):
        return (f"ThirdMomentOperator(n_samples={self.n_samples}, dim={self.dim}, "
                f"noise_variance={self.noise_variance:g})")

    def _raw(self, U, V):
        n, d = self.X.shape
        R = U.shape[0]
        out = np.zeros((R, d))
        step = max(1, _BLOCK // max(R, 1))
        same = U is V
        for s in range(0, n, step):
            x = self._Xs[s:s + step]
            P = x @ U.T
            out += ((P * P) if same else (P * (x @ V.T))).T @ x
        return out / n

    def contract(self, mode, U, V):
        r"""Rows :math:`\hat M_3(I,u_r,v_r)` for the rows of U, V (R, d) (every mode alike:
        the tensor is symmetric). Accepts 1-d vectors too. Cost O(R n d)."""
        if mode not in (0, 1, 2):
            raise ValueError(f"mode must be 0, 1 or 2, got {mode!r}")
        same = U is V
        U, V, single = _rows(U, V, self.dim)
        out = self._raw(U, U if same else V)
        z = self._zs
        if z:
            m = self._ms
            out -= z * (np.einsum("rd,rd->r", U, V)[:, None] * m[None, :]
                        + (U @ m)[:, None] * V + (V @ m)[:, None] * U)
        out = unscale(out, 3 * self._e, "X", "the third moment")
        return out[0] if single else out

    def contract_sym(self, U):
        return self.contract(0, U, U)

    def value(self, a, b, c):
        r"""The scalars :math:`\hat M_3(a_r,b_r,c_r)` for rows (R, d), or one scalar for vectors."""
        a = np.asarray(a, dtype=float)
        c = np.atleast_2d(np.asarray(c, float))
        out = np.einsum("rd,rd->r", np.atleast_2d(self.contract(2, a, b)), c)
        return float(out[0]) if a.ndim == 1 else out

    def slice(self, theta):
        r"""The d×d matrix :math:`\hat M_3(I,I,\theta)=\frac1n X^\top\operatorname{diag}(X\theta)X
        -\zeta^2(m\theta^\top+\theta m^\top+\langle m,\theta\rangle I)`. Cost O(n d²)."""
        theta = check_array(theta, "theta", ndim=1)
        if theta.shape[0] != self.dim:
            raise ValueError(f"theta has length {theta.shape[0]} but the data have {self.dim} columns")
        X = self._Xs
        et = scale_exponent(theta)
        theta = scaled(theta, et)
        S = (X * (X @ theta)[:, None]).T @ X / self.n_samples
        z = self._zs
        if z:
            m = self._ms
            S -= z * (np.outer(m, theta) + np.outer(theta, m) + (m @ theta) * np.eye(self.dim))
        return unscale(S, 3 * self._e + et, "X", "the third-moment slice")

    def to_dense(self):
        """The d×d×d array (small d only: O(n d³) time, O(d³) memory), for checks and for
        ``fit_moments(..., materialize=True)``; samples are streamed in blocks."""
        from ..core.moments import triple_product
        d = self.dim
        X = self._Xs
        T = triple_product(X, X, X, chunk=max(1, _BLOCK // (d * d))) / self.n_samples
        z = self._zs
        if z:
            I = np.eye(d)
            m = self._ms
            T -= z * (np.einsum("p,qr->pqr", m, I) + np.einsum("q,pr->pqr", m, I)
                      + np.einsum("r,pq->pqr", m, I))
        return unscale(T, 3 * self._e, "X", "the third moment")


def _check_variance(z):
    if isinstance(z, bool) or not isinstance(z, numbers.Real):
        raise TypeError(f"noise_variance must be a real number, got {type(z).__name__}")
    if not np.isfinite(z) or z < 0:
        raise ValueError(f"noise_variance={z} must be a finite number >= 0")
    return float(z)


def _rows(U, V, d):
    U = np.asarray(U, dtype=float)
    V = np.asarray(V, dtype=float)
    single = U.ndim == 1
    U, V = np.atleast_2d(U), np.atleast_2d(V)
    if U.shape != V.shape or U.shape[1] != d:
        raise ValueError(f"the vectors must have length {d}, got shapes {U.shape} and {V.shape}")
    return U, V, single


def _as_operator(T, name="T"):
    """An explicit cubic tensor or a :class:`ThirdMomentOperator` -> an operator."""
    if isinstance(T, (ThirdMomentOperator, _DenseTensor)):
        return T
    if isinstance(T, CPTensor):
        T = tl.cp_to_tensor(T)
    if tl.is_tensor(T) and not isinstance(T, np.ndarray):
        T = tl.to_numpy(T)
    T = check_cubic_tensor(T, name)
    e = scale_exponent(T)   # extreme scale: work on T / 2**e (exact); weights are scaled back
    op = _DenseTensor(scaled(T, e))
    op.exponent = e
    return op


def _exponent(T, op):
    """The power of two by which :func:`_as_operator` divided an explicit tensor ``T`` (0 when
    ``T`` was an operator already: its weights are in its own units)."""
    return op.exponent if isinstance(op, _DenseTensor) and op is not T else 0


def _value(op, A, B, C):
    """Row-wise T(a_r, b_r, c_r), (R,)."""
    return np.einsum("rd,rd->r", op.contract(2, A, B), C)


def _normalise_rows(Y, fallback):
    norms = np.linalg.norm(Y, axis=1)
    ok = norms > _TINY
    Y = Y.copy()
    Y[ok] /= norms[ok, None]
    Y[~ok] = fallback[~ok]  # T(I, b, c) = 0: nothing to follow, keep the old vector
    return Y


def _sign_free_change(Y, X):
    """‖y − sign(⟨y,x⟩) x‖ per row."""
    dots = np.abs(np.einsum("rd,rd->r", Y, X))
    return np.sqrt(np.maximum(2.0 - 2.0 * dots, 0.0))


def _iterate(op, A, B, C, n_iterations, tol, symmetric):
    """Eq. (1) on the rows of A, B, C (R, d); each row stops on its own once no mode
    moves by more than ``tol`` (up to sign). Returns new (A, B, C)."""
    A = A.copy()
    if symmetric:
        active = np.arange(A.shape[0])
        for _ in range(n_iterations):
            if active.size == 0:
                break
            cur = A[active]
            Y = _normalise_rows(op.contract_sym(cur), cur)
            A[active] = Y
            if tol > 0:
                active = active[_sign_free_change(Y, cur) > tol]
        return A, A, A
    B, C = B.copy(), C.copy()
    active = np.arange(A.shape[0])
    for _ in range(n_iterations):
        if active.size == 0:
            break
        a, b, c = A[active], B[active], C[active]
        na = _normalise_rows(op.contract(0, b, c), a)
        nb = _normalise_rows(op.contract(1, a, c), b)
        nc = _normalise_rows(op.contract(2, a, b), c)
        A[active], B[active], C[active] = na, nb, nc
        if tol > 0:
            move = np.maximum(np.maximum(_sign_free_change(na, a), _sign_free_change(nb, b)),
                              _sign_free_change(nc, c))
            active = active[move > tol]
    return A, B, C


# ---------------------------------------------------------------------------- checks
def _check_starts(A, name, d, n_cols=None):
    """Starts (d, R) with non-zero columns -> unit rows (R, d)."""
    A = check_matrix(A, name)
    if A.shape[0] != d:
        raise ValueError(f"{name} has {A.shape[0]} rows but {d} are required (the dimension of T)")
    if n_cols is not None and A.shape[1] != n_cols:
        raise ValueError(f"{name} has {A.shape[1]} columns but {n_cols} are required")
    norms = np.linalg.norm(A, axis=0)
    if np.any(norms == 0):
        raise ValueError(f"{name} has a zero column (column {int(np.flatnonzero(norms == 0)[0])}); "
                         "starts must be non-zero vectors")
    return (A / norms).T.copy()


def _resolve_symmetric(op, symmetric, given_bc):
    if symmetric is None or symmetric == "auto":
        return op.symmetric and not given_bc
    if not isinstance(symmetric, (bool, np.bool_)):
        raise TypeError(f"symmetric must be True, False or 'auto', got {symmetric!r}")
    if symmetric and not op.symmetric:
        raise ValueError("symmetric=True needs a symmetric tensor T (T equals its transposes); "
                         "use symmetric=False for the asymmetric updates of eq. (1)")
    return bool(symmetric)


# ---------------------------------------------------------------------------- Algorithm 1
def asymmetric_power_updates(T, A, B=None, C=None, *, n_iterations: int = 100, tol: float = 1e-10,
                             symmetric="auto"):
    r"""Algorithm 1 of Anandkumar, Ge & Janzamin (2015): the alternating asymmetric power updates (eq. 1) from given starts.

    .. math:: a\leftarrow\frac{T(I,b,c)}{\|T(I,b,c)\|},\quad
              b\leftarrow\frac{T(a,I,c)}{\|T(a,I,c)\|},\quad
              c\leftarrow\frac{T(a,b,I)}{\|T(a,b,I)\|},\qquad \hat w=T(a,b,c),

    all three from the previous iterate, for R starts at once (batched matrix
    products). See :doc:`/chapters/02_whitening_power` for the orthogonal power
    method it generalises (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    T : array (d, d, d) or :class:`ThirdMomentOperator`
    A : array (d, R)
        Starts :math:`a^{(0)}` as columns (normalised here).
    B, C : arrays (d, R), optional
        Starts :math:`b^{(0)}, c^{(0)}`; default ``A`` (a = b = c).
    n_iterations : int ≥ 0
        N, the number of updates per start.
    tol : float
        A start stops once no mode moves by more than ``tol`` (2-norm, up to sign).
    symmetric : "auto", True or False
        With a symmetric T and a = b = c the three updates coincide; ``"auto"``
        then runs the single update :math:`u\leftarrow T(I,u,u)/\|\cdot\|` (a third
        of the cost; the "symmetric updates" of Theorem 1). ``False`` forces eq. (1).

    Returns
    -------
    weights : (R,)  :math:`T(a_r,b_r,c_r)`
    A, B, C : (d, R) unit columns (the same array three times in symmetric mode)

    Notes
    -----
    Cost O(N R d³) for an explicit tensor (one third of it in symmetric mode),
    O(N R n d) for a :class:`ThirdMomentOperator`; memory O(R d + 2²² ).
    """
    op = _as_operator(T)
    d = op.dim
    n_iterations = check_positive_int(n_iterations, "n_iterations", minimum=0)
    tol = check_tol(tol)
    Ar = _check_starts(A, "A", d)
    R = Ar.shape[0]
    given_bc = B is not None or C is not None
    Br = _check_starts(B, "B", d, R) if B is not None else Ar.copy()
    Cr = _check_starts(C, "C", d, R) if C is not None else Ar.copy()
    sym = _resolve_symmetric(op, symmetric, given_bc)
    A2, B2, C2 = _iterate(op, Ar, Br, Cr, n_iterations, tol, sym)
    w = unscale(_value(op, A2, B2, C2), _exponent(T, op), "T", "the weights")
    return w, A2.T.copy(), B2.T.copy(), C2.T.copy()


# ---------------------------------------------------------------------------- Procedure 3
def _top_pairs_dense(op, Theta, symmetric):
    """Exact top singular pairs of the slices T(I, I, θ_r) by batched SVD / eigh."""
    R, d = Theta.shape
    U = np.empty((R, d))
    V = np.empty((R, d))
    step = max(1, _BLOCK // (d * d))
    for s in range(0, R, step):
        S = op.slices(Theta[s:s + step])
        if symmetric:  # symmetric slices: top |eigenvalue|, v = sign(λ) u
            with blas_limit(d):  # many small LAPACK calls: a second thread only contends
                evals, evecs = np.linalg.eigh(S)
            idx = np.argmax(np.abs(evals), axis=1)
            rows = np.arange(len(idx))
            U[s:s + step] = evecs[rows, :, idx]
            V[s:s + step] = evecs[rows, :, idx] * np.sign(evals[rows, idx])[:, None]
        else:
            with blas_limit(d):
                u, _, vt = np.linalg.svd(S)
            U[s:s + step] = u[:, :, 0]
            V[s:s + step] = vt[:, 0, :]
    return U, V


def _orth_rows(Y, R, p, d):
    """Orthonormalise each block of p rows (R*p, d) -> (R, p, d)."""
    q, _ = np.linalg.qr(Y.reshape(R, p, d).transpose(0, 2, 1))
    return q.transpose(0, 2, 1)


def _top_pairs_operator(op, Theta, n_iterations, rng, block=2):
    r"""Top singular pairs of :math:`T(I,I,\theta_r)` by block subspace iteration, using only
    the products :math:`T(I,I,\theta)v=T(I,v,\theta)` and :math:`T(I,I,\theta)^\top u=T(u,I,\theta)`.
    Cost O(n_iterations · R · block · (cost of one contraction))."""
    R, d = Theta.shape
    p = min(block, d)
    Th = np.repeat(Theta, p, axis=0)
    V = _orth_rows(rng.standard_normal((R * p, d)), R, p, d)
    for _ in range(n_iterations):
        U = _orth_rows(op.contract(0, V.reshape(R * p, d), Th), R, p, d)
        V = _orth_rows(op.contract(1, U.reshape(R * p, d), Th), R, p, d)
    Z = op.contract(0, V.reshape(R * p, d), Th).reshape(R, p, d)   # S V
    H = np.einsum("rpd,rqd->rpq", U, Z)                              # Uᵀ S V (p × p)
    x, _, yt = np.linalg.svd(H)
    u = np.einsum("rp,rpd->rd", x[:, :, 0], U)
    v = np.einsum("rq,rqd->rd", yt[:, 0, :], V)
    return u, v


def svd_initialization(T, n_restarts: int, *, random_state=None, n_svd_iterations: int = 15):
    r"""Procedure 3 of Anandkumar, Ge & Janzamin (2015): starts from the top singular pairs of random slices.

    For each restart draw :math:`\theta\sim N(0,I_d)`, take the top left/right
    singular vectors :math:`u_1, v_1` of :math:`T(I,I,\theta)` (d × d) and set
    :math:`a^{(0)}=u_1`, :math:`b^{(0)}=v_1`, :math:`c^{(0)}=T(u_1,v_1,I)/\|\cdot\|`
    (update formula (1)). See :doc:`/chapters/02_whitening_power` for the power
    method these starts feed (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    T : array (d, d, d) or :class:`ThirdMomentOperator`
    n_restarts : int
        L, the number of starts.
    random_state : None, int or numpy.random.Generator
    n_svd_iterations : int
        For a :class:`ThirdMomentOperator` the pairs come from block subspace
        iteration (block 2) with this many steps, using only operator products;
        for an explicit tensor they are exact (batched SVD, or ``eigh`` of the
        symmetric slices of a symmetric tensor).

    Returns
    -------
    A, B, C : arrays (d, L), unit columns

    Notes
    -----
    Cost O(L d³) for an explicit tensor; O(n_svd_iterations · L · n d) for data.
    """
    op = _as_operator(T)
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_svd_iterations = check_positive_int(n_svd_iterations, "n_svd_iterations")
    rng = check_random_state(random_state)
    A, B = _procedure3(op, n_restarts, rng, n_svd_iterations)
    C = _normalise_rows(op.contract(2, A, B), A)
    return A.T.copy(), B.T.copy(), C.T.copy()


def _procedure3(op, L, rng, n_svd_iterations=15):
    Theta = rng.standard_normal((L, op.dim))
    if hasattr(op, "slices"):
        return _top_pairs_dense(op, Theta, op.symmetric)
    return _top_pairs_operator(op, Theta, n_svd_iterations, rng)


# ---------------------------------------------------------------------------- Procedure 2
def _sign_free_distance(X, x):
    """Distances ‖x_τ − ±x‖ (the smaller sign) of rows X (R, d) to a unit vector x."""
    return np.sqrt(np.maximum(2.0 - 2.0 * np.abs(X @ x), 0.0))


class _Clusterer:
    """Procedure 2, resumable: centres found so far, fed with batches of results."""

    def __init__(self, op, k, epsilon, n_iterations, tol, symmetric):
        self.op, self.k, self.eps = op, k, epsilon
        self.n_iterations, self.tol, self.sym = n_iterations, tol, symmetric
        self.centres = []  # (w, a, b, c)

    def _close(self, A, B, C, a, b, c):
        dist = _sign_free_distance(A, a)
        if not self.sym:
            dist = np.minimum(dist, np.minimum(_sign_free_distance(B, b), _sign_free_distance(C, c)))
        return dist < self.eps / 2

    def _is_new(self, a, b, c):
        for (_, a2, b2, c2) in self.centres:
            if self._close(a[None], b[None], c[None], a2, b2, c2)[0]:
                return False
        return True

    def feed(self, w, A, B, C, op=None):
        """Rows A, B, C (R, d) and values w (R,); adds centres until k or the pool is empty.
        ``op`` (default: T) is the tensor the refinement updates run on."""
        op = self.op if op is None else op
        keep = np.ones(len(w), bool)
        for (_, a, b, c) in self.centres:  # results of later batches near old centres go first
            keep &= ~self._close(A, B, C, a, b, c)
        score = np.abs(w)
        while len(self.centres) < self.k and keep.any():
            i = int(np.flatnonzero(keep)[np.argmax(score[keep])])
            a, b, c = _iterate(op, A[[i]], B[[i]], C[[i]], self.n_iterations, self.tol, self.sym)
            wi = float(_value(op, a, b, c)[0])
            a, b, c = a[0], b[0], c[0]
            keep[i] = False
            keep &= ~self._close(A, B, C, a, b, c)
            if not self._is_new(a, b, c):
                continue  # the N more updates led to a centre already found: same cluster
            self.centres.append((wi, a, b, c))
        return self

    def result(self):
        w = np.array([t[0] for t in self.centres])
        A, B, C = (np.array([t[m] for t in self.centres]).reshape(-1, self.op.dim) for m in (1, 2, 3))
        return w, A, B, C


def _check_epsilon(epsilon):
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon={epsilon} must be a finite number > 0")
    return float(epsilon)


def cluster_restarts(T, weights, A, B, C, n_components: int, *, epsilon: float = 1.4,
                     n_iterations: int = 10, tol: float = 1e-10, symmetric="auto"):
    r"""Procedure 2 of Anandkumar, Ge & Janzamin (2015): pick k cluster centres among the results of Algorithm 1.

    Repeat k times: among the remaining tuples :math:`(\hat w_\tau,\hat a_\tau,\hat b_\tau,\hat c_\tau)`
    take the one with the largest :math:`|\hat w_\tau|=|T(\hat a_\tau,\hat b_\tau,\hat c_\tau)|`,
    run N more updates of eq. (1) from it — that is centre i — and drop every
    remaining tuple within ε/2 of it, the distance being
    :math:`\min_{s=\pm1}\|\hat a_\tau-s\hat a\|` and likewise for b and c (dropped
    when close in any mode). No deflation. See :doc:`/chapters/02_whitening_power`
    for the power method (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    T : array (d, d, d) or :class:`ThirdMomentOperator`
    weights : (L,)  the values :math:`T(a_\tau,b_\tau,c_\tau)`
    A, B, C : (d, L)  unit columns (pass the same matrix three times for symmetric results)
    n_components : int  k
    epsilon : float  ε; tuples closer than ε/2 to a centre belong to its cluster
    n_iterations, tol : the N refinement updates, as in :func:`asymmetric_power_updates`
    symmetric : "auto", True or False  (``"auto"``: symmetric T and A = B = C)

    Returns
    -------
    weights (m,), A, B, C (d, m): the centres in the order found, m ≤ k (fewer
    when the pool runs out — draw more restarts then).

    Notes
    -----
    Cost O(k N d³) (explicit T; N is cut short by ``tol`` for converged tuples) +
    O(k L d) for the distances; a loop over the k centres, as the procedure is sequential.
    """
    op = _as_operator(T)
    d = op.dim
    k = check_positive_int(n_components, "n_components")
    epsilon = _check_epsilon(epsilon)
    n_iterations = check_positive_int(n_iterations, "n_iterations", minimum=0)
    tol = check_tol(tol)
    Ar = _check_starts(A, "A", d)
    L = Ar.shape[0]
    Br = _check_starts(B, "B", d, L)
    Cr = _check_starts(C, "C", d, L)
    w = check_array(weights, "weights", ndim=1)
    if w.shape[0] != L:
        raise ValueError(f"weights has {w.shape[0]} entries but A has {L} columns")
    same = np.array_equal(Ar, Br) and np.array_equal(Ar, Cr)
    sym = _resolve_symmetric(op, symmetric, not same)
    e = _exponent(T, op)
    wc, Ac, Bc, Cc = _Clusterer(op, k, epsilon, n_iterations, tol, sym).feed(scaled(w, e), Ar, Br, Cr).result()
    wc = unscale(wc, e, "T", "the weights")
    return wc, Ac.T.copy(), Bc.T.copy(), Cc.T.copy()


# ---------------------------------------------------------------------------- labels
def labelled_initialization(X, labels, n_components: int):
    r"""Semi-supervised starts (Anandkumar, Ge & Janzamin 2015, §3, Theorem 1): normalised means of labelled samples.

    For each component j the start is :math:`\hat a_j/\|\hat a_j\|` with
    :math:`\hat a_j=\frac1{m_j}\sum_{l\le m_j}x_j^{(l)}`, the mean of the
    :math:`m_j` labelled samples of component j (a few suffice: Theorem 1 needs
    :math:`m_j=\tilde\Omega(1)`). Pass the result as ``init_vectors`` to
    :class:`mvlib.OvercompleteTensorDecomposition` with ``init="labels"``. See
    :doc:`/chapters/02_whitening_power` for the power method these starts feed
    (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    X : array (m, d)  labelled samples
    labels : int array (m,) with values in 0 … n_components − 1, each present
    n_components : int  k

    Returns
    -------
    array (d, k), unit columns, column j for label j. Cost O(m d).
    """
    X = check_array(X, "X", ndim=2)
    k = check_positive_int(n_components, "n_components")
    y = check_array(labels, "labels", ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but labels has {y.shape[0]}")
    if np.any(y != np.round(y)) or np.any(y < 0) or np.any(y >= k):
        raise ValueError(f"labels must be integers in 0 … {k - 1} (n_components={k})")
    y = y.astype(int)
    counts = np.bincount(y, minlength=k)
    if np.any(counts == 0):
        raise ValueError(f"label {int(np.flatnonzero(counts == 0)[0])} has no labelled sample in labels; "
                         f"each of the n_components={k} components needs at least one")
    X = scaled(X, scale_exponent(X))   # unit columns: the scale of X is irrelevant
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, y, X)
    means = sums / counts[:, None]
    norms = np.linalg.norm(means, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"the mean of the rows of X labelled {int(np.flatnonzero(norms == 0)[0])} is zero")
    return (means / norms[:, None]).T.copy()


# ---------------------------------------------------------------------------- ALS
def _als_operator(op, w, A, B, C, n_iterations, tol, ridge=1e-12):
    r"""CP-ALS with operator products: :math:`A\leftarrow T_{(1)}(C\odot B)\,[(C^\top C)*(B^\top B)]^{-1}`,
    the columns of :math:`T_{(1)}(C\odot B)` being :math:`T(I,b_j,c_j)` (one batched contraction)."""
    A = A * w[None, :]
    B, C = B.copy(), C.copy()
    k = A.shape[1]

    def solve(M, G):
        G = G + ridge * np.trace(G) / k * np.eye(k)
        try:
            return np.linalg.solve(G, M.T).T  # M G^{-1} (G symmetric)
        except np.linalg.LinAlgError:
            return M @ np.linalg.pinv(G, hermitian=True)

    for _ in range(n_iterations):
        old = (A.copy(), B.copy(), C.copy())
        A = solve(op.contract(0, B.T, C.T).T, (B.T @ B) * (C.T @ C))
        B = solve(op.contract(1, A.T, C.T).T, (A.T @ A) * (C.T @ C))
        C = solve(op.contract(2, A.T, B.T).T, (A.T @ A) * (B.T @ B))
        change = max(np.linalg.norm(X - Y) / max(np.linalg.norm(X), _TINY)
                     for X, Y in zip((A, B, C), old))
        if change <= tol:
            break
    na, nb, nc = (np.linalg.norm(M, axis=0) for M in (A, B, C))
    safe = lambda v: np.where(v > _TINY, v, 1.0)  # noqa: E731
    return na * nb * nc, A / safe(na), B / safe(nb), C / safe(nc)


def als_refine(T, weights, factors, *, n_iterations: int = 100, tol: float = 1e-10):
    r"""CP-ALS refinement of a decomposition :math:`T\approx\sum_j w_j a_j\otimes b_j\otimes c_j`.

    The power updates stop at fixed points that carry an O(√k/d) bias from the
    other components (Anandkumar, Ge & Janzamin 2015, eq. 3); alternating least squares started there
    removes it on an exact tensor. An explicit tensor goes to tensorly's
    ``parafac(T, rank, init=CPTensor((weights, factors)))``; a
    :class:`ThirdMomentOperator` gets the same ALS steps written with operator
    products (the columns of the mode-1 unfolding times the Khatri–Rao product are
    :math:`T(I,b_j,c_j)`), so no d×d×d array is formed there either. See
    :doc:`/chapters/02_whitening_power` (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    T : array (d, d, d) or :class:`ThirdMomentOperator`
    weights : (k,)
    factors : list of three arrays (d, k)
    n_iterations : int  ALS sweeps at most
    tol : float  stop when the relative reconstruction error (parafac) or the factors
        (operator sweeps) change by less than this

    Returns
    -------
    tensorly ``CPTensor`` (weights (k,), [A, B, C] with unit columns (d, k)); it
    unpacks as ``weights, [A, B, C] = als_refine(...)``.

    Notes
    -----
    Cost per sweep O(k d³) (explicit) or O(k n d + k² d + k³) (data).
    """
    op = _as_operator(T)
    d = op.dim
    n_iterations = check_positive_int(n_iterations, "n_iterations", minimum=0)
    tol = check_tol(tol)
    if not isinstance(factors, (list, tuple)) or len(factors) != 3:
        raise TypeError("factors must be a list of three arrays (d, k)")
    A = check_matrix(factors[0], "factors[0]")
    if A.shape[0] != d:
        raise ValueError(f"factors[0] has {A.shape[0]} rows but T has dimension {d}")
    k = A.shape[1]
    B = check_matrix(factors[1], "factors[1]", shape=(d, k))
    C = check_matrix(factors[2], "factors[2]", shape=(d, k))
    w = check_array(weights, "weights", ndim=1)
    if w.shape[0] != k:
        raise ValueError(f"weights has {w.shape[0]} entries but the factors have {k} columns")
    if n_iterations == 0:
        return CPTensor((w.copy(), [A.copy(), B.copy(), C.copy()]))
    e = _exponent(T, op)
    w = scaled(w, e)   # T was divided by 2**e: so are the weights (the refined ones come back)
    w = scaled(w, scale_exponent(w))   # starting weights far off the scale of T: only their size changes
    if isinstance(op, _DenseTensor):
        from tensorly.decomposition import parafac
        init = CPTensor((tl.tensor(w.copy()), [tl.tensor(M.copy()) for M in (A, B, C)]))
        try:
            cp = parafac(tl.tensor(op.T), k, init=init, n_iter_max=n_iterations, tol=tol)
        except np.linalg.LinAlgError:  # singular normal equations: the ridge-stabilised sweeps below
            pass
        else:
            w2, (A2, B2, C2) = tl.cp_normalize(cp)
            return CPTensor((unscale(np.asarray(w2, float), e, "T", "the weights"),
                             [np.asarray(M, float) for M in (A2, B2, C2)]))
    w2, A2, B2, C2 = _als_operator(op, w, A, B, C, n_iterations, tol)
    return CPTensor((unscale(w2, e, "T", "the weights"), [A2, B2, C2]))


# ---------------------------------------------------------------------------- test tensors
def random_unit_columns(d: int, k: int, random_state=None):
    r"""k i.i.d. uniform unit vectors of :math:`\mathbb R^d`, the columns of A (d, k).

    Each column is a standard normal vector divided by its norm,
    :math:`a_j=g_j/\|g_j\|` with :math:`g_j\sim N(0,I_d)`, hence uniform on the sphere
    :math:`S^{d-1}`: the random incoherent components of Anandkumar, Ge & Janzamin (2015,
    Remark 1). One call draws one standard normal (d, k) matrix from ``random_state``, the
    draw :func:`random_overcomplete_tensor` makes (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    d, k : int
        Dimension and number of columns; k may exceed d.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    A : array (d, k) with unit columns. Cost O(d k).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.overcomplete import random_unit_columns
    >>> A = random_unit_columns(5, 8, 0)
    >>> A.shape, bool(np.allclose(np.linalg.norm(A, axis=0), 1))
    ((5, 8), True)
    """
    d = check_positive_int(d, "d")
    k = check_positive_int(k, "k")
    A = check_random_state(random_state).standard_normal((d, k))
    return A / np.linalg.norm(A, axis=0)


def coherence(A) -> float:
    r"""The largest overlap :math:`\mu=\max_{i\ne j}|\langle a_i,a_j\rangle|` of the columns of A.

    For unit columns this is the (mutual) coherence that Anandkumar, Ge & Janzamin (2015)
    require to be small in place of orthogonality: 0 for orthonormal columns, about
    :math:`2\sqrt{\log k/d}` for k random unit vectors in :math:`\mathbb R^d` (measured in
    :doc:`/chapters/09_overcomplete`). The columns are used as given (not normalised).

    Parameters
    ----------
    A : array (d, k), k >= 2

    Returns
    -------
    float. Cost O(d k²).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.overcomplete import coherence
    >>> coherence(np.eye(3))
    0.0
    >>> round(coherence(np.array([[1.0, 0.6], [0.0, 0.8]])), 12)
    0.6
    """
    A = check_matrix(A, "A")
    if A.shape[1] < 2:
        raise ValueError(f"A has {A.shape[1]} column; the coherence needs at least two")
    G = A.T @ A
    np.fill_diagonal(G, 0.0)
    return float(np.abs(G).max())


def random_overcomplete_tensor(d: int, k: int, random_state=None, *, weights=None):
    r"""A symmetric tensor :math:`T=\sum_{j=1}^k w_j a_j^{\otimes3}` with random unit :math:`a_j`.

    The :math:`a_j` are i.i.d. uniform on the sphere :math:`S^{d-1}` (the random
    incoherent components of Anandkumar, Ge & Janzamin 2015, Remark 1); k may exceed d. See
    :doc:`/chapters/02_whitening_power` for the orthogonal case
    (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    d, k : int
    random_state : None, int or numpy.random.Generator
    weights : (k,) array, default all ones

    Returns
    -------
    T (d, d, d), w (k,), A (d, k). Cost O(k d³) time (k d² in chunks), O(d³) memory.
    """
    d = check_positive_int(d, "d")
    k = check_positive_int(k, "k")
    A = random_unit_columns(d, k, random_state)
    if weights is None:
        w = np.ones(k)
    else:
        w = check_array(weights, "weights", ndim=1)
        if w.shape[0] != k:
            raise ValueError(f"weights has {w.shape[0]} entries but k={k}")
    from ..core.moments import triple_product
    e = scale_exponent(w)   # weights of extreme scale: exact powers of two
    T = triple_product(A.T * scaled(w, e)[:, None], A.T, A.T, chunk=max(1, _BLOCK // (d * d)))
    return unscale(T, e, "weights", "the tensor"), w.copy(), A
