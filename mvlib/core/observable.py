r"""Observable operators and Algorithms A and B (Anandkumar, Hsu & Kakade 2012).

For a three-view mixture with :math:`P_{12}=M_1\operatorname{diag}(w)M_2^\top` and
:math:`P_{123}(\eta)=M_1\operatorname{diag}(M_3^\top\eta)\operatorname{diag}(w)M_2^\top`
(Lemma 3.1), and :math:`U_1,U_2` spanning the ranges of :math:`M_1,M_2` (top-k
singular vectors of :math:`P_{12}`), the observable operator

.. math:: B_{123}(\eta)=(U_1^\top P_{123}(\eta)U_2)(U_1^\top P_{12}U_2)^{-1}
          =(U_1^\top M_1)\operatorname{diag}(M_3^\top\eta)(U_1^\top M_1)^{-1}

(Lemma 3.2; Lemma 2.2 for the topic model, where :math:`M_1=M_2=M_3=M`) has the
columns of :math:`U_1^\top M_1` as eigenvectors and :math:`\langle\eta,\mu_{3,h}\rangle`
as eigenvalues.

Everything here works in **projected coordinates**: with :math:`\eta=U_3\theta`,

.. math:: U_1^\top P_{123}(U_3\theta)U_2 = T(I, I, \theta),\qquad
          T=P_{123}(U_1,U_2,U_3)\in\mathbb R^{k\times k\times k},

so one k×k×k tensor (:func:`mvlib.whitened_triples` of the data with
:math:`W_v=U_v`, O(n d k + n k³)) and the k×k projected pairs
:math:`\tilde P_{ab}=U_a^\top P_{ab}U_b` give every operator the algorithms need;
no d×d×d array and no d×d slice per η is formed.

Eigenvalues of an empirical :math:`\hat B` can be nearly equal or complex for an
unlucky random η; the algorithms then draw a fresh random rotation Θ (up to
``max_retries`` times, with a warning saying how many retries were needed).
"""
from __future__ import annotations


import numpy as np
import scipy.linalg as sla

from .validation import (
    check_array,
    check_cubic_tensor,
    min_gap_rule,
    check_matrix,
    check_positive_int,
    check_random_state,
    scale_exponent,
    scaled,
    unscale,
    warn_ill_conditioned,
    warn_user,
)

__all__ = [
    "observable_operator",
    "random_orthogonal",
    "projected_operator",
    "algorithm_a",
    "algorithm_b",
    "view_bases",
    "mixture_weights",
    "EigengapWarning",
]


class EigengapWarning(UserWarning):
    """Random directions η had to be redrawn because :math:`\\hat B(\\eta)` had close or complex eigenvalues."""


# --------------------------------------------------------------------------- basics
def random_orthogonal(k: int, random_state=None) -> np.ndarray:
    r"""A uniformly (Haar) distributed random orthogonal k×k matrix Θ.

    QR factorisation of a standard Gaussian matrix with the signs of R's diagonal
    moved into Q (Mezzadri 2007). Its rows :math:`\theta_i` are the random
    directions of Algorithm B. Cost O(k³).
    """
    k = check_positive_int(k, "k")
    rng = check_random_state(random_state)
    Q, R = np.linalg.qr(rng.standard_normal((k, k)))
    d = np.sign(np.diag(R))
    d[d == 0] = 1.0
    return Q * d


def observable_operator(P12, P123_eta, U1, U2):
    r"""The observable operator :math:`B_{123}(\eta)=(U_1^\top P_{123}(\eta)U_2)(U_1^\top P_{12}U_2)^{-1}`.

    See :doc:`/chapters/04_three_view_mixtures` for the derivation and a numerical check.

    Lemma 3.2 of Anandkumar, Hsu & Kakade (2012) (Lemma 2.2 for the topic model):
    :math:`B_{123}(\eta)=(U_1^\top M_1)\operatorname{diag}(M_3^\top\eta)(U_1^\top M_1)^{-1}`,
    so its eigenvalues are :math:`\langle\eta,\mu_{3,h}\rangle`.

    Parameters
    ----------
    P12 : array (d1, d2)
    P123_eta : array (d1, d2), the slice :math:`P_{123}(\eta)`
    U1, U2 : arrays (d1, k), (d2, k) with :math:`U_1^\top P_{12}U_2` invertible

    Returns
    -------
    array (k, k). Cost O(d1 d2 k + k³).
    """
    P12 = check_matrix(P12, "P12")
    P = check_matrix(P123_eta, "P123_eta", shape=P12.shape, by="P12")
    U1 = check_matrix(U1, "U1", shape=(P12.shape[0], None), by="P12")
    U2 = check_matrix(U2, "U2", shape=(P12.shape[1], None), by="P12")
    if U2.shape[1] != U1.shape[1]:
        raise ValueError(f"U2 has {U2.shape[1]} columns but U1 has {U1.shape[1]}")
    # extreme scales: exact powers of two; B scales with P123_eta / P12, not with U1, U2
    es = [scale_exponent(A) for A in (P12, P, U1, U2)]
    P12, P, U1, U2 = (scaled(A, e) for A, e in zip((P12, P, U1, U2), es))
    denom = U1.T @ P12 @ U2
    s = sla.svdvals(denom)
    if not s[-1] > denom.shape[0] * np.finfo(float).eps * max(s[0], np.finfo(float).tiny):
        raise ValueError("U1^T P12 U2 is singular: U1, U2 must span the ranges of M1, M2 (Condition 3.1)")
    warn_ill_conditioned(s[0] / s[-1], "U1^T P12 U2")
    return unscale(sla.solve(denom.T, (U1.T @ P @ U2).T).T, es[1] - es[0], "P123_eta, P12", "B(η)")


def projected_operator(T, P, theta, mode: int = 3):
    r""":math:`B(\theta)=T_{(\text{mode})}(\theta)\,P^{-1}` in projected coordinates.

    See :doc:`/chapters/04_three_view_mixtures` for the derivation and a numerical check.

    With :math:`T=P_{123}(U_1,U_2,U_3)` and ``mode=3``, :math:`T(I,I,\theta)=U_1^\top P_{123}(U_3\theta)U_2`
    and ``P`` :math:`=U_1^\top P_{12}U_2` give :math:`B_{123}(U_3\theta)`; ``mode=2``
    contracts the second index (:math:`B_{132}` with ``P`` :math:`=\tilde P_{13}`),
    ``mode=1`` the first (:math:`B_{231}` with ``P`` :math:`=\tilde P_{23}`).
    Returns (k, k); cost O(k³).
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    P = check_matrix(P, "P", shape=(k, k))
    theta = check_array(theta, "theta", ndim=1)
    if theta.shape[0] != k:
        raise ValueError(f"theta has length {theta.shape[0]} but T has dimension {k}")
    if mode not in (1, 2, 3):
        raise ValueError(f"mode must be 1, 2 or 3, got {mode!r}")
    S = np.tensordot(T, theta, axes=([mode - 1], [0]))
    return sla.solve(P.T, S.T).T


# --------------------------------------------------------------------------- helpers
def check_gap_options(min_gap, max_retries):
    min_gap = min_gap_rule(min_gap)
    max_retries = check_positive_int(max_retries, "max_retries", minimum=0)
    return min_gap, max_retries


def relative_gap(evals):
    """(min gap of real parts, largest imaginary part), both relative to max |λ|."""
    scale = np.max(np.abs(evals))
    if not scale > 0 or not np.all(np.isfinite(evals)):
        return 0.0, np.inf
    re = np.sort(evals.real)
    gap = np.min(np.diff(re)) / scale if re.size > 1 else 1.0
    return float(gap), float(np.max(np.abs(evals.imag)) / scale)


def _check_nonzero(T):
    if not np.any(T):
        raise ValueError("T is identically zero: there are no components to recover")


def _check_invertible(P, name, warn=True):
    """Refuse a singular projected pairs matrix (Condition 3.1); warn when ill-conditioned."""
    k = P.shape[0]
    s = sla.svdvals(P)
    if not s[-1] > k * np.finfo(float).eps * max(s[0], np.finfo(float).tiny):
        raise ValueError(f"the projected pairs matrix {name} is singular (Condition 3.1)")
    if warn:
        warn_ill_conditioned(s[0] / s[-1], f"the projected pairs matrix {name}")


def _solve_right(P, S):
    """S P^{-1} for square P."""
    return sla.solve(P.T, S.T).T


def _diagonalise(T, P, rng, *, mode, min_gap, max_retries, imag_tol=1e-6, what="B(η)"):
    r"""Random orthogonal Θ, the row :math:`\theta_{i^*}` whose :math:`B(\theta)` has the best-separated
    real eigenvalues, and those eigenvectors R (real), with retries on a fresh Θ.

    Every row of a Haar-random Θ is uniform on the sphere, so using the best of the k rows
    (instead of always the first) is the paper's "boosting the confidence by repeating
    Step 3 with different random η until the eigenvalues are sufficiently separated"
    (§2, remarks after Theorem 2.1), at no extra cost in samples.
    Returns ``(Theta, i_star, R, n_retries)``.
    """
    k = T.shape[0]
    for attempt in range(max_retries + 1):
        Theta = random_orthogonal(k, rng)
        best = None
        for i in range(k):
            B = _solve_right(P, np.tensordot(T, Theta[i], axes=([mode - 1], [0])))
            evals, R = sla.eig(B)
            gap, imag = relative_gap(evals)
            score = gap if imag <= imag_tol else -1.0
            if best is None or score > best[0]:
                best = (score, i, R, gap, imag)
        score, i_star, R, gap, imag = best
        if score >= min_gap and score > 0:
            if attempt:
                warn_user(
                    f"the eigenvalues of {what} were too close (relative gap < {min_gap:g}) or complex "
                    f"for every row of {attempt} random rotation(s) Θ; succeeded after {attempt} retr"
                    f"{'y' if attempt == 1 else 'ies'}",
                    EigengapWarning,
                )
            return Theta, i_star, np.real(R), attempt
    raise RuntimeError(
        f"the eigenvalues of {what} stayed too close (relative gap < {min_gap:g}) or complex in "
        f"{max_retries + 1} random rotations Θ (best last gap {max(gap, 0):.1e}, imaginary part {imag:.1e}); "
        "the components are not separated well enough at this sample size, or n_components "
        "exceeds the number of distinct components (Condition 3.1)"
    )


def _eigenvalue_rows(T, G, R, mode):
    r"""Row j of the result is the diagonal of :math:`R^{-1}T_{(mode)}(e_c)G` over c, i.e. D[j, c].

    ``G`` = :math:`P^{-1}R`. Then :math:`L=\Theta D^\top` holds the eigenvalues
    :math:`\operatorname{diag}(R^{-1}B(\theta_i)R)` in row i (linear in θ). Cost O(k⁴).
    """
    Rinv = sla.inv(R)
    if mode == 3:    # B_123: T(I, I, θ) acts on (a, b)
        return np.einsum("ja,abc,bj->jc", Rinv, T, G, optimize=True)
    if mode == 2:    # B_132: T(I, θ, I) acts on (a, c)
        return np.einsum("ja,abc,cj->jb", Rinv, T, G, optimize=True)
    return np.einsum("jb,abc,cj->ja", Rinv, T, G, optimize=True)  # B_231: T(θ, I, I) on (b, c)


def view_bases(P12, P13, n_components: int):
    r"""Orthonormal bases :math:`U_1,U_2` (top-k singular vectors of :math:`P_{12}`) and :math:`U_3` (of :math:`P_{13}`).

    See :doc:`/chapters/04_three_view_mixtures` for the derivation and a numerical check.

    Step 1 of Algorithm B: :math:`U_1,U_2` are the top-k left/right singular vectors
    of :math:`\hat P_{12}`, :math:`U_3` the top-k right singular vectors of
    :math:`\hat P_{13}`. Signs are fixed (largest entry of each vector positive).
    Raises ``ValueError`` when ``n_components`` exceeds the numerical rank of either
    matrix (Condition 3.1). Returns ``(U1, U2, U3)``; cost O(d1 d2 min(d1, d2) + d1 d3 min(d1, d3)).
    """
    from .validation import check_identifiable_rank

    P12 = check_matrix(P12, "P12")
    P13 = check_matrix(P13, "P13", shape=(P12.shape[0], None))
    k = check_positive_int(n_components, "n_components")
    out = []
    for name, P in (("P12", P12), ("P13", P13)):
        U, s, Vt = sla.svd(P, full_matrices=False)
        check_identifiable_rank(k, s, f"the pairs matrix {name}")
        out.append((U[:, :k], Vt[:k].T))
    return fix_signs(out[0][0]), fix_signs(out[0][1]), fix_signs(out[1][1])


def fix_signs(U):
    signs = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return U * signs


# --------------------------------------------------------------------------- Algorithm A
def algorithm_a(U, P, T, *, random_state=None, min_gap: float = 0.02, max_retries: int = 20,
                return_info: bool = False):
    r"""Algorithm A (topic model): columns :math:`\hat\mu_h=U\xi_h/\langle\mathbf 1,U\xi_h\rangle`.

    See :doc:`/chapters/03_topic_models` for the derivation and a numerical check.

    Anandkumar, Hsu & Kakade (2012), Figure 1: with :math:`U` the top-k left singular
    vectors of Pairs, :math:`\eta=U\theta` for θ uniform on the unit sphere, the
    eigenvectors :math:`\xi_h` of :math:`\hat B(\eta)=(U^\top\widehat{\mathrm{Triples}}(\eta)U)
    (U^\top\widehat{\mathrm{Pairs}}U)^{-1}` give the topics after normalising
    :math:`U\xi_h` to sum 1 (Lemma 2.2). θ is the row of a random orthogonal Θ whose
    :math:`\hat B(U\theta)` has the best-separated real eigenvalues (every row is uniform
    on the sphere; this is the paper's "boosting the confidence" remark after Theorem 2.1).

    Parameters
    ----------
    U : array (d, k), orthonormal columns spanning the range of Pairs
    P : array (k, k), :math:`U^\top\mathrm{Pairs}\,U`
    T : array (k, k, k), :math:`\mathrm{Triples}(U,U,U)` (e.g. :func:`mvlib.count_whitened_triples` with ``W=U``)
    random_state : None, int or numpy.random.Generator
    min_gap : float
        Redraw Θ while, for every row θ, the smallest gap between eigenvalues of
        :math:`\hat B(U\theta)` is below ``min_gap`` times the largest absolute eigenvalue (or the
        eigenvalues are complex); each redraw is reported by an :class:`EigengapWarning`.
    max_retries : int
        Redraws allowed before giving up with ``RuntimeError``.
    return_info : bool
        Also return a dict with ``"eta"`` (d,), the ``"eigenvalues"``
        :math:`\langle\eta,\hat\mu_h\rangle` (k,) in column order, and ``"n_retries"``.

    Returns
    -------
    M : array (d, k), columns summing to 1 (may have small negative entries).

    Notes
    -----
    Cost O(d k² + k⁴) (k eigendecompositions per draw of Θ).
    """
    U = check_matrix(U, "U")
    d, k = U.shape
    P = check_matrix(P, "P", shape=(k, k), by="U")
    T = check_cubic_tensor(T)
    if T.shape[0] != k:
        raise ValueError(f"T has dimension {T.shape[0]} but U has {k} columns")
    min_gap, max_retries = check_gap_options(min_gap, max_retries)
    rng = check_random_state(random_state)
    _check_nonzero(T)
    eT, eP = scale_exponent(T), scale_exponent(P)   # extreme scales: exact powers of two
    T, P = scaled(T, eT), scaled(P, eP)
    _check_invertible(P, "P", warn=False)
    Theta, i_star, R, n_retries = _diagonalise(T, P, rng, mode=3, min_gap=min_gap, max_retries=max_retries,
                                               what="B(η) = (U^T Triples(η) U)(U^T Pairs U)^{-1}")
    M = U @ R
    M = M / M.sum(axis=0)
    if return_info:
        theta = Theta[i_star]
        B = _solve_right(P, np.tensordot(T, theta, axes=([2], [0])))
        evals = unscale(np.diag(sla.solve(R, B @ R)), eT - eP, "T, P", "the eigenvalues")
        return M, {"eta": U @ theta, "eigenvalues": evals, "n_retries": n_retries}
    return M


# --------------------------------------------------------------------------- Algorithm B
def algorithm_b(T, P12, P13, P23=None, *, random_state=None, min_gap: float = 0.02,
                max_retries: int = 20, return_info: bool = False):
    r"""Algorithm B in projected coordinates: the projected means of all views, one column order.

    See :doc:`/chapters/04_three_view_mixtures` for the derivation and a numerical check.

    Anandkumar, Hsu & Kakade (2012), Figure 3 and Lemma 3.3. With
    :math:`T=P_{123}(U_1,U_2,U_3)` and :math:`\tilde P_{ab}=U_a^\top P_{ab}U_b`:

    1. Θ uniformly random orthogonal with rows :math:`\theta_i`;
       :math:`\hat R` = eigenvectors of :math:`\hat B_{123}(U_3\theta_{i^*})=T(I,I,\theta_{i^*})\tilde P_{12}^{-1}`
       for the row :math:`i^*` with the best-separated real eigenvalues (the paper uses
       :math:`\theta_1`; any row is uniform on the sphere); Θ is redrawn while no row has
       eigenvalues separated by ``min_gap`` (relative) or they are complex;
    2. :math:`L_{ij}=[\hat R^{-1}\hat B_{123}(U_3\theta_i)\hat R]_{jj}` and
       :math:`U_3^\top\hat M_3=\Theta^{-1}L` (Lemma 3.3);
    3. view 2 (Appendix B.4): :math:`B_{132}(\eta)=T(I,\theta,I)\tilde P_{13}^{-1}` has the same
       eigenvectors :math:`U_1^\top M_1`, so :math:`\hat R` diagonalises it too and gives
       :math:`U_2^\top\hat M_2` in the same order;
    4. view 1: :math:`B_{231}(U_1\theta)=T(\theta,I,I)\tilde P_{23}^{-1}
       =(U_2^\top M_2)\operatorname{diag}(M_1^\top U_1\theta)(U_2^\top M_2)^{-1}`; its
       eigenvectors are the columns of :math:`U_2^\top M_2`, already estimated in step 3 in
       the common order, so they diagonalise it directly and give
       :math:`U_1^\top\hat M_1` without any matching of eigenvalues. (The diagonal of
       :math:`\hat R^{-1}\hat B\hat R` is insensitive to first order to errors in
       :math:`\hat R`, so using an estimated basis costs nothing at first order.)

    If ``P23`` is None (single-view topic model, :math:`M_1=M_2=M_3`), step 4 is skipped and
    view 1 gets the view-2 estimate.

    Parameters
    ----------
    T : array (k, k, k)
    P12, P13, P23 : arrays (k, k), projected pairs
    random_state, min_gap, max_retries : see :func:`algorithm_a`
    return_info : bool
        Also return a dict with ``"Theta"`` (k, k) and ``"n_retries"`` (redraws of Θ needed).

    Returns
    -------
    [A1, A2, A3] : arrays (k, k), column h = :math:`U_v^\top\hat\mu_{v,h}`; the means are
    :math:`U_vA_v`. Cost O(k⁴) per draw of Θ (k eigendecompositions) plus O(k⁴) for the
    eigenvalue matrices L.
    """
    T = check_cubic_tensor(T)
    k = T.shape[0]
    P12 = check_matrix(P12, "P12", shape=(k, k), by="T")
    P13 = check_matrix(P13, "P13", shape=(k, k), by="T")
    if P23 is not None:
        P23 = check_matrix(P23, "P23", shape=(k, k), by="T")
    min_gap, max_retries = check_gap_options(min_gap, max_retries)
    rng = check_random_state(random_state)
    _check_nonzero(T)
    # extreme scales: exact powers of two; A_v scales with T over the pairs matrix it is solved with
    eT, e12, e13 = scale_exponent(T), scale_exponent(P12), scale_exponent(P13)
    e23 = scale_exponent(P23) if P23 is not None else 0
    T, P12, P13 = scaled(T, eT), scaled(P12, e12), scaled(P13, e13)
    P23 = scaled(P23, e23) if P23 is not None else None
    for name, P in (("P12", P12), ("P13", P13)) + ((("P23", P23),) if P23 is not None else ()):
        _check_invertible(P, name)

    Theta, _, R, n_retries = _diagonalise(T, P12, rng, mode=3, min_gap=min_gap, max_retries=max_retries,
                               what="B_123(η) = (U1^T P123(η) U2)(U1^T P12 U2)^{-1}")
    # step 2: eigenvalues of B_123(U3 θ_i) in R's order; L = Θ D^T; U3^T M3 = Θ^{-1} L
    L3 = Theta @ _eigenvalue_rows(T, sla.solve(P12, R), R, 3).T
    A3 = sla.solve(Theta, L3)
    # step 3: B_132 shares the eigenvectors R
    L2 = Theta @ _eigenvalue_rows(T, sla.solve(P13, R), R, 2).T
    A2 = sla.solve(Theta, L2)
    if P23 is None:
        A1 = A2.copy()
    else:
        # step 4: B_231 is diagonalised by U2^T M2 = A2 (same column order)
        L1 = Theta @ _eigenvalue_rows(T, sla.solve(P23, A2), A2, 1).T
        A1 = sla.solve(Theta, L1)
    A1, A2, A3 = (unscale(A1, eT - (e13 if P23 is None else e23), "T, P13, P23", "the means of view 1"),
                  unscale(A2, eT - e13, "T, P13", "the means of view 2"),
                  unscale(A3, eT - e12, "T, P12", "the means of view 3"))
    out = [A1, A2, A3]
    return (out, {"Theta": Theta, "n_retries": n_retries}) if return_info else out


# --------------------------------------------------------------------------- weights
def mixture_weights(means, view_means, scales=None):
    r"""Mixing weights from :math:`\hat M_v\hat w=\hat E[x_v]`, one view or several stacked.

    See :doc:`/chapters/04_three_view_mixtures` for the derivation and the measured effect of
    the choice of views and scales.

    Every view gives :math:`E[x_v]=M_vw` (Anandkumar, Hsu & Kakade 2012, Appendix B.5, where
    the weights come from view 3 alone: :math:`\hat M_3\hat w=\hat E[x_3]`). With several
    views the equations are stacked into one least-squares problem, the rows of view v
    divided by ``scales[v]``:

    .. math:: \hat w=\arg\min_w\sum_v s_v^{-2}\,\lVert\hat M_v w-\hat E[x_v]\rVert^2 .

    Without scales (all :math:`s_v=1`) a view measured in larger units dominates the fit;
    :class:`mvlib.MultiViewMixture` passes the root-mean-square standard deviation of each
    (projected) view, :math:`s_v=\sqrt{\operatorname{tr}\widehat{\mathrm{Cov}}(U_v^\top x_v)/k}`,
    which makes the weights invariant to rescaling any single view.

    Parameters
    ----------
    means : list of arrays (d_v, k)
        Estimated :math:`\hat M_v` (or projected :math:`U_v^\top\hat M_v`, (k, k)), one
        column order for all views.
    view_means : list of arrays (d_v,)
        :math:`\hat E[x_v]` in the same coordinates.
    scales : list of positive floats, optional
        One per view; default all 1 (plain stacking).

    Returns
    -------
    w : array (k,), the least-squares solution, neither clipped nor normalised.
    Cost O(k² Σ_v d_v).
    """
    if not isinstance(means, (list, tuple)) or not isinstance(view_means, (list, tuple)) or not means:
        raise TypeError("means and view_means must be non-empty lists of arrays, one per view")
    if len(means) != len(view_means):
        raise ValueError(f"means has {len(means)} views but view_means has {len(view_means)}")
    Ms = [check_matrix(M, f"means[{v}]") for v, M in enumerate(means)]
    k = Ms[0].shape[1]
    for v, M in enumerate(Ms):
        if M.shape[1] != k:
            raise ValueError(f"means[{v}] has {M.shape[1]} columns but means[0] has {k}")
    ms = [check_array(m, f"view_means[{v}]", ndim=1) for v, m in enumerate(view_means)]
    for v, (M, m) in enumerate(zip(Ms, ms)):
        if m.shape[0] != M.shape[0]:
            raise ValueError(f"view_means[{v}] has length {m.shape[0]} but means[{v}] has {M.shape[0]} rows")
    if scales is None:
        scales = np.ones(len(Ms))
    scales = np.asarray(scales, dtype=float)
    if scales.shape != (len(Ms),) or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
        raise ValueError(f"scales must be {len(Ms)} finite positive numbers, got {scales!r}")
    A = np.vstack([M / s for M, s in zip(Ms, scales)])
    b = np.concatenate([m / s for m, s in zip(ms, scales)])
    w, *_ = sla.lstsq(A, b)
    return w
