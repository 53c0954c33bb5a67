r"""Independent component analysis by the power method on the fourth cumulant tensor.

Model: :math:`x=As+m` with :math:`A` (d × k, full column rank) and independent sources
:math:`s_1,\dots,s_k` of zero mean, unit variance and excess kurtosis
:math:`\kappa_j=E[s_j^4]-3`. Whiten with the covariance :math:`\Sigma_x=AA^\top`:
for W (d × k) with :math:`W^\top\Sigma_xW=I_k` (:func:`mvlib.whitening_matrix`),
:math:`z=W^\top(x-m)=Qs` with :math:`Q=W^\top A` orthogonal. Cumulants are
multilinear and vanish across independent variables, so the fourth cumulant tensor of z is

.. math:: \mathcal K_4(z)=\sum_{j=1}^k\kappa_j\,q_j^{\otimes 4},
   \qquad \mathcal K_4(z)_{abcd}=E[z_az_bz_cz_d]-\delta_{ab}\delta_{cd}-\delta_{ac}\delta_{bd}
   -\delta_{ad}\delta_{bc}\quad(E[z]=0,\ E[zz^\top]=I),

an orthogonally decomposable symmetric tensor of order four whose eigenvalues are the
kurtoses, of either sign (Comon & Jutten 2010, *Handbook of Blind Source Separation*;
Hyvärinen, Karhunen & Oja 2001, *Independent Component Analysis*, Ch. 11 "ICA by tensorial
methods"; it is one of the moment tensors with an orthogonal decomposition in Anandkumar,
Ge, Hsu, Kakade & Telgarsky 2014, JMLR 15). Gaussian sources (κ = 0) are invisible to it.

The contraction that the power method needs comes from the data in O(n k), without the
k⁴ tensor (:class:`FourthCumulantOperator`):

.. math:: \mathcal K_4(I,u,u,u)=E\big[z\,(u^\top z)^3\big]-3\,\|u\|^2u
   \qquad(E[z]=0,\ E[zz^\top]=I),

in general :math:`E[z(u^\top z)^3]-3\,(\Sigma u)(u^\top\Sigma u)` for centred z of covariance
Σ. The order-4 power map :math:`u\leftarrow\mathcal K_4(I,u,u,u)/\|\cdot\|` sends the
coordinates :math:`c_j=q_j^\top u` to :math:`\kappa_jc_j^3` (normalised): the :math:`q_j`
are its attracting fixed points, with cubic convergence. For unit u it is exactly the
kurtosis fixed-point iteration of FastICA (Hyvärinen & Oja 1997, Neural Computation 9(7);
Hyvärinen et al. 2001, Ch. 8), :math:`w\leftarrow E[z(w^\top z)^3]-3w`; here it runs as
Algorithm 1 of Anandkumar et al. (2014) does for order three (:func:`mvlib.tensor_power_method`):
L random starts batched, N iterations each, the start with the largest
:math:`|\mathcal K_4(u,u,u,u)|` refined for N more, :math:`\kappa=\mathcal K_4(v,v,v,v)` and
deflation :math:`\mathcal K_4\leftarrow\mathcal K_4-\kappa v^{\otimes 4}` (applied inside
the contraction: the data are never modified). Since κ may be negative, each update is
multiplied by the sign of :math:`u^\top\mathcal K_4(I,u,u,u)`, which makes the :math:`q_j`
of negative κ fixed points rather than points of period two (u ↦ −u), so that the stopping
rule, an update moving u by less than ``tol``, applies to every source.

On sampled data two options of :func:`fourth_order_power_method` matter (used by
:class:`mvlib.ica.TensorICA`): ``deflation="orthogonal"`` confines each step to
the orthogonal complement of the vectors already found, and ``selection="significance"``
extracts first the source whose kurtosis stands furthest above its standard error. The
exact checks (sympy derivation of the cumulant, recovery from population cumulants and
from exact data) are in ``tests/library/ica/test_ica.py``.
"""
from __future__ import annotations

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import CPTensor

from ..core.power import blas_limit
from ..core.validation import (
    check_array,
    check_matrix,
    check_positive_int,
    check_random_state,
    check_rank,
    check_tol,
    check_vector_or_matrix,
    scale_exponent,
    scaled,
    unscale,
)

__all__ = [
    "FourthCumulantOperator",
    "fourth_cumulant_contract",
    "fourth_order_power_method",
    "population_fourth_cumulant",
    "sample_kurtosis",
    "amari_index",
]

#: rows of data per block in the contractions (bounds the memory to O(block · R))
_BLOCK = 1 << 16


def _rows(U, dim, name="u"):
    """U as an (R, dim) float array; a 1-d vector becomes one row (``single`` says so)."""
    U = check_vector_or_matrix(U, name)
    single = U.ndim == 1
    U = U[None, :] if single else U
    if U.shape[1] != dim:
        raise ValueError(f"{name} has length {U.shape[1]} but the cumulant has dimension {dim}")
    return U, single


class FourthCumulantOperator:
    r"""The fourth cumulant tensor of the empirical distribution of Z, applied without a k⁴ array.

    For rows :math:`z_1,\dots,z_n` of Z, centred by their mean :math:`\bar z`
    (:math:`y_i=z_i-\bar z`) with covariance :math:`\Sigma=\frac1n\sum_iy_iy_i^\top`,

    .. math:: \hat{\mathcal K}_4(I,u,u,u)=\frac1n\sum_{i=1}^n y_i\,(u^\top y_i)^3
              -3\,(\Sigma u)\,(u^\top\Sigma u),

    the fourth cumulant of the empirical distribution contracted with u three times. For
    whitened data (:math:`\Sigma=I`) the correction is :math:`3\|u\|^2u`, and the population
    value is :math:`\sum_j\kappa_j(q_j^\top u)^3q_j` (module docstring). Cost O(n k) per
    vector (R vectors batched as matrix products, rows streamed in blocks), plus O(n k²)
    once for Σ; memory O(n k) for the centred copy of Z.

    Parameters
    ----------
    Z : array (n, k), n ≥ 1
        Samples as rows, typically whitened data :math:`W^\top(x_i-\bar x)`.

    Attributes
    ----------
    dim : int k;  n_samples : int n;  covariance : (k, k) Σ;  shape : (k, k, k, k)
    """

    def __init__(self, Z):
        Z = check_array(Z, "Z", ndim=2, min_rows=1)
        self.n_samples, self.dim = Z.shape
        self.shape = (self.dim,) * 4
        # extreme scales: Z / 2**e (exact); the cumulant scales back by 2**(4e)
        self._e = e = scale_exponent(Z)
        Y = scaled(Z, e)
        self._Y = Y - Y.mean(axis=0)
        self._S = (self._Y.T @ self._Y) / self.n_samples
        self.covariance = unscale(self._S, 2 * e, "Z", "the covariance")

    def __repr__(self):
        return f"FourthCumulantOperator(n_samples={self.n_samples}, dim={self.dim})"

    def _apply(self, U):
        """Rows K4(I,u,u,u) of the scaled data for the rows of U (R, k): O(R n k)."""
        n = self.n_samples
        out = np.zeros_like(U)
        step = max(1, _BLOCK // max(U.shape[0], 1))
        for s in range(0, n, step):
            y = self._Y[s:s + step]
            P = y @ U.T
            out += (P * P * P).T @ y
        out /= n
        SU = U @ self._S
        return out - 3.0 * np.einsum("rk,rk->r", SU, U)[:, None] * SU

    def contract(self, u):
        r""":math:`\hat{\mathcal K}_4(I,u,u,u)` for u (k,), or its rows for U (R, k). Cost O(R n k)."""
        U, single = _rows(u, self.dim)
        out = unscale(self._apply(U), 4 * self._e, "Z", "the fourth cumulant")
        return out[0] if single else out

    def value(self, u):
        r""":math:`\hat{\mathcal K}_4(u,u,u,u)` for u (k,) (a float), or per row of U (R, k). Cost O(R n k)."""
        U, single = _rows(u, self.dim)
        out = np.einsum("rk,rk->r", self.contract(U), U)
        return float(out[0]) if single else out

    def kurtosis_significance(self, u):
        r"""Excess kurtosis of the projections :math:`u^\top y_i` and its standard error, per row of U.

        :func:`sample_kurtosis` of the columns of :math:`YU^\top` (the sample kurtosis of
        the data along u, the source estimate u would give), so that
        :math:`|\hat\kappa|/\mathrm{se}` measures how far that kurtosis stands from
        sampling noise. Returns two arrays (R,), or two floats for one u. Cost O(R n) memory
        and O(R n k) time.
        """
        U, single = _rows(u, self.dim)
        kurt, se = sample_kurtosis(self._Y @ U.T)
        return (float(kurt[0]), float(se[0])) if single else (kurt, se)

    def dense(self):
        r"""The explicit (k, k, k, k) tensor :math:`\frac1n\sum_iy_i^{\otimes4}-(\Sigma\otimes\Sigma
        \text{ in its three pairings})`; for checks at small k. Cost O(n k⁴) time and O(k⁴) memory."""
        Y, S = self._Y, self._S
        M4 = np.einsum("ia,ib,ic,id->abcd", Y, Y, Y, Y, optimize=True) / self.n_samples
        K = (M4 - np.einsum("ab,cd->abcd", S, S) - np.einsum("ac,bd->abcd", S, S)
             - np.einsum("ad,bc->abcd", S, S))
        return unscale(K, 4 * self._e, "Z", "the fourth cumulant")


def fourth_cumulant_contract(Z, u):
    r"""The contraction :math:`\hat{\mathcal K}_4(I,u,u,u)` of the fourth cumulant of the rows of Z.

    For whitened data (mean 0, :math:`E[zz^\top]=I`)

    .. math:: \hat{\mathcal K}_4(I,u,u,u)=\frac1n\sum_{i=1}^n z_i\,(u^\top z_i)^3-3\,\|u\|^2u,

    and in general the centred version with :math:`3(\Sigma u)(u^\top\Sigma u)` in place of
    :math:`3\|u\|^2u` (:class:`FourthCumulantOperator`). The power method built on it and the
    population identity :math:`\mathcal K_4=\sum_j\kappa_jq_j^{\otimes4}` are derived in the
    docstring of :mod:`mvlib.ica`; the order-3 power method is derived in
    :doc:`/chapters/02_whitening_power`.

    Parameters
    ----------
    Z : array (n, k)
    u : array (k,) or (R, k)

    Returns
    -------
    array of the shape of ``u``. Cost O(n k²) for the covariance plus O(R n k); no k⁴ array.
    """
    return FourthCumulantOperator(Z).contract(u)


def population_fourth_cumulant(Q, kurtosis):
    r"""The explicit tensor :math:`\sum_j\kappa_j\,q_j^{\otimes4}` (k, k, k, k), for exact checks.

    The fourth cumulant of :math:`z=Qs` for independent unit-variance sources of excess
    kurtosis :math:`\kappa_j` (derivation in the docstring of :mod:`mvlib.ica`; the
    order-3 analogue in :doc:`/chapters/02_whitening_power`).

    Parameters
    ----------
    Q : array (k, m)
        Columns :math:`q_j` (orthonormal for the ICA model; any columns are accepted).
    kurtosis : array (m,)

    Returns
    -------
    array (k, k, k, k). Cost O(m k⁴).
    """
    Q = check_matrix(Q, "Q")
    kurtosis = check_array(kurtosis, "kurtosis", ndim=1)
    if kurtosis.shape[0] != Q.shape[1]:
        raise ValueError(f"kurtosis has length {kurtosis.shape[0]} but Q has {Q.shape[1]} columns")
    return np.einsum("j,aj,bj,cj,dj->abcd", kurtosis, Q, Q, Q, Q, optimize=True)


class _Dense4:
    """T(I, θ, θ, θ) for many θ at once from the mode-1 unfolding (k × k³); O(R k⁴)."""

    def __init__(self, T):
        self.k = k = T.shape[0]
        self.P = np.array(T.reshape(k, k ** 3), dtype=float, copy=True)

    def apply(self, Theta):
        R, k = Theta.shape
        kr = (Theta[:, :, None, None] * Theta[:, None, :, None] * Theta[:, None, None, :]).reshape(R, k ** 3)
        return kr @ self.P.T

    def deflate(self, lam, v):
        self.P -= lam * np.outer(v, np.einsum("a,b,c->abc", v, v, v).ravel())


class _Implicit4:
    """A FourthCumulantOperator (scaled data) minus the deflated terms Σ λ_j (θ·v_j)³ v_j."""

    def __init__(self, op):
        self.op = op
        self.k = op.dim
        self.lams, self.vs = [], []

    def apply(self, Theta):
        out = self.op._apply(Theta)
        if self.lams:
            V = np.array(self.vs).T          # (k, m)
            C = Theta @ V                    # (R, m)
            out -= (C ** 3 * np.array(self.lams)) @ V.T
        return out

    def deflate(self, lam, v):
        self.lams.append(lam)
        self.vs.append(v.copy())


def _iterate4(op, Theta, n_iterations, tol, basis=None):
    """Batched sign-corrected power iterations θ ← sign(θ·y) y/‖y‖, y = K(I,θ,θ,θ); each row
    stops once an update moves it by less than ``tol``. With ``basis`` (k, m, orthonormal
    columns) every update is first projected onto the orthogonal complement of its span."""
    Theta = Theta.copy()
    active = np.arange(Theta.shape[0])
    for _ in range(n_iterations):
        if active.size == 0:
            break
        current = Theta[active]
        Y = op.apply(current)
        if basis is not None:
            Y -= (Y @ basis) @ basis.T
        norms = np.linalg.norm(Y, axis=1)
        ok = norms > np.finfo(float).tiny
        signs = np.where(np.einsum("rk,rk->r", Y, current) < 0, -1.0, 1.0)
        Y[ok] *= (signs[ok] / norms[ok])[:, None]
        Y[~ok] = current[~ok]  # K(I,θ,θ,θ) = 0: nothing to follow, keep θ
        Theta[active] = Y
        if tol > 0:
            active = active[np.linalg.norm(Y - current, axis=1) > tol]
    return Theta


def _complement(Theta, basis):
    """Rows of Theta projected onto the orthogonal complement of the columns of basis, normalised."""
    if basis is None:
        return Theta
    Theta = Theta - (Theta @ basis) @ basis.T
    return Theta / np.linalg.norm(Theta, axis=1, keepdims=True)


def _sphere(rng, n, k):
    X = rng.standard_normal((n, k))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


#: the deflation schemes and start selections of :func:`fourth_order_power_method`
DEFLATIONS = ("subtract", "orthogonal")
SELECTIONS = ("value", "significance")


def fourth_order_power_method(K, rank, *, n_restarts: int = 10, n_iterations: int = 100,
                              tol: float = 1e-10, deflation: str = "subtract",
                              selection: str = "value", random_state=None) -> CPTensor:
    r"""Robust power method with deflation for a symmetric order-4 tensor, explicit or from data.

    The order-4 version of :func:`mvlib.tensor_power_method` (Anandkumar et al. 2014,
    Algorithm 1; derived for order 3 in :doc:`/chapters/02_whitening_power`): for each of
    ``rank`` deflation steps, L starts uniform on the sphere run N sign-corrected iterations
    :math:`u\leftarrow\operatorname{sign}(u^\top y)\,y/\|y\|`, :math:`y=\mathcal K(I,u,u,u)`
    (all starts batched), the start with the largest :math:`|\mathcal K(u,u,u,u)|` is
    refined for N more, :math:`\kappa=\mathcal K(v,v,v,v)` and
    :math:`\mathcal K\leftarrow\mathcal K-\kappa v^{\otimes4}`. On
    :math:`\sum_j\kappa_jq_j^{\otimes4}` with orthonormal :math:`q_j` and non-zero
    :math:`\kappa_j` of either sign it returns the pairs :math:`(\kappa_j,q_j)` (up to the sign
    of :math:`q_j`, the order of extraction following the largest :math:`|\kappa_j(q_j^\top u)^2|`
    among the starts). ICA derivation in the docstring of :mod:`mvlib.ica`.

    ``deflation="orthogonal"`` also confines each step to the orthogonal complement of the
    vectors already found (starts and updates projected onto it, as the deflation scheme of
    FastICA does). On an exactly orthogonally decomposable tensor the two schemes agree
    (:math:`\kappa_j(q_j^\top u)^3q_j` vanishes on the complement); on a sampled cumulant the
    subtraction leaves residuals of the size of the sampling error along the vectors
    already found, where the search of a later step may land when its own eigenvalue is
    as small (a source of near-zero kurtosis); confined, the last of k steps is fixed by
    orthogonality alone.

    ``selection="significance"`` (data only) keeps, among the L converged starts, the one
    whose projection of the data has the most significant kurtosis,
    :math:`|\hat\kappa|/\mathrm{se}` (:meth:`FourthCumulantOperator.kurtosis_significance`),
    instead of the largest :math:`|\mathcal K(u,u,u,u)|`: the fixed points are the same, but
    the most precisely estimated sources are extracted first, so that the error each
    orthogonal deflation step passes on to the later ones is smallest (a large kurtosis of
    a heavy-tailed source is also the noisiest; the deflation order matters for
    deflation-based FastICA in the same way, Nordhausen, Ilmonen, Mandal & Oja 2011).

    Parameters
    ----------
    K : array-like (k, k, k, k) or FourthCumulantOperator
        An explicit symmetric tensor (small k), or the fourth cumulant of (whitened) data
        applied implicitly.
    rank : int
        Number of pairs to extract, 1 ≤ rank ≤ k.
    n_restarts : int, default 10
        Starts per deflation step (L).
    n_iterations : int, default 100
        Iterations per start, and again for the refinement (N).
    tol : float, default 1e-10
        A start stops once an update moves it by less than ``tol`` (2-norm).
    deflation : {"subtract", "orthogonal"}, default "subtract"
        Algorithm 1's subtraction alone, or subtraction and the orthogonal complement.
    selection : {"value", "significance"}, default "value"
        Which converged start a deflation step keeps: the largest :math:`|\mathcal K(u,u,u,u)|`
        (Algorithm 1), or the most significant kurtosis (needs a FourthCumulantOperator).
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    tensorly.cp_tensor.CPTensor
        ``(weights, [V, V, V, V])``: the eigenvalues κ (rank,), signed, in extraction order,
        and unit vectors as the columns of V (k, rank), so that
        :math:`\mathcal K\approx\sum_h\kappa_hv_h^{\otimes4}`.

    Notes
    -----
    Cost O(rank · (L + 1) · N · c) with c = k⁴ per contraction for an explicit tensor and
    c = n k for data (early stopping usually cuts N to a handful); memory O(k⁴), or
    O(L · block) beyond the data.
    """
    if isinstance(K, FourthCumulantOperator):
        k, e = K.dim, 4 * K._e
        op = _Implicit4(K)
    else:
        T = check_array(K, "K", ndim=4)
        if len(set(T.shape)) != 1:
            raise ValueError(f"K must be a (k, k, k, k) tensor, got shape {T.shape}")
        k = T.shape[0]
        e = scale_exponent(T)
        op = _Dense4(scaled(T, e))
    rank = check_rank(rank, "rank", k, "the dimension k of K")
    n_restarts = check_positive_int(n_restarts, "n_restarts")
    n_iterations = check_positive_int(n_iterations, "n_iterations")
    tol = check_tol(tol)
    if not isinstance(deflation, str) or deflation not in DEFLATIONS:
        raise ValueError(f"deflation must be one of {DEFLATIONS}, got {deflation!r}")
    if not isinstance(selection, str) or selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    if selection == "significance" and not isinstance(K, FourthCumulantOperator):
        raise ValueError("selection='significance' needs the data: pass K as a FourthCumulantOperator, "
                         "not an explicit tensor")
    rng = check_random_state(random_state)

    weights = np.empty(rank)
    V = np.empty((k, rank))
    with blas_limit(k):
        for i in range(rank):
            basis = V[:, :i] if deflation == "orthogonal" and i > 0 else None
            starts = _complement(_sphere(rng, n_restarts, k), basis)
            Theta = _iterate4(op, starts, n_iterations, tol, basis)
            if selection == "value":
                score = np.abs(np.einsum("ri,ri->r", op.apply(Theta), Theta))  # |K(θ,θ,θ,θ)|
            else:
                kurt, se = K.kurtosis_significance(Theta)
                score = np.abs(kurt) / np.maximum(se, np.finfo(float).tiny)
            v = _iterate4(op, Theta[[np.argmax(score)]], n_iterations, tol, basis)
            v = _complement(v, basis)[0]   # exactly in the complement (one more projection)
            lam = float(v @ op.apply(v[None, :])[0])
            weights[i], V[:, i] = lam, v
            op.deflate(lam, v)
    weights = unscale(weights, e, "K", "the eigenvalues")
    return CPTensor((tl.tensor(weights), [tl.tensor(V.copy()) for _ in range(4)]))


def sample_kurtosis(S):
    r"""Excess kurtosis of each column of S and its standard error (delta method).

    :math:`\hat\kappa=\hat m_4/\hat m_2^2-3` with central moments :math:`\hat m_r`, and the
    standard error :math:`\operatorname{sd}(\psi)/\sqrt n` of its influence function
    :math:`\psi(y)=\big[(y^4-m_4)-2m_4(y^2-m_2)/m_2-4m_3m_2\,y\big]/m_2^2` (y centred; the
    last term accounts for the estimated mean). For a Gaussian column the standard error
    is :math:`\sqrt{24/n}`. Used to tell a kurtosis from sampling noise (the fourth
    cumulant is zero for a Gaussian source, whose direction it cannot identify; see the
    docstring of :mod:`mvlib.ica`, :doc:`/chapters/10_dirichlet_ica` for ICA and :doc:`/chapters/02_whitening_power` for the power method).

    Parameters
    ----------
    S : array (n, m), n ≥ 2

    Returns
    -------
    kurtosis, standard_error : arrays (m,). Cost O(n m).
    """
    S = check_array(S, "S", ndim=2, min_rows=2)
    n = S.shape[0]
    Y = S - S.mean(axis=0)
    scale = np.sqrt(np.mean(Y * Y, axis=0))
    if np.any(scale == 0):
        j = int(np.flatnonzero(scale == 0)[0])
        raise ValueError(f"S has a constant column ({j}); its kurtosis is undefined")
    Y = Y / scale                      # m2 = 1 after standardising (kurtosis is scale-free)
    Y2 = Y * Y                         # products, not powers: np.power is many times slower
    Y4 = Y2 * Y2
    m3 = np.mean(Y2 * Y, axis=0)
    m4 = np.mean(Y4, axis=0)
    psi = (Y4 - m4) - 2 * m4 * (Y2 - 1) - 4 * m3 * Y
    return m4 - 3.0, psi.std(axis=0) / np.sqrt(n)


def amari_index(W, A):
    r"""Amari index of the product :math:`P=WA`: 0 exactly when P is a scaled permutation.

    .. math:: \frac{1}{2k(k-1)}\Big[\sum_i\Big(\frac{\sum_j|p_{ij}|}{\max_j|p_{ij}|}-1\Big)
              +\sum_j\Big(\frac{\sum_i|p_{ij}|}{\max_i|p_{ij}|}-1\Big)\Big]\in[0,1]

    (Amari, Cichocki & Yang 1996, normalised), the usual score of an unmixing matrix W
    (k, d) against the true mixing A (d, k): it ignores the order and scale of the
    recovered sources, which ICA cannot identify. See the docstring of :mod:`mvlib.ica`
    (and :doc:`/chapters/02_whitening_power` for the power method it scores).

    Returns a float; for k = 1 the index is 0. Cost O(d k²).
    """
    W = check_matrix(W, "W")
    A = check_matrix(A, "A", shape=(W.shape[1], W.shape[0]), by="W (the transpose of its shape)")
    P = np.abs(W @ A)
    k = P.shape[0]
    if k == 1:
        return 0.0
    rmax, cmax = P.max(axis=1), P.max(axis=0)
    if np.any(rmax == 0) or np.any(cmax == 0):
        raise ValueError("W @ A has a zero row or column: W does not unmix A")
    r = np.sum(P.sum(axis=1) / rmax - 1)
    c = np.sum(P.sum(axis=0) / cmax - 1)
    return float((r + c) / (2 * k * (k - 1)))
