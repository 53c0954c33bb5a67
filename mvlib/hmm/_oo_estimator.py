r"""The observable-operator HMM of Hsu, Kakade & Zhang (2009/2012): :class:`ObservableOperatorHMM`.

A density estimator of symbol sequences that never recovers O and T: the sequence law is
:math:`b_\infty^\top B_{x_L}\cdots B_{x_1}b_1` with :math:`b_1,b_\infty,B_x` estimated from
the unigram, bigram and trigram-slice moments of all windows of three (see
:mod:`mvlib.hmm`).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import DensityMixin

from ..core.base import MomentEstimator
from ..core.validation import Integer, Options, RandomState, Renamed, Rule, Unchecked, warn_user
from ._algorithm import FIRST_MIN_SEQUENCES, check_symbol_sequences
from ._estimator import _SymbolSequences
from ._observable import oo_log_likelihood, oo_operators_from_sequences, oo_start_state

__all__ = ["ObservableOperatorHMM"]

#: with at least this many sequences, start="auto" takes the law of the first symbols


def _check_floor(value, name):
    """The floor of a predicted probability: a number in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0 < value < 1:
        raise ValueError(f"{name}={value!r} must be a number in (0, 1)")
    return float(value)


class ObservableOperatorHMM(_SymbolSequences, DensityMixin, MomentEstimator):
    r"""Spectral HMM in observable-operator form (Hsu, Kakade & Zhang 2012, Algorithm 1).

    See :doc:`/chapters/06_hidden_markov`.

    From all windows :math:`(x_t,x_{t+1},x_{t+2})` of the training sequences: the moments
    :math:`\hat P_1` (law of :math:`x_1`), :math:`\hat P_{21}[i,j]=\hat\Pr[x_2=i,x_1=j]`,
    :math:`\hat P_{3x1}[i,j]=\hat\Pr[x_3=i,x_2=x,x_1=j]`; U = top-k left singular vectors of
    :math:`\hat P_{21}`; :math:`\hat b_1=U^\top\hat P_1`,
    :math:`\hat b_\infty=(\hat P_{21}^\top U)^+\hat P_1`,
    :math:`\hat B_x=(U^\top\hat P_{3x1})(U^\top\hat P_{21})^+`
    (:func:`mvlib.hmm.oo_operators_from_sequences`). Lemma 3 of the paper:
    :math:`\Pr[x_{1:t}]=b_\infty^\top B_{x_t}\cdots B_{x_1}b_1` exactly in the population,
    under Condition 1 (start law :math:`\pi>0` entrywise, O and T of rank k).

    **Which start law.** Windows pooled over all positions are the windows of an HMM
    started from :math:`\bar\pi`, the average law of the state at the window starts
    (the stationary law for stationary sequences), so :math:`\hat b_1` starts sequences there;
    Condition 1 asks :math:`\bar\pi>0`. ``start="first"`` replaces it by :math:`U^\top\hat f`,
    :math:`\hat f` the empirical law of the first symbol of the sequences, the :math:`b_1` of
    the start law :math:`\pi_0` when :math:`f=O\pi_0` (:func:`mvlib.hmm.oo_start_state`).

    **Scoring.** :func:`mvlib.hmm.oo_log_likelihood`: the predictive recursion, one
    normalisation per step (no underflow on long sequences); estimated conditional
    probabilities :math:`b_\infty^\top\hat B_x b_t` that are non-positive are floored at
    ``floor`` × the smallest positive one of the same step, and each step is renormalised
    over the d symbols, so the model is a proper sequence law; one ``RuntimeWarning`` per
    call counts the floored values. Never NaN.

    Parameters
    ----------
    n_components : int
        Number k of hidden states; at most the numerical rank of :math:`\hat P_{21}` (the
        former name ``n_states`` is accepted as a keyword, with a ``FutureWarning``).
    random_state : None, int or numpy.random.Generator
        Validated for the common interface; the estimate is deterministic (a dense SVD).
    n_symbols : None or int, keyword-only
        Alphabet size d; symbols must lie in 0..d−1. None: ``max(X) + 1`` of the training data.
    start : {"auto", "first", "windows"}, keyword-only
        ``"windows"``: :math:`\hat b_1=U^\top\hat P_1`; ``"first"``: :math:`U^\top\hat f`;
        ``"auto"``: ``"first"`` with at least 50 sequences, else ``"windows"``.
    floor : float in (0, 1), keyword-only, default 1e-3
        Fraction of the step's smallest positive value given to non-positive ones.

    Attributes
    ----------
    b1_ : array (k,)
        Start state used for scoring; ``b1_windows_`` (k,) is :math:`U^\top\hat P_1`.
    binf_ : array (k,)
        :math:`\hat b_\infty`.
    operators_ : array (n_symbols, k, k)
        ``operators_[x]`` = :math:`\hat B_x`.
    basis_ : array (n_symbols, k)
        U, the top-k left singular vectors of :math:`\hat P_{21}`.
    singular_values_ : array
        Singular values of :math:`\hat P_{21}`.
    n_windows_ : int
    n_skipped_ : int
        Training sequences shorter than 3, skipped with a warning.
    start_used_ : str
    n_symbols_ : int
    n_features_in_ : int
        Always 1.

    See Also
    --------
    mvlib.SpectralHMM : estimates the emission and transition matrices themselves.
    hmmlearn.hmm.CategoricalHMM : Baum-Welch EM, the baseline.
    mvlib.observable_operator : the observable operators of a three-view mixture.

    Notes
    -----
    Cost of ``fit``: O(n_samples + n_distinct_triples k² + d³); of ``score``:
    O(n_samples d k). Inputs are not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import ObservableOperatorHMM
    >>> from mvlib.hmm import forward_log_likelihood, sample_hmm
    >>> pi = np.array([0.5, 0.5])
    >>> T = np.array([[0.8, 0.3], [0.2, 0.7]])                # T[i, j] = P(next state i | state j)
    >>> O = np.array([[0.6, 0.1], [0.3, 0.2], [0.1, 0.7]])    # O[x, j] = P(symbol x | state j)
    >>> X, lengths, _ = sample_hmm(pi, T, O, 500, 20, random_state=1)
    >>> oo = ObservableOperatorHMM(2, random_state=0).fit(X, lengths)
    >>> oo.operators_.shape                                   # one k × k operator per symbol
    (3, 2, 2)
    >>> fitted = oo.score(X, lengths) / len(X)                # log-likelihood per symbol
    >>> exact = forward_log_likelihood(X, lengths, pi, T, O).sum() / len(X)
    >>> print(f"{fitted:.2f} {exact:.2f}")
    -1.06 -1.06
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "random_state": RandomState(),
        "n_symbols": Unchecked("the symbols 0..n_symbols-1 of the data: checked in fit"),
        "start": Options(("auto", "first", "windows"), style="words"),
        "floor": Rule(_check_floor),
        "n_states": Renamed("n_components"),
    }

    def __init__(self, n_components=None, random_state=None, *, n_symbols=None, start="auto", floor=1e-3,
                 n_states="deprecated"):
        self.n_components = n_components
        self.random_state = random_state
        self.n_symbols = n_symbols
        self.start = start
        self.floor = floor
        self.n_states = n_states

    def fit(self, X, lengths=None):
        """Estimate the operators from symbol sequences ``X`` (n_samples, 1); returns ``self``.

        ``lengths`` as in hmmlearn (None: one sequence). Sequences shorter than 3 hold no
        window of three: they are skipped, with one ``RuntimeWarning`` giving their number.
        """
        k = self._validate_params().n_components
        x, lengths, d = check_symbol_sequences(X, lengths, self.n_symbols)
        keep = lengths >= 3
        n_skipped = int(np.sum(~keep))
        if not keep.any():
            raise ValueError(f"every sequence is shorter than 3 (all {lengths.size}); windows of "
                             "three consecutive observations need at least 3 observations")
        if n_skipped:
            warn_user(f"{n_skipped} of {lengths.size} sequences are shorter than 3 observations "
                          "and were skipped (they hold no window of three)", RuntimeWarning)
            x = x[np.repeat(keep, lengths)]
            lengths = lengths[keep]
        b1, binf, B, U, info = oo_operators_from_sequences(x[:, None], lengths, k, d)
        mode = self.start
        if mode == "auto":
            mode = "first" if lengths.size >= FIRST_MIN_SEQUENCES else "windows"
        self.b1_windows_ = b1
        if mode == "first":
            first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            self.b1_ = oo_start_state(U, np.bincount(x[first], minlength=d) / lengths.size)
        else:
            self.b1_ = b1.copy()
        self.binf_ = binf
        self.operators_ = B
        self.basis_ = U
        self.singular_values_ = info["singular_values"]
        self.n_windows_ = info["n_windows"]
        self.n_skipped_ = n_skipped
        self.start_used_ = mode
        self.n_symbols_ = d
        self.n_features_in_ = 1
        return self

    def _log_likelihoods(self, X, lengths):
        self._check_fitted("operators_")
        floor = _check_floor(self.floor, "floor")
        x, lengths, _ = check_symbol_sequences(X, lengths, self.n_symbols_)
        ll, n_floor, n_obs, n_values = oo_log_likelihood(self.b1_, self.binf_, self.operators_,
                                                         x[:, None], lengths, floor=floor)
        if n_floor:
            warn_user(
                f"{n_floor} of the {n_values} estimated conditional probabilities (steps × symbols) "
                f"were non-positive and floored at {floor:g} × the smallest positive value of their "
                f"step ({n_obs} of them at an observed symbol); each step was renormalised",
                RuntimeWarning)
        return ll

    def score_samples_per_sequence(self, X, lengths=None):
        """Log-likelihood of each sequence, array (n_sequences,) (flooring rule in the class doc)."""
        return self._log_likelihoods(X, lengths)

    def score(self, X, lengths=None):
        r"""Total log-likelihood :math:`\sum_s\log\hat\Pr[x^{(s)}]` of the sequences (as hmmlearn's ``score``)."""
        return float(np.sum(self._log_likelihoods(X, lengths)))
