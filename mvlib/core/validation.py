"""Input checks shared by every public function of mvlib.

One place, one wording: every message names the offending argument and the
condition it violates, so that users see the same sentence whichever
estimator they call.
"""
from __future__ import annotations

import numbers
import os
import sys
import warnings
from typing import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_array",
    "check_views",
    "check_random_state",
    "check_positive_int",
    "check_rank",
    "check_cubic_tensor",
    "check_matrix",
    "check_n_features",
    "IllConditionedWarning",
]


class IllConditionedWarning(UserWarning):
    """A moment matrix is so badly conditioned that estimates may be garbage.

    Used throughout the book, first in :doc:`/chapters/02_whitening_power`.
    """


def _is_numeric_dtype(dtype) -> bool:
    return np.issubdtype(dtype, np.number) and not np.issubdtype(dtype, np.complexfloating)


def check_array(X, name: str, *, ndim: int = 2, allow_sparse: bool = False,
                min_rows: int = 1, copy: bool = False, finite: bool = True):
    """Return ``X`` as a float array (or CSR matrix) after checking it.

    Raises ``TypeError`` for non-numeric input (``None``, strings, objects)
    and ``ValueError`` for wrong ``ndim``, too few rows, NaN or infinity.
    The input is never modified in place. ``finite=False`` skips the scan
    for NaN/inf (for callers that check a cheaper derived array instead).
    """
    if X is None:
        raise TypeError(f"{name} must be an array of numbers, got None")
    if sp.issparse(X):
        if not allow_sparse:
            raise TypeError(f"{name} must be a dense array; scipy.sparse input is not supported here")
        if ndim != 2:
            raise ValueError(f"{name} must be {ndim}-dimensional, got a sparse matrix")
        if not _is_numeric_dtype(X.dtype):
            raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
        X = sp.csr_matrix(X, dtype=float, copy=copy)
        if finite and not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or infinity")
        if X.shape[0] < min_rows:
            raise ValueError(f"{name} has {X.shape[0]} rows but at least {min_rows} are required (n_samples={X.shape[0]})")
        return X
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got {type(X).__name__}")
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        why = ("its rows have different lengths (a ragged nested sequence)"
               if "inhomogeneous" in str(exc) or "sequence" in str(exc) else str(exc))
        raise TypeError(f"{name} cannot be converted to a numeric array: {why}") from None
    if arr.dtype == object:  # numbers held as Python objects are numbers
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers, got dtype object ({exc})") from None
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must hold real numbers: Complex data not supported (dtype {arr.dtype})")
    if not _is_numeric_dtype(arr.dtype) and arr.dtype != bool:
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        hint = ("; Reshape your data: array.reshape(-1, 1) for a single feature, array.reshape(1, -1) "
                "for a single sample" if ndim == 2 and arr.ndim == 1 else "")
        raise ValueError(f"{name} must be {ndim}-dimensional, got an array of shape {arr.shape}{hint}")
    if ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} has {arr.shape[0]} rows but at least {min_rows} are required (n_samples={arr.shape[0]})")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    arr = np.array(arr, dtype=float, copy=True) if copy else np.asarray(arr, dtype=float)
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


def check_matrix(A, name: str, *, shape: tuple | None = None, square: bool = False,
                 by: str | None = None):
    """A finite 2-d float array, optionally of a given shape (``None`` = any); ``by`` names
    the argument that sets the required shape (for the message)."""
    A = check_array(A, name, ndim=2)
    if square and A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square, got shape {A.shape}")
    if shape is not None:
        for axis, (got, want) in enumerate(zip(A.shape, shape)):
            if want is not None and got != want:
                raise ValueError(
                    f"{name} has {got} {'rows' if axis == 0 else 'columns'} but {want} are required"
                    + (f" by {by}" if by else "")
                )
    return A


def check_views(views: Sequence, *, n_views: int | None = 3, allow_sparse: bool = True,
                min_rows: int = 2, names: Sequence[str] | None = None, finite: bool = True):
    """Check a list of views sharing their rows (one row per sample)."""
    if isinstance(views, np.ndarray) or sp.issparse(views) or not isinstance(views, (list, tuple)):
        raise TypeError(
            f"views must be a list of {n_views if n_views else 'several'} arrays, got {type(views).__name__}"
        )
    if n_views is not None and len(views) != n_views:
        raise ValueError(f"views must hold {n_views} arrays, got {len(views)}")
    if len(views) == 0:
        raise ValueError("views must hold at least one array, got an empty list")
    names = names or [f"X{v + 1}" for v in range(len(views))]
    out = [check_array(X, nm, ndim=2, allow_sparse=allow_sparse, min_rows=min_rows, finite=finite)
           for X, nm in zip(views, names)]
    for X, nm in zip(out[1:], names[1:]):
        if X.shape[0] != out[0].shape[0]:
            raise ValueError(f"{names[0]} has {out[0].shape[0]} rows but {nm} has {X.shape[0]}")
    return out


def check_random_state(random_state) -> np.random.Generator:
    """``None``, an int or a ``numpy.random.Generator`` -> a Generator."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, an int or a numpy.random.Generator, "
        f"got {type(random_state).__name__}"
    )


def check_positive_int(value, name: str, *, minimum: int = 1) -> int:
    """An integer ``>= minimum`` (bools and floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name}={value} must be at least {minimum}")
    return int(value)


def check_positive_float(value, name: str) -> float:
    """A positive, finite real number (bool refused) as a float; TypeError/ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise TypeError(f"{name} must be a positive float, got {type(value).__name__}")
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return v


def check_rank(rank, name: str, upper: int, what: str) -> int:
    """A positive int not larger than ``upper`` (``what`` says what bounds it)."""
    rank = check_positive_int(rank, name)
    if rank > upper:
        raise ValueError(f"{name}={rank} exceeds {what} ({upper})")
    return rank


def check_cubic_tensor(T, name: str = "T"):
    """A finite third-order tensor with three equal dimensions, as float ndarray."""
    T = check_array(T, name, ndim=3)
    if not (T.shape[0] == T.shape[1] == T.shape[2]):
        raise ValueError(f"{name} must be cubic (k, k, k), got shape {T.shape}")
    return T


#: arrays whose largest magnitude lies in [2**-MODERATE_EXPONENT, 2**MODERATE_EXPONENT] are used
#: as given; others are divided by a power of two first (exact), so that products of up to
#: three of their entries, summed over many rows, stay inside float64
MODERATE_EXPONENT = 100


def scale_exponent(A, *, moderate: int = MODERATE_EXPONENT, even: bool = False) -> int:
    """The exponent e of a power of two to divide ``A`` by, or 0 when ``A`` needs none.

    0 when the largest finite magnitude of ``A`` (an array, a sparse matrix or a number)
    lies in [2**-moderate, 2**moderate] or ``A`` is zero; otherwise e = floor(log2 max|A|),
    so that ``A * 2**-e`` has its largest magnitude in [1, 2). Dividing by a power of two is
    exact, so results computed on ``A * 2**-e`` and multiplied back by the matching power
    are those of ``A`` whenever the latter are representable. ``even=True`` rounds e down
    to an even number (for square roots).
    """
    if sp.issparse(A):
        A = A.data
    A = np.asarray(A)
    m = None
    if A.size and A.dtype.kind == "f":     # fast path, no temporary copies: max and min of finite data
        hi, lo = float(A.max()), float(A.min())
        if np.isfinite(hi) and np.isfinite(lo):
            m = max(hi, -lo)
    if m is None:                          # NaN or inf present (or not float): largest finite magnitude
        a = np.abs(np.asarray(A, dtype=float))
        a = a[np.isfinite(a)] if a.ndim else (a if np.isfinite(a) else np.zeros(()))
        m = float(a.max()) if a.size else 0.0
    if m == 0.0:
        return 0
    e = int(np.frexp(m)[1]) - 1
    if -moderate <= e <= moderate:
        return 0
    return e - (e % 2) if even else e


def scaled(A, e: int):
    """``A * 2**-e`` (a new array, or ``A`` itself when e == 0); sparse matrices stay sparse."""
    if e == 0:
        return A
    if sp.issparse(A):
        A = A.copy()
        A.data = np.ldexp(A.data, -e)
        return A
    return np.ldexp(np.asarray(A, dtype=float), -e)


def unscale(values, e: int, name: str, what: str):
    """``values * 2**e``, refusing (``ValueError`` naming ``name``) a result float64 cannot hold.

    ``values`` were computed on data divided by powers of two whose exponents add up to
    ``e``; ``what`` names the quantity (e.g. "the third moment"). The result is refused
    when its largest magnitude overflows to infinity or falls below the smallest normal
    float64 (where relative precision is lost), unless ``values`` are all zero.
    """
    if e == 0:
        return values
    with np.errstate(over="ignore", under="ignore"):   # reported below, by name
        out = np.ldexp(values, e)
    big = np.max(np.abs(values)) if np.size(values) else 0.0
    if big == 0:
        return out
    top = float(np.frexp(big)[1]) - 1 + e   # log2 of the largest magnitude of the result
    if not np.all(np.isfinite(out)) or top >= 1024:
        raise ValueError(
            f"the scale of {name} is so extreme that {what} (about 1e{int(top * np.log10(2))}) "
            f"would overflow float64; rescale {name} towards 1")
    if top < -1022:
        raise ValueError(
            f"the scale of {name} is so extreme that {what} (about 1e{int(top * np.log10(2))}) "
            f"would underflow float64; rescale {name} towards 1")
    return out


def column_if_vector(X):
    """A 1-d array-like (n points in one dimension) as an (n, 1) array; anything else is
    returned unchanged, for :func:`check_array` to accept or name."""
    if X is None or isinstance(X, (str, bytes)) or sp.issparse(X):
        return X
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):   # ragged nested sequences
        return X
    return arr[:, None] if arr.ndim == 1 and arr.dtype != object else X


def check_vector_or_matrix(V, name: str):
    """A finite 1-d or 2-d float array (a vector contracts a mode away, a matrix maps it)."""
    try:
        nd = np.ndim(V) if not sp.issparse(V) else 2
    except Exception:   # ragged nested sequences: check_array names them
        nd = 2
    return check_array(V, name, ndim=1 if nd == 1 else 2, allow_sparse=False)


def add_scaled(total, e_total: int, part, e_part: int):
    """``(total * 2**e_total + part * 2**e_part)`` as ``(sum, exponent)``: a running sum of
    parts held at different powers of two. With equal exponents this is ``total + part``."""
    if e_total == e_part:
        return total + part, e_total
    if not np.any(total):
        return np.array(part, dtype=float, copy=True), e_part
    e = max(e_total, e_part)
    return np.ldexp(total, e_total - e) + np.ldexp(part, e_part - e), e


def warn_ill_conditioned(cond: float, name: str, limit: float = 1e8) -> None:
    """Warn (``IllConditionedWarning``) when a condition number exceeds ``limit``."""
    if cond > limit:
        warn_user(
            f"{name} is ill-conditioned (condition number {cond:.2e} > {limit:.0e}); "
            "estimates built on it may be inaccurate",
            IllConditionedWarning,
        )


def check_counts(X, name: str = "X", *, min_length: int = 0, min_rows: int = 1):
    """Check a documents × words count matrix; return ``(X_csr, lengths)``.

    ``X`` may be dense or ``scipy.sparse``; the result is a float CSR matrix in
    canonical form (a copy when the input had to be changed; the input itself is
    never modified) and the document lengths ``lengths`` (n,) as floats.
    Raises ``TypeError``/``ValueError`` for non-numeric input, NaN/inf, negative
    or non-integer counts, and documents with fewer than ``min_length`` words.
    """
    X = check_array(X, name, ndim=2, allow_sparse=True, min_rows=min_rows)
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no columns (a vocabulary of 0 words)")
    X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    data = X.data
    if data.size and data.min() < 0:
        row = int(np.searchsorted(X.indptr, np.flatnonzero(data < 0)[0], side="right") - 1)
        raise ValueError(f"{name} must hold non-negative counts, but document {row} has a negative entry "
                         "(Negative values in data)")
    frac = data != np.round(data)
    if np.any(frac):
        pos = np.flatnonzero(frac)[0]
        row = int(np.searchsorted(X.indptr, pos, side="right") - 1)
        raise ValueError(
            f"{name} must hold integer counts, but document {row} has the entry {float(data[pos])!r} "
            f"for word {int(X.indices[pos])}"
        )
    lengths = np.asarray(X.sum(axis=1)).ravel()
    if lengths.size and lengths.max() > 2.0 ** 100:
        i = int(np.argmax(lengths))
        raise ValueError(f"{name} has a document (row {i}) of {lengths[i]:.3g} words; the moments of "
                         "count data overflow above 2**100 words per document")
    if min_length > 0:
        short = np.flatnonzero(lengths < min_length)
        if short.size:
            i = int(short[0])
            more = f" ({short.size} documents in all)" if short.size > 1 else ""
            raise ValueError(
                (f"document {i} has {int(lengths[i])} words; third-order moments need at least "
                 f"{min_length}{more}" if min_length == 3 else
                 f"document {i} has {int(lengths[i])} words; at least {min_length} are required{more}")
                + f" (the documents are the rows of {name})"
            )
    return X, lengths


def check_identifiable_rank(n_components: int, singular_values, what: str, *,
                            rtol: float | None = None, kind: str = "singular values") -> int:
    """Refuse ``n_components`` above the numerical rank of a pairs matrix (Condition 3.1).

    ``singular_values`` are those of the matrix ``what`` (any order; ``kind`` names them in
    the message, e.g. "positive eigenvalues"). A value counts as zero below ``rtol`` times
    the largest (default ``1e-10``).
    Returns the numerical rank.
    """
    s = np.sort(np.abs(np.asarray(singular_values, float)))[::-1]
    tol = (1e-10 if rtol is None else rtol) * (s[0] if s.size else 0.0)
    rank = int(np.sum(s > tol)) if s.size and s[0] > 0 else 0
    if n_components > rank:
        raise ValueError(
            f"n_components={n_components} exceeds the rank {rank} of the pairs matrix "
            f"(Condition 3.1): {what} has only {rank} {kind} above {tol:.1e}"
        )
    return rank


def check_n_features(n_features, expected, estimator: str, name: str = "X") -> None:
    """Refuse data whose number of features differs from the one seen in ``fit``.

    ``n_features`` and ``expected`` are ints (columns of a 2-d array) or, for lists of
    views, sequences of ints (columns per view), compared as a whole.
    """
    if isinstance(expected, (list, tuple)) or isinstance(n_features, (list, tuple)):
        got, want = list(n_features), list(expected)
    else:
        got, want = int(n_features), int(expected)
    if got != want:
        raise ValueError(f"{name} has {got} features, but {estimator} is expecting {want} features as input")


def check_tol(tol):
    """A convergence tolerance: a finite real number >= 0 (the ``NonNegativeFloat`` constraint)."""
    return NonNegativeFloat()(tol, "tol")


def check_bandwidth(bandwidth, name: str = "bandwidth") -> float:
    """A kernel bandwidth (or grid step): a finite real number > 0."""
    return check_positive_float(bandwidth, name)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` pointed at the first frame outside mvlib: the user's line that called
    into the library, however deep inside it the warning arises (what ``skip_file_prefixes``
    does in Python 3.12)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def check_alpha0(alpha0, *, allow_none: bool = False):
    """The Dirichlet concentration α₀: a positive, finite number (or None where ``allow_none``:
    no prior)."""
    if allow_none and alpha0 is None:
        return None
    return check_positive_float(alpha0, "alpha0")


# --------------------------------------------------------------------------- hyper-parameters
# Every estimator states the conditions on its hyper-parameters in one table,
# ``_parameter_constraints = {name: constraint}``, which ``MomentEstimator._validate_params``
# applies at the start of ``fit`` (scikit-learn keeps such a table too; these constraints raise
# mvlib's own messages, the ones the checkers above word). A constraint is a callable
# ``constraint(value, name) -> validated value``.


class Integer:
    """An int ``>= minimum`` (bools and floats refused): :func:`check_positive_int`."""

    def __init__(self, minimum: int = 1):
        self.minimum = minimum

    def __call__(self, value, name):
        return check_positive_int(value, name, minimum=self.minimum)

    def __repr__(self):
        return f"Integer(minimum={self.minimum})"


class PositiveFloat:
    """A positive, finite real number, as a float: :func:`check_positive_float`."""

    def __call__(self, value, name):
        return check_positive_float(value, name)

    def __repr__(self):
        return "PositiveFloat()"


class NonNegativeFloat:
    """A finite real number ``>= 0`` (a tolerance), as a float."""

    def __call__(self, value, name):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{name}={value} must be a finite number >= 0")
        return float(value)

    def __repr__(self):
        return "NonNegativeFloat()"


class Options:
    """One of the strings ``values``. The message lists them as a tuple (``style="tuple"``:
    ``one of ('a', 'b')``), in words (``"words"``: ``'a', 'b' or 'c'``) or as a list (``"list"``:
    ``one of 'a', 'b', 'c'``), each estimator keeping the sentence its users know."""

    def __init__(self, values, *, style: str = "tuple"):
        if style not in ("tuple", "words", "list"):
            raise ValueError(f"style must be 'tuple', 'words' or 'list', got {style!r}")
        self.values, self.style = tuple(values), style

    def __call__(self, value, name):
        if not isinstance(value, str) or value not in self.values:
            quoted = [repr(v) for v in self.values]
            if self.style == "words":
                listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
            elif self.style == "list":
                listed = "one of " + ", ".join(quoted)
            else:
                listed = f"one of {self.values}"
            raise ValueError(f"{name} must be {listed}, got {value!r}")
        return value

    def __repr__(self):
        return f"Options({self.values})"


class Boolean:
    """``True`` or ``False`` (NumPy bools too); anything else is a ``TypeError``."""

    def __call__(self, value, name):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
        return bool(value)

    def __repr__(self):
        return "Boolean()"


class RandomState:
    """``None``, an int or a Generator, turned into a Generator: :func:`check_random_state`."""

    def __call__(self, value, name):
        return check_random_state(value)

    def __repr__(self):
        return "RandomState()"


class OrNone:
    """``None``, or a value that ``constraint`` accepts."""

    def __init__(self, constraint):
        self.constraint = constraint

    def __call__(self, value, name):
        return None if value is None else self.constraint(value, name)

    def __repr__(self):
        return f"OrNone({self.constraint!r})"


class Rule:
    """Any checker ``fn(value, name)`` (or ``fn(value)`` with ``takes_name=False``) that returns
    the validated value and raises naming the argument."""

    def __init__(self, fn, *, takes_name: bool = True):
        self.fn, self.takes_name = fn, takes_name

    def __call__(self, value, name):
        return self.fn(value, name) if self.takes_name else self.fn(value)

    def __repr__(self):
        return f"Rule({getattr(self.fn, '__name__', self.fn)!r})"


class Unchecked:
    """A hyper-parameter checked later, against the data (its condition needs them); the
    table says so rather than leaving it out."""

    def __init__(self, reason: str):
        self.reason = reason

    def __call__(self, value, name):
        return value

    def __repr__(self):
        return f"Unchecked({self.reason!r})"


class Renamed:
    """A former name of the hyper-parameter ``new``: ``"deprecated"`` unless the user passed it,
    in which case a ``FutureWarning`` says so and its value is checked as ``new``'s. ``unset`` is
    ``new``'s default (passing both names is an error)."""

    def __init__(self, new: str, *, unset=None):
        self.new, self.unset = new, unset

    def __call__(self, value, name):
        return value

    def __repr__(self):
        return f"Renamed({self.new!r})"


def min_gap_rule(value, name="min_gap"):
    """The smallest relative eigenvalue gap accepted: a number in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < 1:
        raise ValueError(f"{name}={value!r} must be a number in [0, 1)")
    return float(value)


def validate_params(params: dict, constraints: dict, owner: str) -> dict:
    """``params`` (name -> value) checked against ``constraints`` (name -> constraint), in the
    table's order; returns name -> validated value. Every parameter must have an entry (a
    missing one is a bug of the estimator, reported as such)."""
    missing = [name for name in params if name not in constraints]
    if missing:
        raise TypeError(f"{owner}._parameter_constraints has no entry for {missing}")
    return {name: constraint(params[name], name) for name, constraint in constraints.items()
            if name in params}
