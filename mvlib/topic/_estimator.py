r"""Single-topic document models: :class:`SpectralTopicModel` (Anandkumar, Hsu & Kakade 2012 §2).

Model (see :class:`mvlib.topic.SingleTopicModel`): a document's topic h ~ w, and
every word is drawn independently from the topic's word distribution
:math:`\mu_h` (column h of M). Any three distinct word positions are three views
with :math:`M_1=M_2=M_3=M`, and the unbiased count moments
(:func:`mvlib.count_pairs`, :func:`mvlib.count_whitened_triples`) use every ordered
pair and triple of distinct positions of each document.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from sklearn.base import DensityMixin

from ..core.base import (
    MOMENTS_CONSTRAINTS,
    SPECTRAL_CONSTRAINTS,
    CLIP_WARN,
    LOG_FLOOR,
    CountDataMixin,
    MixtureInferenceMixin,
    MomentEstimator,
    clip_to_simplex,
    clip_weights,
    power_decomposition,
    rademacher_signs,
    warn_noise_level,
)
from ..core.moments import CountPairsOperator, count_mean, count_pairs, count_whitened_triples
from ..core.observable import algorithm_a, algorithm_b, fix_signs
from ..core.scale import (
    open_source,
    SketchedCountMoments,
    SourceCountPairs,
    count_documents,
    resolve_sketch,
    sketch_dewhiten,
)
from ..core.tensors import multilinear
from ..core.validation import Options, check_counts, check_identifiable_rank, warn_user
from ..core.whitening import dewhiten, whitening_matrix

__all__ = ["SpectralTopicModel"]



#: vocabularies up to this size form the dense pairs matrix (exact eigh); larger ones apply it
#: implicitly (mvlib.CountPairsOperator) and never hold an n_words × n_words array
_DENSE_MAX_WORDS = 500


def _top_eigvecs(Pairs, k):
    """Top-k eigenpairs (descending) of the symmetric Pairs, after the rank check.

    Dense ``eigh`` up to d = 500 words, Lanczos (ARPACK, deterministic start) above; ``Pairs``
    is an array or a symmetric ``LinearOperator`` (then only Lanczos)."""
    d = Pairs.shape[0]
    implicit = isinstance(Pairs, spla.LinearOperator)
    if implicit and k >= d - 1:
        raise ValueError(f"n_components={k} must be below n_words - 1 = {d - 1} for the implicit pairs moment")
    S = Pairs if implicit else 0.5 * (Pairs + Pairs.T)
    if not implicit and (k >= d - 1 or d <= 500):
        all_evals = sla.eigvalsh(S)
        if k > d:
            check_identifiable_rank(k, np.maximum(all_evals, 0), "the word-pairs matrix Pairs",
                                    kind="positive eigenvalues")
        evals, evecs = sla.eigh(S, subset_by_index=[d - k, d - 1])
    else:
        evals, evecs = spla.eigsh(S, k=k, which="LA", v0=np.ones(d))
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    # Pairs = M diag(w) M^T is PSD: eigenvalues not clearly positive carry no topic
    check_identifiable_rank(k, np.maximum(evals, 0), "the word-pairs matrix Pairs",
                            kind="positive eigenvalues")
    return evals, fix_signs(evecs)




def _power(T, k, rng):
    return power_decomposition(T, k, rng, "documents")


def _count_pairs_noise(X):
    r"""Symmetrised sampling error of :func:`mvlib.count_pairs`:
    :math:`\frac1n\sum_d\varepsilon_d(c_dc_d^\top-\operatorname{diag}c_d)/(\ell_d(\ell_d-1))`
    with balanced random signs, (d, d); an implicit operator above ``_DENSE_MAX_WORDS`` words."""
    n, d = X.shape
    if d > _DENSE_MAX_WORDS:
        return CountPairsOperator(X, rademacher_signs(n))
    lengths = np.asarray(X.sum(axis=1)).ravel()
    e = rademacher_signs(n) / (lengths * (lengths - 1))
    E = np.asarray((X.T @ (sp.diags(e) @ X)).toarray())
    E[np.diag_indices_from(E)] -= np.asarray(X.T @ e).ravel()
    return E / n


def _check_fit_counts(X):
    return check_counts(X, "X", min_length=3, min_rows=2)[0]


class _ExactPasses:
    """The moments of in-memory counts: Pairs as a dense matrix (small vocabularies: exact eigh)
    or an implicit operator (never formed), the noise check's signed copy, and the projected moments."""

    def __init__(self, src):
        self.X = src.data

    def pairs(self):
        X = self.X
        Pairs = count_pairs(X) if X.shape[1] <= _DENSE_MAX_WORDS else CountPairsOperator(X)
        self.Pairs = Pairs
        return Pairs, _count_pairs_noise(X)

    def projected(self, U, need_mean):
        """U^T Pairs U, Triples(U, U, U) and (if asked) the mean word distribution."""
        Pt = U.T @ np.asarray(self.Pairs @ U)
        return Pt, count_whitened_triples(self.X, U), count_mean(self.X) if need_mean else None


class _ChunkedPasses:
    """The same moments of counts held anywhere (Dask, as reductions): one pass per product with
    Pairs, then one pass for U^T Pairs U, Triples(U, U, U) and the mean together."""

    def __init__(self, src):
        self.src = src

    def pairs(self):
        src, d = self.src, self.src.n_features
        n, _ = count_documents(src.data)
        if n < 2:
            raise ValueError(f"X has {n} documents; at least 2 are required")
        Pairs = SourceCountPairs(src.data, n, d)
        noise = SourceCountPairs(src.data, n, d, signed=True)
        if d <= _DENSE_MAX_WORDS:
            Pairs, noise = Pairs @ np.eye(d), noise @ np.eye(d)
        return Pairs, noise

    def projected(self, U, need_mean):
        stats = self.src.reduce(SketchedCountMoments.partial, U)
        return stats.pairs_sketch(), stats.triples_sketch(), stats.mean()


class SpectralTopicModel(CountDataMixin, MixtureInferenceMixin, DensityMixin, MomentEstimator):
    r"""Topic-word distributions of a single-topic document model by the method of moments.

    See :doc:`/chapters/03_topic_models` for the derivation and a numerical check.

    Parameters
    ----------
    n_components : int
        Number k of topics; must not exceed the rank of the word-pairs matrix
        (Condition 2.1: :math:`w_j>0`, M of rank k).
    method : {"observable", "tensor"}, default "observable"
        ``"observable"``: observable operators :math:`\hat B(U\theta)=T(I,I,\theta)\tilde P^{-1}`
        with :math:`U` the top-k eigenvectors of the unbiased :math:`\widehat{\mathrm{Pairs}}`,
        :math:`\tilde P=U^\top\widehat{\mathrm{Pairs}}U`,
        :math:`T=\widehat{\mathrm{Triples}}(U,U,U)`. The eigenvectors :math:`\hat R` of
        :math:`\hat B(U\theta_1)` (Algorithm A, Lemma 2.2) diagonalise every
        :math:`\hat B(U\theta_i)` for the rows of a random orthogonal Θ, and the eigenvalues
        give the topics with their scale, :math:`\hat M=U\Theta^{-1}L` (Algorithm B,
        Lemma 3.3, applied to three word positions). This is more accurate than
        normalising :math:`U\xi_j` to sum 1 (Algorithm A's last step,
        ``variant="A"``), because that normalisation divides by a noisy sum.
        ``"tensor"``: :math:`W=U\tilde W` with :math:`\tilde W` whitening :math:`\tilde P`,
        :math:`\widehat{\mathrm{Triples}}(W,W,W)` from the counts,
        :func:`mvlib.tensor_power_method`, :math:`\mu_j=\lambda_j(W^\top)^+v_j`,
        :math:`w_j=\lambda_j^{-2}` (Anandkumar et al. 2014 §3.1, §4.3).
    random_state : None, int or numpy.random.Generator
    variant : {"B", "A"}, default "B"
        For ``method="observable"``: ``"B"`` as above, ``"A"`` Algorithm A exactly
        (:func:`mvlib.algorithm_a`).
    min_gap : float, default 0.02
        Redraw Θ while the eigenvalues of :math:`\hat B(U\theta_1)` are closer than
        ``min_gap`` × the largest absolute eigenvalue, or complex.
    max_retries : int, default 20
        Redraws of Θ before giving up with ``RuntimeError``.
    moments : {"two-pass", "one-pass"}, default "two-pass"
        ``"one-pass"`` (with ``method="tensor"``): one pass accumulates the sketched unbiased
        moments of :math:`y=\Omega^\top c` with their diagonal corrections
        (:class:`mvlib.core.scale.SketchedCountMoments`, memory O(d K + K³)); see
        :doc:`/chapters/11_moments_at_scale`. Streams need it.
    sketch_dim : int, optional
        K for ``moments="one-pass"`` (default min(d, 2k + 10)); with K = d the one-pass fit equals
        the two-pass tensor route up to rounding.

    Attributes
    ----------
    topic_word_ : array (n_components, n_words)
        Row j is the word distribution of topic j: the estimate projected on the
        simplex (negative entries clipped, rows renormalised; a ``RuntimeWarning``
        when more than 10% of a topic's mass had to be clipped).
    weights_ : array (n_components,)
        Topic probabilities: least squares :math:`\hat M\hat w=\hat E[x]`
        (Appendix B.5), clipped to ≥ 0 and renormalised (``"observable"``), or
        :math:`\lambda_j^{-2}` renormalised (``"tensor"``).
    n_retries_ : int
        Redraws of Θ that were needed.
    clipped_mass_ : float
        Largest fraction of a topic's estimated mass that was negative and clipped.

    See Also
    --------
    mvlib.UnigramMixtureEM : EM for the same model, the likelihood baseline.
    mvlib.SpectralLDA : topics of documents that mix several topics.
    mvlib.MultiViewMixture : the three-view mixture behind the word positions.

    Notes
    -----
    Cost: up to 500 words, O(nnz·k + Σ_d nnz_d² + n k³ + d² k + d k³) with the d×d pairs
    matrix formed; above, the pairs moment is applied implicitly
    (:class:`mvlib.CountPairsOperator`, Lanczos): O(nnz·k per Lanczos step + n k³ + d k³) time
    and O(nnz + d k + k³) memory, no n_words × n_words array. Never a d×d×d array. ``X`` is
    not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import SpectralTopicModel, matched_error
    >>> from mvlib.topic import random_topic_model
    >>> model = random_topic_model(3, 20, random_state=0)    # 3 topics over 20 words
    >>> X, _ = model.sample(5000, random_state=1)            # documents of 10 words, sparse counts
    >>> est = SpectralTopicModel(3, random_state=0).fit(X)
    >>> est.topic_word_.shape
    (3, 20)
    >>> matched_error(model.topic_word.T, est.topic_word_.T) < 0.05
    True
    >>> np.round(np.sort(est.weights_), 1)
    array([0.2, 0.3, 0.5])
    """

    _parameter_constraints = {**SPECTRAL_CONSTRAINTS, "variant": Options(("A", "B"), style="words"),
                              **MOMENTS_CONSTRAINTS}

    def __init__(self, n_components, method="observable", random_state=None, *,
                 variant="B", min_gap=0.02, max_retries=20, moments="two-pass", sketch_dim=None):
        self.n_components = n_components
        self.method = method
        self.random_state = random_state
        self.variant = variant
        self.min_gap = min_gap
        self.max_retries = max_retries
        self.moments = moments
        self.sketch_dim = sketch_dim

    def fit(self, X, y=None):
        """Estimate ``topic_word_`` and ``weights_`` from counts ``X`` (n_docs, n_words); returns ``self``.

        ``X`` is dense or scipy.sparse, non-negative integers, every document with at
        least 3 words (third-order moments); or a ``dask.array`` chunked by rows (blocks may be
        scipy.sparse CSR: the moments are Dask reductions, the counts stay on the workers); or,
        with ``moments="one-pass"``, a stream (an iterator of count chunks, read once).
        ``y`` is ignored.
        """
        p = self._validate_params()
        k, rng, moments, sketch_dim = p.n_components, p.random_state, p.moments, p.sketch_dim
        if moments == "one-pass" and self.method != "tensor":
            raise ValueError("moments='one-pass' needs method='tensor': the observable operators use the "
                             "exact top-k eigenvectors of Pairs in the words' space, which one pass cannot give")
        src = open_source(X, moments=moments, check=_check_fit_counts)
        d = src.n_features
        if moments == "one-pass":
            return self._fit_one_pass(src, k, d, sketch_dim, rng)
        passes = src.passes(_ExactPasses, _ChunkedPasses)
        Pairs, noise = passes.pairs()
        evals, U = _top_eigvecs(Pairs, k)
        warn_noise_level(k, evals[k - 1], noise, U[:, :k - 1], U[:, :k - 1], "the word-pairs matrix Pairs")
        Pt, T, mean = passes.projected(U, need_mean=self.method != "tensor")
        self.n_retries_ = 0
        if self.method == "observable":
            if self.variant == "A":
                M, info = algorithm_a(U, Pt, T, random_state=rng, min_gap=self.min_gap,
                                      max_retries=self.max_retries, return_info=True)
                self.n_retries_ = info["n_retries"]
            else:
                A, info = algorithm_b(T, Pt, Pt, None, random_state=rng, min_gap=self.min_gap,
                                      max_retries=self.max_retries, return_info=True)
                self.n_retries_ = info["n_retries"]
                M = U @ A[2]
            topic_word, clipped = clip_to_simplex(M.T)
            w, *_ = sla.lstsq(topic_word.T, mean)
            return self._set(topic_word, clip_weights(w), clipped, d)
        Wt = whitening_matrix(Pt, k)
        lam, V = _power(multilinear(T, Wt, Wt, Wt), k, rng)   # = Triples(W, W, W), W = U Wt
        M = dewhiten(U @ Wt, V, lam)
        topic_word, clipped = clip_to_simplex(M.T)
        return self._set(topic_word, clip_weights(lam ** -2.0), clipped, d)

    def _fit_one_pass(self, src, k, d, sketch_dim, rng):
        r"""One pass: the sketched unbiased moments (:class:`mvlib.core.scale.SketchedCountMoments`),
        the tensor route in the sketch, topics carried back by
        :math:`\mu_j=\lambda_j\,\widehat{\mathrm{Pairs}}\,\Omega\,W_yv_j` (:func:`mvlib.core.scale.sketch_dewhiten`)."""
        omega = resolve_sketch(sketch_dim, k, d, rng)
        acc = src.reduce(SketchedCountMoments.partial, omega)
        acc.require_documents()
        evals, U = _top_eigvecs(acc.pairs_sketch(), k)
        warn_noise_level(k, evals[k - 1], acc.noise_sketch(), U[:, :k - 1], U[:, :k - 1],
                          "the sketched word-pairs matrix")
        Pt = U.T @ acc.pairs_sketch() @ U
        Wt = whitening_matrix(Pt, k)
        W = U @ Wt
        lam, V = _power(multilinear(acc.triples_sketch(), W, W, W), k, rng)
        M = sketch_dewhiten(acc.pairs_cross(), W, V, lam)
        topic_word, clipped = clip_to_simplex(M.T)
        return self._set(topic_word, clip_weights(lam ** -2.0), clipped, d)

    def _set(self, topic_word, weights, clipped, d):
        if clipped > CLIP_WARN:
            warn_user(
                f"up to {clipped:.0%} of a topic's estimated word mass was negative and clipped "
                "when projecting onto the simplex; the estimate is unreliable (too few documents?)",
                RuntimeWarning,
            )
        self.topic_word_ = topic_word
        self.weights_ = weights
        self.clipped_mass_ = clipped
        self.n_features_in_ = d
        return self

    # ------------------------------------------------------------------ prediction
    def _log_joint(self, X):
        r"""Log joint :math:`\log w_j+\sum_i c_i\log\mu_{j,i}` (n_docs, n_components), probabilities
        floored at 1e-12 (without the multinomial coefficient, which does not depend on the topic);
        gives ``predict_proba``, ``predict``, ``score_samples`` and ``score``. Cost O(nnz·k)."""
        self._check_fitted("topic_word_")
        X, _ = check_counts(X, "X", min_length=0, min_rows=1)
        self._check_n_features(X.shape[1])
        logB = np.log(np.maximum(self.topic_word_, LOG_FLOOR))
        logw = np.log(np.maximum(self.weights_, LOG_FLOOR))
        return np.asarray(X @ logB.T) + logw

