r"""Empirical moments of three views, and mergeable accumulators.

For samples :math:`(x_1^i, x_2^i, x_3^i)_{i\le n}` (rows of ``X1, X2, X3``):

* pairs :math:`\hat P_{ab} = \frac1n\sum_i x_a^i (x_b^i)^\top` (Anandkumar, Hsu & Kakade 2012,
  Lemma 3.1: :math:`P_{12}=M_1\operatorname{diag}(w)M_2^\top`);
* triples :math:`\hat P_{123} = \frac1n\sum_i x_1^i\otimes x_2^i\otimes x_3^i`
  (dense, small d only) and the slice :math:`\hat P_{123}(\eta)=\frac1n\sum_i
  \langle\eta,x_3^i\rangle\, x_1^i (x_2^i)^\top` (Lemma 3.1);
* whitened triples :math:`\frac1n\sum_i (W_1^\top x_1^i)\otimes(W_2^\top x_2^i)\otimes(W_3^\top x_3^i)
  = \hat P_{123}(W_1,W_2,W_3)`, computed from the data without any d×d×d array.

All functions accept dense arrays or ``scipy.sparse`` matrices (documents ×
words counts are sparse) and never modify their inputs.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from .validation import add_scaled, check_array, check_matrix, check_views, scale_exponent, scaled, unscale

__all__ = [
    "pairs",
    "triples",
    "triples_slice",
    "whitened_triples",
    "MomentAccumulator",
]

#: rows processed at once when contracting samples into a k×k×k tensor
_CHUNK = 8192
#: largest dense triple tensor (entries) that :func:`triples` agrees to build
_MAX_DENSE = 2 ** 27


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


def triple_product(A, B, C, chunk: int = _CHUNK):
    r"""Un-normalised :math:`\sum_i a_i\otimes b_i\otimes c_i` for rows a_i, b_i, c_i.

    Computed as ``A^T (B ⊙ C)`` with the row-wise Khatri–Rao product taken
    ``chunk`` rows at a time: cost O(n k_a k_b k_c), memory O(chunk k_b k_c).
    """
    n, ka = A.shape
    kb, kc = B.shape[1], C.shape[1]
    out = np.zeros((ka, kb * kc))
    for s in range(0, n, chunk):
        a, b, c = A[s:s + chunk], B[s:s + chunk], C[s:s + chunk]
        kr = (b[:, :, None] * c[:, None, :]).reshape(len(b), kb * kc)
        out += a.T @ kr
    return out.reshape(ka, kb, kc)


def pairs(X1, X2):
    r"""Empirical pairs :math:`\hat P_{12}=\frac1n X_1^\top X_2`, shape (d1, d2).

    See :doc:`/chapters/01_multiview_moments` for the derivation and a numerical check.

    Cost O(n d1 d2) (dense) or O(nnz·d2) (sparse).
    """
    X1, X2 = check_views([X1, X2], n_views=2, min_rows=1)
    n = X1.shape[0]
    e1, e2 = scale_exponent(X1), scale_exponent(X2)
    P = scaled(X1, e1).T @ scaled(X2, e2)
    return unscale(np.asarray(_dense(P)) / n, e1 + e2, "X1, X2", "the pairs matrix")


def triples(X1, X2, X3):
    r"""Dense empirical triples :math:`\hat P_{123}`, shape (d1, d2, d3).

    See :doc:`/chapters/01_multiview_moments` for the derivation and a numerical check.

    Only for small dimensions (teaching and tests): refuses when
    d1·d2·d3 exceeds 2**27 entries; use :func:`whitened_triples` instead.
    Cost O(n d1 d2 d3).
    """
    X1, X2, X3 = check_views([X1, X2, X3], min_rows=1)
    size = X1.shape[1] * X2.shape[1] * X3.shape[1]
    if size > _MAX_DENSE:
        raise ValueError(
            f"the dense triple tensor would have {size} entries (> {_MAX_DENSE}); "
            "use whitened_triples or triples_slice instead"
        )
    n = X1.shape[0]
    es = [scale_exponent(X) for X in (X1, X2, X3)]
    P = triple_product(*(_dense(scaled(X, e)) for X, e in zip((X1, X2, X3), es))) / n
    return unscale(P, sum(es), "X1, X2, X3", "the triples tensor")


def triples_slice(X1, X2, X3, eta):
    r"""The matrix :math:`\hat P_{123}(\eta)=\frac1n\sum_i\langle\eta,x_3^i\rangle x_1^i(x_2^i)^\top`.

    See :doc:`/chapters/01_multiview_moments` for the derivation and a numerical check.

    Its population value is :math:`M_1\operatorname{diag}(M_3^\top\eta)\operatorname{diag}(w)M_2^\top`
    (Anandkumar, Hsu & Kakade 2012, Lemma 3.1). Shape (d1, d2); cost O(n(d3 + d1 d2)).
    """
    X1, X2, X3 = check_views([X1, X2, X3], min_rows=1)
    eta = check_array(eta, "eta", ndim=1)
    if eta.shape[0] != X3.shape[1]:
        raise ValueError(f"eta has length {eta.shape[0]} but X3 has {X3.shape[1]} columns")
    es = [scale_exponent(A) for A in (X1, X2, X3, eta)]
    X1, X2, X3, eta = (scaled(A, e) for A, e in zip((X1, X2, X3, eta), es))
    s = np.asarray(X3 @ eta).ravel()
    n = X1.shape[0]
    left = X1.multiply(s[:, None]).tocsr() if sp.issparse(X1) else X1 * s[:, None]
    return unscale(np.asarray(_dense(left.T @ X2)) / n, sum(es), "X1, X2, X3, eta", "the triples slice")


def _check_whiteners(Xs, Ws):
    out = []
    for v, (X, W) in enumerate(zip(Xs, Ws), start=1):
        W = check_matrix(W, f"W{v}")
        if W.shape[0] != X.shape[1]:
            raise ValueError(f"W{v} has {W.shape[0]} rows but X{v} has {X.shape[1]} columns")
        out.append(W)
    return out


def _project(X, W):
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf are reported by the caller
        return np.asarray(X @ W)


def whitened_triples(X1, X2, X3, W1, W2, W3):
    r"""Whitened third moment :math:`\frac1n\sum_i (W_1^\top x_1^i)\otimes(W_2^\top x_2^i)\otimes(W_3^\top x_3^i)`.

    See :doc:`/chapters/02_whitening_power` for the derivation and a numerical check.

    Equals :math:`\hat P_{123}(W_1, W_2, W_3)` (the whitened tensor of
    Song et al. 2014 §5.1 step 2 / Anandkumar et al. 2014 §4.3) without ever
    forming the d1×d2×d3 moment.

    Parameters
    ----------
    X1, X2, X3 : arrays or sparse matrices (n, d_v)
    W1, W2, W3 : arrays (d_v, k_v)

    Returns
    -------
    ndarray (k1, k2, k3)

    Notes
    -----
    Cost O(n·Σ_v d_v k_v + n·k1 k2 k3) time, O(Σ_v d_v k_v + k1 k2 k3) memory
    beyond the inputs (samples are streamed in chunks of 8192 rows).
    """
    # NaN/inf in X_v survive the projection X_v W_v (W_v is checked finite), so
    # the scan runs on the n×k projections instead of the n×d data: same error, ~d/k cheaper
    X1, X2, X3 = check_views([X1, X2, X3], min_rows=1, finite=False)
    Ws = _check_whiteners((X1, X2, X3), (W1, W2, W3))
    acc = WhitenedTripleSum(Ws)
    acc.add(X1, X2, X3)
    return acc.result(X1.shape[0])


class WhitenedTripleSum:
    """Running un-normalised sum of whitened triples, held as ``total * 2**exponent``.

    Data and whiteners of extreme scale are divided by powers of two first (exact); the
    sum keeps the power, so batches of any scales add up without overflow or underflow.
    """

    def __init__(self, Ws):
        self.Ws = Ws
        self._w_exp = [scale_exponent(W) for W in Ws]
        self._Wn = [scaled(W, e) for W, e in zip(Ws, self._w_exp)]
        self.total = np.zeros(tuple(W.shape[1] for W in Ws))
        self.exponent = 0

    def add(self, X1, X2, X3, chunk: int = _CHUNK):
        x_exp = [scale_exponent(X) for X in (X1, X2, X3)]
        Xs = [scaled(X, e) for X, e in zip((X1, X2, X3), x_exp)]
        e = sum(x_exp) + sum(self._w_exp)
        same = e == self.exponent
        part = self.total if same else np.zeros_like(self.total)
        n = X1.shape[0]
        for s in range(0, n, chunk):
            Y = [_project(X[s:s + chunk], W) for X, W in zip(Xs, self._Wn)]
            for v, y in enumerate(Y, start=1):
                if not np.all(np.isfinite(y)):
                    raise ValueError(f"X{v} contains NaN or infinity")
            part += triple_product(*Y, chunk=chunk)
        if not same:
            self.total, self.exponent = add_scaled(self.total, self.exponent, part, e)

    def merged(self, other):
        """total + other.total as (sum, exponent)."""
        return add_scaled(self.total, self.exponent, other.total, other.exponent)

    def result(self, n):
        return unscale(self.total / n, self.exponent, "X1, X2, X3 (with W1, W2, W3)", "the whitened third moment")


class MomentAccumulator:
    r"""Moments of three views accumulated batch by batch, mergeable.

    See :doc:`/chapters/01_multiview_moments` for the derivation and a numerical check.

    Keeps the sums :math:`\sum x_v`, :math:`\sum x_a x_b^\top` for the pairs
    (1,2), (1,3), (2,3) and, when ``whiteners=(W1, W2, W3)`` is given, the sum of
    whitened triples — so data larger than memory can be streamed. Because
    sums are kept (not running means), ``a.merge(b)`` equals the accumulator
    of the concatenated data up to floating-point rounding.

    Typical two-pass use: pass 1 accumulates pairs, whitening matrices are
    computed from them, pass 2 accumulates whitened triples with
    ``MomentAccumulator(whiteners=Ws)``.

    Memory O(d1 d2 + d1 d3 + d2 d3 + k³). Each ``update`` costs O(b Σ d_a d_b)
    for a batch of b rows (plus O(b d k + b k³) with whiteners).

    Parameters
    ----------
    whiteners : tuple of three arrays (d_v, k_v), optional
    pairs : bool, default True
        Whether to accumulate the pair matrices (turn off in a second pass that
        only needs whitened triples).
    """

    _PAIRS = ((0, 1), (0, 2), (1, 2))

    def __init__(self, whiteners=None, *, pairs: bool = True):
        if whiteners is not None:
            if not isinstance(whiteners, (list, tuple)) or len(whiteners) != 3:
                raise TypeError("whiteners must be a tuple (W1, W2, W3) of three arrays")
            whiteners = [check_matrix(W, f"W{v + 1}") for v, W in enumerate(whiteners)]
        self.whiteners = whiteners
        self.track_pairs = bool(pairs)
        self.n_samples_ = 0
        self._dims = None
        self._sums = None
        self._pair_sums = {}
        self._exp = {}   # power of two of each running sum (see mvlib.core.validation.add_scaled)
        self._triples = WhitenedTripleSum(whiteners) if whiteners is not None else None

    # ------------------------------------------------------------------ update
    def update(self, X1, X2, X3):
        """Add a batch of rows (dense or sparse); returns ``self``."""
        Xs = check_views([X1, X2, X3], min_rows=1)
        dims = tuple(X.shape[1] for X in Xs)
        if self._dims is None:
            self._dims = dims
            self._sums = [np.zeros(d) for d in dims]
            if self.track_pairs:
                self._pair_sums = {ab: np.zeros((dims[ab[0]], dims[ab[1]])) for ab in self._PAIRS}
        elif dims != self._dims:
            raise ValueError(f"batch has view dimensions {dims} but earlier batches had {self._dims}")
        if self.whiteners is not None:
            _check_whiteners(Xs, self.whiteners)
            self._triples.add(*Xs)
        ex = [scale_exponent(X) for X in Xs]
        Xs = [scaled(X, e) for X, e in zip(Xs, ex)]
        for v, X in enumerate(Xs):
            self._sums[v], self._exp[v] = add_scaled(
                self._sums[v], self._exp.get(v, 0), np.asarray(X.sum(axis=0)).ravel(), ex[v])
        if self.track_pairs:
            for a, b in self._PAIRS:
                self._pair_sums[(a, b)], self._exp[(a, b)] = add_scaled(
                    self._pair_sums[(a, b)], self._exp.get((a, b), 0),
                    np.asarray(_dense(Xs[a].T @ Xs[b])), ex[a] + ex[b])
        self.n_samples_ += Xs[0].shape[0]
        return self

    def merge(self, other: "MomentAccumulator") -> "MomentAccumulator":
        """A new accumulator holding the moments of both (neither is changed)."""
        if not isinstance(other, MomentAccumulator):
            raise TypeError(f"other must be a MomentAccumulator, got {type(other).__name__}")
        if (self.whiteners is None) != (other.whiteners is None) or (
            self.whiteners is not None
            and not all(np.array_equal(a, b) for a, b in zip(self.whiteners, other.whiteners))
        ):
            raise ValueError("other was built with different whiteners; moments cannot be merged")
        if self.track_pairs != other.track_pairs:
            raise ValueError("other tracks pairs differently (pairs=True/False); cannot merge")
        if self._dims is not None and other._dims is not None and self._dims != other._dims:
            raise ValueError(f"other has view dimensions {other._dims} but self has {self._dims}")
        out = MomentAccumulator(self.whiteners, pairs=self.track_pairs)
        for acc in (self, other):
            if acc.n_samples_ == 0:
                continue
            if out._dims is None:
                out._dims = acc._dims
                out._sums = [s.copy() for s in acc._sums]
                out._pair_sums = {ab: P.copy() for ab, P in acc._pair_sums.items()}
                out._exp = dict(acc._exp)
                if out._triples is not None:
                    out._triples.total = acc._triples.total.copy()
                    out._triples.exponent = acc._triples.exponent
            else:
                for v in range(len(out._sums)):
                    out._sums[v], out._exp[v] = add_scaled(out._sums[v], out._exp.get(v, 0),
                                                           acc._sums[v], acc._exp.get(v, 0))
                for ab in out._pair_sums:
                    out._pair_sums[ab], out._exp[ab] = add_scaled(
                        out._pair_sums[ab], out._exp.get(ab, 0), acc._pair_sums[ab], acc._exp.get(ab, 0))
                if out._triples is not None:
                    out._triples.total, out._triples.exponent = out._triples.merged(acc._triples)
            out.n_samples_ += acc.n_samples_
        return out

    __add__ = merge

    # ------------------------------------------------------------------ results
    def _require(self):
        if self.n_samples_ == 0:
            raise ValueError("the accumulator has seen no samples; call update first")

    def mean(self, view: int) -> np.ndarray:
        """:math:`\\hat E[x_v]` for ``view`` in {1, 2, 3}."""
        self._require()
        if view not in (1, 2, 3):
            raise ValueError(f"view must be 1, 2 or 3, got {view}")
        return unscale(self._sums[view - 1] / self.n_samples_, self._exp.get(view - 1, 0),
                       f"X{view}", "the mean")

    def pairs(self, a: int, b: int) -> np.ndarray:
        """:math:`\\hat P_{ab}` for a ≠ b in {1, 2, 3}, shape (d_a, d_b)."""
        self._require()
        if not self.track_pairs:
            raise ValueError("this accumulator was created with pairs=False")
        if a == b or a not in (1, 2, 3) or b not in (1, 2, 3):
            raise ValueError(f"(a, b) must be two different views in 1..3, got ({a}, {b})")
        key = (min(a, b) - 1, max(a, b) - 1)
        P = unscale(self._pair_sums[key] / self.n_samples_, self._exp.get(key, 0),
                    f"X{key[0] + 1}, X{key[1] + 1}", "the pairs matrix")
        return P if a < b else P.T

    def whitened_triples(self) -> np.ndarray:
        """Whitened triples (k1, k2, k3), equal to :func:`whitened_triples` on all data."""
        self._require()
        if self._triples is None:
            raise ValueError("whitened triples need whiteners=(W1, W2, W3) at construction")
        return self._triples.result(self.n_samples_)


# ---------------------------------------------------------------------------
# Unbiased moments of count data (bag-of-words documents of any length >= 3)
# ---------------------------------------------------------------------------
#
# A document of length l with count vector c holds l words x_1..x_l, exchangeable
# given its topic. Averaging over all ordered pairs / triples of DISTINCT positions
# gives unbiased estimates of Pairs = E[x_1 x_2^T] and Triples = E[x_1⊗x_2⊗x_3]:
#   sum_{p≠q} e_{w_p} e_{w_q}^T = c c^T − diag(c)
#   sum_{p,q,r distinct} e⊗e⊗e = c⊗c⊗c − Σ_i c_i (e_i⊗e_i⊗c + e_i⊗c⊗e_i + c⊗e_i⊗e_i)
#                                 + 2 Σ_i c_i e_i⊗e_i⊗e_i          (inclusion–exclusion)
# divided by l(l−1) and l(l−1)(l−2) ordered tuples respectively.

__all__ += ["count_pairs", "CountPairsOperator", "count_triples_slice", "count_whitened_triples", "count_triples",
            "count_mean"]


def _count_data(X, min_length):
    from .validation import check_counts

    return check_counts(X, "X", min_length=min_length)


def inv_falling(lengths, order):
    """1 / (l (l-1) ... (l-order+1)) per document."""
    out = np.ones_like(lengths)
    for j in range(order):
        out = out * (lengths - j)
    return 1.0 / out


def count_mean(X):
    r"""Mean word distribution :math:`\frac1n\sum_d c_d/\ell_d`, an unbiased estimate of
    :math:`E[x_1]=Mw` for documents of counts (rows of ``X``).

    See :doc:`/chapters/03_topic_models` for the derivation and a numerical check. Shape (d,); cost O(nnz).
    """
    X, lengths = _count_data(X, 1)
    return np.asarray(X.T @ (1.0 / lengths)).ravel() / X.shape[0]


def count_pairs(X):
    r"""Unbiased word-pair moment of documents: :math:`\widehat{\mathrm{Pairs}}`, shape (d, d).

    See :doc:`/chapters/03_topic_models` for the derivation and a numerical check.

    Every ordered pair of distinct word positions of a document is used: with
    :math:`c` the counts of a document of length :math:`\ell\ge2`,

    .. math:: \frac{c c^\top-\operatorname{diag}(c)}{\ell(\ell-1)},

    averaged over the n documents; its expectation is
    :math:`\mathrm{Pairs}=M\operatorname{diag}(w)M^\top` (Anandkumar, Hsu & Kakade 2012,
    Lemma 2.1). ``X`` is (n_docs, n_words) counts, dense or sparse.
    Cost O(Σ_d nnz_d²) through one sparse product; memory O(d²).
    """
    X, lengths = _count_data(X, 2)
    b = inv_falling(lengths, 2)
    Xb = sp.diags(b) @ X
    P = np.asarray(_dense(X.T @ Xb))
    P[np.diag_indices_from(P)] -= np.asarray(Xb.sum(axis=0)).ravel()
    return P / X.shape[0]


class SymmetricOperator(LinearOperator):
    """A symmetric (d, d) linear operator defined by ``_matmat`` on (d,) or (d, p) arrays: matvec,
    rmatvec and the adjoint follow (shared by the implicit pairs moments of count data)."""

    def _matvec(self, v):
        return self._matmat(np.asarray(v, dtype=float).ravel())

    def _rmatvec(self, v):
        return self._matvec(v)

    def _adjoint(self):
        return self


class CountPairsOperator(SymmetricOperator):
    r"""The word-pair moment of :func:`count_pairs` as an implicit symmetric (d, d) operator.

    .. math:: \widehat{\mathrm{Pairs}}\,V=\frac1n\Bigl[X^\top\bigl(\operatorname{diag}(\omega\circ b)XV\bigr)
              -\operatorname{diag}\bigl(X^\top(\omega\circ b)\bigr)V\Bigr],\qquad b_d=\frac1{\ell_d(\ell_d-1)},

    the average over documents of :math:`\omega_d(c_dc_d^\top-\operatorname{diag}c_d)/(\ell_d(\ell_d-1))`
    (Anandkumar, Hsu & Kakade 2012, Lemma 2.1) with document weights :math:`\omega` (all 1 by
    default: :func:`count_pairs`; balanced random signs give the symmetrised sampling error used
    by the estimators' noise check). The one place where mvlib applies the pairs moment of
    counts without forming it: :class:`mvlib.SpectralTopicModel` for large vocabularies and
    :class:`mvlib.lda.LDASecondMoment` build on it.

    ``X`` (n_docs, n_words) counts, dense or CSR, every document with ≥ 2 words (``min_length``
    raises it, e.g. 3 for estimators that also need triples). A (d, p) block costs O(nnz·p + d p);
    memory O(nnz + d): no n_words × n_words array.

    Attributes: ``X`` (CSR), ``lengths`` (n_docs,), ``n_docs``. See :doc:`/chapters/03_topic_models`
    for the pairs moment and :doc:`/chapters/10_dirichlet_ica` for its use at scale.
    """

    def __init__(self, X, doc_weights=None, *, min_length: int = 2):
        X, lengths = _count_data(X, min_length)
        self.X = X
        self.lengths = lengths
        self.n_docs = X.shape[0]
        b = inv_falling(lengths, 2)
        self._exp = 0
        if doc_weights is not None:
            w = check_array(doc_weights, "doc_weights", ndim=1)
            if w.shape[0] != self.n_docs:
                raise ValueError(f"doc_weights has {w.shape[0]} entries but X has {self.n_docs} documents")
            self._exp = scale_exponent(w)     # weights of extreme scale: exact power of two
            b = b * scaled(w, self._exp)
        self._b = b
        self._diag = np.asarray(X.T @ b).ravel()
        self._Xt = X.T.tocsr()
        d = X.shape[1]
        super().__init__(dtype=np.float64, shape=(d, d))

    def _matmat(self, V):
        V = np.asarray(V, dtype=float)
        XV = np.asarray(self.X @ V)
        if V.ndim == 1:
            out = (np.asarray(self._Xt @ (self._b * XV)).ravel() - self._diag * V) / self.n_docs
        else:
            out = (np.asarray(self._Xt @ (self._b[:, None] * XV)) - self._diag[:, None] * V) / self.n_docs
        return unscale(out, self._exp, "doc_weights", "the weighted pairs moment") if self._exp else out


def count_triples_slice(X, eta):
    r"""Unbiased :math:`\widehat{\mathrm{Triples}}(\eta)` of documents, shape (d, d).

    See :doc:`/chapters/03_topic_models` for the derivation and a numerical check.

    Per document (counts :math:`c`, length :math:`\ell\ge3`), the average over ordered
    triples of distinct positions of :math:`\langle\eta,x_3\rangle x_1x_2^\top`:

    .. math:: \frac{(c^\top\eta)\,cc^\top-(c\circ\eta)c^\top-c(c\circ\eta)^\top
              -(c^\top\eta)\operatorname{diag}(c)+2\operatorname{diag}(c\circ\eta)}
              {\ell(\ell-1)(\ell-2)},

    averaged over documents; its expectation is
    :math:`M\operatorname{diag}(M^\top\eta)\operatorname{diag}(w)M^\top` (Lemma 2.1).
    Cost O(Σ_d nnz_d²); memory O(d²).
    """
    X, lengths = _count_data(X, 3)
    eta = check_array(eta, "eta", ndim=1)
    if eta.shape[0] != X.shape[1]:
        raise ValueError(f"eta has length {eta.shape[0]} but X has {X.shape[1]} columns")
    a = inv_falling(lengths, 3)
    e = scale_exponent(eta)   # eta of extreme scale: exact power of two, scaled back at the end
    eta = scaled(eta, e)
    s = np.asarray(X @ eta).ravel()  # c^T eta per document
    Xa = sp.diags(a) @ X
    main = np.asarray(_dense(X.T @ (sp.diags(s) @ Xa)))
    cross = eta[:, None] * np.asarray(_dense(X.T @ Xa))  # Σ a (c∘η) c^T
    P = main - cross - cross.T
    P[np.diag_indices_from(P)] += -np.asarray(Xa.T @ s).ravel() + 2 * eta * np.asarray(Xa.sum(axis=0)).ravel()
    return unscale(P / X.shape[0], e, "eta", "the triples slice")


def count_whitened_triples(X, W):
    r"""Unbiased whitened word triples :math:`\widehat{\mathrm{Triples}}(W,W,W)`, shape (k, k, k).

    See :doc:`/chapters/02_whitening_power` for whitened moments and
    :doc:`/chapters/03_topic_models` for the topic model's tensor route.

    With :math:`w_i` the i-th row of ``W`` (d, k) and :math:`y=W^\top c` for a document
    of counts :math:`c` and length :math:`\ell\ge3`, the average over ordered triples of
    distinct positions of :math:`(W^\top x_1)\otimes(W^\top x_2)\otimes(W^\top x_3)` is

    .. math:: \frac{y^{\otimes3}-\sum_i c_i\,(w_i\otimes w_i\otimes y+w_i\otimes y\otimes w_i
              +y\otimes w_i\otimes w_i)+2\sum_i c_i\,w_i^{\otimes3}}{\ell(\ell-1)(\ell-2)} ,

    averaged over documents (inclusion–exclusion over coinciding positions). The sums
    over documents are sparse products: :math:`Z=X^\top\operatorname{diag}(a)XW` gives
    :math:`\sum_i w_i\otimes w_i\otimes z_i`, so no d×d×d array is ever formed.
    Expectation: :math:`\sum_j w_j (W^\top\mu_j)^{\otimes3}` (Lemma 2.1).

    Cost O(nnz·k + n k³ + d k³) time, O(n k + d k + k³) memory.
    """
    X, lengths = _count_data(X, 3)
    W = check_matrix(W, "W")
    if W.shape[0] != X.shape[1]:
        raise ValueError(f"W has {W.shape[0]} rows but X has {X.shape[1]} columns")
    a = inv_falling(lengths, 3)
    e = scale_exponent(W)   # W of extreme scale: the moment of W / 2**e, scaled back by 2**(3e)
    W = scaled(W, e)
    Y = np.asarray(X @ W)
    Xa = sp.diags(a) @ X
    Z = np.asarray(Xa.T @ Y)                      # (d, k): Σ_d a_d c_di y_d
    s = np.asarray(Xa.sum(axis=0)).ravel()        # (d,):   Σ_d a_d c_di
    main = triple_product(Y * a[:, None], Y, Y)
    E1 = triple_product(W, W, Z)                 # Σ_i w_i⊗w_i⊗z_i
    E0 = triple_product(W * s[:, None], W, W)    # Σ_i s_i w_i⊗w_i⊗w_i
    T = main - E1 - np.transpose(E1, (0, 2, 1)) - np.transpose(E1, (2, 0, 1)) + 2 * E0
    return unscale(T / X.shape[0], 3 * e, "W", "the whitened triples")


def count_triples(X):
    r"""Dense unbiased word-triple moment :math:`\widehat{\mathrm{Triples}}`, shape (d, d, d).

    See :doc:`/chapters/03_topic_models` for the derivation and a numerical check.

    :func:`count_whitened_triples` with :math:`W=I`; small vocabularies only
    (refuses above 2**27 entries). Cost O(n d³).
    """
    X, _ = _count_data(X, 3)
    d = X.shape[1]
    if d ** 3 > _MAX_DENSE:
        raise ValueError(
            f"the dense triple tensor would have {d ** 3} entries (> {_MAX_DENSE}); "
            "use count_whitened_triples or count_triples_slice instead"
        )
    return count_whitened_triples(X, np.eye(d))
