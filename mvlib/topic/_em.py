"""UnigramMixtureEM (split from the former baselines module)."""
from __future__ import annotations


import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import DensityMixin

from ..core.base import LOG_FLOOR, CountDataMixin, MixtureInferenceMixin, MomentEstimator
from ..core.validation import (
    Integer,
    NonNegativeFloat,
    RandomState,
    Unchecked,
    check_counts,
    check_matrix,
)
from ._estimator import SpectralTopicModel


class UnigramMixtureEM(CountDataMixin, MixtureInferenceMixin, DensityMixin, MomentEstimator):
    r"""EM for the mixture of unigrams (single-topic document model), Nigam et al. (2000).

    See :doc:`/chapters/03_topic_models`, where it is the same-model baseline of
    :class:`mvlib.SpectralTopicModel` (from random starts, and started from the spectral
    estimate).

    Model: a document's topic :math:`h\sim w`, its words i.i.d. from :math:`\mu_h`; for
    a count vector :math:`c` (d,), :math:`\log p(c)=\log\sum_h w_h\prod_i\mu_{h,i}^{c_i}`
    (up to the multinomial coefficient, which no parameter changes). EM alternates

    * E-step: responsibilities :math:`r_{n,h}\propto w_h\prod_i\mu_{h,i}^{c_{n,i}}`;
    * M-step (MAP with a symmetric Dirichlet prior, Laplace smoothing as in Nigam et al.
      2000, eqs. 6–7, for ``smoothing=1``):
      :math:`\mu_{h,i}\propto s+\sum_n r_{n,h}c_{n,i}`, :math:`w_h\propto s+\sum_n r_{n,h}`,

    which never decreases the penalised log-likelihood
    :math:`\sum_n\log p(c_n)+s\sum_{h,i}\log\mu_{h,i}+s\sum_h\log w_h` (``objective_``,
    reported per word). It stops when the per-word objective changes by less than ``tol``.

    Parameters
    ----------
    n_components : int
        Number k of topics.
    init : {"random", "spectral"} or array (n_components, n_words), default "random"
        ``"random"``: responsibilities drawn from a flat Dirichlet for every document, then
        an M-step; ``n_init`` such starts, the one with the highest objective is kept.
        ``"spectral"``: start from :class:`mvlib.SpectralTopicModel` (default route, same
        ``random_state``) — its topics and weights give the first E-step (probabilities
        floored at 1e-12 inside logarithms, because the spectral topics have exact zeros).
        An array: initial topic-word rows (non-negative, each row with positive mass;
        renormalised), uniform weights.
    n_init : int, default 5
        Random starts (``init="random"`` only).
    max_iter : int, default 1000
        EM iterations per start.
    tol : float, default 1e-7
        Convergence threshold on the change of the per-word objective (nats).
    smoothing : float ≥ 0, default 1.0
        Dirichlet pseudo-count s added in the M-step (0 gives maximum likelihood; then a
        word absent from every document a topic explains gets probability 0).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    topic_word_ : array (n_components, n_words), rows on the simplex
    weights_ : array (n_components,)
    objective_ : float
        Penalised log-likelihood per word of the kept start at convergence.
    objective_trace_ : list of float
        Its value after every iteration of the kept start.
    n_iter_ : int
        Iterations of the kept start.
    converged_ : bool
        Whether the kept start met ``tol`` within ``max_iter``.

    See Also
    --------
    mvlib.SpectralTopicModel : the moment estimate of the same model, also a start (``init="spectral"``).
    mvlib.ProductMixtureEM : EM for multi-view mixtures with Gaussian, Poisson or Bernoulli views.

    Notes
    -----
    Cost O(n_iter · (nnz·k + d k)) per start for n documents with nnz non-zero counts.
    ``X`` is not modified.

    Examples
    --------
    >>> from mvlib import UnigramMixtureEM, matched_error
    >>> from mvlib.topic import random_topic_model
    >>> model = random_topic_model(3, 20, random_state=0)
    >>> X, _ = model.sample(2000, random_state=1)
    >>> em = UnigramMixtureEM(3, random_state=0).fit(X)
    >>> em.topic_word_.shape, em.converged_
    ((3, 20), True)
    >>> matched_error(model.topic_word.T, em.topic_word_.T) < 0.05
    True
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "init": Unchecked("'random', 'spectral' or an array of the data's shape: checked in fit"),
        "n_init": Integer(),
        "max_iter": Integer(),
        "tol": NonNegativeFloat(),
        "smoothing": NonNegativeFloat(),
        "random_state": RandomState(),
    }

    def __init__(self, n_components, init="random", *, n_init=5, max_iter=1000, tol=1e-7,
                 smoothing=1.0, random_state=None):
        self.n_components = n_components
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.smoothing = smoothing
        self.random_state = random_state


    def _m_step(self, X, R):
        s = float(self.smoothing)
        counts = np.asarray((sp.csr_matrix(R.T) @ X).toarray()) + s
        totals = counts.sum(axis=1, keepdims=True)
        if np.any(~(totals > 0)):
            raise RuntimeError("a topic explains no word (set smoothing > 0 or lower n_components)")
        w = R.sum(axis=0) + s
        return counts / totals, w / w.sum()

    @staticmethod
    def _log_joint_of(X, topic_word, weights):
        logB = np.log(np.maximum(topic_word, LOG_FLOOR))
        logw = np.log(np.maximum(weights, LOG_FLOOR))
        return np.asarray(X @ logB.T) + logw

    def _objective(self, L, topic_word, weights, n_words):
        s = float(self.smoothing)
        val = float(logsumexp(L, axis=1).sum())
        if s > 0:
            val += s * float(np.log(np.maximum(topic_word, LOG_FLOOR)).sum()
                             + np.log(np.maximum(weights, LOG_FLOOR)).sum())
        return val / n_words

    def _run(self, X, topic_word, weights):
        n_words = float(X.sum())
        trace = []
        converged = False
        for it in range(1, int(self.max_iter) + 1):
            L = self._log_joint_of(X, topic_word, weights)
            R = np.exp(L - logsumexp(L, axis=1, keepdims=True))
            topic_word, weights = self._m_step(X, R)
            L = self._log_joint_of(X, topic_word, weights)
            trace.append(self._objective(L, topic_word, weights, n_words))
            if it > 1 and abs(trace[-1] - trace[-2]) < self.tol:
                converged = True
                break
        return topic_word, weights, trace, converged

    def fit(self, X, y=None):
        """Fit by EM to counts ``X`` (n_docs, n_words), dense or sparse; returns ``self``."""
        p = self._validate_params()
        k, rng = p.n_components, p.random_state
        X, lengths = check_counts(X, "X", min_length=0, min_rows=2)
        n, d = X.shape
        if not lengths.sum() > 0:
            raise ValueError("X holds no words (every count is zero); there is nothing to fit")
        if k > n:
            raise ValueError(f"n_components={k} exceeds the number of documents {n}")
        starts = []
        if isinstance(self.init, str):
            if self.init == "random":
                for _ in range(int(self.n_init)):
                    R = rng.dirichlet(np.ones(k), size=n)
                    starts.append(self._m_step(X, R))
            elif self.init == "spectral":
                spec = SpectralTopicModel(k, random_state=rng).fit(X)
                starts.append((spec.topic_word_, spec.weights_))
            else:
                raise ValueError(f"init must be 'random', 'spectral' or an array, got {self.init!r}")
        else:
            B0 = check_matrix(self.init, "init", shape=(k, d))
            if np.any(B0 < 0) or np.any(~(B0.sum(axis=1) > 0)):
                raise ValueError("init must hold non-negative rows with positive mass")
            starts.append((B0 / B0.sum(axis=1, keepdims=True), np.full(k, 1.0 / k)))
        best = None
        for B0, w0 in starts:
            out = self._run(X, B0, w0)
            if best is None or out[2][-1] > best[2][-1]:
                best = out
        self.topic_word_, self.weights_, self.objective_trace_, self.converged_ = best
        self.objective_ = float(self.objective_trace_[-1])
        self.n_iter_ = len(self.objective_trace_)
        self.n_features_in_ = d
        return self

    def _check_X(self, X):
        self._check_fitted("topic_word_")
        X, _ = check_counts(X, "X", min_length=0, min_rows=1)
        self._check_n_features(X.shape[1])
        return X

    def _log_joint(self, X):
        r"""Log joint of each document and topic (n_docs, n_components), as in fit; gives
        ``predict_proba`` (:math:`r_{n,h}` above), ``predict`` and ``score_samples``. Cost O(nnz·k)."""
        return self._log_joint_of(self._check_X(X), self.topic_word_, self.weights_)

    def score(self, X, y=None):
        r"""Log-likelihood per word of ``X`` under the fitted model (without the multinomial coefficient)."""
        X = self._check_X(X)
        return float(logsumexp(self._log_joint_of(X, self.topic_word_, self.weights_), axis=1).sum()
                     / max(float(X.sum()), 1.0))
