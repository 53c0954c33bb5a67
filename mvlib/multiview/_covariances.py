r"""Component covariances of a view in a multi-view mixture (Anandkumar, Hsu & Kakade 2012, §4.1).

For a three-view mixture whose views are independent given h, and directions
:math:`\phi,\psi\in\mathbb R^{d_3}`,

.. math::
   P_{123}(\phi,\psi) := E[x_1x_2^\top\langle\phi,x_3\rangle\langle\psi,x_3\rangle]
   = M_1\operatorname{diag}(g(\phi,\psi))\operatorname{diag}(w)M_2^\top,\qquad
   g_h(\phi,\psi)=\langle\phi,\mu_{3,h}\rangle\langle\psi,\mu_{3,h}\rangle+\langle\phi,\Sigma_{3,h}\psi\rangle,

so :math:`F_{123}(\phi,\psi)=(U_1^\top P_{123}(\phi,\psi)U_2)(U_1^\top P_{12}U_2)^{-1}
=(U_1^\top M_1)\operatorname{diag}(g(\phi,\psi))(U_1^\top M_1)^{-1}` is diagonalised by the
same eigenvectors :math:`U_1^\top M_1` as :math:`B_{123}(\eta)`. Taking
:math:`\phi=e_i,\psi=e_j` for all i ≤ j gives every entry of the second moments
:math:`G_h=E[x_3x_3^\top\mid h]=\mu_{3,h}\mu_{3,h}^\top+\Sigma_{3,h}`, hence the covariances
:math:`\Sigma_{3,h}=G_h-\mu_{3,h}\mu_{3,h}^\top`.

View 3 need not have distinct means: the eigenvectors can come from known view-1 means,
or from :math:`F_{123}` itself (a random combination :math:`\sum_{ij}\Phi_{ij}F_{123}(e_i,e_j)`
has distinct eigenvalues as soon as the components' second moments differ) — the case
where every component shares one mean and only the covariances differ.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..core.observable import relative_gap
from ..core.validation import (
    check_matrix,
    check_positive_int,
    check_random_state,
    check_views,
    scale_exponent,
    scaled,
    unscale,
)

__all__ = ["f123_operator", "view_covariances"]

_CHUNK = 4096
#: random combinations of the F123(e_i, e_j) tried without means1, and the relative
#: eigenvalue gap at which the search stops early
_N_DRAWS, _MIN_GAP = 20, 0.02


def _projected_fourth(Y1, Y2, X3, chunk=_CHUNK):
    r""":math:`Q_{ab,ij}=\frac1n\sum_s (Y_1)_{sa}(Y_2)_{sb}(X_3)_{si}(X_3)_{sj}`, shape (k, k, d3, d3).

    Cost O(n k² d3²), memory O(chunk (k² + d3²) + k² d3²)."""
    n, k = Y1.shape
    d = X3.shape[1]
    Q = np.zeros((k * k, d * d))
    for s in range(0, n, chunk):
        a, b, c = Y1[s:s + chunk], Y2[s:s + chunk], X3[s:s + chunk]
        left = (a[:, :, None] * b[:, None, :]).reshape(len(a), k * k)
        right = (c[:, :, None] * c[:, None, :]).reshape(len(c), d * d)
        Q += left.T @ right
    return (Q / n).reshape(k, k, d, d)


def f123_operator(views, U1, U2, phi, psi):
    r"""The observable operator :math:`F_{123}(\phi,\psi)` of a three-view sample, shape (k, k).

    With the empirical moments :math:`\hat P_{12}=\frac1n X_1^\top X_2` and
    :math:`\hat P_{123}(\phi,\psi)=\frac1n\sum_s x_{1,s}x_{2,s}^\top
    \langle\phi,x_{3,s}\rangle\langle\psi,x_{3,s}\rangle`,

    .. math::
       F_{123}(\phi,\psi)=(U_1^\top\hat P_{123}(\phi,\psi)U_2)(U_1^\top\hat P_{12}U_2)^{-1},

    which on exact moments equals :math:`(U_1^\top M_1)\operatorname{diag}(g(\phi,\psi))
    (U_1^\top M_1)^{-1}` (module docstring). :func:`view_covariances` computes it for all
    :math:`\phi=e_i,\psi=e_j` at once; this function computes one, directly from the rows.

    Parameters
    ----------
    views : [X1, X2, X3], arrays (n, d1), (n, d2), (n, d3)
    U1, U2 : arrays (d1, k), (d2, k)
        Bases with :math:`U_1^\top\hat P_{12}U_2` invertible.
    phi, psi : arrays (d3,)

    Returns
    -------
    array (k, k)

    Notes
    -----
    Cost O(n(d1 + d2)k + n d3 + k³).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.multiview import f123_operator
    >>> X1 = X2 = np.eye(2)                   # two rows: component 1, then component 2
    >>> X3 = np.array([[1.0], [3.0]])          # view-3 values 1 and 3: g = (1, 9) for phi = psi = 1
    >>> F = f123_operator([X1, X2, X3], np.eye(2), np.eye(2), [1.0], [1.0])
    >>> np.round(F, 6)
    array([[1., 0.],
           [0., 9.]])
    """
    X1, X2, X3 = (np.asarray(X, float) for X in views)
    n = X1.shape[0]
    q = (X3 @ np.asarray(phi, float)) * (X3 @ np.asarray(psi, float))
    den = U1.T @ X1.T @ X2 @ U2 / n
    num = U1.T @ (X1 * q[:, None]).T @ X2 @ U2 / n
    return np.linalg.solve(den.T, num.T).T


def view_covariances(views, n_components, *, means1=None, means3=None, random_state=None):
    r"""Covariances :math:`\Sigma_{3,h}` (and second moments) of view 3 for each component.

    See :doc:`/chapters/04_three_view_mixtures` (section on covariances) for the derivation of
    :math:`F_{123}` with sympy, the exact check and the shared-mean case; Proposition 4.1 of
    Anandkumar, Hsu & Kakade (2012).

    Parameters
    ----------
    views : [X1, X2, X3], arrays (n, d_v) (dense; view 3 is squared, so keep d3 moderate)
    n_components : int k
    means1 : array (d1, k), optional
        Estimated view-1 means (e.g. ``MultiViewMixture().fit(views).means_[0].T``): they fix
        the eigenvectors :math:`U_1^\top M_1` and the component order. Without them the
        eigenvectors of a random combination of the :math:`F_{123}(e_i,e_j)` are used, the
        best-separated real spectrum among up to 20 random combinations (the component order
        is then arbitrary, reported by ``directions1``).
    means3 : array (d3, k), optional
        View-3 means in the same order; default: every component gets :math:`\hat E[x_3]`
        (the shared-mean model).
    random_state : None, int or Generator (only used without ``means1``)

    Returns
    -------
    dict with ``covariances`` (k, d3, d3) symmetric, ``second_moments`` (k, d3, d3)
    :math:`G_h`, ``directions1`` (d1, k) — :math:`U_1R`, proportional to the view-1 means
    in the returned order.

    Notes
    -----
    Cost O(n(d1 + d2)k + n k² d3² + d1 d2 min(d1, d2) + k³ d3²).
    """
    X1, X2, X3 = check_views(views, allow_sparse=False)
    # views of extreme scale: exact powers of two; the moments of view 3 scale back by 2**(2 e3)
    e1, e3 = scale_exponent(X1), scale_exponent(X3)
    X1, X2, X3 = scaled(X1, e1), scaled(X2, scale_exponent(X2)), scaled(X3, e3)
    n, d1 = X1.shape
    d2, d3 = X2.shape[1], X3.shape[1]
    k = check_positive_int(n_components, "n_components")
    if k > min(d1, d2):
        raise ValueError(f"n_components={k} exceeds the dimensions of views 1 and 2 ({d1}, {d2}) (Condition 3.1)")
    P12 = X1.T @ X2 / n
    U, s, Vt = sla.svd(P12, full_matrices=False)
    if not s[k - 1] > max(d1, d2) * np.finfo(float).eps * s[0]:
        raise ValueError(f"n_components={k} exceeds the numerical rank of the pairs matrix P12 (Condition 3.1)")
    U1, U2 = U[:, :k], Vt[:k].T
    Y1, Y2 = X1 @ U1, X2 @ U2
    P12p = Y1.T @ Y2 / n
    Q = _projected_fourth(Y1, Y2, X3)
    F = np.einsum("abij,bc->acij", Q, np.linalg.inv(P12p))  # F123(e_i, e_j), (k, k, d3, d3)
    if means1 is not None:
        means1 = scaled(check_matrix(means1, "means1", shape=(d1, k)), e1)
        R = U1.T @ means1
    else:
        rng = check_random_state(random_state)
        best = None
        for _ in range(_N_DRAWS):   # best-separated real spectrum over a few random combinations
            Phi = rng.standard_normal((d3, d3))
            evals, R = sla.eig(np.einsum("acij,ij->ac", F, Phi + Phi.T))
            gap, imag = relative_gap(evals)
            score = gap if imag <= 1e-8 else -1.0
            if best is None or score > best[0]:
                best = (score, R)
            if score >= _MIN_GAP:
                break
        if not best[0] > 0:
            raise ValueError(f"F123 had complex or repeated eigenvalues for {_N_DRAWS} random combinations: "
                             "the components' view-3 second moments are not distinguishable from these data")
        R = np.real(best[1])
    G = np.einsum("ta,acij,ct->tij", np.linalg.inv(R), F, R)  # diagonals of R^{-1} F R
    G = 0.5 * (G + G.transpose(0, 2, 1))
    if means3 is None:
        mu3 = np.tile(X3.mean(axis=0)[:, None], (1, k))
    else:
        mu3 = scaled(check_matrix(means3, "means3", shape=(d3, k)), e3)
    cov = G - np.einsum("it,jt->tij", mu3, mu3)
    return {"covariances": unscale(cov, 2 * e3, "X3", "the covariances"),
            "second_moments": unscale(G, 2 * e3, "X3", "the second moments"),
            "directions1": U1 @ R if means1 is None else unscale(U1 @ R, e1, "X1", "the directions")}
