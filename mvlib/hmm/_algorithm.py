r"""Hidden Markov models as three-view mixtures (Anandkumar, Hsu & Kakade 2012, §4.2).

Notation (the paper's, used by every function in this module): k hidden states, d
symbols; :math:`\pi` (k,) the distribution of the first hidden state of a window;
:math:`T` (k, k) **column**-stochastic, :math:`T_{ij}=\Pr[h_{t+1}=i\mid h_t=j]`;
:math:`O` (d, k) column-stochastic, :math:`O_{aj}=\Pr[x_t=a\mid h_t=j]`.
hmmlearn stores the transposes: ``transmat_ = T.T`` (rows are next-state
distributions) and ``emissionprob_ = O.T``; :class:`mvlib.SpectralHMM` converts.

Proposition 4.2: for a window :math:`(x_1,x_2,x_3)` of three consecutive observations,
conditioning on the middle state :math:`h=h_2` makes the three symbols independent, with

.. math::
   w = T\pi,\qquad M_1 = O\operatorname{diag}(\pi)T^\top\operatorname{diag}(T\pi)^{-1},
   \qquad M_2 = O,\qquad M_3 = OT,

so :math:`\Pr[x_1=a,x_2=b,x_3=c]=\sum_j w_j (M_1)_{aj}(M_2)_{bj}(M_3)_{cj}`. Algorithm B
(:func:`mvlib.algorithm_b`) recovers :math:`M_1,M_2,M_3` in one column order; then
:math:`O=M_2` and :math:`T=(U_3^\top O)^{-1}U_3^\top M_3`, the paper's
:math:`(U_3^\top O)^{-1}R` with R the eigenvectors of :math:`B_{312}(\eta)`, columns scaled to
sum to one.

Windows pooled over positions. The identity holds for the *pooled* windows of any set
of sequences, stationary or not: the pooled law of :math:`(h_1,h_2,h_3)` is
:math:`\bar\pi(h_1)T_{h_2h_1}T_{h_3h_2}` with :math:`\bar\pi` the average distribution
of the hidden state at the window starts. With stationary sequences :math:`\bar\pi` is
the stationary distribution of T and :math:`w=\bar\pi`. O and T do not depend on
:math:`\bar\pi`.

Also here: window counting without loops over windows, exact window moments from the
parameters, a vectorised sampler, forward log-likelihood and Viterbi decoding in log space
(loops over time steps only, vectorised over states and sequences), and the Euclidean
projection onto the probability simplex.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from ..core.validation import check_array, check_positive_int, check_random_state, warn_user

__all__ = [
    "check_symbol_sequences",
    "window_starts",
    "window_counts",
    "window_views",
    "hmm_three_view",
    "hmm_window_moments",
    "stationary_distribution",
    "sample_hmm",
    "forward_log_likelihood",
    "viterbi",
    "project_simplex",
    "simplex_least_squares",
    "refine_window_likelihood",
]


# --------------------------------------------------------------------------- input checks
#: largest alphabet derived from the data (max(X) + 1) when n_symbols is not declared
_MAX_DERIVED_SYMBOLS = 2 ** 16

#: "auto" start law of the HMM estimators: the first symbols of this many sequences or more
FIRST_MIN_SEQUENCES = 50
#: largest d×d pairs matrix (entries) the HMM estimators agree to form (1 GiB of float64)
_MAX_PAIR_ENTRIES = 2 ** 27

def check_symbol_sequences(X, lengths=None, n_symbols=None, *, min_length: int = 1):
    r"""Validate hmmlearn-style symbol sequences; return ``(x, lengths, n_symbols)``.

    See :doc:`/chapters/06_hidden_markov` for how the sequences are used.

    Parameters
    ----------
    X : array-like (n_samples, 1) of non-negative integers (floats holding integers are accepted)
        All sequences concatenated, as for ``hmmlearn.hmm.CategoricalHMM``.
    lengths : None or array-like of positive ints
        Sequence lengths, summing to n_samples; None means one sequence.
    n_symbols : None or int
        Size d of the alphabet; every symbol must be < d. None: ``max(X) + 1``.
    min_length : int
        Every sequence must have at least this many observations (3 for windows of three).

    Returns
    -------
    x : int array (n_samples,), lengths : int array (n_sequences,), n_symbols : int.
    Cost O(n_samples). The input is not modified.
    """
    X = check_array(X, "X", ndim=2)
    if X.shape[1] != 1:
        raise ValueError(f"X must have shape (n_samples, 1) (one symbol per row), got {X.shape}")
    x = X[:, 0]
    if np.any(x != np.round(x)):
        i = int(np.flatnonzero(x != np.round(x))[0])
        raise ValueError(f"X must hold integer symbols, but X[{i}, 0] = {x[i]!r}")
    if np.any(x < 0):
        i = int(np.flatnonzero(x < 0)[0])
        raise ValueError(f"X must hold non-negative symbols, but X[{i}, 0] = {int(x[i])}")
    if n_symbols is None:
        if x.max() >= _MAX_DERIVED_SYMBOLS:
            i = int(np.argmax(x))
            raise ValueError(
                f"X holds the symbol {x[i]:.0f} (at row {i}); without n_symbols the alphabet is "
                f"0..max(X), limited to {_MAX_DERIVED_SYMBOLS} symbols: relabel the symbols as "
                "0..d-1 or declare n_symbols")
        x = x.astype(np.int64)
        n_symbols = int(x.max()) + 1
    else:
        n_symbols = check_positive_int(n_symbols, "n_symbols")
        if x.max() >= n_symbols:
            i = int(np.argmax(x))
            raise ValueError(
                f"X holds the symbol {x[i]:.0f} (at row {i}), outside the declared range "
                f"0..{n_symbols - 1} of n_symbols={n_symbols}"
            )
        x = x.astype(np.int64)
    n = x.shape[0]
    if lengths is None:
        lengths = np.array([n], dtype=np.int64)
    else:
        if isinstance(lengths, (str, bytes)):
            raise TypeError("lengths must be a sequence of positive ints")
        lengths = np.asarray(lengths)
        if lengths.ndim != 1 or lengths.size == 0:
            raise ValueError(f"lengths must be a non-empty 1-d sequence of ints, got shape {lengths.shape}")
        if not (np.issubdtype(lengths.dtype, np.integer)
                or (np.issubdtype(lengths.dtype, np.floating) and np.all(lengths == np.round(lengths)))):
            raise TypeError(f"lengths must hold integers, got dtype {lengths.dtype}")
        lengths = lengths.astype(np.int64)
        if np.any(lengths < 1):
            raise ValueError(f"lengths must be positive, but lengths[{int(np.argmin(lengths))}] = {int(lengths.min())}")
        total = _exact_total(lengths)
        if total != n:
            raise ValueError(f"lengths sum to {total} but X has {n} rows (n_samples)")
    min_length = check_positive_int(min_length, "min_length")
    short = np.flatnonzero(lengths < min_length)
    if short.size:
        i = int(short[0])
        more = f" ({short.size} sequences in all)" if short.size > 1 else ""
        why = "windows of three consecutive observations need" if min_length == 3 else "at least"
        raise ValueError(
            f"sequence {i} has length {int(lengths[i])}; {why} at least {min_length} observations{more}"
            if min_length == 3 else
            f"sequence {i} has length {int(lengths[i])}; {why} {min_length} observations are required{more}"
        )
    return x, lengths, n_symbols


def _exact_total(lengths) -> int:
    """The sum of int64 ``lengths`` as a Python int (no wrap-around: lengths near 2**62 would
    otherwise sum, modulo 2**64, to a small number and pass a size check)."""
    return int(np.sum(lengths, dtype=object)) if lengths.size else 0


# --------------------------------------------------------------------------- windows
def window_starts(lengths, width: int = 3):
    r"""Positions t (in the concatenated sample) where a window of ``width`` consecutive
    observations of one sequence starts.

    See :doc:`/chapters/06_hidden_markov`. Windows that would cross a sequence boundary are
    masked out: position t of a sequence of length L starting at s is kept iff
    :math:`t-s\le L-\text{width}`. Vectorised, cost O(n_samples); returns an int array.
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer):
        raise TypeError(f"lengths must be a 1-d sequence of ints, got dtype {lengths.dtype} and shape {lengths.shape}")
    lengths = lengths.astype(np.int64)
    if np.any(lengths < 1):
        raise ValueError(f"lengths must be positive, but lengths[{int(np.argmin(lengths))}] = {int(lengths.min())}")
    width = check_positive_int(width, "width")
    n = _exact_total(lengths)
    if n > np.iinfo(np.int64).max:
        raise ValueError(f"lengths sum to {n}, more than an index can hold (2**63 - 1)")
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    offset = np.arange(n) - np.repeat(first, lengths)         # position within its sequence
    return np.flatnonzero(offset <= np.repeat(lengths, lengths) - width)


def window_counts(X, lengths=None, n_symbols=None):
    r"""Counts :math:`C_{abc}` of windows :math:`(x_t,x_{t+1},x_{t+2})=(a,b,c)` within sequences.

    See :doc:`/chapters/06_hidden_markov` for the derivation and a numerical check.

    ``np.bincount`` on the flattened index :math:`(x_t d+x_{t+1})d+x_{t+2}`; no loop over
    windows. :math:`C/C.\mathrm{sum}()` estimates the window law
    :math:`P_{123}=\sum_j w_j\,\mu_{1,j}\otimes\mu_{2,j}\otimes\mu_{3,j}` of
    :func:`hmm_window_moments`. Dense (d, d, d) int array: for small alphabets (teaching,
    tests); the estimator never forms it. Cost O(n_samples + d³).
    """
    x, lengths, d = check_symbol_sequences(X, lengths, n_symbols, min_length=3)
    if d ** 3 > 2 ** 27:
        raise ValueError(f"n_symbols={d} is too large for a dense d×d×d count tensor (d³ > 2**27)")
    t = window_starts(lengths)
    flat = (x[t] * d + x[t + 1]) * d + x[t + 2]
    return np.bincount(flat, minlength=d ** 3).reshape(d, d, d)


def window_views(X, lengths=None, n_symbols=None):
    r"""The three views of all windows as sparse one-hot matrices ``[X1, X2, X3]``, each
    (n_windows, d) CSR, row i the indicator of :math:`x_{t_i+v-1}`.

    See :doc:`/chapters/06_hidden_markov`. Feeding them to :func:`mvlib.pairs` and
    :func:`mvlib.whitened_triples` gives :math:`\hat P_{ab}` and the projected
    :math:`\hat P_{123}(U_1,U_2,U_3)` in O(n_windows k³) without a d×d×d array.
    Returns ``(views, n_symbols)``. Cost O(n_samples).
    """
    x, lengths, d = check_symbol_sequences(X, lengths, n_symbols, min_length=3)
    t = window_starts(lengths)
    m = t.size
    ones, indptr = np.ones(m), np.arange(m + 1)
    views = [sp.csr_matrix((ones, x[t + v], indptr), shape=(m, d)) for v in range(3)]
    return views, d


# --------------------------------------------------------------------------- parameters
def _check_params(pi, T, O):
    """Validate (π, T, O) in the paper's convention; return float arrays."""
    T = check_array(T, "T", ndim=2)
    k = T.shape[0]
    if T.shape != (k, k):
        raise ValueError(f"T must be square (k, k), got shape {T.shape}")
    O = check_array(O, "O", ndim=2)
    if O.shape[1] != k:
        raise ValueError(f"O has {O.shape[1]} columns but T has {k} states")
    pi = check_array(pi, "pi", ndim=1)
    if pi.shape[0] != k:
        raise ValueError(f"pi has length {pi.shape[0]} but T has {k} states")
    for name, A in (("pi", pi[:, None]), ("T", T), ("O", O)):
        if np.any(A < -1e-12) or not np.allclose(A.sum(axis=0), 1.0, atol=1e-8):
            raise ValueError(f"{name} must have non-negative columns summing to 1")
    return pi, T, O


def hmm_three_view(pi, T, O):
    r"""The three-view mixture of windows: ``(w, [M1, M2, M3])`` of Proposition 4.2.

    See :doc:`/chapters/06_hidden_markov` for the derivation and a numerical check.

    :math:`w=T\pi`, :math:`M_1=O\operatorname{diag}(\pi)T^\top\operatorname{diag}(T\pi)^{-1}`,
    :math:`M_2=O`, :math:`M_3=OT` (Anandkumar, Hsu & Kakade 2012, Proposition 4.2), with
    ``pi`` (k,) the law of the first state of a window, ``T`` (k, k) column-stochastic
    (:math:`T_{ij}=\Pr[h_{t+1}=i\mid h_t=j]`), ``O`` (d, k). Cost O(d k²).
    """
    pi, T, O = _check_params(pi, T, O)
    w = T @ pi
    if np.any(w <= 0):
        raise ValueError("T pi has a zero entry: some state is never the middle state of a window")
    M1 = O @ (pi[:, None] * T.T) / w
    return w, [M1, O.copy(), O @ T]


def hmm_window_moments(pi, T, O):
    r"""Exact law of a window: ``(P12, P13, P23, P123)`` with
    :math:`P_{123}[a,b,c]=\Pr[x_1=a,x_2=b,x_3=c]`.

    See :doc:`/chapters/06_hidden_markov` for the derivation and a numerical check.

    Summed directly over the hidden chain,
    :math:`P_{123}[a,b,c]=\sum_{i,j,l}\pi_iO_{ai}T_{ji}O_{bj}T_{lj}O_{cl}` (independent of
    Proposition 4.2, which the chapter checks against it); the pairs are its marginals
    (one-hot views: :math:`P_{ab}=E[x_a x_b^\top]`). Shapes (d, d) and (d, d, d); cost O(d³k).
    """
    pi, T, O = _check_params(pi, T, O)
    P123 = np.einsum("i,ai,ji,bj,lj,cl->abc", pi, O, T, O, T, O, optimize=True)
    return P123.sum(axis=2), P123.sum(axis=1), P123.sum(axis=0), P123


def stationary_distribution(T):
    r"""The stationary distribution of a column-stochastic T: :math:`T\pi=\pi`, :math:`\pi\ge0`,
    :math:`\one^\top\pi=1`.

    See :doc:`/chapters/06_hidden_markov`. The eigenvector of the eigenvalue closest to 1,
    made non-negative by :func:`project_simplex`. Cost O(k³).
    """
    T = check_array(T, "T", ndim=2)
    if T.shape[0] != T.shape[1]:
        raise ValueError(f"T must be square (k, k), got shape {T.shape}")
    evals, vecs = sla.eig(T)
    v = np.real(vecs[:, np.argmin(np.abs(evals - 1.0))])
    v = v / v.sum() if v.sum() != 0 else np.abs(v)
    return project_simplex(v)


def project_simplex(V, axis: int = 0):
    r"""Euclidean projection of each column (``axis=0``) or row (``axis=1``) onto the simplex.

    See :doc:`/chapters/06_hidden_markov`. For a vector v the projection is
    :math:`\max(v-\tau,0)` with the threshold τ chosen so that the result sums to one
    (sort-based algorithm of Held, Wolfe & Crowder; Duchi et al. 2008). Vectorised over
    columns/rows, cost O(d log d) each. A 1-d input is projected as one vector.
    """
    A = check_array(V, "V", ndim=np.ndim(V) if np.ndim(V) in (1, 2) else 2)
    one_d = A.ndim == 1
    if one_d:
        A = A[:, None]
    elif axis not in (0, 1):
        raise ValueError(f"axis must be 0 or 1, got {axis!r}")
    B = A if (one_d or axis == 0) else A.T
    d = B.shape[0]
    U = -np.sort(-B, axis=0)                                  # descending per column
    css = np.cumsum(U, axis=0) - 1.0
    idx = np.arange(1, d + 1)[:, None]
    cond = U - css / idx > 0
    rho = d - 1 - np.argmax(cond[::-1], axis=0)               # last index where cond holds
    tau = css[rho, np.arange(B.shape[1])] / (rho + 1)
    P = np.maximum(B - tau, 0.0)
    if one_d:
        return P[:, 0]
    return P if axis == 0 else P.T


def simplex_least_squares(A, B):
    r"""Columns on the probability simplex that best solve :math:`AX\approx B` in least squares.

    See :doc:`/chapters/06_hidden_markov`. For every column b of ``B`` (m, p) solves

    .. math:: \min_x \tfrac12\lVert Ax-b\rVert_2^2 \quad\text{s.t.}\quad x\ge 0,\ \mathbf 1^\top x=1

    exactly (up to rounding) by a primal active-set method (Nocedal & Wright 2006, Algorithm
    16.3): on the current free set F it solves the equality-constrained problem through its
    KKT system, steps towards that solution until an entry would turn negative (which then
    joins the active set), and releases the active entry with the most negative multiplier
    :math:`\mu_i=g_i+\nu` (g the gradient, ν the multiplier of the sum constraint) until all
    are non-negative — the KKT conditions of the convex problem, so the result is its unique
    minimiser when A (m, k) has full column rank. If the unconstrained solution already lies
    on the simplex it is returned, so a consistent system (exact moments) is solved exactly.

    Used for the transition matrix of :class:`mvlib.SpectralHMM` (:math:`\hat O T\approx\hat M_3`,
    columns of T on the simplex) instead of solving without constraints and dividing by the
    column sums, which explodes when a column sum is near zero. Returns X (k, p), columns on
    the simplex. Cost O(k³) per active-set step, at most a few k steps per column.
    """
    A = check_array(A, "A", ndim=2)
    B = check_array(B, "B", ndim=np.ndim(B) if np.ndim(B) in (1, 2) else 2)
    one_d = B.ndim == 1
    Bm = B[:, None] if one_d else B
    if Bm.shape[0] != A.shape[0]:
        raise ValueError(f"B has {Bm.shape[0]} rows but A has {A.shape[0]}")
    m, k = A.shape
    if np.linalg.matrix_rank(A) < k:
        raise ValueError(f"A (shape {A.shape}) must have full column rank {k}")
    G, C = A.T @ A, A.T @ Bm
    X = np.empty((k, Bm.shape[1]))
    for j in range(Bm.shape[1]):
        X[:, j] = _simplex_qp(G, C[:, j])
    return X[:, 0] if one_d else X


def _simplex_qp(G, c):
    """min ½xᵀGx − cᵀx on the simplex (G positive definite), primal active set."""
    k = G.shape[0]
    scale = max(float(np.abs(G).max()), np.finfo(float).tiny)
    tol = 1e-12 * scale * max(1.0, float(np.abs(c).max()) / scale)
    x = np.full(k, 1.0 / k)                      # feasible start, nothing active
    free = np.ones(k, dtype=bool)
    for _ in range(50 * k + 50):
        F = np.flatnonzero(free)
        # KKT system on F: [G_FF 1; 1ᵀ 0] [x_F; ν] = [c_F; 1]  (ν = −multiplier of 1ᵀx = 1)
        K = np.zeros((F.size + 1, F.size + 1))
        K[:-1, :-1], K[:-1, -1], K[-1, :-1] = G[np.ix_(F, F)], 1.0, 1.0
        sol = np.linalg.solve(K, np.append(c[F], 1.0))
        p = np.zeros(k)
        p[F] = sol[:-1]
        if np.all(p[F] >= 0):
            x = p
            g = G @ x - c                                # gradient; on F, g_F = −ν
            mu = g + sol[-1]
            active = np.flatnonzero(~free)
            if active.size == 0 or mu[active].min() >= -tol:
                return x
            free[active[np.argmin(mu[active])]] = True   # release the most violated bound
            continue
        # step from x towards p until the first free entry reaches zero
        d = p - x
        neg = F[d[F] < 0]
        ratios = -x[neg] / d[neg]
        i = int(np.argmin(ratios))
        x = x + min(1.0, float(ratios[i])) * d
        x[neg[i]] = 0.0
        free[neg[i]] = False
    raise RuntimeError("simplex least squares did not converge (active-set cycling)")


# --------------------------------------------------------------------------- sampling
def sample_hmm(pi, T, O, n_sequences: int, length: int, random_state=None):
    r"""Sample ``n_sequences`` sequences of ``length`` observations from the HMM (π, T, O).

    See :doc:`/chapters/06_hidden_markov`. Here ``pi`` is the law of the first state of each
    sequence. Inverse-CDF sampling vectorised over sequences (a loop over the ``length``
    time steps only); cost O(n_sequences · length · (k + d)).

    Returns ``X`` (n_sequences·length, 1) int symbols in hmmlearn's layout (sequences
    concatenated), ``lengths`` (n_sequences,), and the hidden states (same layout as X[:, 0]).
    """
    pi, T, O = _check_params(pi, T, O)
    n_sequences = check_positive_int(n_sequences, "n_sequences")
    length = check_positive_int(length, "length")
    rng = check_random_state(random_state)
    cT, cO = np.cumsum(T, axis=0).T, np.cumsum(O, axis=0).T    # row j: CDF given state j
    cT[:, -1] = cO[:, -1] = 1.0
    H = np.empty((n_sequences, length), dtype=np.int64)
    H[:, 0] = np.minimum(np.searchsorted(np.cumsum(pi), rng.random(n_sequences), side="right"), len(pi) - 1)
    for t in range(1, length):
        u = rng.random(n_sequences)
        H[:, t] = np.sum(u[:, None] >= cT[H[:, t - 1]], axis=1)
    u = rng.random(H.shape)
    Xs = np.sum(u[..., None] >= cO[H], axis=2)
    return Xs.reshape(-1, 1), np.full(n_sequences, length, dtype=np.int64), H.ravel()


def random_hmm(n_components: int, n_symbols: int, random_state=None):
    r"""A random HMM ``(pi, T, O)`` in the paper's column convention, with a sticky chain.

    See :doc:`/chapters/06_hidden_markov`, whose numerical checks run on these models. With
    :math:`k` = ``n_components`` and :math:`d` = ``n_symbols``, three draws in this order:

    .. math::
       T=\tfrac12 I+\tfrac12 D,\quad D_{\cdot j}\sim\mathrm{Dirichlet}(1,\dots,1);\qquad
       \pi\sim\mathrm{Dirichlet}(1,\dots,1);\qquad
       O_{\cdot j}\sim\mathrm{Dirichlet}(\tfrac12,\dots,\tfrac12),

    so every state is kept with probability at least 1/2 and the emission laws are peaked.
    Returns ``pi`` (k,), ``T`` (k, k) column-stochastic (:math:`T_{ij}=\Pr[h_{t+1}=i\mid h_t=j]`)
    and ``O`` (d, k) column-stochastic. ``random_state``: None, an int or a
    ``numpy.random.Generator`` (advanced by the draws).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.hmm import random_hmm
    >>> pi, T, O = random_hmm(3, 6, random_state=0)
    >>> pi.shape, T.shape, O.shape
    ((3,), (3, 3), (6, 3))
    >>> bool(np.allclose(T.sum(axis=0), 1) and np.all(np.diag(T) >= 0.5))
    True
    """
    k = check_positive_int(n_components, "n_components")
    d = check_positive_int(n_symbols, "n_symbols")
    rng = check_random_state(random_state)
    T = 0.5 * np.eye(k) + 0.5 * rng.dirichlet(np.ones(k), k).T
    return rng.dirichlet(np.ones(k)), T, rng.dirichlet(np.full(d, 0.5), k).T


# --------------------------------------------------------------------------- inference
def _padded(x, lengths):
    """(n_sequences, max_length) symbol matrix (padding 0) and the position mask."""
    n_seq, L = lengths.size, int(lengths.max())
    mask = np.arange(L)[None, :] < lengths[:, None]
    Z = np.zeros((n_seq, L), dtype=np.int64)
    Z[mask] = x
    return Z, mask


def _log_params(pi, T, O):
    with np.errstate(divide="ignore"):
        return np.log(pi), np.log(T), np.log(O)


def forward_log_likelihood(X, lengths, pi, T, O):
    r"""Log-likelihood :math:`\log\Pr[x_{1:L}]` of every sequence by the forward algorithm.

    See :doc:`/chapters/06_hidden_markov` for the derivation and a numerical check.

    In log space: :math:`\log\alpha_1=\log\pi+\log O_{x_1,:}`,
    :math:`\log\alpha_{t+1}(i)=\log O_{x_{t+1},i}+\operatorname{logsumexp}_j(\log T_{ij}+\log\alpha_t(j))`,
    :math:`\log\Pr=\operatorname{logsumexp}\log\alpha_L`. One loop over time steps, vectorised
    over states and sequences; cost O(n_samples k²). Parameters in the paper's convention
    (``pi`` = initial law, T column-stochastic, O (d, k)). Returns (n_sequences,); −inf for a
    sequence that has probability zero.
    """
    pi, T, O = _check_params(pi, T, O)
    x, lengths, _ = check_symbol_sequences(X, lengths, O.shape[0])
    lpi, lT, lO = _log_params(pi, T, O)
    Z, mask = _padded(x, lengths)
    la = lpi[None, :] + lO[Z[:, 0]]
    for t in range(1, Z.shape[1]):
        new = logsumexp(la[:, None, :] + lT[None, :, :], axis=2) + lO[Z[:, t]]
        act = mask[:, t]
        la = np.where(act[:, None], new, la)
    return logsumexp(la, axis=1)


def viterbi(X, lengths, pi, T, O):
    r"""Most probable hidden path of every sequence (Viterbi, in log space).

    See :doc:`/chapters/06_hidden_markov`.

    :math:`\delta_{t+1}(i)=\log O_{x_{t+1},i}+\max_j(\log T_{ij}+\delta_t(j))` with back-pointers,
    then backtracking; loops over time steps, vectorised over states and sequences; cost
    O(n_samples k²) time and O(n_samples k) memory. Returns ``(states, log_prob)``: states
    (n_samples,) in the layout of X, and the log-probability of each best path (n_sequences,).
    """
    pi, T, O = _check_params(pi, T, O)
    x, lengths, _ = check_symbol_sequences(X, lengths, O.shape[0])
    lpi, lT, lO = _log_params(pi, T, O)
    Z, mask = _padded(x, lengths)
    n_seq, L = Z.shape
    k = T.shape[0]
    back = np.zeros((n_seq, L, k), dtype=np.int64)
    back[:, :, :] = np.arange(k)                               # identity after a sequence ends
    delta = lpi[None, :] + lO[Z[:, 0]]
    for t in range(1, L):
        scores = delta[:, None, :] + lT[None, :, :]             # (seq, next i, previous j)
        arg = np.argmax(scores, axis=2)
        new = np.take_along_axis(scores, arg[:, :, None], axis=2)[:, :, 0] + lO[Z[:, t]]
        act = mask[:, t]
        delta = np.where(act[:, None], new, delta)
        back[act, t] = arg[act]
    path = np.empty((n_seq, L), dtype=np.int64)
    path[:, -1] = np.argmax(delta, axis=1)
    logp = np.max(delta, axis=1)
    rows = np.arange(n_seq)
    for t in range(L - 1, 0, -1):
        path[:, t - 1] = back[rows, t, path[:, t]]
    return path[mask], logp




# --------------------------------------------------------------------------- refinement
#: refinement forms the d×d×d window counts; larger alphabets are refused
REFINE_MAX_SYMBOLS = 100


def _unpack_logits(z, k, d):
    """Logits z (rows of O^T, rows of T^T, π) -> (O (d, k), T (k, k), π (k,)) on the simplex."""
    a, b, c = z[:k * d].reshape(k, d), z[k * d:k * d + k * k].reshape(k, k), z[k * d + k * k:]
    return softmax(a, axis=1).T, softmax(b, axis=1).T, softmax(c)


def _window_law_and_grad(z, C, k, d, n):
    """Negative composite log-likelihood of the window counts and its gradient in the logits."""
    O, T, pi = _unpack_logits(z, k, d)
    A = O * pi                                   # O diag(π)
    M1 = A @ T.T                                 # Σ_i O_ai π_i T_ji  (w_j (M1)_aj of Prop. 4.2)
    M3 = O @ T                                   # (OT)_cj
    P = np.einsum("aj,bj,cj->abc", M1, O, M3, optimize=True)
    P = np.maximum(P, 1e-300)
    value = -float(np.sum(C * np.log(P))) / n
    G = -(C / P) / n                              # ∂value/∂P
    dM1 = np.einsum("abc,bj,cj->aj", G, O, M3, optimize=True)
    dO = np.einsum("abc,aj,cj->bj", G, M1, M3, optimize=True)
    dM3 = np.einsum("abc,aj,bj->cj", G, M1, O, optimize=True)
    dA = dM1 @ T
    dT = dM1.T @ A + O.T @ dM3
    dO = dO + dM3 @ T.T + dA * pi
    dpi = np.sum(dA * O, axis=0)

    def logit_grad(p, g, axis):                  # softmax Jacobian-vector product
        return p * (g - np.sum(g * p, axis=axis, keepdims=True))

    grad = np.concatenate([logit_grad(O, dO, 0).T.ravel(), logit_grad(T, dT, 0).T.ravel(),
                           logit_grad(pi, dpi, 0)])
    return value, grad


def refine_window_likelihood(C, pi, T, O, *, max_iter: int = 1000, tol: float = 1e-12,
                             floor: float = 1e-6):
    r"""Polish (π, T, O) by maximising the composite likelihood of the window counts.

    See :doc:`/chapters/06_hidden_markov`. The spectral estimate is consistent but not
    efficient: its T inherits the error of :math:`\hat O` amplified by
    :math:`1/\sigma_k(O)`. Treating the windows as independent draws from the law
    :math:`P_\theta[a,b,c]=\sum_{i,j,l}\pi_iO_{ai}T_{ji}O_{bj}T_{lj}O_{cl}` (the chain sum of
    :func:`hmm_window_moments`), this maximises
    :math:`\sum_{abc}C_{abc}\log P_\theta[a,b,c]` over the simplex (softmax
    parametrisation, L-BFGS with the analytic gradient), started at the given estimate.
    It is a composite likelihood (windows overlap), so consistent at the same
    :math:`n^{-1/2}` rate; it uses only the counts, so each iteration costs O(d³k)
    whatever the number of sequences — unlike Baum–Welch, O(n k²) per iteration.

    Parameters
    ----------
    C : array (d, d, d) of window counts (:func:`window_counts`), d ≤ ``REFINE_MAX_SYMBOLS``
    pi, T, O : starting point in the paper's convention ((k,), (k, k), (d, k))
    max_iter, tol : L-BFGS iterations and tolerance on the objective
    floor : float in (0, 0.1)
        Starting probabilities are mixed with the uniform law, :math:`(1-f)p+f/\text{size}`,
        so that zeros of a projected estimate get finite logits.

    Returns
    -------
    ``(pi, T, O, info)`` with ``info = {"n_iter", "objective_start", "objective",
    "converged"}``; the objective is the average negative log-likelihood per window. A
    ``RuntimeWarning`` says when L-BFGS stops without converging (typical of data far from
    a k-state HMM); the result is then the last iterate, still in the simplex.
    """
    C = check_array(C, "C", ndim=3)
    d = C.shape[0]
    if C.shape != (d, d, d):
        raise ValueError(f"C must be a (d, d, d) count tensor, got shape {C.shape}")
    if d > REFINE_MAX_SYMBOLS:
        raise ValueError(f"refinement forms d×d×d window counts; n_symbols={d} exceeds "
                         f"{REFINE_MAX_SYMBOLS}")
    if np.any(C < 0):
        raise ValueError("C must hold non-negative counts")
    n = float(C.sum())
    if not n > 0:
        raise ValueError("C holds no windows")
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0 < floor < 0.1:
        raise ValueError(f"floor={floor!r} must be a number in (0, 0.1)")
    max_iter = check_positive_int(max_iter, "max_iter")
    pi, T, O = (np.clip(np.asarray(M, float), 0.0, None) for M in (pi, T, O))
    pi, T, O = pi / pi.sum(), T / T.sum(axis=0), O / O.sum(axis=0)
    pi, T, O = _check_params(pi, T, O)
    if O.shape[0] != d:
        raise ValueError(f"O has {O.shape[0]} rows but C has {d} symbols")
    k = T.shape[0]

    def logits(P):                                 # columns of P -> rows of logits
        return np.log((1.0 - floor) * P + floor / P.shape[0]).T

    z0 = np.concatenate([logits(O).ravel(), logits(T).ravel(), logits(pi[:, None]).ravel()])
    start = _window_law_and_grad(z0, C, k, d, n)[0]
    res = minimize(_window_law_and_grad, z0, args=(C, k, d, n), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter, "ftol": tol, "gtol": 1e-9})
    O_r, T_r, pi_r = _unpack_logits(res.x, k, d)
    info = {"n_iter": int(res.nit), "objective_start": float(start), "objective": float(res.fun),
            "converged": bool(res.success)}
    if not res.success:
        warn_user(f"the window-likelihood refinement stopped without converging after "
                      f"{res.nit} iterations ({res.message}); the objective fell from {start:.6g} to "
                      f"{res.fun:.6g} per window (raise max_iter, or check that an HMM with "
                      f"{k} states fits the data)", RuntimeWarning)
    return pi_r, T_r, O_r, info
