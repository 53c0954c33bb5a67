r"""Observable-operator representation of a hidden Markov model (Hsu, Kakade & Zhang 2009/2012).

Notation of :mod:`mvlib.hmm`: k hidden states, d symbols, T (k, k) column-stochastic
(:math:`T_{ij}=\Pr[h_{t+1}=i\mid h_t=j]`), O (d, k) column-stochastic
(:math:`O_{aj}=\Pr[x_t=a\mid h_t=j]`), :math:`\pi` the law of the first hidden state.
Hsu, Kakade & Zhang (2012, J. Comput. Syst. Sci. 78, §2–3) use the low-order moments

.. math::
   P_1[i]=\Pr[x_1=i],\qquad P_{21}[i,j]=\Pr[x_2=i,x_1=j],\qquad
   P_{3x1}[i,j]=\Pr[x_3=i,x_2=x,x_1=j],

so that :math:`P_1=O\pi`, :math:`P_{21}=OT\operatorname{diag}(\pi)O^\top` and
:math:`P_{3x1}=OA_xT\operatorname{diag}(\pi)O^\top` with :math:`A_x=T\operatorname{diag}(O_{x,:})`
(their Lemma 2). With U (d, k) the top-k left singular vectors of :math:`P_{21}`, Algorithm 1
(population version) sets

.. math::
   b_1=U^\top P_1,\qquad b_\infty=(P_{21}^\top U)^{+}P_1,\qquad
   B_x=(U^\top P_{3x1})(U^\top P_{21})^{+},

and their Lemma 3 gives :math:`b_1=(U^\top O)\pi`, :math:`b_\infty^\top=\mathbf 1^\top(U^\top O)^{-1}`,
:math:`B_x=(U^\top O)A_x(U^\top O)^{-1}`, hence (Lemma 3 / eq. (1))

.. math:: \Pr[x_1,\dots,x_t]=b_\infty^\top B_{x_t}\cdots B_{x_1}b_1 .

Hypotheses (their Condition 1): :math:`\pi>0` entrywise and O, T of rank k. Only
:math:`b_1` depends on :math:`\pi`; :math:`b_\infty` and :math:`B_x` do not (in the population).

Which :math:`\pi`. The paper draws one triple from the start of each sequence. Here the
moments are taken from **all windows of three consecutive observations** of every
sequence (:func:`oo_window_moments`; :math:`P_1` and :math:`P_{21}` are the marginals of the
same triples), so they are the moments of an HMM whose first state has the law
:math:`\bar\pi` = the average law of the hidden state at the window starts (positions
:math:`1..L-2` of each sequence of length L), stationary or not; for stationary sequences
:math:`\bar\pi` is the stationary law of T. :math:`b_1` then starts sequences from
:math:`\bar\pi`; :func:`oo_start_state` gives :math:`U^\top f` for another start law
:math:`f=O\pi_0` of the first symbol (e.g. the empirical law of first symbols).

Scoring (:func:`oo_log_likelihood`) runs the predictive recursion with one normalisation
per step, so long sequences neither underflow nor overflow, and floors estimated
conditional probabilities that come out non-positive by a stated rule.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..core.validation import check_array, check_identifiable_rank, check_positive_int
from ._algorithm import _MAX_PAIR_ENTRIES, check_symbol_sequences, window_starts

__all__ = [
    "oo_window_moments",
    "oo_operators",
    "oo_operators_from_sequences",
    "oo_start_state",
    "oo_joint_probability",
    "oo_log_likelihood",
]

#: unique triples handled per block when the operators are accumulated
_BLOCK = 2 ** 15


# --------------------------------------------------------------------------- moments
def oo_window_moments(X, lengths=None, n_symbols=None):
    r"""Empirical :math:`(\hat P_1,\hat P_{21},\hat P_{3x1})` from all windows of three.

    See :doc:`/chapters/06_hidden_markov`. Every window :math:`(x_t,x_{t+1},x_{t+2})` of
    every sequence (sequences of length ≥ 3; :func:`mvlib.hmm.window_starts`) counts once:
    :math:`\hat P_{3x1}[x,i,j]` = fraction of windows with :math:`(x_1,x_2,x_3)=(j,x,i)`,
    :math:`\hat P_{21}[i,j]=\sum_{l}\hat P_{3x1}[i,l,j]` the law of :math:`(x_2,x_1)` and
    :math:`\hat P_1` the law of :math:`x_1` of the same windows. Dense arrays P1 (d,), P21 (d, d),
    P3x1 (d, d, d) indexed ``[x, i, j]`` — for small alphabets (teaching, tests);
    :func:`oo_operators_from_sequences` never forms the d×d×d array. Cost O(n_samples + d³).
    """
    x, lengths, d = check_symbol_sequences(X, lengths, n_symbols, min_length=3)
    if d ** 3 > 2 ** 27:
        raise ValueError(f"n_symbols={d} is too large for a dense d×d×d array (d³ > 2**27)")
    t = window_starts(lengths)
    a, b, c = x[t], x[t + 1], x[t + 2]
    P3x1 = np.bincount((b * d + c) * d + a, minlength=d ** 3).reshape(d, d, d) / t.size
    return P3x1.sum(axis=(0, 1)), P3x1.sum(axis=1), P3x1


# --------------------------------------------------------------------------- operators
def _basis(P21, k):
    """Top-k left singular vectors of P21, with the rank check of Condition 1."""
    U, s, _ = sla.svd(P21, full_matrices=False)
    check_identifiable_rank(k, s, "the bigram matrix P21")
    return U[:, :k], s


def _start_and_end(P1, P21, U):
    b1 = U.T @ P1
    binf, *_ = sla.lstsq(P21.T @ U, P1)                      # (P21^T U)^+ P1
    return b1, binf


def oo_operators(P1, P21, P3x1, n_components):
    r"""Observable operators ``(b1, binf, B)`` from moments given as dense arrays.

    See :doc:`/chapters/06_hidden_markov`. Hsu, Kakade & Zhang (2012), Algorithm 1 with the
    moments in place of their estimates: U = top-k left singular vectors of
    :math:`P_{21}`, :math:`b_1=U^\top P_1`, :math:`b_\infty=(P_{21}^\top U)^+P_1`,
    :math:`B_x=(U^\top P_{3x1})(U^\top P_{21})^+`.

    Parameters
    ----------
    P1 : (d,) ; P21 : (d, d), ``P21[i, j] = Pr[x2=i, x1=j]`` ;
    P3x1 : (d, d, d), ``P3x1[x, i, j] = Pr[x3=i, x2=x, x1=j]`` ; n_components : int k.

    Returns ``b1`` (k,), ``binf`` (k,), ``B`` (d, k, k) with ``B[x]`` = :math:`B_x`, and
    ``U`` (d, k). ValueError when k exceeds the numerical rank of :math:`P_{21}`.
    Cost O(d³ k).
    """
    k = check_positive_int(n_components, "n_components")
    P1 = check_array(P1, "P1", ndim=1)
    d = P1.shape[0]
    P21 = check_array(P21, "P21", ndim=2)
    if P21.shape != (d, d):
        raise ValueError(f"P21 must have shape ({d}, {d}) to match P1, got {P21.shape}")
    P3x1 = check_array(P3x1, "P3x1", ndim=3)
    if P3x1.shape != (d, d, d):
        raise ValueError(f"P3x1 must have shape ({d}, {d}, {d}) to match P1, got {P3x1.shape}")
    if k > d:
        raise ValueError(f"n_components={k} exceeds n_symbols={d}: O cannot have rank n_components (Condition 1)")
    U, _ = _basis(P21, k)
    V = sla.pinv(U.T @ P21)                                    # (d, k)
    B = np.einsum("ia,xij,jb->xab", U, P3x1, V, optimize=True)
    b1, binf = _start_and_end(P1, P21, U)
    return b1, binf, B, U


def oo_operators_from_sequences(X, lengths, n_components, n_symbols=None):
    r"""Observable operators estimated from all windows of three of the sequences.

    See :doc:`/chapters/06_hidden_markov`. The same quantities as
    :func:`oo_operators` applied to :func:`oo_window_moments`, without a d×d×d array:
    with :math:`V=(U^\top\hat P_{21})^+` (d, k), :math:`B_x=\frac1N\sum_{\text{windows }(j,x,i)}
    U_{i,:}^\top V_{j,:}` (outer products accumulated over the distinct triples, grouped by
    the middle symbol). ``X`` (n_samples, 1) symbols, ``lengths`` as in hmmlearn, each ≥ 3.

    Returns ``(b1, binf, B, U, info)``; ``info`` holds ``n_windows``, ``n_symbols`` and the
    singular values of :math:`\hat P_{21}`. Cost O(n_samples + n_distinct_triples·k² + d³)
    time (the SVD of the d×d bigram matrix), O(d² + d k²) memory.
    """
    k = check_positive_int(n_components, "n_components")
    x, lengths, d = check_symbol_sequences(X, lengths, n_symbols, min_length=3)
    if k > d:
        raise ValueError(f"n_components={k} exceeds n_symbols={d}: O cannot have rank n_components (Condition 1)")
    if d * d > _MAX_PAIR_ENTRIES:
        raise ValueError(f"n_symbols={d} is too large: the d×d bigram matrix would have {d * d} "
                         "entries (> 2**27)")
    t = window_starts(lengths)
    n = t.size
    a, b, c = x[t], x[t + 1], x[t + 2]                        # x1, x2, x3 of each window
    P1 = np.bincount(a, minlength=d) / n
    P21 = np.bincount(b * d + a, minlength=d * d).reshape(d, d) / n
    U, s = _basis(P21, k)
    V = sla.pinv(U.T @ P21)
    keys, counts = np.unique((b * d + a) * d + c, return_counts=True)   # sorted by middle symbol
    mid, rest = np.divmod(keys, d * d)
    first, third = np.divmod(rest, d)
    B = np.zeros((d, k, k))
    for lo in range(0, keys.size, _BLOCK):
        sl = slice(lo, lo + _BLOCK)
        outer = (counts[sl] / n)[:, None, None] * U[third[sl]][:, :, None] * V[first[sl]][:, None, :]
        m = mid[sl]
        starts = np.flatnonzero(np.r_[True, m[1:] != m[:-1]])
        B[m[starts]] += np.add.reduceat(outer, starts, axis=0)
    b1, binf = _start_and_end(P1, P21, U)
    return b1, binf, B, U, {"n_windows": int(n), "n_symbols": d, "singular_values": s}


def oo_start_state(U, f):
    r"""Operator start state :math:`U^\top f` for a law f (d,) of the first symbol.

    See :doc:`/chapters/06_hidden_markov`. If :math:`f=O\pi_0`, then
    :math:`U^\top f=(U^\top O)\pi_0` is the :math:`b_1` of the same HMM started from
    :math:`\pi_0` (Lemma 3 of Hsu, Kakade & Zhang 2012); :math:`b_\infty` and :math:`B_x` are
    unchanged. Cost O(d k).
    """
    U = check_array(U, "U", ndim=2)
    f = check_array(f, "f", ndim=1)
    if f.shape[0] != U.shape[0]:
        raise ValueError(f"f has length {f.shape[0]} but U has {U.shape[0]} rows")
    return U.T @ f


def _check_operators(b1, binf, B):
    B = check_array(B, "B", ndim=3)
    d, k = B.shape[0], B.shape[1]
    if B.shape != (d, k, k):
        raise ValueError(f"B must have shape (n_symbols, k, k), got {B.shape}")
    b1 = check_array(b1, "b1", ndim=1)
    binf = check_array(binf, "binf", ndim=1)
    if b1.shape != (k,) or binf.shape != (k,):
        raise ValueError(f"b1 and binf must have shape ({k},) to match B, got {b1.shape} and {binf.shape}")
    return b1, binf, B


# --------------------------------------------------------------------------- probabilities
def oo_joint_probability(b1, binf, B, X, lengths=None):
    r"""Raw joint probabilities :math:`b_\infty^\top B_{x_L}\cdots B_{x_1}b_1`, one per sequence.

    See :doc:`/chapters/06_hidden_markov`. Lemma 3 of Hsu, Kakade & Zhang (2012), evaluated
    as written: no normalisation and no flooring, so an estimated model can return negative
    values and long sequences underflow — for checks on short sequences;
    :func:`oo_log_likelihood` is the scoring rule. Returns (n_sequences,); cost
    O(n_samples k²).
    """
    b1, binf, B = _check_operators(b1, binf, B)
    x, lengths, _ = check_symbol_sequences(X, lengths, B.shape[0])
    out = np.empty(lengths.size)
    for s, seq in enumerate(np.split(x, np.cumsum(lengths)[:-1])):
        v = b1
        for sym in seq:
            v = B[sym] @ v
        out[s] = binf @ v
    return out


def oo_log_likelihood(b1, binf, B, X, lengths=None, *, floor=1e-3):
    r"""Log-likelihood of every sequence under the operator model, normalised per step.

    See :doc:`/chapters/06_hidden_markov`. The predictive recursion of Hsu, Kakade & Zhang
    (2012, §3 "conditional probabilities"): with state :math:`b_t` (:math:`b_1` given),

    .. math::
       q_t(x)=b_\infty^\top B_x b_t\ (x=0..d-1),\qquad
       \Pr[x_t\mid x_{<t}]=\tilde q_t(x_t)\Big/\sum_{x}\tilde q_t(x),\qquad
       b_{t+1}=\frac{B_{x_t}b_t}{b_\infty^\top B_{x_t}b_t}

    (the paper's recursion, which keeps :math:`b_\infty^\top b_t=1` and so :math:`b_t` of
    order one: no underflow on long sequences; the denominator is :math:`q_t(x_t)` before
    flooring, sign included).

    **Flooring rule.** :math:`\tilde q_t(x)=q_t(x)` if :math:`q_t(x)>0`, else
    ``floor`` × :math:`\min\{q_t(y):q_t(y)>0\}` (the smallest positive value of that step);
    if no value of a step is positive the step's law is uniform (1/d) and the state
    restarts at :math:`b_1`, as it does when :math:`q_t(x_t)=0` or the update is not finite.
    Every step is renormalised over the d symbols, so each conditional law is a probability
    distribution. In the population (:math:`b_t=(U^\top O)\pi_t`) :math:`q_t` is the exact
    conditional law, positive and summing to one, so nothing is floored and the sum of the logs is
    :math:`\log b_\infty^\top B_{x_L}\cdots B_{x_1}b_1` (with :math:`b_\infty^\top b_1=1`).

    Parameters
    ----------
    b1, binf : (k,) ; B : (d, k, k) ; X (n_samples, 1) symbols in 0..d−1, lengths as in hmmlearn.
    floor : float in (0, 1)

    Returns ``(loglik (n_sequences,), n_floored, n_floored_observed, n_values)``: the numbers of
    conditional probabilities floored (steps × symbols), of those at the observed symbol,
    and of conditional probabilities computed. Loops over time steps only (sequences sorted
    by length, the active ones a prefix); cost O(n_samples d k). Never NaN for finite input.
    """
    b1, binf, B = _check_operators(b1, binf, B)
    if isinstance(floor, bool) or not isinstance(floor, (int, float, np.floating)) or not 0 < floor < 1:
        raise ValueError(f"floor={floor!r} must be a number in (0, 1)")
    d = B.shape[0]
    x, lengths, _ = check_symbol_sequences(X, lengths, d)
    G = np.einsum("a,xab->xb", binf, B)                       # G[x] = binf^T B_x, (d, k)
    order = np.argsort(-lengths, kind="stable")
    L = lengths[order]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])[order]
    n_seq = lengths.size
    ll = np.zeros(n_seq)
    state = np.tile(b1, (n_seq, 1))
    n_active = np.searchsorted(-L, -np.arange(1, int(L[0]) + 1), side="right")  # #seqs with length > t
    n_floor = n_floor_obs = n_values = 0
    for t in range(int(L[0])):
        m = int(n_active[t])
        b = state[:m]
        sym = x[starts[:m] + t]
        Q = b @ G.T                                            # (m, d)
        pos = Q > 0
        any_pos = pos.any(axis=1)
        smallest = np.where(pos, Q, np.inf).min(axis=1)
        smallest[~any_pos] = 1.0
        Qt = np.where(pos, Q, floor * smallest[:, None])
        Qt[~any_pos] = 1.0                                     # uniform step
        rows = np.arange(m)
        ll[:m] += np.log(Qt[rows, sym]) - np.log(Qt.sum(axis=1))
        n_values += m * d
        n_floor += int(m * d - pos.sum())
        n_floor_obs += int(np.sum(~pos[rows, sym]))
        nxt = np.einsum("nab,nb->na", B[sym], b)
        s = Q[rows, sym]                                       # binf^T B_x b, signed
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            nxt = nxt / s[:, None]
        reset = ~any_pos | (s == 0) | ~np.all(np.isfinite(nxt), axis=1)
        nxt[reset] = b1
        state[:m] = nxt
    out = np.empty(n_seq)
    out[order] = ll
    return out, n_floor, n_floor_obs, n_values
