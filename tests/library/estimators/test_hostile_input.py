"""Hostile input for every public function and estimator of mvlib.

Every case feeds one malformed (or extreme but valid) value to one argument of a public
name, the other arguments being valid. The call must end in one of two ways:

* a ``ValueError``/``TypeError`` (``NotFittedError`` included) raised by mvlib itself --
  the frame that raises is in the ``mvlib`` package, not inside numpy, scipy or
  tensorly -- whose message names the offending argument; or
* a result whose every number is finite (no NaN, no infinity).

Any other exception (``MemoryError``, ``FloatingPointError``, ``LinAlgError`` from scipy,
``ZeroDivisionError`` ...) fails the case. A separate sweep multiplies the data by factors
from 1e-300 to 1e300 and checks that results scale by the matching power of the factor
inside the range float64 can hold, and that a named ``ValueError`` is raised outside it.
"""
from __future__ import annotations

import collections
import os
import traceback
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from tensorly.cp_tensor import CPTensor

import mvlib
from mvlib.hmm import sample_hmm

MVLIB_DIR = os.path.dirname(os.path.abspath(mvlib.__file__))


# --------------------------------------------------------------------------- base data
def _views(n=240, dims=(3, 3, 3), k=2, seed=0, noise=0.3):
    r = np.random.default_rng(seed)
    h = r.integers(k, size=n)
    out = []
    for v, d in enumerate(dims):
        M = 3.0 * r.standard_normal((d, k))
        out.append(M[:, h].T + noise * r.standard_normal((n, d)))
    return out


def _gmm_data(n=300, d=3, seed=1):
    r = np.random.default_rng(seed)
    h = r.integers(2, size=n)
    means = np.array([[4.0, 0.0, 0.0], [0.0, 4.0, 0.0]])[:, :d]
    return means[h] + r.standard_normal((n, d))


def _counts(n=300, d=6, length=8, seed=2):
    r = np.random.default_rng(seed)
    topics = np.array([[0.4, 0.3, 0.1, 0.1, 0.05, 0.05], [0.05, 0.05, 0.1, 0.1, 0.3, 0.4]])[:, :d]
    topics = topics / topics.sum(1, keepdims=True)
    h = r.integers(2, size=n)
    return np.array([r.multinomial(length, topics[j]) for j in h], dtype=float)


def _hmm_data(seed=3):
    pi = np.array([0.6, 0.4])
    T = np.array([[0.8, 0.3], [0.2, 0.7]])            # columns: next-state laws
    O = np.array([[0.6, 0.1], [0.3, 0.2], [0.1, 0.7]])  # columns: emission laws
    X, lengths, _ = sample_hmm(pi, T, O, 40, 25, random_state=seed)
    return X, lengths


R = np.random.default_rng(20261124)
V3 = _views()
V1D = _views(n=150, dims=(1, 1, 1), seed=4, noise=0.5)
V_PME = [V3[0], np.random.default_rng(5).poisson(2.0, size=(240, 2)).astype(float),
         (np.random.default_rng(6).random((240, 2)) < 0.4).astype(float)]
XG = _gmm_data()
XC = _counts()
XI = np.column_stack([R.laplace(size=300), R.uniform(-1.7, 1.7, size=300), R.laplace(size=300)]) @ \
    np.array([[1.0, 0.4, 0.1], [0.3, 1.0, 0.2], [0.0, 0.5, 1.0]])
XH, LH = _hmm_data()
T4, LAM4, Q4 = mvlib.core.tensors.random_odeco_tensor(4, 0)
T_OC = mvlib.random_overcomplete_tensor(5, 6, 0)[0]
M2 = V3[0].T @ V3[1] / 240
M2S = 0.5 * (M2 + M2.T) + 10 * np.eye(3)
W3 = mvlib.whitening_matrix(M2S, 2)
U3 = np.linalg.qr(np.random.default_rng(7).standard_normal((3, 2)))[0]
P12, P13, P23 = (mvlib.pairs(V3[a], V3[b]) for a, b in ((0, 1), (0, 2), (1, 2)))
P123_2 = mvlib.whitened_triples(*V3, U3, U3, U3)
C_TREE = np.random.default_rng(8).random((3, 3, 3))
LABELS = np.random.default_rng(9).integers(2, size=240)


# --------------------------------------------------------------------------- batteries
def _ragged(B):
    rows = [list(map(float, r)) for r in np.atleast_2d(B)]
    rows[-1] = rows[-1][:-1] if len(rows[-1]) > 1 else rows[-1] + [1.0]
    return rows


def _with(B, index, value):
    B = np.array(B, dtype=float, copy=True)
    B[index] = value
    return B


def _object_array(B):
    A = np.array(B, dtype=object)
    A.flat[0] = None
    return A


def real2d(B):
    """Malformed or extreme variants of a real 2-d data matrix B (n, d)."""
    B = np.asarray(B, float)
    n, d = B.shape
    dup = np.repeat(B[:2], (n + 1) // 2, axis=0)[:n]
    big = B / np.max(np.abs(B)) * 1.7e308
    mixed = B.copy()
    mixed[:, 0] *= 1e300
    if d > 1:
        mixed[:, 1] *= 1e-300
    return [
        ("None", None), ("string", "abc"), ("strings", [["a"] * d] * n), ("dict", {"a": 1}),
        ("object-with-None", _object_array(B)), ("complex", B + 1j), ("nan", _with(B, (0, 0), np.nan)),
        ("inf", _with(B, (0, 0), np.inf)), ("-inf", _with(B, (0, 0), -np.inf)),
        ("nan-last-row", _with(B, (n - 1, d - 1), np.nan)), ("empty-rows", B[:0]),
        ("no-columns", B[:, :0]), ("one-sample", B[:1]), ("two-samples", B[:2]),
        ("1d", B[:, 0].copy()), ("3d", B[None]), ("scalar", 3.0), ("ragged", _ragged(B)),
        ("sparse", sp.csr_matrix(B)), ("bool", B > np.median(B)), ("int", np.round(B).astype(int)),
        ("float32", B.astype(np.float32)), ("scale-1e300", B * 1e300), ("scale-1e-300", B * 1e-300),
        ("subnormal", B * 1e-315), ("max-float", big), ("constant-column", _with(B, (slice(None), 0), 3.0)),
        ("all-constant", np.full_like(B, 2.0)), ("zeros", np.zeros_like(B)), ("duplicated-rows", dup),
        ("mixed-magnitudes", mixed), ("list-of-arrays", [B, B]), ("transposed", B.T.copy()),
        ("negative", -np.abs(B)), ("extra-column", np.hstack([B, B[:, :1]])),
    ]


def counts2d(B):
    """Malformed variants of a documents x words count matrix."""
    B = np.asarray(B, float)
    short = B.copy()
    short[0] = 0
    short[0, 0] = 2
    return [
        v for v in real2d(B) if v[0] not in ("negative",)
    ] + [
        ("negative-count", _with(B, (0, 0), -1.0)), ("fractional-count", _with(B, (0, 0), 0.5)),
        ("short-document", short), ("empty-document", _with(B, (0, slice(None)), 0.0)),
        ("sparse-coo", sp.coo_matrix(B)), ("huge-counts", B * 1e15),
    ]


def symbols(X):
    """Malformed variants of hmmlearn-style symbol sequences X (n, 1)."""
    X = np.asarray(X)
    n = X.shape[0]
    return [
        ("None", None), ("string", "abc"), ("strings", [["a"]] * n), ("object-with-None", _object_array(X)),
        ("complex", X + 1j), ("nan", _with(X, (0, 0), np.nan)), ("inf", _with(X, (0, 0), np.inf)),
        ("empty", X[:0]), ("one-sample", X[:1]), ("two-samples", X[:2]), ("1d", X[:, 0].copy()),
        ("3d", X[None]), ("two-columns", np.hstack([X, X])), ("scalar", 3), ("ragged", _ragged(X[:5])),
        ("sparse", sp.csr_matrix(X)), ("bool", X > 0), ("float-integers", X.astype(float)),
        ("negative-symbol", _with(X, (0, 0), -1)), ("fractional-symbol", _with(X, (0, 0), 0.5)),
        ("huge-symbol", _with(X, (2, 0), 1e9)), ("enormous-symbol", _with(X, (2, 0), 1e20)),
        ("constant", np.zeros_like(X)), ("one-symbol-only", np.ones_like(X)),
        ("dict", {"a": 1}), ("list-of-arrays", [X, X]), ("int8", X.astype(np.int8)),
        ("uint64", X.astype(np.uint64)), ("max-float", _with(X, (0, 0), 1.7e308)),
        ("subnormal", X * 1e-315),
    ]


def lengths_variants(L, n):
    L = np.asarray(L)
    return [
        ("not-summing", L[:-1]), ("too-long", np.append(L, 5)), ("zero-length", np.append(L[:-1], [0, L[-1]])),
        ("negative-length", np.append(L[:-1], [-1, L[-1] + 1])), ("fractional", L + 0.5),
        ("2d", L[None]), ("string", "abc"), ("empty", []), ("too-short-sequences", np.full(n // 2, 2)),
        ("float-integers", L.astype(float)), ("nan", _with(L.astype(float), 0, np.nan)),
        ("one-sequence", [n]), ("none", None),
    ]


def vector(v):
    v = np.asarray(v, float)
    return [
        ("None", None), ("string", "abc"), ("nan", _with(v, 0, np.nan)), ("inf", _with(v, 0, np.inf)),
        ("empty", v[:0]), ("2d", v[None]), ("scalar", 3.0), ("too-long", np.append(v, 1.0)),
        ("too-short", v[:-1]), ("complex", v + 1j), ("object-with-None", _object_array(v)),
        ("ragged", [[1.0, 2.0], [3.0]]), ("int", np.round(v).astype(int)), ("bool", v > 0),
        ("zeros", np.zeros_like(v)), ("scale-1e300", v * 1e300), ("scale-1e-300", v * 1e-300),
        ("sparse", sp.csr_matrix(v[None])), ("list", list(v)), ("dict", {"a": 1}),
        ("-inf", _with(v, -1, -np.inf)), ("nan-last", _with(v, -1, np.nan)), ("subnormal", v * 1e-315),
        ("max-float", v / np.max(np.abs(v)) * 1.7e308 if np.any(v) else v), ("float32", v.astype(np.float32)),
        ("strings", ["a"] * len(v)), ("tuple", tuple(v)), ("3d", v[None, None]), ("int8", v.astype(np.int8)),
        ("mixed-magnitudes", _with(v * 1e300, 0, 1e-300)),
    ]


def tensor3(T):
    T = np.asarray(T, float)
    k = T.shape[0]
    return [
        ("None", None), ("string", "abc"), ("nan", _with(T, (0, 0, 0), np.nan)),
        ("inf", _with(T, (0, 0, 0), np.inf)), ("-inf", _with(T, (0, 0, 0), -np.inf)),
        ("empty", np.zeros((0, 0, 0))), ("2d", T[0]), ("4d", T[None]), ("non-cubic", T[:, :, :-1]),
        ("scalar", 1.0), ("complex", T + 1j), ("object-with-None", _object_array(T)),
        ("ragged", [[list(r) for r in S] for S in T[:-1]] + [[[1.0]]]), ("int", np.round(T).astype(int)),
        ("bool", T > 0), ("float32", T.astype(np.float32)), ("sparse", sp.csr_matrix(T[0])),
        ("zeros", np.zeros_like(T)), ("scale-1e300", T * 1e300), ("scale-1e-300", T * 1e-300),
        ("subnormal", T * 1e-315), ("max-float", T / np.max(np.abs(T)) * 1.7e308),
        ("non-symmetric", np.random.default_rng(11).standard_normal(T.shape)),
        ("nested-list", T.tolist()), ("dict", {"a": 1}), ("1x1x1", np.ones((1, 1, 1))),
        ("constant", np.ones_like(T)), ("list-of-matrices", [T[0], T[1]]),
        ("negated", -T), ("cp-tensor", CPTensor((np.ones(2), [np.eye(k)[:, :2]] * 3))),
    ]


def matrix(B):
    B = np.asarray(B, float)
    return [v for v in real2d(B) if v[0] not in ("one-sample", "two-samples", "duplicated-rows")]


def int_param(base, *, upper=None):
    out = [("zero", 0), ("negative", -1), ("float", 2.5), ("float-integer", float(base)), ("bool", True),
           ("string", "2"), ("None", None), ("list", [base]), ("nan", np.nan), ("numpy-int", np.int64(base))]
    if upper is not None:
        out.append(("too-large", upper))
    return out


def random_states():
    return [("string", "seed"), ("float", 1.5), ("negative", -1), ("list", [1]), ("object", object()),
            ("legacy-RandomState", np.random.RandomState(0)), ("bool", True), ("numpy-int", np.int64(3)),
            ("generator", np.random.default_rng(0))]


def bandwidths():
    return [("zero", 0.0), ("negative", -1.0), ("nan", np.nan), ("inf", np.inf), ("tiny", 1e-300),
            ("huge", 1e300), ("string", "bad"), ("None", None), ("bool", True), ("complex", 1j),
            ("list-with-negative", [0.5, -1.0, 0.5]), ("subnormal", 1e-320)]


def views_list(Vs):
    """Malformed lists of views; the first view also goes through :func:`real2d`."""
    Vs = [np.asarray(V, float) for V in Vs]
    out = [
        ("array-not-list", np.stack(Vs) if len({V.shape for V in Vs}) == 1 else np.asarray(Vs[0])),
        ("two-views", Vs[:2]), ("four-views", Vs + [Vs[0]]), ("empty-list", []), ("None", None),
        ("string", "abc"), ("dict", {"X1": Vs[0]}), ("mismatched-rows", [Vs[0], Vs[1][:-1], Vs[2]]),
        ("None-view", [Vs[0], None, Vs[2]]), ("ragged-view", [Vs[0], _ragged(Vs[1]), Vs[2]]),
        ("tuple", tuple(Vs)), ("generator", (V for V in Vs)), ("sparse-views", [sp.csr_matrix(V) for V in Vs]),
        ("nan-in-last-view", [Vs[0], Vs[1], _with(Vs[2], (3, 0), np.nan)]),
        ("third-view-3d", [Vs[0], Vs[1], Vs[2][None]]),
    ]
    for label, value in real2d(Vs[0]):
        out.append((f"X1-{label}", [value] + Vs[1:]))
    return out


# --------------------------------------------------------------------------- the check
def _finite(obj, seen=None) -> bool:
    """True when every number reachable in obj is finite."""
    if obj is None or isinstance(obj, (str, bytes, bool)):
        return True
    if isinstance(obj, (int, np.integer)):
        return True
    if isinstance(obj, (float, np.floating, complex, np.complexfloating)):
        return bool(np.isfinite(obj))
    if sp.issparse(obj):
        return bool(np.all(np.isfinite(obj.data)))
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return all(_finite(o) for o in obj.flat)
        return bool(np.all(np.isfinite(obj))) if np.issubdtype(obj.dtype, np.number) else True
    if isinstance(obj, CPTensor):
        return _finite(obj.weights) and all(_finite(F) for F in obj.factors)
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return all(_finite(v) for v in obj)
    if hasattr(obj, "get_params") or type(obj).__module__.startswith("mvlib"):
        return all(_finite(v) for k, v in vars(obj).items() if k.endswith("_") and not k.startswith("_"))
    return True


def _raised_in_mvlib(exc) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(MVLIB_DIR)


def check_outcome(call, names):
    """Run ``call``; pass on a named mvlib ValueError/TypeError or a finite result."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call()
        except NotFittedError:
            return "not fitted"
        except (ValueError, TypeError) as exc:
            frames = traceback.extract_tb(exc.__traceback__)
            assert _raised_in_mvlib(exc), (
                f"{type(exc).__name__} raised outside mvlib, at {frames[-1].filename}:{frames[-1].lineno}: {exc}")
            assert any(nm in str(exc) for nm in names), f"message does not name any of {names}: {exc}"
            return "error"
    assert _finite(out), f"result is not finite: {out!r}"[:500]
    return "result"


# --------------------------------------------------------------------------- the registry
# Each entry: group, the call (keyword arguments -> result), valid keyword arguments, and
# per argument the battery of hostile values plus the names an error message may use.
VIEWS = ("views", "X1", "X2", "X3")
SPECS = {}


def spec(name, group, call, base, args):
    SPECS[name] = dict(group=group, call=call, base=base, args=args)


def _fn(f):
    return lambda **kw: f(**kw)


spec("pairs", "moments", lambda X1, X2: mvlib.pairs(X1, X2), dict(X1=V3[0], X2=V3[1]),
     {"X1": (real2d(V3[0]), ("X1",)), "X2": (real2d(V3[1]), ("X2", "X1"))})
spec("triples", "moments", lambda X1, X2, X3: mvlib.triples(X1, X2, X3), dict(X1=V3[0], X2=V3[1], X3=V3[2]),
     {"X1": (real2d(V3[0]), ("X1",)), "X3": (real2d(V3[2]), ("X3", "X1"))})
spec("triples_slice", "moments", _fn(mvlib.triples_slice), dict(X1=V3[0], X2=V3[1], X3=V3[2], eta=np.ones(3)),
     {"X2": (real2d(V3[1]), ("X2", "X1")), "eta": (vector(np.ones(3)), ("eta",))})
spec("whitened_triples", "moments", _fn(mvlib.whitened_triples),
     dict(X1=V3[0], X2=V3[1], X3=V3[2], W1=W3, W2=W3, W3=W3),
     {"X1": (real2d(V3[0]), ("X1",)), "W2": (matrix(W3), ("W2",))})
spec("MomentAccumulator", "moments",
     lambda whiteners, X1: mvlib.MomentAccumulator(whiteners).update(X1, V3[1], V3[2]).update(V3[0], V3[1], V3[2]),
     dict(whiteners=(W3, W3, W3), X1=V3[0]),
     {"X1": (real2d(V3[0]), ("X1",)),
      "whiteners": ([("None-entry", (W3, None, W3)), ("two", (W3, W3)), ("array", np.stack([W3] * 3)),
                     ("nan", (_with(W3, (0, 0), np.nan), W3, W3)), ("string", "abc"),
                     ("wrong-rows", (W3[:-1], W3, W3))], ("whiteners", "W1", "W2", "W3"))})
spec("count_pairs", "count moments", _fn(mvlib.count_pairs), dict(X=XC), {"X": (counts2d(XC), ("X",))})
spec("CountPairsOperator", "count moments", lambda X, doc_weights: (lambda op: op @ np.ones((op.shape[1], 2)))(mvlib.CountPairsOperator(X, doc_weights)),
     dict(X=XC, doc_weights=None),
     {"X": (counts2d(XC), ("X",)), "doc_weights": (vector(np.ones(300)), ("doc_weights",))})
spec("count_triples_slice", "count moments", _fn(mvlib.count_triples_slice), dict(X=XC, eta=np.ones(6)),
     {"X": (counts2d(XC), ("X",)), "eta": (vector(np.ones(6)), ("eta",))})
spec("count_whitened_triples", "count moments", _fn(mvlib.count_whitened_triples),
     dict(X=XC, W=np.eye(6)[:, :2]), {"X": (counts2d(XC), ("X",)), "W": (matrix(np.eye(6)[:, :2]), ("W",))})

OM3 = mvlib.sketch_matrix(3, 2, random_state=0)     # sketches of the GMM data (d = 3) and counts (d = 6)
OM6 = mvlib.sketch_matrix(6, 3, random_state=0)
spec("sketch_matrix", "scale", _fn(mvlib.sketch_matrix), dict(n_features=6, sketch_dim=3, random_state=0),
     {"n_features": (int_param(6), ("n_features",)), "sketch_dim": (int_param(3, upper=7), ("sketch_dim",)),
      "random_state": (random_states(), ("random_state",))})
spec("SketchedMoments", "scale", lambda X: mvlib.SketchedMoments(OM3).update(X).update(XG).third(), dict(X=XG),
     {"X": (real2d(XG), ("X",))})
spec("SketchedCountMoments", "scale", lambda X: mvlib.SketchedCountMoments(OM6).update(X).triples_sketch(),
     dict(X=XC), {"X": (counts2d(XC), ("X",))})
spec("SketchedViewMoments", "scale",
     lambda X1: mvlib.SketchedViewMoments([mvlib.sketch_matrix(3, 2, 0)] * 3).update(X1, V3[1], V3[2]).sketched_pairs(),
     dict(X1=V3[0]), {"X1": (real2d(V3[0]), ("X1",))})
spec("reduce_rows", "scale", lambda data: mvlib.reduce_rows(data, mvlib.SketchedMoments.partial, OM3).third(),
     dict(data=XG), {"data": (real2d(XG), ("X", "partial"))})
spec("row_chunks", "scale",
     lambda X, chunk_rows: mvlib.reduce_rows(mvlib.row_chunks(X, chunk_rows), mvlib.SketchedMoments.partial, OM3).third(),
     dict(X=XG, chunk_rows=100),
     {"X": (real2d(XG), ("X",)), "chunk_rows": (int_param(100), ("chunk_rows",))})

spec("tensor_power_method", "tensors", _fn(mvlib.tensor_power_method), dict(T=T4, rank=2, random_state=0),
     {"T": (tensor3(T4), ("T",)), "rank": (int_param(2, upper=5), ("rank",)),
      "random_state": (random_states(), ("random_state",)),
      "n_restarts": (int_param(3), ("n_restarts",)), "tol": ([("negative", -1.0), ("nan", np.nan), ("string", "x")], ("tol",))})
spec("power_iteration", "tensors", _fn(mvlib.power_iteration), dict(T=T4, theta=np.ones(4)),
     {"T": (tensor3(T4), ("T",)), "theta": (vector(np.ones(4)), ("theta",)),
      "n_iterations": (int_param(5), ("n_iterations",))})
spec("symmetric_spectral_norm", "tensors", _fn(mvlib.symmetric_spectral_norm),
     dict(T=T4, n_restarts=5, n_iterations=20, random_state=0), {"T": (tensor3(T4), ("T",)),
                                                                 "random_state": (random_states(), ("random_state",))})
spec("jennrich", "tensors", _fn(mvlib.jennrich), dict(T=T4, rank=2, random_state=0),
     {"T": (tensor3(T4), ("T",)), "rank": (int_param(2, upper=5), ("rank",))})
spec("multilinear", "tensors", _fn(mvlib.multilinear), dict(T=T4, V1=Q4, V2=Q4, V3=Q4),
     {"T": (tensor3(T4), ("T",)), "V2": (matrix(Q4), ("V2",))})
spec("outer3", "tensors", _fn(mvlib.outer3), dict(a=np.ones(3), b=np.ones(2), c=np.ones(2)),
     {"a": (vector(np.ones(3)), ("a",)), "c": (vector(np.ones(2)), ("c",))})
spec("symmetric_outer", "tensors", _fn(mvlib.symmetric_outer), dict(v=np.ones(3)), {"v": (vector(np.ones(3)), ("v",))})
spec("symmetrize3", "tensors", _fn(mvlib.symmetrize3), dict(xi1=V3[0], xi2=V3[1], xi3=V3[2]),
     {"xi1": (real2d(V3[0]), ("xi1",)), "xi3": (vector(np.ones(3)), ("xi3", "xi1"))})

spec("whitening_matrix", "whitening", _fn(mvlib.whitening_matrix), dict(M2=M2S, rank=2),
     {"M2": (matrix(M2S), ("M2",)), "rank": (int_param(2, upper=4), ("rank",))})
spec("dewhiten", "whitening", _fn(mvlib.dewhiten), dict(W=W3, V=np.eye(2), weights=np.ones(2)),
     {"W": (matrix(W3), ("W",)), "V": (matrix(np.eye(2)), ("V",)), "weights": (vector(np.ones(2)), ("weights",))})
spec("symmetrize_views", "whitening", _fn(mvlib.symmetrize_views), dict(P12=P12, P13=P13, P23=P23),
     {"P12": (matrix(P12), ("P12",)), "P23": (matrix(P23), ("P23",))})

spec("observable_operator", "observable", _fn(mvlib.observable_operator),
     dict(P12=P12, P123_eta=P13, U1=U3, U2=U3),
     {"P12": (matrix(P12), ("P12",)), "U1": (matrix(U3), ("U1",)), "P123_eta": (matrix(P13), ("P123_eta",))})
spec("algorithm_a", "observable", _fn(mvlib.algorithm_a),
     dict(U=U3.T @ U3 @ U3.T[:, :2] if False else np.eye(2), P=U3.T @ P12 @ U3, T=P123_2, random_state=0),
     {"P": (matrix(U3.T @ P12 @ U3), ("P",)), "T": (tensor3(P123_2), ("T",)),
      "random_state": (random_states(), ("random_state",))})
spec("algorithm_b", "observable", _fn(mvlib.algorithm_b),
     dict(T=P123_2, P12=U3.T @ P12 @ U3, P13=U3.T @ P13 @ U3, random_state=0),
     {"T": (tensor3(P123_2), ("T",)), "P12": (matrix(U3.T @ P12 @ U3), ("P12",)),
      "P13": (matrix(U3.T @ P13 @ U3), ("P13",))})
spec("view_covariances", "observable", _fn(mvlib.view_covariances), dict(views=V3, n_components=2, random_state=0),
     {"views": (views_list(V3), VIEWS + ("n_components",)), "n_components": (int_param(2, upper=9), ("n_components",))})

spec("column_errors", "metrics", _fn(mvlib.column_errors), dict(true=Q4, estimate=Q4[:, ::-1]),
     {"true": (matrix(Q4), ("true",)), "estimate": (matrix(Q4), ("estimate",))})
spec("match_columns", "metrics", _fn(mvlib.match_columns), dict(true=Q4, estimate=Q4[:, ::-1]),
     {"true": (matrix(Q4), ("true",)), "estimate": (matrix(Q4), ("estimate",))})
spec("matched_error", "metrics", _fn(mvlib.matched_error), dict(true=Q4, estimate=Q4[:, ::-1]),
     {"true": (matrix(Q4), ("true",)), "estimate": (matrix(Q4), ("estimate",))})

A_OC = np.random.default_rng(12).standard_normal((5, 4))   # (d, R): R starts as columns
spec("ThirdMomentOperator", "overcomplete", lambda X, noise_variance: mvlib.ThirdMomentOperator(X, noise_variance).to_dense(),
     dict(X=XG, noise_variance=0.5),
     {"X": (real2d(XG), ("X",)), "noise_variance": ([("negative", -1.0), ("nan", np.nan), ("string", "a"),
                                                      ("inf", np.inf), ("array", np.ones(2))], ("noise_variance",))})
spec("asymmetric_power_updates", "overcomplete", _fn(mvlib.asymmetric_power_updates),
     dict(T=T_OC, A=A_OC, n_iterations=5), {"T": (tensor3(T_OC), ("T",)), "A": (matrix(A_OC), ("A",))})
spec("svd_initialization", "overcomplete", _fn(mvlib.svd_initialization), dict(T=T_OC, n_restarts=3, random_state=0),
     {"T": (tensor3(T_OC), ("T",)), "n_restarts": (int_param(3), ("n_restarts",)),
      "random_state": (random_states(), ("random_state",))})
spec("cluster_restarts", "overcomplete", _fn(mvlib.cluster_restarts),
     dict(T=T_OC, weights=np.ones(4), A=A_OC, B=A_OC, C=A_OC, n_components=2, n_iterations=3),
     {"T": (tensor3(T_OC), ("T",)), "weights": (vector(np.ones(4)), ("weights",)),
      "n_components": (int_param(2, upper=50), ("n_components",))})
spec("als_refine", "overcomplete", _fn(mvlib.als_refine),
     dict(T=T_OC, weights=np.ones(4), factors=[A_OC] * 3, n_iterations=3),
     {"T": (tensor3(T_OC), ("T",)), "weights": (vector(np.ones(4)), ("weights",)),
      "factors": ([("two", [A_OC] * 2), ("None", None), ("nan", [_with(A_OC, (0, 0), np.nan)] * 3),
                   ("wrong-shape", [A_OC.T] * 3), ("string", "abc")], ("factors",))})
spec("labelled_initialization", "overcomplete", _fn(mvlib.labelled_initialization),
     dict(X=V3[0], labels=LABELS, n_components=2),
     {"X": (real2d(V3[0]), ("X",)), "labels": (vector(LABELS), ("labels",)),
      "n_components": (int_param(2, upper=9), ("n_components",))})
spec("random_overcomplete_tensor", "overcomplete", _fn(mvlib.random_overcomplete_tensor), dict(d=4, k=5, random_state=0),
     {"d": (int_param(4), ("d",)), "k": (int_param(5), ("k",)), "random_state": (random_states(), ("random_state",)),
      "weights": (vector(np.ones(5)), ("weights",))})

spec("silverman_bandwidth", "kernels", _fn(mvlib.silverman_bandwidth), dict(X=XG), {"X": (real2d(XG), ("X",))})
spec("rbf_kernel", "kernels", _fn(mvlib.rbf_kernel), dict(X=XG[:50], Y=XG[:30], bandwidth=1.0),
     {"X": (real2d(XG[:50]), ("X",)), "Y": (real2d(XG[:30]), ("Y",)), "bandwidth": (bandwidths(), ("bandwidth",))})
spec("delta_kernel", "kernels", _fn(mvlib.delta_kernel), dict(X=np.round(XG[:50]), Y=np.round(XG[:30])),
     {"X": (real2d(np.round(XG[:50])), ("X",)), "Y": (real2d(np.round(XG[:30])), ("Y",))})
_K = lambda A, B: mvlib.rbf_kernel(A, B, 1.0)  # noqa: E731
spec("incomplete_cholesky", "kernels", _fn(mvlib.incomplete_cholesky), dict(X=XG[:60], kernel=_K, rank=5),
     {"X": (real2d(XG[:60]), ("X",)), "rank": (int_param(5, upper=10 ** 6), ("rank",)),
      "kernel": ([("None", None), ("string", "rbf"), ("nan-kernel", lambda A, B: np.full((len(A), len(B)), np.nan))],
                 ("kernel",))})
spec("nystrom_factor", "kernels", _fn(mvlib.nystrom_factor), dict(X=XG[:60], kernel=_K, rank=5, random_state=0),
     {"X": (real2d(XG[:60]), ("X",)), "rank": (int_param(5, upper=10 ** 6), ("rank",)),
      "random_state": (random_states(), ("random_state",))})
PT = np.abs(np.random.default_rng(13).standard_normal((20, 2)))
spec("weighted_density_error", "kernels", _fn(mvlib.weighted_density_error),
     dict(p_true=PT, p_hat=PT[:, ::-1], weights=np.array([0.4, 0.6])),
     {"p_true": (matrix(PT), ("p_true",)), "p_hat": (matrix(PT), ("p_hat",)),
      "weights": (vector(np.array([0.4, 0.6])), ("weights",))})

spec("tt_embedding", "tree", _fn(mvlib.tt_embedding), dict(C=C_TREE, ranks=[2, 2]),
     {"C": (tensor3(C_TREE), ("C",)), "ranks": ([("zero", [0, 2]), ("negative", [-1, 2]), ("float", [1.5, 2]),
                                                ("too-few", [2]), ("string", "ab"), ("None", None),
                                                ("too-large", [10 ** 6, 2])], ("ranks",))})
spec("reshaping_errors", "tree", _fn(mvlib.reshaping_errors), dict(C=C_TREE, ranks=[2, 2]),
     {"C": (tensor3(C_TREE), ("C",)), "ranks": ([("zero", [0, 2]), ("string", "ab"), ("None", None)], ("ranks",))})


# ---- estimators: fit with hostile data and hyper-parameters, predict before fit / wrong width
def est(name, family, make, data, battery, names, hyper, predict=(), predict_arg=None, extra=None):
    """Register an estimator: ``make(**hyper)`` builds it, ``fit(data)`` must work."""
    SPECS[name] = dict(group=family, estimator=True, make=make, data=data, battery=battery, names=names,
                       hyper=hyper, predict=predict, predict_arg=predict_arg, extra=extra or {})


est("SpectralGMM", "gaussian mixture", lambda **p: mvlib.SpectralGMM(**{"n_components": 2, "random_state": 0, **p}),
    XG, real2d(XG), ("X",),
    {"n_components": int_param(2, upper=4), "random_state": random_states(),
     "covariance_type": [("full", "full"), ("None", None)], "n_restarts": int_param(3), "moments": [("unknown", "three-pass"), ("None", None)], "sketch_dim": int_param(3)},
    predict=("predict", "predict_proba", "score"))
est("TensorICA", "independent components", lambda **p: mvlib.TensorICA(**{"n_components": 2, "random_state": 0, **p}),
    XI, real2d(XI), ("X",),
    {"n_components": int_param(2, upper=3), "random_state": random_states(), "n_restarts": int_param(3),
     "deflation": [("unknown", "magic"), ("None", None)], "selection": [("unknown", "magic")]},
    predict=("transform", "inverse_transform"))
est("MultiViewMixture", "three-view mixture",
    lambda **p: mvlib.MultiViewMixture(**{"n_components": 2, "random_state": 0, **p}),
    V3, views_list(V3), VIEWS,
    {"n_components": int_param(2, upper=4), "random_state": random_states(),
     "method": [("unknown", "magic"), ("None", None)], "min_gap": [("negative", -1.0), ("nan", np.nan)], "moments": [("unknown", "three-pass"), ("None", None)], "sketch_dim": int_param(3)})
est("SpectralTopicModel", "topic model",
    lambda **p: mvlib.SpectralTopicModel(**{"n_components": 2, "random_state": 0, **p}),
    XC, counts2d(XC), ("X", "document"),
    {"n_components": int_param(2, upper=7), "random_state": random_states(),
     "method": [("unknown", "magic")], "variant": [("unknown", "Z")], "moments": [("unknown", "three-pass"), ("None", None)], "sketch_dim": int_param(3)},
    predict=("predict", "predict_proba"))
est("SpectralLDA", "topic model",
    lambda **p: mvlib.SpectralLDA(**{"n_components": 2, "random_state": 0, **p}),
    XC, counts2d(XC), ("X", "document"),
    {"n_components": int_param(2, upper=7), "random_state": random_states(),
     "alpha0": [("negative", -1.0), ("zero", 0.0), ("nan", np.nan), ("inf", np.inf), ("string", "x")], "moments": [("unknown", "three-pass"), ("None", None)], "sketch_dim": int_param(3)},
    predict=("transform", "score", "perplexity"))
est("UnigramMixtureEM", "topic model",
    lambda **p: mvlib.UnigramMixtureEM(**{"n_components": 2, "random_state": 0, "n_init": 1, "max_iter": 50, **p}),
    XC, counts2d(XC), ("X", "document"),
    {"n_components": int_param(2, upper=10 ** 6), "random_state": random_states(),
     "smoothing": [("negative", -1.0), ("nan", np.nan)], "max_iter": int_param(5)},
    predict=("predict", "predict_proba", "score"))
est("SpectralHMM", "hidden Markov model",
    lambda **p: mvlib.SpectralHMM(**{"n_components": 2, "random_state": 0, **p}),
    XH, symbols(XH), ("X", "n_symbols", "symbol"),
    {"n_components": int_param(2, upper=5), "random_state": random_states(),
     "n_symbols": [("too-small", 2), ("zero", 0), ("float", 3.5), ("huge", 10 ** 9)],
     "method": [("unknown", "magic")], "start": [("unknown", "magic")]},
    predict=("predict", "score"), extra={"lengths": (lengths_variants(LH, XH.shape[0]), ("lengths", "sequence"))})
est("ObservableOperatorHMM", "hidden Markov model",
    lambda **p: mvlib.ObservableOperatorHMM(**{"n_components": 2, "random_state": 0, **p}),
    XH, symbols(XH), ("X", "n_symbols", "symbol"),
    {"n_components": int_param(2, upper=5), "random_state": random_states(),
     "n_symbols": [("too-small", 2), ("zero", 0), ("float", 3.5), ("huge", 10 ** 9)],
     "start": [("unknown", "magic")], "floor": [("zero", 0.0), ("one", 1.0), ("nan", np.nan)]},
    predict=("score",), extra={"lengths": (lengths_variants(LH, XH.shape[0]), ("lengths", "sequence"))})
#: estimators whose fit takes hmmlearn's (X, lengths)
SEQUENCE_ESTIMATORS = ("SpectralHMM", "ObservableOperatorHMM")
est("KernelSpectral", "kernel embedding",
    lambda **p: mvlib.KernelSpectral(**{"n_components": 2, "bandwidth": 0.5, "rank": 8, "random_state": 0, **p}),
    V1D, views_list(V1D), VIEWS,
    {"n_components": int_param(2, upper=40), "random_state": random_states(), "bandwidth": bandwidths(),
     "rank": int_param(8, upper=10 ** 6), "kernel": [("unknown", "magic")],
     "alpha0": [("negative", -1.0), ("zero", 0.0), ("nan", np.nan), ("inf", np.inf), ("string", "x"),
                ("bool", True), ("list", [1.0]), ("tiny", 1e-300), ("huge", 1e300)]},
    predict=("predict", "predict_proba", "score"))
est("NonparametricEM", "kernel embedding",
    lambda **p: mvlib.NonparametricEM(**{"n_components": 2, "bandwidth": 0.5, "max_iter": 20, "random_state": 0, **p}),
    V1D, views_list(V1D), VIEWS,
    {"n_components": int_param(2, upper=10 ** 6), "random_state": random_states(), "bandwidth": bandwidths()},
    predict=("predict", "predict_proba", "score"))
est("HistogramSpectral", "kernel embedding",
    lambda **p: mvlib.HistogramSpectral(**{"n_components": 2, "random_state": 0, **p}),
    V1D, views_list(V1D), VIEWS,
    {"n_components": int_param(2, upper=10 ** 6), "random_state": random_states(),
     "n_bins": [("one", 1), ("zero", 0), ("float", 2.5), ("string", "many"), ("huge", 10 ** 9)]},
    predict=("predict", "predict_proba", "score"))
est("ProductMixtureEM", "three-view mixture",
    lambda **p: mvlib.ProductMixtureEM(**{"n_components": 2, "max_iter": 20, "random_state": 0, **p}),
    V_PME, views_list(V_PME), VIEWS + ("kinds", "poisson", "bernoulli"),
    {"n_components": int_param(2, upper=10 ** 6), "random_state": random_states(),
     "kinds": [("wrong-length", ("gaussian",)), ("unknown", ("gaussian", "cauchy", "bernoulli")), ("string", "gaussian")]},
    predict=("predict", "predict_proba", "score"))
est("LatentTreeEmbedding", "latent tree",
    lambda **p: mvlib.LatentTreeEmbedding(**{"ranks": 2, "bandwidth": 1.0, **p}),
    XG[:80], real2d(XG[:80]), ("X",),
    {"ranks": [("zero", 0), ("negative", -1), ("float", 1.5), ("string", "2"), ("None", None),
               ("wrong-count", [2, 2, 2, 2]), ("huge", 10 ** 6)],
     "bandwidth": bandwidths(), "kernel": [("unknown", "magic")], "jitter": [("negative", -1.0), ("nan", np.nan)]},
    predict=("score",))
est("OvercompleteTensorDecomposition", "overcomplete tensor",
    lambda **p: mvlib.OvercompleteTensorDecomposition(**{"n_components": 3, "random_state": 0, "n_restarts": 10, **p}),
    T_OC, tensor3(T_OC), ("T", "n_components"),
    {"n_components": int_param(3, upper=10 ** 6), "random_state": random_states(), "init": [("unknown", "magic")],
     "n_restarts": int_param(10), "epsilon": [("negative", -1.0), ("nan", np.nan)]})


# --------------------------------------------------------------------------- case list
Case = collections.namedtuple("Case", "name group kind arg label value")


def _cases():
    out = []
    for name, s in SPECS.items():
        if s.get("estimator"):
            for label, value in s["battery"]:
                out.append(Case(name, s["group"], "fit", "data", label, value))
            for arg, variants in s["hyper"].items():
                for label, value in variants:
                    out.append(Case(name, s["group"], "hyper", arg, label, value))
            for arg, (variants, _) in s["extra"].items():
                for label, value in variants:
                    out.append(Case(name, s["group"], "fit-arg", arg, label, value))
            for method in s["predict"]:
                out.append(Case(name, s["group"], "before-fit", method, "unfitted", None))
                out.append(Case(name, s["group"], "predict", method, "wrong-width", None))
                out.append(Case(name, s["group"], "predict", method, "nan", None))
        else:
            for arg, (variants, _) in s["args"].items():
                for label, value in variants:
                    out.append(Case(name, s["group"], "call", arg, label, value))
    return out


CASES = _cases()
_FITTED = {}


def _fitted(name):
    if name not in _FITTED:
        s = SPECS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[name] = s["make"]().fit(s["data"], **(
                {"lengths": LH} if name in SEQUENCE_ESTIMATORS else {}))
    return _FITTED[name]


def _wrong_width(data):
    if isinstance(data, list):
        return [np.hstack([V, V[:, :1]]) for V in data]
    if np.asarray(data).ndim == 3:
        return data
    return np.hstack([data, data[:, :1]])


def _with_nan(data):
    if isinstance(data, list):
        return [_with(data[0], (0, 0), np.nan)] + list(data[1:])
    return _with(data, (0,) * np.ndim(data), np.nan)


def _run(case):
    s = SPECS[case.name]
    if not s.get("estimator"):
        kwargs = dict(s["base"])
        kwargs[case.arg] = case.value
        names = s["args"][case.arg][1]
        return check_outcome(lambda: s["call"](**kwargs), names)
    fit_kw = {"lengths": LH} if case.name in SEQUENCE_ESTIMATORS else {}
    if case.kind == "fit":
        # a rank condition may equally blame the data or n_components / n_states
        names = s["names"] + ("lengths", "n_components", "n_states")
        return check_outcome(lambda: s["make"]().fit(case.value, **fit_kw), names)
    if case.kind == "hyper":
        return check_outcome(lambda: s["make"](**{case.arg: case.value}).fit(s["data"], **fit_kw), (case.arg,))
    if case.kind == "fit-arg":
        names = s["extra"][case.arg][1]
        return check_outcome(lambda: s["make"]().fit(s["data"], **{case.arg: case.value}), names)
    if case.kind == "before-fit":
        model = s["make"]()
        with pytest.raises(NotFittedError):
            getattr(model, case.arg)(s["data"], **fit_kw)
        return "not fitted"
    model = _fitted(case.name)
    bad = _wrong_width(s["data"]) if case.label == "wrong-width" else _with_nan(s["data"])
    if case.name in SEQUENCE_ESTIMATORS:
        bad = np.hstack([XH, XH]) if case.label == "wrong-width" else _with(XH, (0, 0), np.nan)
    return check_outcome(lambda: getattr(model, case.arg)(bad, **fit_kw), s["names"])


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{c.arg}-{c.label}" for c in CASES])
def test_hostile_input(case):
    _run(case)


def test_cases_per_family_and_group():
    """At least 30 hostile cases for every estimator family and every function group."""
    counts = collections.Counter(c.group for c in CASES)
    per_name = collections.Counter(c.name for c in CASES)
    assert all(v >= 30 for v in counts.values()), counts
    assert all(v >= 30 for v in per_name.values()), {k: v for k, v in per_name.items() if v < 30}


#: public names that take no data (a warning class, a progress-bar wrapper)
NO_DATA = {"IllConditionedWarning", "progress"}


def test_every_public_name_is_covered():
    missing = set(mvlib.__all__) - set(SPECS) - NO_DATA
    assert not missing, f"public names without hostile-input cases: {sorted(missing)}"


# --------------------------------------------------------------------------- scale sweep
IN_RANGE = (1e-100, 2.0 ** -150, 1e-50, 1e50, 2.0 ** 170, 1e100)


def _sweep(f, degree, scales, rtol):
    ref = f(1.0)
    for s in scales:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = f(s)
        for r, g in zip(ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)):
            g = np.asarray(g) / s ** degree if degree else np.asarray(g)
            np.testing.assert_allclose(g, r, rtol=rtol, atol=rtol * np.max(np.abs(r)), err_msg=f"scale {s:g}")


def _sorted_weights(cp):
    return np.sort(np.asarray(cp.weights))


SWEEPS = {
    # name: (f(s) -> array or tuple, degree of homogeneity, extra scales in range, scales out of range)
    "pairs": (lambda s: mvlib.pairs(V3[0] * s, V3[1] * s), 2, (1e-150, 1e150), (1e-200, 1e200)),
    "triples": (lambda s: mvlib.triples(*(V * s for V in V3)), 3, (), (1e-150, 1e150)),
    "whitened_triples": (lambda s: mvlib.whitened_triples(*(V * s for V in V3), W3, W3, W3), 3, (), (1e-150, 1e150)),
    "MomentAccumulator": (lambda s: mvlib.MomentAccumulator((W3, W3, W3)).update(*(V[:100] * s for V in V3))
                          .update(*(V[100:] * s for V in V3)).whitened_triples(), 3, (), (1e-150, 1e150)),
    "tensor_power_method": (lambda s: _sorted_weights(mvlib.tensor_power_method(T4 * s, 4, random_state=0)), 1,
                            (1e-300, 1e300), ()),
    "power_iteration": (lambda s: mvlib.power_iteration(T4 * s, np.ones(4)), 0, (1e-300, 1e300), ()),
    "symmetric_spectral_norm": (lambda s: mvlib.symmetric_spectral_norm(T4 * s, n_restarts=20, random_state=0), 1,
                                (1e-300, 1e300), ()),
    "jennrich": (lambda s: np.sort(np.asarray(mvlib.jennrich(T4 * s, 4, random_state=0).weights)), 1, (1e-300, 1e300), ()),
    "dewhiten": (lambda s: mvlib.dewhiten(W3 / s, np.eye(2)), 1, (1e-300, 1e300), ()),
    "silverman_bandwidth": (lambda s: mvlib.silverman_bandwidth(XG * s), 1, (1e-300, 1e300), ()),
    "SpectralGMM": (lambda s: (lambda g: (g.weights_, g.means_ / s * s, g.covariances_))(
        mvlib.SpectralGMM(2, random_state=0).fit(XG * s)), None, (1e-150, 1e150), (1e-200, 1e200)),
    "OvercompleteTensorDecomposition": (lambda s: np.sort(mvlib.OvercompleteTensorDecomposition(
        6, random_state=0).fit(T_OC * s).weights_), 1, (1e-300, 1e300), ()),
    "rbf_kernel": (lambda s: mvlib.rbf_kernel(XG[:20, :1] * s, bandwidth=0.7 * s), -1, (1e-300, 1e300), ()),
    "MultiViewMixture": (lambda s: mvlib.MultiViewMixture(2, random_state=0).fit([V * s for V in V3]).means_[0],
                         1, (1e-300, 1e300), ()),
    "whitening_matrix": (lambda s: mvlib.whitening_matrix(M2S * s * s, 2), -1, (1e-150, 1e150), ()),
    "multilinear": (lambda s: mvlib.multilinear(T4 * s, Q4, Q4, Q4), 1, (1e-300, 1e300), ()),
    "symmetrize3": (lambda s: mvlib.symmetrize3(*(V * s for V in V3)), 3, (), (1e-150, 1e150)),
    "matched_error": (lambda s: mvlib.matched_error(Q4 * s, Q4[:, ::-1] * s * 1.01), 1, (1e-300, 1e300), ()),
    "reshaping_errors": (lambda s: mvlib.reshaping_errors(C_TREE * s, [1, 1]), 1, (1e-300, 1e300), ()),
    "count_whitened_triples": (lambda s: mvlib.count_whitened_triples(XC, np.eye(6)[:, :2] * s), 3, (),
                               (1e-150, 1e150)),
    "KernelSpectral": (lambda s: np.sort(mvlib.KernelSpectral(2, bandwidth=0.5 * s, rank=8, random_state=0)
                                         .fit([V * s for V in V1D]).weights_), 0, (1e-300, 1e300), ()),
    "HistogramSpectral": (lambda s: np.sort(mvlib.HistogramSpectral(2, random_state=0).fit([V * s for V in V1D])
                                            .weights_), 0, (1e-300, 1e300), ()),
    "view_covariances": (lambda s: mvlib.view_covariances([V * s for V in V3], 2, random_state=0)["covariances"],
                         2, (1e-150, 1e150), ()),
}


@pytest.mark.parametrize("name", sorted(SWEEPS))
def test_scale_sweep(name):
    """Results scale by s**degree for data scaled by s inside float64; named errors outside."""
    f, degree, extra, outside = SWEEPS[name]
    if name == "SpectralGMM":   # weights scale-free, means ~ s, variances ~ s²
        ref = f(1.0)
        for s in IN_RANGE + extra:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = mvlib.SpectralGMM(2, random_state=0).fit(XG * s)
            np.testing.assert_allclose(g.weights_, ref[0], rtol=1e-8)
            np.testing.assert_allclose(g.means_ / s, ref[1], rtol=1e-8)
            np.testing.assert_allclose(g.covariances_ / s ** 2, ref[2], rtol=1e-8)
            np.testing.assert_array_equal(g.predict(XG * s), g.predict(XG * s))
            assert np.all(np.isfinite(g.predict_proba(XG * s)))
    else:
        _sweep(f, degree, IN_RANGE + extra, rtol=1e-8)
    for s in outside:
        with pytest.raises(ValueError, match="scale of .* is so extreme"):
            f(s)


def test_gmm_predictions_scale_free():
    """Posterior probabilities do not depend on the scale of the data."""
    ref = mvlib.SpectralGMM(2, random_state=0).fit(XG).predict_proba(XG)
    for s in (1e-150, 1e-100, 1e100, 1e150):
        g = mvlib.SpectralGMM(2, random_state=0).fit(XG * s)
        np.testing.assert_allclose(g.predict_proba(XG * s), ref, rtol=1e-6, atol=1e-12)


def test_accumulator_mixed_scales():
    """Batches of very different scales add up (running power of two), merged or not."""
    a = mvlib.MomentAccumulator().update(*(V[:120] * 1e150 for V in V3))
    b = mvlib.MomentAccumulator().update(*(V[120:] * 1e-150 for V in V3))
    P = (a + b).pairs(1, 2)
    np.testing.assert_allclose(P / 1e300, V3[0][:120].T @ V3[1][:120] / 240, rtol=1e-12)
    one = mvlib.MomentAccumulator().update(*(V * 2.0 ** 400 for V in V3)).pairs(1, 3)
    np.testing.assert_array_equal(one / 2.0 ** 800, mvlib.pairs(V3[0], V3[2]))


def test_ordinary_inputs_bit_identical():
    """Data of ordinary scale take the arithmetic path unchanged: exact powers of two
    only rescale, so the results at 2**±300 are the ordinary ones times the power."""
    for e in (300, -300):
        s = 2.0 ** e
        np.testing.assert_array_equal(mvlib.pairs(V3[0] * s, V3[1]) / s, mvlib.pairs(V3[0], V3[1]))
        np.testing.assert_array_equal(
            mvlib.tensor_power_method(T4 * s, 3, random_state=1).weights / s,
            mvlib.tensor_power_method(T4, 3, random_state=1).weights)
