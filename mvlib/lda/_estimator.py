r"""Latent Dirichlet allocation by the method of moments: :class:`SpectralLDA`.

Anandkumar, Foster, Hsu, Kakade & Liu (2012), "A spectral algorithm for latent Dirichlet
allocation" (Theorem 3.5 and Algorithm 5), with the moments of :mod:`mvlib.lda`:
no array of n_words × n_words entries is ever formed.
"""
from __future__ import annotations

import numpy as np
from scipy.special import digamma
from sklearn.base import TransformerMixin

from ..core.base import CLIP_WARN, LOG_FLOOR, MOMENTS_CONSTRAINTS, CountDataMixin, MomentEstimator, clip_to_simplex
from ..core.moments import SymmetricOperator
from ..core.scale import (
    open_source,
    SketchedCountMoments,
    SourceCountPairs,
    count_documents,
    resolve_sketch,
)
from ..core.tensors import multilinear
from ..core.validation import (
    Integer,
    RandomState,
    Rule,
    check_alpha0,
    check_counts,
    warn_user,
)
from ._moments import (
    LDASecondMoment,
    dirichlet_corrected_third,
    dirichlet_pairs_product,
    drop_short_documents,
    lda_decompose,
    lda_whitened_third_moment,
    top_eigenpairs,
)

__all__ = ["SpectralLDA"]

#: fixed-point iterations of the variational document-topic update (transform)
_N_TRANSFORM_ITER = 100
_TRANSFORM_TOL = 1e-6


class _DropShort:
    """The in-memory check of ``SpectralLDA.fit``: counts checked, documents under 3 words dropped
    with a warning giving their number (kept in ``n_dropped``)."""

    n_dropped = 0

    def __call__(self, X):
        X, _lengths, self.n_dropped = drop_short_documents(X, 3, "X")
        return X


def _moments_exact(src, alpha0, warn_skipped):
    r"""In memory: :math:`\hat{\mathcal M}_2` as a sparse operator and :math:`\hat{\mathcal M}_3(W,W,W)`
    from the counts (short documents were dropped by the check)."""
    X = src.data
    return LDASecondMoment(X, alpha0), lambda W: lda_whitened_third_moment(X, W, alpha0), 0


def _moments_chunked(src, alpha0, warn_skipped):
    """The same moments as reductions: a pass per product with M2, one for M3(W, W, W)."""
    X, d = src.data, src.n_features
    n, skipped = count_documents(X, skip_short=True)
    n_skipped = warn_skipped(skipped, n + skipped)
    if n < 2:
        raise ValueError(f"X has {n} documents with at least 3 words; at least 2 are required")

    def third(W):
        acc = src.reduce(SketchedCountMoments.partial, W, True)
        return dirichlet_corrected_third(acc.triples_sketch(), acc.pairs_sketch(), W.T @ acc.mean(), alpha0)

    mean = src.reduce(_mean_partial) / n
    return _DirichletPairs(SourceCountPairs(X, n, d, skip_short=True), mean, alpha0), third, n_skipped


class SpectralLDA(CountDataMixin, TransformerMixin, MomentEstimator):
    r"""Topics and Dirichlet prior of latent Dirichlet allocation by the method of moments.

    Model: :math:`\theta_d\sim\mathrm{Dir}(\alpha)`, :math:`\alpha_0=\sum_h\alpha_h` known
    (``alpha0``); each word of document d draws a topic from :math:`\theta_d` and a word from
    that topic's distribution :math:`\mu_h`. Estimation (Anandkumar et al. 2012, Algorithm 5):

    1. :math:`\hat{\mathcal M}_2=\widehat{E[x_1\otimes x_2]}-\frac{\alpha_0}{\alpha_0+1}\hat m_1\hat m_1^\top`
       as an implicit sparse operator (:class:`mvlib.lda.LDASecondMoment`);
    2. whitening W from a randomized range finder on it
       (:func:`mvlib.lda.randomized_whitening`, k + 10 columns, 4 power iterations);
    3. :math:`\hat{\mathcal M}_3(W,W,W)` from the counts with its two α₀ corrections
       (:func:`mvlib.lda.lda_whitened_third_moment`);
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
    moments : {"two-pass", "one-pass"}, default "two-pass"
        ``"two-pass"``: steps 1–4 above (the randomized whitening reads the data q + 2 times, the
        third moment once more). ``"one-pass"``: one pass accumulates the sketched moments of
        :math:`y=\Omega^\top c` (:class:`mvlib.core.scale.SketchedCountMoments`), the corrections and an
        exact whitening are applied in the sketch and the topics carried back through
        :math:`\hat{\mathcal M}_2\Omega` (:doc:`/chapters/11_moments_at_scale`). Streams need it.
    sketch_dim : int, optional
        K for ``moments="one-pass"`` (default min(d, 2k + 10)).

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

    See Also
    --------
    sklearn.decomposition.LatentDirichletAllocation : variational Bayes for LDA, a likelihood baseline.
    mvlib.SpectralTopicModel : the single-topic limit (``alpha0`` → 0).
    mvlib.KernelSpectral : with ``alpha0`` and the delta kernel, the same method on three-word documents.

    Notes
    -----
    ``fit`` costs O(nnz·(k + p)·(q + 2) + n k³ + d k³ + d p²) time with p = k + 10 and q = 4,
    and O(nnz + d p + k³ + n k) memory: no n_words × n_words array. ``X`` is not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import SpectralLDA, matched_error
    >>> from mvlib.lda import LDAModel
    >>> rng = np.random.default_rng(0)
    >>> model = LDAModel([0.3, 0.3, 0.4], rng.dirichlet(np.full(30, 0.3), size=3))
    >>> X, _ = model.sample(5000, random_state=1)      # 5000 documents of 3 to 30 words
    >>> lda = SpectralLDA(3, random_state=0).fit(X)     # alpha0 = 1.0, the sum of the model's alpha
    >>> lda.topic_word_.shape
    (3, 30)
    >>> matched_error(model.topic_word.T, lda.topic_word_.T) < 0.05
    True
    >>> np.round(np.sort(lda.alpha_), 1)
    array([0.3, 0.3, 0.4])
    >>> lda.transform(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints = {"n_components": Integer(), "alpha0": Rule(check_alpha0, takes_name=False),
                              "random_state": RandomState(), **MOMENTS_CONSTRAINTS}

    def __init__(self, n_components, alpha0=1.0, *, random_state=None, moments="two-pass", sketch_dim=None):
        self.n_components = n_components
        self.alpha0 = alpha0
        self.random_state = random_state
        self.moments = moments
        self.sketch_dim = sketch_dim

    def fit(self, X, y=None):
        """Estimate ``topic_word_`` and ``alpha_`` from counts ``X`` (n_docs, n_words); returns ``self``.

        ``X`` is CSR/sparse or dense non-negative integer counts; documents with fewer than 3
        words are skipped with a warning giving their number. ``y`` is ignored.
        """
        p = self._validate_params()
        k, alpha0, rng, moments, sketch_dim = p.n_components, p.alpha0, p.random_state, p.moments, p.sketch_dim
        drop = _DropShort()      # in memory: documents under 3 words dropped (and reported) at once
        src = open_source(X, moments=moments, check=drop)
        d = src.n_features
        if k > d:
            raise ValueError(f"n_components={k} exceeds the vocabulary size {d} (columns of X)")
        if moments == "one-pass":
            omega = resolve_sketch(sketch_dim, k, d, rng)
            acc = src.reduce(SketchedCountMoments.partial, omega, True)
            n_skipped = drop.n_dropped + self._warn_skipped(acc.n_skipped, acc.n + acc.n_skipped)
            acc.require_documents()
            m1 = acc.mean()
            m_y = omega.T @ m1
            C = acc.pairs_cross() - alpha0 / (alpha0 + 1.0) * np.outer(m1, m_y)    # M2 Ω (d, K)
            s, U = top_eigenpairs(omega.T @ C, k, "the sketched Dirichlet-corrected second moment M2")
            W = U / np.sqrt(s)[None, :]                                           # exact, in the sketch
            B = C @ W                                                             # (W^T)^+ in R^d
            Q, T3 = acc.pairs_sketch(), acc.triples_sketch()
            third = lambda W: dirichlet_corrected_third(multilinear(T3, W, W, W), W.T @ Q @ W, W.T @ m_y, alpha0)
            mu, alpha, _lam = lda_decompose(None, third, k, alpha0, random_state=rng, whitening=(W, B))
        else:
            M2, third, n_short = src.passes(_moments_exact, _moments_chunked, alpha0, self._warn_skipped)
            n_skipped = drop.n_dropped + n_short
            mu, alpha, _lam = lda_decompose(M2, third, k, alpha0, random_state=rng)
        if not (np.all(np.isfinite(mu)) and np.all(np.isfinite(alpha))):
            raise RuntimeError("the estimated topics are not finite; the moments are too noisy or degenerate")
        topic_word, clipped = clip_to_simplex(mu)
        if clipped > CLIP_WARN:
            warn_user(
                f"up to {clipped:.0%} of a topic's estimated word mass was negative and clipped "
                "when projecting onto the simplex; the estimate is unreliable (too few documents?)",
                RuntimeWarning)
        self.topic_word_ = topic_word
        self.alpha_ = alpha
        self.clipped_mass_ = clipped
        self.n_skipped_ = n_skipped
        self.n_features_in_ = d
        return self

    @staticmethod
    def _warn_skipped(n_skipped, n_total):
        if n_skipped:
            warn_user(
                f"{n_skipped} of {n_total} documents have fewer than 3 words and were skipped "
                "(third-order moments need 3 distinct word positions)", UserWarning)
        return n_skipped

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
        beta = np.maximum(self.topic_word_, LOG_FLOOR)
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
        return float(np.sum(X.data * np.log(np.maximum(p, LOG_FLOOR))) / total)

    def perplexity(self, X):
        """``exp(-score(X))``: the per-word perplexity under the plug-in approximation of :meth:`score`."""
        return float(np.exp(-self.score(X)))


def _mean_partial(X, offset):
    """Σ_d c_d/ℓ_d over the documents of a chunk with at least 3 words, (d,)."""
    X, lengths = check_counts(X, "X", min_length=0, min_rows=1)
    w = np.where(lengths >= 3, 1.0 / np.maximum(lengths, 1.0), 0.0)
    return np.asarray(X.T @ w).ravel()


class _DirichletPairs(SymmetricOperator):
    """M2 = Pairs − α0/(α0+1) m1 m1ᵀ on top of any implicit Pairs operator (here: Dask passes)."""

    def __init__(self, pairs, mean, alpha0):
        self.pairs, self.mean, self.alpha0 = pairs, mean, alpha0
        super().__init__(dtype=np.float64, shape=pairs.shape)

    def _matmat(self, V):
        return dirichlet_pairs_product(self.pairs.__matmul__, self.mean, self.alpha0, V)


def _row_sum(values, rows, n):
    """Sum the rows of ``values`` (nnz, k) into n groups given by sorted ``rows``."""
    out = np.zeros((n, values.shape[1]))
    if values.shape[0]:
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[starts]] = np.add.reduceat(values, starts, axis=0)
    return out
