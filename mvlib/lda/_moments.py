r"""Moments of latent Dirichlet allocation from sparse word counts, without any d×d array.

Model (Blei, Ng & Jordan 2003): a document draws topic proportions
:math:`\theta\sim\mathrm{Dir}(\alpha)`, :math:`\alpha_0=\sum_h\alpha_h`, and each of its words
independently a topic :math:`h\sim\theta` and a word :math:`x\sim\mu_h` (column h of the
(d, k) topic-word matrix). With :math:`x_1, x_2, x_3` three distinct word positions (one-hot)
and :math:`m_1=E[x_1]`, Anandkumar, Foster, Hsu, Kakade & Liu (2012, Theorem 3.5; also
Anandkumar et al. 2014, JMLR, Theorem 3.5) give

.. math::

   \mathcal M_2 &= E[x_1\otimes x_2]-\tfrac{\alpha_0}{\alpha_0+1}m_1\otimes m_1
      = \sum_h \frac{\alpha_h}{\alpha_0(\alpha_0+1)}\mu_h^{\otimes2},\\
   \mathcal M_3 &= E[x_1\otimes x_2\otimes x_3]
      -\tfrac{\alpha_0}{\alpha_0+2}\bigl(E[x_1\otimes x_2\otimes m_1]+E[x_1\otimes m_1\otimes x_2]
      +E[m_1\otimes x_1\otimes x_2]\bigr)
      +\tfrac{2\alpha_0^2}{(\alpha_0+1)(\alpha_0+2)}m_1^{\otimes3}
      = \sum_h \frac{2\alpha_h}{\alpha_0(\alpha_0+1)(\alpha_0+2)}\mu_h^{\otimes3}.

Everything here works on a (n_docs, n_words) count matrix ``X`` (CSR or dense) with
documents of unequal lengths :math:`\ell\ge3`. :math:`E[x_1\otimes x_2]` and
:math:`E[x_1\otimes x_2\otimes x_3]` are the unbiased averages over ordered pairs and
triples of distinct positions of each document (as in :func:`mvlib.count_pairs`,
:func:`mvlib.count_whitened_triples`). :math:`\mathcal M_2` is only ever applied to vectors
(:class:`LDASecondMoment`), whitening comes from a randomized range finder on that operator
(:func:`randomized_whitening`, Halko, Martinsson & Tropp 2011, Algorithms 4.3/4.4), and
:math:`\mathcal M_3(W,W,W)` is accumulated from the counts (:func:`lda_whitened_third_moment`):
memory O(nnz + d k + k³) throughout.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..core.moments import CountPairsOperator, SymmetricOperator, count_whitened_triples, inv_falling
from ..core.validation import (
    check_alpha0,
    check_counts,
    check_identifiable_rank,
    check_matrix,
    check_positive_int,
    check_random_state,
    warn_user,
)

__all__ = [
    "lda_moment_coefficients",
    "drop_short_documents",
    "lda_mean",
    "LDASecondMoment",
    "randomized_whitening",
    "lda_whitened_pairs",
    "lda_whitened_third_moment",
    "lda_decompose",
    "dirichlet_corrected_third",
    "dirichlet_pairs_product",
    "top_eigenpairs",
]



def lda_moment_coefficients(alpha0):
    r"""The coefficients :math:`(c, c')` with :math:`\mathcal M_2=\sum_h c\,\alpha_h\mu_h^{\otimes2}`,
    :math:`\mathcal M_3=\sum_h c'\,\alpha_h\mu_h^{\otimes3}`.

    :math:`c=1/(\alpha_0(\alpha_0+1))`, :math:`c'=2/(\alpha_0(\alpha_0+1)(\alpha_0+2))`
    (Anandkumar et al. 2012, Theorem 3.5). Returns a tuple of two floats.
    """
    a = check_alpha0(alpha0)
    return 1.0 / (a * (a + 1.0)), 2.0 / (a * (a + 1.0) * (a + 2.0))


def drop_short_documents(X, min_length: int = 3, name: str = "X"):
    """Check counts and drop documents with fewer than ``min_length`` words.

    Returns ``(X_csr, lengths, n_dropped)``; a ``UserWarning`` says how many documents were
    skipped. Raises ``ValueError`` when fewer than 2 documents remain. Cost O(nnz).
    """
    X, lengths = check_counts(X, name, min_length=0, min_rows=1)
    keep = lengths >= min_length
    n_dropped = int(np.sum(~keep))
    if n_dropped:
        warn_user(
            f"{n_dropped} of {X.shape[0]} documents have fewer than {min_length} words and were skipped "
            f"(third-order moments need {min_length} distinct word positions)",
            UserWarning,
        )
        X, lengths = X[keep], lengths[keep]
    if X.shape[0] < 2:
        raise ValueError(f"{name} has {X.shape[0]} documents with at least {min_length} words; at least 2 are required")
    return X, lengths, n_dropped


def lda_mean(X):
    r""":math:`\hat m_1=\frac1n\sum_d c_d/\ell_d`, shape (d,). ``X`` counts, every document ≥ 3 words. Cost O(nnz)."""
    X, lengths = check_counts(X, "X", min_length=3, min_rows=1)
    return np.asarray(X.T @ (1.0 / lengths)).ravel() / X.shape[0]


class LDASecondMoment(SymmetricOperator):
    r"""The α₀-corrected second moment :math:`\hat{\mathcal M}_2` as an implicit symmetric (d, d) operator.

    .. math:: \hat{\mathcal M}_2 v=\frac1n\Bigl[X^\top\bigl(b\circ Xv\bigr)-(X^\top b)\circ v\Bigr]
              -\frac{\alpha_0}{\alpha_0+1}\hat m_1(\hat m_1^\top v),\qquad b_d=\frac1{\ell_d(\ell_d-1)},

    the unbiased pair average :math:`(c c^\top-\operatorname{diag}c)/(\ell(\ell-1))` per document
    minus the Dirichlet correction (Anandkumar et al. 2012, Theorem 3.5). A (d, p) block costs
    O(nnz·p + d p); memory O(nnz + d). ``X`` counts (CSR or dense), all documents ≥ 3 words.

    Attributes: ``X`` (CSR), ``lengths``, ``alpha0``, ``mean`` (:math:`\hat m_1`).
    """

    def __init__(self, X, alpha0=1.0):
        self.alpha0 = check_alpha0(alpha0)
        self._pairs = CountPairsOperator(X, min_length=3)
        self.X, self.lengths, self.n_docs = self._pairs.X, self._pairs.lengths, self._pairs.n_docs
        self.mean = np.asarray(self.X.T @ (1.0 / self.lengths)).ravel() / self.n_docs
        d = self.X.shape[1]
        super().__init__(dtype=np.float64, shape=(d, d))

    def pairs_matmat(self, V):
        r""":math:`\widehat{E[x_1\otimes x_2]}\,V` for V (d, p): O(nnz·p) (:class:`mvlib.CountPairsOperator`)."""
        return self._pairs @ np.asarray(V, dtype=float)

    def _matmat(self, V):
        return dirichlet_pairs_product(self.pairs_matmat, self.mean, self.alpha0, V)


def dirichlet_pairs_product(pairs_matmat, mean, alpha0, V):
    r""":math:`\mathcal M_2V=\widehat{E[x_1\otimes x_2]}V-\frac{\alpha_0}{\alpha_0+1}\hat m_1(\hat m_1^\top V)`
    for V (d,) or (d, p), given the product with the pairs moment (in memory or as Dask passes)."""
    V = np.asarray(V, dtype=float)
    corr = alpha0 / (alpha0 + 1.0)
    if V.ndim == 1:
        return np.asarray(pairs_matmat(V)).ravel() - corr * mean * (mean @ V)
    return np.asarray(pairs_matmat(V)) - corr * np.outer(mean, mean @ V)


def randomized_whitening(op, k, *, oversample: int = 10, n_power_iter: int = 4, random_state=None):
    r"""Whitening of a symmetric PSD operator of rank ≥ k from a randomized range finder.

    With :math:`\Omega` (d, k + oversample) Gaussian, :math:`Q` an orthonormal basis of
    :math:`\mathcal M_2^{q+1}\Omega` (subspace iteration with re-orthonormalisation,
    Halko, Martinsson & Tropp 2011, Algorithm 4.4, :math:`q` = ``n_power_iter``), the
    top-k eigenpairs :math:`(s, U)` of :math:`Q^\top\mathcal M_2 Q` give

    .. math:: W = QU\operatorname{diag}(s)^{-1/2},\qquad W^\top\mathcal M_2W=I_k\ (\text{on the range}),
              \qquad B = QU\operatorname{diag}(s)^{1/2}=(W^\top)^+ .

    ``op`` is anything with ``@`` on (d, p) arrays and a ``shape`` (e.g. :class:`LDASecondMoment`,
    a dense symmetric array). Returns ``(W, B, s)``: (d, k), (d, k), (k,) descending.
    Raises ``ValueError`` when the k-th eigenvalue is not clearly positive (Condition 3.1).
    Cost O((q + 2)·(cost of op on p columns) + d p²), p = k + oversample; memory O(d p).
    """
    d = op.shape[0]
    k = check_positive_int(k, "n_components")
    oversample = check_positive_int(oversample, "oversample", minimum=0)
    n_power_iter = check_positive_int(n_power_iter, "n_power_iter", minimum=0)
    rng = check_random_state(random_state)
    if k > d:
        raise ValueError(f"n_components={k} exceeds the vocabulary size {d}")
    p = min(d, k + oversample)
    Q = np.asarray(op @ rng.standard_normal((d, p)))
    for _ in range(n_power_iter):
        Q, _r = sla.qr(Q, mode="economic")
        Q = np.asarray(op @ Q)
    Q, _r = sla.qr(Q, mode="economic")
    s, U = top_eigenpairs(Q.T @ np.asarray(op @ Q), k, "the Dirichlet-corrected second moment M2")
    QU = Q @ U
    return QU / np.sqrt(s)[None, :], QU * np.sqrt(s)[None, :], s


def top_eigenpairs(S, k, what):
    """Top-k eigenpairs (descending) of the symmetric part of a small matrix S, after the check that
    the k-th eigenvalue is clearly positive (Condition 3.1); returns ``(s, U)``: (k,), (p, k)."""
    S = 0.5 * (S + S.T)
    evals, evecs = sla.eigh(S)
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    check_identifiable_rank(k, np.maximum(evals, 0), what, kind="positive eigenvalues")
    return evals[:k], evecs[:, :k]


def lda_whitened_pairs(X, W):
    r""":math:`\widehat{E[x_1\otimes x_2]}(W,W)=\frac1n\bigl[(XW)^\top\operatorname{diag}(b)(XW)
    -W^\top\operatorname{diag}(X^\top b)W\bigr]`, shape (k, k); cost O(nnz·k + (n + d) k²)."""
    X, lengths = check_counts(X, "X", min_length=3, min_rows=1)
    W = check_matrix(W, "W")
    if W.shape[0] != X.shape[1]:
        raise ValueError(f"W has {W.shape[0]} rows but X has {X.shape[1]} columns")
    b = inv_falling(lengths, 2)
    Y = np.asarray(X @ W)
    diag = np.asarray(X.T @ b).ravel()
    return ((Y * b[:, None]).T @ Y - (W * diag[:, None]).T @ W) / X.shape[0]


def lda_whitened_third_moment(X, W, alpha0=1.0):
    r"""The whitened Dirichlet-corrected third moment :math:`\hat{\mathcal M}_3(W,W,W)`, shape (k, k, k).

    With :math:`u=W^\top\hat m_1`, :math:`P=\widehat{E[x_1\otimes x_2]}(W,W)` (:func:`lda_whitened_pairs`)
    and :math:`T=\widehat{E[x_1\otimes x_2\otimes x_3]}(W,W,W)` (:func:`mvlib.count_whitened_triples`),

    .. math:: \hat{\mathcal M}_3(W,W,W)=T-\frac{\alpha_0}{\alpha_0+2}\bigl(P\otimes u+
              \text{its two other placements of }u\bigr)+\frac{2\alpha_0^2}{(\alpha_0+1)(\alpha_0+2)}u^{\otimes3}

    (Anandkumar et al. 2012, Theorem 3.5, contracted with W on every side). Documents need
    ≥ 3 words. Cost O(nnz·k + n k³ + d k³) time, O(n k + d k + k³) memory.
    """
    alpha0 = check_alpha0(alpha0)
    X, lengths = check_counts(X, "X", min_length=3, min_rows=1)
    W = check_matrix(W, "W")
    if W.shape[0] != X.shape[1]:
        raise ValueError(f"W has {W.shape[0]} rows but X has {X.shape[1]} columns")
    T = count_whitened_triples(X, W)
    P = lda_whitened_pairs(X, W)
    u = W.T @ (np.asarray(X.T @ (1.0 / lengths)).ravel() / X.shape[0])
    return dirichlet_corrected_third(T, P, u, alpha0)


def dirichlet_corrected_third(T, P, u, alpha0):
    r"""The two α₀ corrections of Theorem 3.5 in whitened coordinates, (k, k, k).

    :math:`T-\frac{\alpha_0}{\alpha_0+2}(P\otimes u+\text{two other placements})
    +\frac{2\alpha_0^2}{(\alpha_0+1)(\alpha_0+2)}u^{\otimes3}` for the whitened triples T
    (k, k, k), pairs P (k, k) and mean u (k,) (from the data, :func:`lda_whitened_third_moment`,
    or from a one-pass sketch, :class:`mvlib.core.scale.SketchedCountMoments`). Cost O(k³).
    """
    Pu = P[:, :, None] * u[None, None, :]
    corr = Pu + np.transpose(Pu, (0, 2, 1)) + np.transpose(Pu, (2, 0, 1))
    uuu = u[:, None, None] * u[None, :, None] * u[None, None, :]
    return T - alpha0 / (alpha0 + 2.0) * corr + 2.0 * alpha0 ** 2 / ((alpha0 + 1.0) * (alpha0 + 2.0)) * uuu


def lda_decompose(M2, third, k, alpha0=1.0, *, oversample: int = 10, n_power_iter: int = 4,
                  random_state=None, tensor_options=None, whitening=None):
    r"""Topics and Dirichlet parameters from the corrected moments (Anandkumar et al. 2012, Algorithm 5).

    ``M2``: a symmetric (d, d) operator (array or :class:`LDASecondMoment`); ``third``: a callable
    ``W -> M3(W, W, W)`` (k, k, k). With :math:`(W, B)` from :func:`randomized_whitening` and
    :func:`mvlib.tensor_power_method` giving :math:`\mathcal M_3(W,W,W)=\sum_h\lambda_hv_h^{\otimes3}`,
    :math:`\lambda_h=\frac{c'}{c^{3/2}}\alpha_h^{-1/2}=\frac{2\sqrt{\alpha_0(\alpha_0+1)}}{\alpha_0+2}\alpha_h^{-1/2}`,
    hence

    .. math:: \alpha_h=\frac{4\alpha_0(\alpha_0+1)}{(\alpha_0+2)^2\lambda_h^2},\qquad
              \mu_h\propto B v_h .

    Returns ``(mu, alpha, lam)``: mu (k, d) un-normalised topic directions with positive sum,
    alpha (k,), λ (k,). ``whitening=(W, B)`` replaces the randomized whitening (``M2`` is then
    unused): the one-pass sketch passes :math:`W_y` (K, k) and :math:`B=\mathcal M_2\Omega W_y` (d, k)
    (:func:`mvlib.core.scale.sketch_dewhiten`). Cost that of the whitening plus O(d k² + k⁴·restarts·iterations).
    """
    from ..core.power import tensor_power_method

    alpha0 = check_alpha0(alpha0)
    rng = check_random_state(random_state)
    if whitening is None:
        W, B, s = randomized_whitening(M2, k, oversample=oversample, n_power_iter=n_power_iter,
                                       random_state=rng)
    else:
        W, B = whitening
    T = np.asarray(third(W), dtype=float)
    cp = tensor_power_method(T, k, random_state=rng, **(tensor_options or {}))
    lam, V = np.asarray(cp.weights, float), np.asarray(cp.factors[0], float)
    mu = (B @ V).T
    sign = np.sign(mu.sum(axis=1))
    sign[sign == 0] = 1.0
    mu = mu * sign[:, None]
    lam = lam * sign   # the eigenpair (λ, v) and (−λ, −v) are the same rank-one term
    alpha = 4.0 * alpha0 * (alpha0 + 1.0) / ((alpha0 + 2.0) ** 2 * lam ** 2)
    return mu, alpha, lam
