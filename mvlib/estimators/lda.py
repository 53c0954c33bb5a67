r"""Latent Dirichlet allocation by the method of moments: :class:`SpectralLDA`.

Anandkumar, Foster, Hsu, Kakade & Liu (2012), "A spectral algorithm for latent Dirichlet
allocation" (Theorem 3.5 and Algorithm 5), with the moments of :mod:`mvlib.lda_moments`:
no array of n_words × n_words entries is ever formed.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import digamma
from sklearn.base import TransformerMixin

from .._validation import check_counts, check_positive_int, check_random_state
from ..lda_moments import (
    LDASecondMoment,
    _check_alpha0,
    drop_short_documents,
    lda_decompose,
    lda_whitened_third_moment,
)
from ._base import _CountData, _Estimator

__all__ = ["SpectralLDA"]

#: warn when more than this fraction of a topic's mass is negative and clipped away
_CLIP_WARN = 0.1
#: probabilities are floored at this value inside logarithms
_LOG_FLOOR = 1e-12
#: fixed-point iterations of the variational document-topic update (transform)
_N_TRANSFORM_ITER = 100
_TRANSFORM_TOL = 1e-6


class SpectralLDA(_CountData, TransformerMixin, _Estimator):
    r"""Topics and Dirichlet prior of latent Dirichlet allocation by the method of moments.

    Model: :math:`\theta_d\sim\mathrm{Dir}(\alpha)`, :math:`\alpha_0=\sum_h\alpha_h` known
    (``alpha0``); each word of document d draws a topic from :math:`\theta_d` and a word from
    that topic's distribution :math:`\mu_h`. Estimation (Anandkumar et al. 2012, Algorithm 5):

    1. :math:`\hat{\mathcal M}_2=\widehat{E[x_1\otimes x_2]}-\frac{\alpha_0}{\alpha_0+1}\hat m_1\hat m_1^\top`
       as an implicit sparse operator (:class:`mvlib.lda_moments.LDASecondMoment`);
    2. whitening W from a randomized range finder on it
       (:func:`mvlib.lda_moments.randomized_whitening`, k + 10 columns, 4 power iterations);
    3. :math:`\hat{\mathcal M}_3(W,W,W)` from the counts with its two α₀ corrections
       (:func:`mvlib.lda_moments.lda_whitened_third_moment`);
    4. :func:`mvlib.tensor_power_method`; :math:`\alpha_h=4\alpha_0(\alpha_0+1)/((\alpha_0+2)^2\lambda_h^2)`,
       :math:`\mu_h\propto(W^\top)^+v_h` (Theorem 3.5).

    See :doc:`/chapters/10_dirichlet_ica` for the derivation of the moments and the checks.

    Parameters
    ----------
    n_components : int
        Number k of topics (at most the rank of :math:`\mathcal M_2`).
    alpha0 : float, default 1.0
        Concentration :math:`\alpha_0=\sum_h\alpha_h` of the Dirichlet prior (assumed known, as
        in the paper; :math:`\alpha_0\to0` is the single-topic model).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    topic_word_ : array (n_components, n_words)
        Topic-word distributions: estimates with negative entries clipped, rows renormalised
        (a ``RuntimeWarning`` when more than 10% of a topic's mass was clipped).
    alpha_ : array (n_components,)
        Estimated Dirichlet parameters, positive; their sum is close to ``alpha0`` when the
        model fits (it equals it on population moments).
    n_skipped_ : int
        Documents with fewer than 3 words, skipped by ``fit`` (with a ``UserWarning``).
    clipped_mass_ : float
    n_features_in_ : int

    Notes
    -----
    ``fit`` costs O(nnz·(k + p)·(q + 2) + n k³ + d k³ + d p²) time with p = k + 10 and q = 4,
    and O(nnz + d p + k³ + n k) memory: no n_words × n_words array. ``X`` is not modified.
    """

    def __init__(self, n_components, alpha0=1.0, *, random_state=None):
        self.n_components = n_components
        self.alpha0 = alpha0
        self.random_state = random_state

    def fit(self, X, y=None):
        """Estimate ``topic_word_`` and ``alpha_`` from counts ``X`` (n_docs, n_words); returns ``self``.

        ``X`` is CSR/sparse or dense non-negative integer counts; documents with fewer than 3
        words are skipped with a warning giving their number. ``y`` is ignored.
        """
        k = check_positive_int(self.n_components, "n_components")
        alpha0 = _check_alpha0(self.alpha0)
        rng = check_random_state(self.random_state)
        X, _lengths, n_skipped = drop_short_documents(X, 3, "X")
        if k > X.shape[1]:
            raise ValueError(f"n_components={k} exceeds the vocabulary size {X.shape[1]} (columns of X)")
        M2 = LDASecondMoment(X, alpha0)
        mu, alpha, _lam = lda_decompose(M2, lambda W: lda_whitened_third_moment(X, W, alpha0), k, alpha0,
                                        random_state=rng)
        if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(alpha))):
            raise RuntimeError("the estimated topics are not finite; the moments are too noisy or degenerate")
        pos = np.maximum(mu, 0.0)
        neg = np.maximum(-mu, 0.0).sum(axis=1)
        total = pos.sum(axis=1)
        if np.any(~(total > 0)):
            raise RuntimeError("an estimated topic has no positive word mass; the sample is too small or "
                               "n_components exceeds the number of topics")
        clipped = float(np.max(neg / (total + neg)))
        if clipped > _CLIP_WARN:
            warnings.warn(
                f"up to {clipped:.0%} of a topic's estimated word mass was negative and clipped "
                "when projecting onto the simplex; the estimate is unreliable (too few documents?)",
                RuntimeWarning, stacklevel=2)
        self.topic_word_ = pos / total[:, None]
        self.alpha_ = alpha
        self.clipped_mass_ = clipped
        self.n_skipped_ = n_skipped
        self.n_features_in_ = X.shape[1]
        return self

    # ------------------------------------------------------------------ inference
    def _check_X(self, X):
        self._check_fitted("topic_word_")
        X, lengths = check_counts(X, "X", min_length=0, min_rows=1)
        self._check_n_features(X.shape[1])
        return X, lengths

    def _gamma(self, X):
        """Variational Dirichlet parameters γ (n_docs, k) of each document (mean-field fixed point)."""
        n = X.shape[0]
        k = self.topic_word_.shape[0]
        beta = np.maximum(self.topic_word_, _LOG_FLOOR)
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        cols, counts = X.indices, X.data
        Bt = beta[:, cols].T                                    # (nnz, k)
        gamma = np.tile(self.alpha_, (n, 1)) + (np.asarray(X.sum(axis=1)).ravel() / k)[:, None]
        active = np.ones(n, dtype=bool)      # each document stops at its own fixed point, so a
        for _ in range(_N_TRANSFORM_ITER):    # document's result never depends on the others
            E = np.exp(digamma(gamma) - digamma(gamma.sum(axis=1, keepdims=True)))
            norm = np.einsum("nk,nk->n", E[rows], Bt)
            contrib = Bt * (counts / norm)[:, None]
            S = _row_sum(contrib, rows, n)
            new = self.alpha_[None, :] + E * S
            change = np.max(np.abs(new - gamma), axis=1)
            scale = np.maximum(1.0, np.max(gamma, axis=1))
            gamma = np.where(active[:, None], new, gamma)
            active &= ~(change < _TRANSFORM_TOL * scale)
            if not active.any():
                break
        return gamma

    def transform(self, X):
        r"""Document-topic proportions (n_docs, n_components), rows on the simplex.

        Approximation: the mean-field variational posterior of Blei, Ng & Jordan (2003, eqs. 6–7)
        under the fitted topics and prior, :math:`\phi_{wh}\propto\mu_{hw}\exp\psi(\gamma_h)`,
        :math:`\gamma=\alpha+\sum_w c_w\phi_w`, iterated to a fixed point, document by document (at most 100 steps);
        returns the posterior mean :math:`\gamma/\sum_h\gamma_h`. Documents of any length
        (an empty one gets :math:`\alpha/\alpha_0`). Cost O(nnz·k) per step.
        """
        X, _ = self._check_X(X)
        gamma = self._gamma(X)
        return gamma / gamma.sum(axis=1, keepdims=True)

    def score(self, X, y=None):
        r"""Per-word log-likelihood of documents ``X`` under the fitted model (higher is better).

        Approximation (plug-in): :math:`\sum_d\sum_w c_{dw}\log\sum_h\hat\theta_{dh}\mu_{hw}
        \big/\sum_d\ell_d` with :math:`\hat\theta_d` from :meth:`transform` of the same
        documents; it bounds the marginal likelihood optimistically (θ is fitted, not integrated
        out). Perplexity is ``exp(-score)``. Probabilities are floored at 1e-12.
        """
        X, lengths = self._check_X(X)
        total = float(lengths.sum())
        if not total > 0:
            raise ValueError("X holds no words; the per-word log-likelihood is undefined")
        theta = self.transform(X)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        p = np.einsum("nk,nk->n", theta[rows], self.topic_word_[:, X.indices].T)
        return float(np.sum(X.data * np.log(np.maximum(p, _LOG_FLOOR))) / total)

    def perplexity(self, X):
        """``exp(-score(X))``: the per-word perplexity under the plug-in approximation of :meth:`score`."""
        return float(np.exp(-self.score(X)))


def _row_sum(values, rows, n):
    """Sum the rows of ``values`` (nnz, k) into n groups given by sorted ``rows``."""
    out = np.zeros((n, values.shape[1]))
    if values.shape[0]:
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[starts]] = np.add.reduceat(values, starts, axis=0)
    return out
