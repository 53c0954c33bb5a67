r"""Hidden Markov models by the three-view reduction: :class:`SpectralHMM`
(Anandkumar, Hsu & Kakade 2012, §4.2, Proposition 4.2).

Every window :math:`(x_t,x_{t+1},x_{t+2})` of every sequence is a sample of a three-view
mixture whose hidden variable is the middle state; Algorithm B recovers the emission
matrix :math:`O=M_2` and :math:`M_3=OT`, hence the transition matrix (see
:mod:`mvlib.hmm`).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from sklearn.base import DensityMixin

from ..core.base import MomentEstimator
from ..core.moments import pairs as _pairs
from ..core.moments import whitened_triples
from ..core.observable import algorithm_b, check_gap_options, view_bases
from ..core.tensors import multilinear
from ..core.validation import (
    Boolean,
    Integer,
    Options,
    RandomState,
    Renamed,
    Rule,
    Unchecked,
    check_positive_int,
    check_random_state,
    min_gap_rule,
    warn_user,
)
from ..multiview import MultiViewMixture
from ._algorithm import (
    _MAX_PAIR_ENTRIES,
    FIRST_MIN_SEQUENCES,
    REFINE_MAX_SYMBOLS,
    check_symbol_sequences,
    forward_log_likelihood,
    project_simplex,
    refine_window_likelihood,
    simplex_least_squares,
    stationary_distribution,
    viterbi,
    window_counts,
    window_views,
)

__all__ = ["SpectralHMM", "hmm_from_moments"]

#: projections onto the simplex that move an estimate by less than this are not reported
_SILENT_PROJECTION = 1e-9


def _to_simplex(A, what):
    """Project the columns of A onto the simplex; warn with the largest L1 change."""
    P = project_simplex(A, axis=0)
    moved = float(np.max(np.abs(P - A).sum(axis=0)))
    if moved > _SILENT_PROJECTION:
        warn_user(
            f"the estimated {what} left the probability simplex and was projected back; the "
            f"largest change of a distribution was {moved:.3g} in L1 norm (negative entries "
            f"down to {float(A.min()):.3g})",
            RuntimeWarning,
        )
    return P, moved


def _recover(P12, P13, P23, projected_triples, k, rng, min_gap, max_retries):
    """Shared core of :func:`hmm_from_moments` and :meth:`SpectralHMM.fit` (paper convention)."""
    U1, U2, U3 = view_bases(P12, P13, k)
    Pt12, Pt13, Pt23 = U1.T @ P12 @ U2, U1.T @ P13 @ U3, U2.T @ P23 @ U3
    Tp = projected_triples(U1, U2, U3)
    (A1, A2, A3), info = algorithm_b(Tp, Pt12, Pt13, Pt23, random_state=rng, min_gap=min_gap,
                                     max_retries=max_retries, return_info=True)
    M2, M3 = U2 @ A2, U3 @ A3
    s = M2.sum(axis=0)
    if not np.all(np.isfinite(M2)) or np.any(np.abs(s) < 1e-12):
        raise RuntimeError("the estimated emission columns are not finite or sum to zero; estimation failed")
    O = M2 / s
    return O, M3, info["n_retries"]


def _transitions(O, M3):
    r"""T from :math:`M_3=OT` (Proposition 4.2): least squares with columns on the simplex.

    :math:`\min_T\lVert OT-M_3\rVert_F` with every column of T a distribution
    (:func:`mvlib.hmm.simplex_least_squares`); with exact moments this is the paper's
    :math:`(U_3^\top O)^{-1}U_3^\top M_3`. Solving without constraints and dividing by the
    column sums instead blows up when a column sum is near zero (noisy or misspecified data).
    Returns ``(T, moved)``: moved = the largest L1 distance between a column of T and the
    least-squares column constrained only to sum to one (what the positivity constraints
    changed; 0 when that solution is already non-negative).
    """
    if not (np.all(np.isfinite(O)) and np.all(np.isfinite(M3))):
        raise RuntimeError("the estimated transition matrix is not finite; estimation failed")
    try:
        T = simplex_least_squares(O, M3)
    except ValueError as exc:                    # O lost rank
        raise RuntimeError(f"the estimated emission matrix is rank deficient ({exc}); estimation failed") from exc
    k = O.shape[1]
    K = np.zeros((k + 1, k + 1))
    K[:k, :k], K[:k, k], K[k, :k] = O.T @ O, 1.0, 1.0
    T_sum1 = np.linalg.solve(K, np.vstack([O.T @ M3, np.ones((1, M3.shape[1]))]))[:k]
    return T, float(np.max(np.abs(T - T_sum1).sum(axis=0)))


def hmm_from_moments(P12, P13, P23, P123, n_components, *, random_state=None, min_gap=0.02, max_retries=20):
    r"""O and T (paper convention, unprojected) from window moments given as arrays.

    See :doc:`/chapters/06_hidden_markov` for the derivation and a numerical check.

    ``P12, P13, P23`` (d, d) and ``P123`` (d, d, d) are the laws of pairs and triples of a
    window, e.g. the exact ones of :func:`mvlib.hmm.hmm_window_moments`. Runs the same
    steps as :meth:`SpectralHMM.fit`: :func:`mvlib.core.observable.view_bases`,
    :func:`mvlib.algorithm_b` on :math:`P_{123}(U_1,U_2,U_3)`, :math:`O=M_2` (columns
    scaled to sum one), T = the least-squares solution of :math:`OT=M_3` with columns on the
    simplex (:func:`mvlib.hmm.simplex_least_squares`; with exact moments the paper's
    :math:`(U_3^\top O)^{-1}U_3^\top M_3`). Returns ``(O (d, k), T (k, k))`` in one state
    order; O is not projected onto the simplex. Cost O(d³k).
    """
    k = check_positive_int(n_components, "n_components")
    rng = check_random_state(random_state)
    min_gap, max_retries = check_gap_options(min_gap, max_retries)
    P123 = np.asarray(P123, dtype=float)
    O, M3, _ = _recover(np.asarray(P12, float), np.asarray(P13, float), np.asarray(P23, float),
                        lambda U1, U2, U3: multilinear(P123, U1, U2, U3), k, rng, min_gap, max_retries)
    return O, _transitions(O, M3)[0]


def _warn_rank_at_noise(P12, k, n_windows):
    r"""Warn when :math:`\sigma_k(\hat P_{12})` is at the level of its sampling noise.

    The entries of :math:`\hat P_{12}` are frequencies of n windows, so its error E has
    :math:`\mathbb E\lVert E\rVert_F^2\le 1/n` for independent windows; below
    :math:`\sigma_k\sqrt n<1` the k-th singular value cannot be told from noise, which is what
    the data show when a condition fails (a state never at a window start, so
    :math:`\bar\pi_i=0`; O or T of rank < k) or k is too large.
    """
    s = np.linalg.svd(P12, compute_uv=False)
    level = float(s[k - 1] * np.sqrt(n_windows)) if k <= s.size else 0.0
    if level < 1.0:
        warn_user(
            f"σ_{k}(P12) = {s[k - 1] if k <= s.size else 0.0:.3g}, the smallest of the n_components={k} singular "
            f"values of the window pairs matrix used, is at the level of its sampling noise (σ_k·√n_windows = {level:.2f} < 1): n_components may exceed what "
            "the data identify, or a condition fails (every state must be possible at a window "
            "start, π̄ > 0; O and T of rank n_components)", RuntimeWarning)





class _SymbolSequences:
    """Tags of estimators of symbol sequences: one column of integer symbols (hmmlearn layout)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True   # symbols 0..n_symbols-1 in one column
        tags.input_tags.categorical = True
        return tags


class SpectralHMM(_SymbolSequences, DensityMixin, MomentEstimator):
    r"""Categorical hidden Markov model by the method of moments (three-view reduction).

    See :doc:`/chapters/06_hidden_markov` for the derivation and a numerical check.

    Anandkumar, Hsu & Kakade (2012), §4.2 and Proposition 4.2: every window of three
    consecutive observations of every sequence is a sample of a three-view mixture with
    :math:`w=T\bar\pi`, :math:`M_1=O\operatorname{diag}(\bar\pi)T^\top\operatorname{diag}(T\bar\pi)^{-1}`,
    :math:`M_2=O`, :math:`M_3=OT` (T column-stochastic, :math:`T_{ij}=\Pr[h_{t+1}=i\mid h_t=j]`).
    Steps (``method="observable"``, the default): window pairs :math:`\hat P_{12},\hat P_{13},\hat P_{23}` and the projected triples
    :math:`\hat P_{123}(U_1,U_2,U_3)` from one-hot views (:func:`mvlib.hmm.window_views`,
    :func:`mvlib.pairs`, :func:`mvlib.whitened_triples`; no d×d×d array); Algorithm B
    (:func:`mvlib.algorithm_b`); :math:`\hat O=\hat M_2`, projected onto the simplex;
    :math:`\hat T` = the least-squares solution of :math:`\hat O T=\hat M_3` with every
    column on the simplex (:func:`mvlib.hmm.simplex_least_squares`; with exact moments it is
    the paper's :math:`(U_3^\top O)^{-1}R`, R the eigenvectors of :math:`B_{312}(\eta)`;
    dividing an unconstrained solution by its column sums instead explodes when a column sum
    is near zero). ``method="tensor"`` obtains
    :math:`\hat M_2,\hat M_3` from the same one-hot views by the tensor route of
    :class:`mvlib.MultiViewMixture` (views symmetrised, whitening, robust tensor power
    method; Anandkumar et al. 2014 §3.3), then :math:`\hat T` as above; in the chapter's experiments neither route is uniformly more
    accurate, and the tensor route is slower and fails more often on small samples.

    **Conditions.** O and T of full column rank k, and :math:`\bar\pi>0` entrywise, where
    :math:`\bar\pi` is the average law of the state at a window *start*: every state must
    be possible at the start of some window. (:math:`T\bar\pi>0` alone is not enough:
    :math:`M_1=O\operatorname{diag}(\bar\pi)T^\top\operatorname{diag}(T\bar\pi)^{-1}` has
    rank k only if every :math:`\bar\pi_i>0`; length-3 sequences that all start in one
    state give a rank-one :math:`M_1`.) Windows are pooled over all positions, and the pooled
    windows follow the reduction with that :math:`\bar\pi`, whether
    or not the sequences are stationary. For stationary sequences :math:`\bar\pi` is the
    stationary distribution and equals ``weights_``.

    Parameters
    ----------
    n_components : int
        Number k of hidden states; at most the rank of the window pairs matrices (hmmlearn's
        name; the former name ``n_states`` is accepted as a keyword, with a ``FutureWarning``).
    random_state : None, int or numpy.random.Generator
        Randomness of the rotation Θ of Algorithm B or of the power-method starts.
    method : {"observable", "tensor"}, keyword-only
        Route from the window moments to :math:`\hat M_2,\hat M_3` (see above).
    n_symbols : None or int, keyword-only
        Alphabet size d; symbols must lie in 0..d−1. None: ``max(X) + 1``.
    start : {"auto", "first", "stationary"}, keyword-only
        How ``startprob_`` is estimated (the former name ``startprob`` is accepted, with a
        ``FutureWarning``). ``"first"``: the distribution f of the first symbol
        of each sequence satisfies :math:`f\approx O\pi_0`; :math:`\pi_0` = least squares
        with :math:`\pi_0` on the simplex (:func:`mvlib.hmm.simplex_least_squares`). Its error
        is the sampling error of f (one symbol per sequence) amplified by up to
        :math:`1/\sigma_k(\hat O)`. ``"stationary"``: the stationary distribution of
        :math:`\hat T`. ``"auto"``: ``"first"`` with at least 50 sequences, else
        ``"stationary"`` (one long sequence says almost nothing about its start).
    min_gap, max_retries : keyword-only
        Eigenvalue-separation options of :func:`mvlib.algorithm_b` (``method="observable"``).
    refine : bool, keyword-only, default False
        After the moment estimate, maximise the composite likelihood of the window counts
        started there (:func:`mvlib.hmm.refine_window_likelihood`): O(d³k) per iteration,
        independent of the number of sequences; needs n_symbols ≤ 100 (it forms the
        d×d×d counts). In the chapter's experiments it roughly halves the errors of
        :math:`\hat T` and :math:`\hat O`.

    Attributes
    ----------
    emissionprob_ : array (n_components, n_symbols)
        Row j = :math:`\Pr[x_t=\cdot\mid h_t=j]` (hmmlearn layout, :math:`O^\top`).
    transmat_ : array (n_components, n_components)
        Row i = :math:`\Pr[h_{t+1}=\cdot\mid h_t=i]` (hmmlearn layout, :math:`T^\top`).
    startprob_ : array (n_components,)
    weights_ : array (n_components,)
        Law of the middle state of a window, :math:`T\bar\pi`, from :math:`\hat M_2\hat w=\hat E[x_2]`.
    projection_ : dict
        How far the simplex constraints moved each estimate, largest L1 distance of a
        distribution: ``"emissionprob"`` — O projected onto the simplex; ``"transmat"`` and
        ``"startprob"`` — the simplex-constrained least squares against the least squares
        constrained only to sum to one. A ``RuntimeWarning`` reports moves of O or T above 1e-9.
    n_retries_ : int
        Redraws of Θ needed by Algorithm B (0 for ``method="tensor"``).
    refinement_ : dict or None
        ``refine=True``: iterations, objective before/after (average negative
        log-likelihood per window) and convergence of the refinement; else None.
    method_used_ : str
        ``"tensor"`` or ``"observable"``: the tensor route falls back to Algorithm B, with a
        ``RuntimeWarning``, when the symmetrised second moment has fewer than k positive
        eigenvalues or the power method finds a non-positive eigenvalue (moments too noisy,
        or far from the model); Algorithm B still refuses k above the rank of the pairs.

    See Also
    --------
    hmmlearn.hmm.CategoricalHMM : Baum-Welch EM, the baseline (same layout of the parameters).
    mvlib.ObservableOperatorHMM : the observable-operator form, without O and T.
    mvlib.MultiViewMixture : the three-view mixture the windows reduce to.

    Notes
    -----
    Estimates that leave the simplex (possible with sampling noise) are projected back
    onto it (Euclidean projection, :func:`mvlib.hmm.project_simplex`). Cost O(n_samples k³ + d² k):
    one pass over the windows, no iterations over the data; ``score``/``predict`` cost
    O(n_samples k²). Inputs are not modified.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import SpectralHMM, match_columns
    >>> from mvlib.hmm import sample_hmm
    >>> pi = np.array([0.5, 0.5])
    >>> T = np.array([[0.8, 0.3], [0.2, 0.7]])                # T[i, j] = P(next state i | state j)
    >>> O = np.array([[0.6, 0.1], [0.3, 0.2], [0.1, 0.7]])    # O[x, j] = P(symbol x | state j)
    >>> X, lengths, _ = sample_hmm(pi, T, O, 500, 20, random_state=1)   # 500 sequences of 20
    >>> hmm = SpectralHMM(2, random_state=0).fit(X, lengths)
    >>> perm, _ = match_columns(O, hmm.emissionprob_.T)       # align the hidden states
    >>> np.round(hmm.emissionprob_[perm], 1)                  # O transposed
    array([[0.6, 0.3, 0.1],
           [0.1, 0.2, 0.7]])
    >>> np.round(hmm.transmat_[np.ix_(perm, perm)], 1)        # T transposed
    array([[0.8, 0.2],
           [0.3, 0.7]])
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "random_state": RandomState(),
        "method": Options(("tensor", "observable"), style="words"),
        "n_symbols": Unchecked("the symbols 0..n_symbols-1 of the data: checked in fit"),
        "start": Options(("auto", "first", "stationary"), style="words"),
        "min_gap": Rule(min_gap_rule),
        "max_retries": Integer(minimum=0),
        "refine": Boolean(),
        "n_states": Renamed("n_components"),
        "startprob": Renamed("start", unset="auto"),
    }

    def __init__(self, n_components=None, random_state=None, *, method="observable", n_symbols=None,
                 start="auto", min_gap=0.02, max_retries=20, refine=False, n_states="deprecated",
                 startprob="deprecated"):
        self.n_components = n_components
        self.random_state = random_state
        self.method = method
        self.n_symbols = n_symbols
        self.start = start
        self.min_gap = min_gap
        self.max_retries = max_retries
        self.refine = refine
        self.n_states = n_states
        self.startprob = startprob

    def fit(self, X, lengths=None):
        """Estimate the parameters from symbol sequences ``X`` (n_samples, 1); returns ``self``.

        ``lengths`` (sequence lengths summing to n_samples, each ≥ 3) as in hmmlearn; None
        means one sequence.
        """
        p = self._validate_params()
        k, start, rng = p.n_components, p.start, p.random_state
        x, lengths, d = check_symbol_sequences(X, lengths, self.n_symbols, min_length=3)
        if self.refine and d > REFINE_MAX_SYMBOLS:
            raise ValueError(f"refine=True forms the d×d×d window counts; n_symbols={d} exceeds "
                             f"{REFINE_MAX_SYMBOLS}")
        if k > d:
            raise ValueError(f"n_components={k} exceeds n_symbols={d}: O would not have rank n_components (Condition 3.1)")
        if d * d > _MAX_PAIR_ENTRIES:
            raise ValueError(f"n_symbols={d} is too large: the d×d pair matrices would have {d * d} "
                             f"entries (> 2**27)")
        (X1, X2, X3), _ = window_views(x[:, None], lengths, d)
        P12 = _pairs(X1, X2)
        _warn_rank_at_noise(P12, k, X1.shape[0])
        method, failure = self.method, None
        if method == "tensor":
            try:
                mv = MultiViewMixture(k, method="tensor", random_state=rng).fit([X1, X2, X3])
            except (RuntimeError, ValueError) as exc:   # noisy or non-PSD symmetrised moments
                method, failure = "observable", exc
        self.method_used_ = method
        if method == "observable":
            P13, P23 = _pairs(X1, X3), _pairs(X2, X3)
            O, M3, self.n_retries_ = _recover(
                P12, P13, P23, lambda U1, U2, U3: whitened_triples(X1, X2, X3, U1, U2, U3),
                k, rng, self.min_gap, self.max_retries)
            if failure is not None:
                warn_user(f"the tensor route failed ({failure}); fell back to Algorithm B "
                              "(method='observable')", RuntimeWarning)
        else:
            M2, M3 = mv.means_[1].T, mv.means_[2].T
            s = M2.sum(axis=0)
            if np.any(np.abs(s) < 1e-12):
                raise RuntimeError("the estimated emission columns sum to zero; estimation failed")
            O = M2 / s
            self.n_retries_ = 0
        O, moved_O = _to_simplex(O, "emission matrix (columns of O)")
        T, moved_T = _transitions(O, M3)
        if moved_T > _SILENT_PROJECTION:
            warn_user(
                "the least-squares transition matrix had negative entries; with its columns "
                f"constrained to the simplex the largest change of a column was {moved_T:.3g} in L1 norm",
                RuntimeWarning)
        mean2 = np.asarray(X2.mean(axis=0)).ravel()
        w, *_ = sla.lstsq(O, mean2)
        self.weights_ = project_simplex(w)
        self.refinement_ = None
        if self.refine:   # start the window-law refinement at π̄ ≈ w (equal when stationary)
            C = window_counts(x[:, None], lengths, d)
            pi_bar, T, O, self.refinement_ = refine_window_likelihood(C, self.weights_, T, O)
            self.weights_ = T @ pi_bar
        mode = start
        if mode == "auto":
            mode = "first" if lengths.size >= FIRST_MIN_SEQUENCES else "stationary"
        if mode == "first":
            first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            f = np.bincount(x[first], minlength=d) / lengths.size
            T_pi, moved_pi = _transitions(O, f[:, None])
            start = T_pi[:, 0]
        else:
            start, moved_pi = stationary_distribution(T), 0.0
        self.emissionprob_ = O.T.copy()
        self.transmat_ = T.T.copy()
        self.startprob_ = start
        self.projection_ = {"emissionprob": moved_O, "transmat": moved_T, "startprob": moved_pi}
        self.n_features_in_ = 1
        self.n_symbols_ = d
        return self

    def _params(self):
        self._check_fitted("emissionprob_")
        return self.startprob_, self.transmat_.T, self.emissionprob_.T

    def _check_X(self, X, lengths):
        self._check_fitted("emissionprob_")
        x, lengths, _ = check_symbol_sequences(X, lengths, self.n_symbols_)
        return x[:, None], lengths

    def score_samples_per_sequence(self, X, lengths=None):
        """Log-likelihood of each sequence (forward algorithm), array (n_sequences,)."""
        X, lengths = self._check_X(X, lengths)
        return forward_log_likelihood(X, lengths, *self._params())

    def score(self, X, lengths=None):
        r"""Total log-likelihood :math:`\sum_s\log\Pr[x^{(s)}]` of the sequences (as hmmlearn's ``score``).

        Forward algorithm in log space (:func:`mvlib.hmm.forward_log_likelihood`); −inf if a
        sequence contains a symbol to which the estimate gives probability zero.
        """
        return float(np.sum(self.score_samples_per_sequence(X, lengths)))

    def predict(self, X, lengths=None):
        """Most probable hidden states (Viterbi, :func:`mvlib.hmm.viterbi`), int array (n_samples,)."""
        X, lengths = self._check_X(X, lengths)
        return viterbi(X, lengths, *self._params())[0]

    def to_hmmlearn(self, smoothing=1e-3, **kwargs):
        r"""A ``hmmlearn.hmm.CategoricalHMM`` initialised at this estimate, ready to ``fit``.

        ``init_params=""`` so that ``fit`` starts Baum–Welch from the spectral estimate
        instead of a random one; other keyword arguments (``n_iter``, ``tol``,
        ``random_state``, ``params`` ...) go to ``CategoricalHMM``.

        ``smoothing`` s ∈ [0, 1): every distribution p is replaced by
        :math:`(1-s)p+s/\text{size}`. Projection onto the simplex leaves exact zeros, and
        Baum–Welch can never move a zero probability away from zero (a state whose every
        emission of the observed symbols is zero gets no posterior mass, and hmmlearn's
        normalisation then yields NaN); the default 1e-3 avoids both at a negligible change.
        """
        start, _, _ = self._params()
        if isinstance(smoothing, bool) or not isinstance(smoothing, (int, float)) or not 0 <= smoothing < 1:
            raise ValueError(f"smoothing={smoothing!r} must be a number in [0, 1)")
        from hmmlearn.hmm import CategoricalHMM

        def smooth(P):
            return (1.0 - smoothing) * P + smoothing / P.shape[-1]

        kwargs.setdefault("init_params", "")
        model = CategoricalHMM(n_components=self.emissionprob_.shape[0], n_features=self.n_symbols_,
                               **kwargs)
        model.startprob_ = smooth(start)
        model.transmat_ = smooth(self.transmat_)
        model.emissionprob_ = smooth(self.emissionprob_)
        return model
