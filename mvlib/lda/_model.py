r"""Latent Dirichlet allocation as a generative model with exact population moments.

A document draws topic proportions :math:`\theta\sim\mathrm{Dir}(\alpha)`,
:math:`\alpha_0=\sum_h\alpha_h`; each of its :math:`\ell` words draws a topic
:math:`h\sim\theta` and then a word from row h of ``topic_word`` (:math:`\mu_h`; Blei, Ng
& Jordan 2003). With :math:`\alpha_0\to0` every document has one topic (the model of
:class:`mvlib.topic.SingleTopicModel`).

:meth:`LDAModel.raw_moments` computes :math:`E[x_1]`, :math:`E[x_1\otimes x_2]`,
:math:`E[x_1\otimes x_2\otimes x_3]` of three distinct word positions from the closed-form
Dirichlet moments :math:`E[\prod_i\theta_i^{m_i}]=\prod_i\alpha_i^{(m_i)}/\alpha_0^{(\sum m)}`
(rising factorials, in exact rational arithmetic) — independently of the factorisation
:math:`\mathcal M_2=\sum_hc\,\alpha_h\mu_h^{\otimes2}` that :mod:`mvlib.lda` relies on,
so the two can check each other. See :doc:`/chapters/10_dirichlet_ica`.
"""
from __future__ import annotations

import itertools
import numbers
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from ..core.validation import check_array, check_matrix, check_positive_int, check_random_state

__all__ = ["LDAModel"]


def _rising(a, m):
    out = Fraction(1)
    for j in range(m):
        out *= a + j
    return out


class LDAModel:
    r"""Latent Dirichlet allocation with known parameters: sampling and exact moments.

    Parameters
    ----------
    alpha : array (k,), positive
        Dirichlet parameters :math:`\alpha_h`; :math:`\alpha_0=\sum_h\alpha_h`.
    topic_word : array (k, d)
        Row h is the word distribution :math:`\mu_h` (non-negative, summing to 1).

    See :doc:`/chapters/10_dirichlet_ica`.
    """

    def __init__(self, alpha, topic_word):
        a = check_array(alpha, "alpha", ndim=1)
        if np.any(a <= 0):
            raise ValueError("alpha must be positive (Dirichlet parameters)")
        B = check_matrix(topic_word, "topic_word", shape=(a.size, None))
        if np.any(B < 0) or not np.allclose(B.sum(axis=1), 1.0, atol=1e-10):
            raise ValueError("topic_word must have probability vectors as rows")
        self.alpha = a.copy()
        self.topic_word = B.copy()

    @property
    def alpha0(self) -> float:
        return float(self.alpha.sum())

    @property
    def n_components(self) -> int:
        return self.alpha.size

    @property
    def n_words(self) -> int:
        return self.topic_word.shape[1]

    # ------------------------------------------------------------------ sampling
    def sample(self, n_samples: int, doc_length=(3, 30), random_state=None, *, chunk: int = 100_000):
        """Draw documents: returns ``(X, theta)``.

        ``X`` is a ``scipy.sparse.csr_matrix`` (n_samples, d) of int32 word counts, ``theta``
        (n_samples, k) the topic proportions. ``doc_length``: an int (all documents) or a pair
        ``(lo, hi)`` (uniform lengths in lo..hi). Words are drawn by inverse CDF per topic,
        ``chunk`` documents at a time, so memory is O(chunk · length) beyond the result.
        Cost O(N (k + log d)) for N words.
        """
        n = check_positive_int(n_samples, "n_samples")
        chunk = check_positive_int(chunk, "chunk")
        rng = check_random_state(random_state)
        if isinstance(doc_length, (numbers.Integral, np.integer)) and not isinstance(doc_length, bool):
            lo = hi = check_positive_int(doc_length, "doc_length")
        else:
            if isinstance(doc_length, (str, bytes)) or len(doc_length) != 2:
                raise ValueError(f"doc_length must be an int or a pair (lo, hi), got {doc_length!r}")
            lo, hi = (check_positive_int(v, "doc_length") for v in doc_length)
            if lo > hi:
                raise ValueError(f"doc_length=({lo}, {hi}) must have lo <= hi")
        theta = rng.dirichlet(self.alpha, size=n)
        ell = rng.integers(lo, hi + 1, size=n)
        cmu = np.cumsum(self.topic_word, axis=1)
        blocks = []
        for start in range(0, n, chunk):
            th, le = theta[start:start + chunk], ell[start:start + chunk]
            m = th.shape[0]
            doc = np.repeat(np.arange(m), le)
            topic = (rng.random(doc.size)[:, None] > np.cumsum(th, axis=1)[doc][:, :-1]).sum(axis=1)
            v = rng.random(doc.size)
            word = np.empty(doc.size, dtype=np.int64)
            for h in range(self.n_components):
                at = topic == h
                word[at] = np.searchsorted(cmu[h], v[at] * cmu[h, -1], side="right")
            np.minimum(word, self.n_words - 1, out=word)
            Xb = sp.csr_matrix((np.ones(doc.size, dtype=np.int32), (doc, word)), shape=(m, self.n_words))
            Xb.sum_duplicates()
            blocks.append(Xb)
        return sp.vstack(blocks, format="csr"), theta

    # ------------------------------------------------------------------ moments
    def dirichlet_moment(self, idx) -> Fraction:
        r""":math:`E[\theta_{i_1}\theta_{i_2}\cdots]` exactly (``alpha`` read as exact binary fractions)."""
        alpha = [Fraction(float(a)) for a in self.alpha]
        m = np.bincount(np.asarray(idx, dtype=int), minlength=len(alpha))
        num = Fraction(1)
        for a, mi in zip(alpha, m):
            num *= _rising(a, int(mi))
        return num / _rising(sum(alpha), len(idx))

    def raw_moments(self):
        r"""``(m1, P2, P3)``: :math:`E[x_1]` (d,), :math:`E[x_1\otimes x_2]` (d, d),
        :math:`E[x_1\otimes x_2\otimes x_3]` (d, d, d) from the exact Dirichlet moments.

        :math:`E[x_1\otimes x_2]=\sum_{i,j}E[\theta_i\theta_j]\mu_i\otimes\mu_j` and likewise for
        three positions. Small vocabularies only (d³ entries); cost O(k³ d³).
        """
        k, B = self.n_components, self.topic_word
        if self.n_words ** 3 > 2 ** 24:
            raise ValueError(f"raw_moments forms d³ = {self.n_words ** 3} entries; use a vocabulary below 256 words")
        E1 = np.array([float(self.dirichlet_moment([i])) for i in range(k)])
        E2 = np.array([[float(self.dirichlet_moment([i, j])) for j in range(k)] for i in range(k)])
        E3 = np.zeros((k, k, k))
        for i, j, l in itertools.product(range(k), repeat=3):
            E3[i, j, l] = float(self.dirichlet_moment([i, j, l]))
        return (E1 @ B, np.einsum("ij,ia,jb->ab", E2, B, B),
                np.einsum("ijl,ia,jb,lc->abc", E3, B, B, B))

    def corrected_moments(self):
        r"""``(M2, M3)``: the α₀-corrected moments of Anandkumar et al. (2012, Theorem 3.5)
        applied to :meth:`raw_moments` (not to the factorisation),

        .. math:: \mathcal M_2=E[x_1\otimes x_2]-\tfrac{\alpha_0}{\alpha_0+1}m_1\otimes m_1,\quad
                  \mathcal M_3=E[x_1\otimes x_2\otimes x_3]-\tfrac{\alpha_0}{\alpha_0+2}
                  \bigl(E[x_1\otimes x_2\otimes m_1]+\dots\bigr)+\tfrac{2\alpha_0^2}{(\alpha_0+1)(\alpha_0+2)}m_1^{\otimes3}.
        """
        m1, P2, P3 = self.raw_moments()
        a0 = self.alpha0
        M2 = P2 - a0 / (a0 + 1.0) * np.outer(m1, m1)
        Pm = np.einsum("ab,c->abc", P2, m1)
        M3 = (P3 - a0 / (a0 + 2.0) * (Pm + Pm.transpose(0, 2, 1) + Pm.transpose(2, 0, 1))
              + 2.0 * a0 ** 2 / ((a0 + 1.0) * (a0 + 2.0)) * np.einsum("a,b,c->abc", m1, m1, m1))
        return M2, M3
