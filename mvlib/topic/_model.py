r"""The single-topic bag-of-words document model (Anandkumar, Hsu & Kakade 2012 §2.1).

A document's topic :math:`h\in[k]` is drawn with :math:`\Pr[h=j]=w_j`; given h, each of
its :math:`\ell` words is drawn independently with :math:`\Pr[x_v=e_i\mid h=j]=M_{ij}`
(column j of :math:`M\in\mathbb R^{d\times k}` is the word distribution
:math:`\mu_j` of topic j). Any three distinct word positions are three views with
:math:`M_1=M_2=M_3=M`, so (Lemma 2.1)

.. math:: \mathrm{Pairs}=E[x_1x_2^\top]=M\operatorname{diag}(w)M^\top,\qquad
          \mathrm{Triples}(\eta)=E[\langle\eta,x_3\rangle x_1x_2^\top]
          =M\operatorname{diag}(M^\top\eta)\operatorname{diag}(w)M^\top .

A document is stored as its count vector :math:`c\in\mathbb N^d` (a row of a
documents × words sparse matrix).
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from tensorly.cp_tensor import CPTensor

from ..core.tensors import cp_tensor, cp_to_dense
from ..core.validation import check_array, check_matrix, check_positive_int, check_random_state

__all__ = ["SingleTopicModel", "random_topic_model"]


class SingleTopicModel:
    r"""Single-topic document model with exact population moments.

    Parameters
    ----------
    weights : array (k,)
        Topic probabilities :math:`w`, positive, summing to 1.
    topic_word : array (k, d)
        Row j is the word distribution :math:`\mu_j` of topic j (non-negative,
        summing to 1); the paper's :math:`M` is its transpose (attribute ``M``).
    """

    def __init__(self, weights, topic_word):
        w = check_array(weights, "weights", ndim=1)
        if np.any(w <= 0) or not np.isclose(w.sum(), 1.0, atol=1e-10):
            raise ValueError("weights must be positive and sum to 1")
        B = check_matrix(topic_word, "topic_word", shape=(w.size, None))
        if np.any(B < 0) or not np.allclose(B.sum(axis=1), 1.0, atol=1e-10):
            raise ValueError("topic_word must have probability vectors as rows")
        self.weights = w.copy()
        self.topic_word = B.copy()

    @property
    def n_components(self) -> int:
        return self.weights.size

    @property
    def n_words(self) -> int:
        return self.topic_word.shape[1]

    @property
    def M(self) -> np.ndarray:
        """The d × k matrix of topic-word distributions (columns), as in the paper."""
        return self.topic_word.T

    # ------------------------------------------------------------------ sampling
    def sample(self, n_samples: int, doc_length=10, random_state=None):
        """Draw documents: returns ``(X, h)``.

        ``X`` is a ``scipy.sparse.csr_matrix`` (n_samples, d) of word counts and ``h``
        (n_samples,) the topics. ``doc_length`` is an int (all documents) or an int
        array (n_samples,) of lengths. All words of all documents are drawn at once
        (inverse CDF per topic), cost O(N log d) for N words in total.
        """
        n = check_positive_int(n_samples, "n_samples")
        rng = check_random_state(random_state)
        if isinstance(doc_length, (numbers.Integral, np.integer)) and not isinstance(doc_length, bool):
            lengths = np.full(n, check_positive_int(doc_length, "doc_length"), dtype=np.int64)
        else:
            lengths = check_array(doc_length, "doc_length", ndim=1)
            if lengths.shape[0] != n:
                raise ValueError(f"doc_length has {lengths.shape[0]} entries but n_samples={n}")
            if np.any(lengths < 1) or np.any(lengths != np.round(lengths)):
                raise ValueError("doc_length must hold positive integers")
            lengths = lengths.astype(np.int64)
        h = rng.choice(self.n_components, size=n, p=self.weights)
        doc = np.repeat(np.arange(n), lengths)
        topic = h[doc]
        u = rng.random(doc.size)
        cum = np.cumsum(self.topic_word, axis=1)
        word = np.empty(doc.size, dtype=np.int64)
        for j in range(self.n_components):  # loop over topics, not documents
            sel = topic == j
            word[sel] = np.searchsorted(cum[j], u[sel], side="right")
        np.minimum(word, self.n_words - 1, out=word)
        X = sp.csr_matrix((np.ones(doc.size), (doc, word)), shape=(n, self.n_words))
        X.sum_duplicates()
        return X, h

    # ------------------------------------------------------------------ moments
    def mean(self) -> np.ndarray:
        r""":math:`E[x_1]=Mw`, shape (d,)."""
        return self.topic_word.T @ self.weights

    def pairs(self) -> np.ndarray:
        r""":math:`\mathrm{Pairs}=M\operatorname{diag}(w)M^\top`, shape (d, d)."""
        M = self.M
        return (M * self.weights) @ M.T

    def triples_slice(self, eta) -> np.ndarray:
        r""":math:`\mathrm{Triples}(\eta)=M\operatorname{diag}(M^\top\eta)\operatorname{diag}(w)M^\top`, shape (d, d)."""
        eta = check_array(eta, "eta", ndim=1)
        if eta.shape[0] != self.n_words:
            raise ValueError(f"eta has length {eta.shape[0]} but the model has {self.n_words} words")
        M = self.M
        return (M * (M.T @ eta) * self.weights) @ M.T

    def triples_cp(self) -> CPTensor:
        r""":math:`\mathrm{Triples}=\sum_j w_j\mu_j^{\otimes3}` as a CP tensor ``(w, [M, M, M])``."""
        M = self.M
        return cp_tensor(self.weights, [M, M, M])

    def triples(self) -> np.ndarray:
        """Dense Triples (d, d, d); small vocabularies only."""
        return cp_to_dense(self.triples_cp())

    def whitened_triples(self, W) -> np.ndarray:
        r""":math:`\mathrm{Triples}(W,W,W)=\sum_j w_j (W^\top\mu_j)^{\otimes3}`, shape (k', k', k')."""
        W = check_matrix(W, "W", shape=(self.n_words, None))
        F = W.T @ self.M
        return cp_to_dense(cp_tensor(self.weights, [F, F, F]))


def random_topic_model(n_components: int, n_words: int, *, concentration: float = 0.3,
                       weight_concentration: float = 2.0, random_state=None) -> SingleTopicModel:
    """A random single-topic model: topics ~ Dirichlet(``concentration``) over the
    ``n_words`` words, weights ~ Dirichlet(``weight_concentration``) over the topics."""
    k = check_positive_int(n_components, "n_components")
    d = check_positive_int(n_words, "n_words")
    if d < k:
        raise ValueError(f"n_words={d} is smaller than n_components={k}: M cannot have rank k")
    for nm, val in (("concentration", concentration), ("weight_concentration", weight_concentration)):
        if isinstance(val, bool) or not isinstance(val, numbers.Real) or not val > 0:
            raise ValueError(f"{nm} must be a positive number, got {val!r}")
    rng = check_random_state(random_state)
    w = rng.dirichlet(np.full(k, float(weight_concentration)))
    w = np.maximum(w, 1e-12)
    w /= w.sum()
    topics = rng.dirichlet(np.full(d, float(concentration)), size=k)
    return SingleTopicModel(w, topics)
