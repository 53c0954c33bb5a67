r"""Moments at scale: one pass over a stream, and the same sums on a Dask cluster.

Every moment the estimators use is a sum over samples, so it can be computed chunk by chunk
and the partial sums added: a map-reduce. This module holds

* :func:`reduce_rows`, the one reduction every estimator runs its passes through: the
  sum of ``partial(chunk, offset, *consts)`` over the row chunks of in-memory data (one
  chunk: the whole array), of a ``dask.array`` (one task per block on whatever scheduler is
  active, a tree of additions, only the small partial sums travel), or of an iterator of
  chunks (a stream, read once, with a progress bar in a terminal);
* the one-pass sketched accumulators :class:`SketchedMoments` (dense data, one view),
  :class:`SketchedViewMoments` (three views) and :class:`SketchedCountMoments` (documents ×
  words counts). With :math:`\Omega` a (d, K) matrix of orthonormal columns
  (:func:`sketch_matrix`, K ≥ k) and :math:`y=\Omega^\top x`, they keep the sums of
  :math:`y^{\otimes3}` (K × K × K), of the cross moment :math:`x\,y^\top` (d × K) and of x,
  from which the second moment in the sketch is :math:`\Omega^\top E[xy^\top]`. Memory
  O(d K + K³) whatever the number of samples; the sums merge by addition.

Why the sketch recovers the same components (:doc:`/chapters/11_moments_at_scale`): a model
with :math:`E[x\otimes x]\propto\sum_h w_h\mu_h^{\otimes2}` (after its correction) sketches to
:math:`\sum_h w_h\nu_h^{\otimes2}` with :math:`\nu_h=\Omega^\top\mu_h`, still linearly
independent for K ≥ k and a generic :math:`\Omega`; the estimator runs in the sketch and the
whitened eigenvectors come back to :math:`\mathbb R^d` through the cross moment,
:math:`\mu_h=\lambda_h\,\mathcal M_2\Omega\,W_y v_h` (:func:`sketch_dewhiten`), which with
K = d is exactly :math:`\lambda_h(W^\top)^+v_h`.
"""
from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Iterator

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .moments import SymmetricOperator, inv_falling, triple_product
from .progress import progress
from .validation import (
    Integer,
    Options,
    OrNone,
    check_array,
    check_counts,
    check_positive_int,
    check_random_state,
    scale_exponent,
    scaled,
)

__all__ = [
    "MOMENTS",
    "default_sketch_dim",
    "sketch_matrix",
    "sketch_dewhiten",
    "is_dask_array",
    "is_stream",
    "row_chunks",
    "reduce_rows",
    "DataSource",
    "open_source",
    "Sums",
    "SketchedMoments",
    "SketchedViewMoments",
    "SketchedCountMoments",
    "row_signs",
    "SourceCountPairs",
    "count_documents",
    "rademacher_slice",
]

#: the two ways estimators compute their moments
MOMENTS = ("two-pass", "one-pass")


def check_moments(moments, sketch_dim):
    """Validate the ``moments`` / ``sketch_dim`` hyper-parameters of an estimator (the constraints
    of ``mvlib.core.base.MOMENTS_CONSTRAINTS``)."""
    return Options(MOMENTS)(moments, "moments"), OrNone(Integer())(sketch_dim, "sketch_dim")


def default_sketch_dim(n_components: int, n_features: int) -> int:
    """K = min(d, 2k + 10): the sketch's default width."""
    return int(min(n_features, 2 * n_components + 10))


def sketch_matrix(n_features: int, sketch_dim: int, random_state=None) -> np.ndarray:
    r"""A (d, K) matrix :math:`\Omega` with orthonormal columns, :math:`\Omega^\top\Omega=I_K`.

    The Q factor of a Gaussian (d, K) matrix (signs fixed by R's diagonal, so it is Haar
    distributed); with K = d a uniformly random rotation. Orthonormal columns keep spherical
    noise spherical in the sketch (:math:`\Omega^\top z\sim N(0,\sigma^2I_K)` for
    :math:`z\sim N(0,\sigma^2I_d)`), which the Gaussian mixture's correction needs.
    Cost O(d K²). See :doc:`/chapters/11_moments_at_scale`.
    """
    d = check_positive_int(n_features, "n_features")
    K = check_positive_int(sketch_dim, "sketch_dim")
    if K > d:
        raise ValueError(f"sketch_dim={K} exceeds n_features={d}; the sketch needs K <= d")
    rng = check_random_state(random_state)
    Q, R = sla.qr(rng.standard_normal((d, K)), mode="economic")
    return Q * np.sign(np.where(np.diag(R) == 0, 1.0, np.diag(R)))[None, :]


def resolve_sketch(sketch_dim, k, d, rng):
    """The sketch of an estimator: K from ``sketch_dim`` (default 2k + 10, at most d), Ω from rng."""
    K = default_sketch_dim(k, d) if sketch_dim is None else sketch_dim
    if K < k:
        raise ValueError(f"sketch_dim={K} is below n_components={k}: the sketched components must stay "
                         "linearly independent, so K >= k")
    if K > d:
        raise ValueError(f"sketch_dim={K} exceeds the {d} features of the data; the sketch needs K <= d")
    return sketch_matrix(d, K, rng)


def sketch_dewhiten(cross, W, V, lam):
    r"""Components in :math:`\mathbb R^d` from the sketch: :math:`\mu_h=\lambda_h\,C\,W_y v_h`.

    ``cross`` :math:`C=\mathcal M_2\Omega` (d, K) is the model's (corrected) second moment
    applied to the sketch, ``W`` (K, k) whitens :math:`\Omega^\top\mathcal M_2\Omega`, ``V``
    (k, k) and ``lam`` (k,) are the whitened eigenpairs. With
    :math:`\Omega^\top\mathcal M_2\Omega=U_yS_yU_y^\top` and :math:`W_y=U_yS_y^{-1/2}`,
    population :math:`\mathcal M_2=MDM^\top` gives :math:`CW_yV\Lambda=MD\Lambda^2=M` for
    :math:`D=\Lambda^{-2}`; with K = d it equals the two-pass :math:`(W^\top)^+V\Lambda`
    exactly (:doc:`/chapters/11_moments_at_scale`). Returns (d, k); cost O(d K k).
    """
    return (np.asarray(cross) @ (np.asarray(W) @ np.asarray(V))) * np.asarray(lam)[None, :]


# ----------------------------------------------------------------------------- data sources

def is_dask_array(X) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask when it is absent)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "to_delayed") and hasattr(X, "chunks")


def is_stream(X) -> bool:
    """Whether ``X`` is a stream of chunks: an iterator (a generator, ``iter(...)``, :func:`row_chunks`).

    Lists and arrays are data held in memory, not streams."""
    return isinstance(X, Iterator)


def row_chunks(X, chunk_rows: int = 65536):
    """Iterate over ``X`` in blocks of ``chunk_rows`` rows: chunked reads of a file-backed array.

    ``X`` is anything with ``shape`` and row slicing: ``numpy.load(path, mmap_mode="r")``, an
    HDF5 or Zarr array, a scipy.sparse matrix. Each block is read when it is needed and then
    released, so a stream built on a file never holds more than one block. See :doc:`/chapters/11_moments_at_scale`.
    """
    chunk_rows = check_positive_int(chunk_rows, "chunk_rows")
    if not hasattr(X, "shape") or len(X.shape) < 1:
        raise TypeError(f"X must have a shape and support row slicing, got {type(X).__name__}")
    n = X.shape[0]
    for s in range(0, n, chunk_rows):
        block = X[s:s + chunk_rows]
        yield block if sp.issparse(block) else np.asarray(block)


def _tree_sum(parts, delayed):
    while len(parts) > 1:
        parts = [delayed(operator.add)(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def _dask_blocks(sources, what):
    X0 = sources[0]
    out = []
    for v, X in enumerate(sources):
        if X.ndim != 2:
            raise ValueError(f"{what} must be 2-dimensional dask arrays, got ndim={X.ndim}")
        if any(np.isnan(c) for c in X.chunks[0]):
            raise ValueError(f"{what} has unknown chunk sizes; call .compute_chunk_sizes() first")
        if X.shape[0] != X0.shape[0]:
            raise ValueError(f"the views of {what} have {X0.shape[0]} and {X.shape[0]} rows; they must match")
        if len(X.chunks[1]) != 1:          # one block per row range: all columns of a row together
            X = X.rechunk({1: -1})
        if X.chunks[0] != X0.chunks[0]:
            X = X.rechunk({0: X0.chunks[0]})
        out.append(X.to_delayed()[:, 0])
    return out, X0.chunks[0]


def reduce_rows(data, partial, *consts, what: str = "X", desc: str | None = None):
    r"""The sum over row chunks of ``partial(*chunk_views, offset, *consts)``.

    ``data`` is one source or a tuple/list of aligned sources (views with the same rows):

    * in memory (arrays, sparse matrices): ``partial`` runs once on the whole data (offset 0);
    * ``dask.array`` (rows chunked; for counts the chunks may be scipy.sparse CSR): one task per
      row block on the active scheduler (a ``dask.distributed`` client if one exists), the
      partial results added in a binary tree of tasks, ``consts`` sent once each; the blocks stay
      on the workers and only partial sums (d × K, K³ numbers) travel;
    * a stream (an iterator yielding chunks, or tuples of view chunks): read once, chunk by
      chunk, with :func:`mvlib.progress` in a terminal.

    ``partial`` returns an object supporting ``+`` (an accumulator); ``offset`` is the global
    index of the chunk's first row (for per-row random signs). Returns the total. See :doc:`/chapters/11_moments_at_scale`.
    """
    views = isinstance(data, (list, tuple)) and len(data) > 0 and not is_stream(data)
    sources = list(data) if views else [data]
    if is_dask_array(sources[0]):
        import dask
        from dask import delayed

        blocks, chunks = _dask_blocks(sources, what)
        offsets = np.concatenate([[0], np.cumsum(chunks)[:-1]]).astype(int)
        cd = [delayed(c, traverse=False) if isinstance(c, np.ndarray) else c for c in consts]
        f = delayed(partial, pure=True)
        parts = [f(*(b[i] for b in blocks), int(offsets[i]), *cd) for i in range(len(offsets))]
        return dask.compute(_tree_sum(parts, delayed))[0]
    if is_stream(data):
        total, offset = None, 0
        for chunk in progress(data, desc=desc or f"moments of {what}"):
            chunk = tuple(chunk) if views or isinstance(chunk, (list, tuple)) else (chunk,)
            part = partial(*chunk, offset, *consts)
            total = part if total is None else total + part
            offset += chunk[0].shape[0]
        if total is None:
            raise ValueError(f"the stream {what} yielded no chunks")
        return total
    return partial(*sources, 0, *consts)


class DataSource:
    r"""The data of one fit, read through one interface wherever they are.

    Made by :func:`open_source`. ``kind`` is ``"memory"`` (arrays or sparse matrices, already
    checked), ``"dask"`` (``dask.array`` s chunked by rows) or ``"stream"`` (an iterator of
    chunks, read once); ``data`` the (checked, possibly rescaled) data; ``n_features`` the
    columns (one int per view for a list of views); ``n_rows`` the rows (``None`` for a
    stream: counted by the first pass); ``exponent`` the power of two the in-memory data
    were divided by (0, or one per view; see :meth:`mvlib.core.base.MomentEstimator._unscale_fitted`).

    Every pass is :meth:`reduce`. Where an estimator computes a moment on in-memory data by an
    exact formula that has no chunked form, it gives both implementations to :meth:`passes`,
    which picks one: estimators never test the kind themselves.
    """

    def __init__(self, data, kind, n_features, n_rows, exponent=0, what="X"):
        self.data, self.kind, self.what = data, kind, what
        self.n_features, self.n_rows, self.exponent = n_features, n_rows, exponent

    def reduce(self, partial, *consts, desc=None):
        """One read of the data: :func:`reduce_rows` of ``partial`` with ``consts``."""
        return reduce_rows(self.data, partial, *consts, what=self.what, desc=desc)

    def passes(self, in_memory, chunked, *args, **kwargs):
        """``in_memory(self, *args, **kwargs)`` for in-memory data, else ``chunked(...)``: the two
        implementations of a family's moment passes (the same moments; the in-memory one may
        use exact formulas over the whole array)."""
        return (in_memory if self.kind == "memory" else chunked)(self, *args, **kwargs)


def open_source(data, *, moments="two-pass", what="X", check=None, rescale=False):
    r"""Open ``data`` for a fit: check it, and tell how it is read (:class:`DataSource`).

    In memory, ``check(data)`` validates the data and returns them (e.g. a partial of
    :func:`mvlib.core.validation.check_array`); with ``rescale=True`` arrays of extreme scale
    are divided by an exact power of two (one per view), recorded in ``exponent``, so that
    every moment stays in float64's range and the fitted attributes are scaled back once, by
    :meth:`mvlib.core.base.MomentEstimator._unscale_fitted`. A Dask array or a stream is
    checked chunk by chunk during the passes; a stream with ``moments="two-pass"`` is refused
    (it can be read once), and its first chunk is read to learn the number of columns.
    """
    kind = source_kind(data)
    if kind != "memory":
        require_two_passes(data, moments, what)
        n_features, data = n_features_of(data, what)
        return DataSource(data, kind, n_features, source_rows(data), 0, what)
    if check is not None:
        data = check(data)
    views = isinstance(data, (list, tuple))
    arrays = list(data) if views else [data]
    exps = [scale_exponent(A) if rescale else 0 for A in arrays]
    arrays = [scaled(A, e) for A, e in zip(arrays, exps)]
    n_features = [int(A.shape[1]) for A in arrays]
    if views:
        return DataSource(tuple(arrays), kind, n_features, int(arrays[0].shape[0]), exps, what)
    return DataSource(arrays[0], kind, n_features[0], int(arrays[0].shape[0]), exps[0], what)


def source_kind(data) -> str:
    """"memory", "dask" or "stream" for a source (or the first of a list of views)."""
    if is_stream(data):
        return "stream"
    first = data[0] if isinstance(data, (list, tuple)) and len(data) else data
    return "dask" if is_dask_array(first) else "memory"


def source_rows(data):
    """Number of rows of in-memory or dask data (None for a stream)."""
    if is_stream(data):
        return None
    first = data[0] if isinstance(data, (list, tuple)) else data
    return int(first.shape[0])


def require_two_passes(data, moments, what="X"):
    """A stream can be read once: refuse ``moments="two-pass"`` on one, naming the fix."""
    if moments == "two-pass" and is_stream(data):
        raise ValueError(f"{what} is a stream (an iterator), which can be read only once, but "
                         "moments='two-pass' reads the data twice; use moments='one-pass'")


# ----------------------------------------------------------------------------- accumulators

class Sums:
    """Named partial sums and a row count, added entry by entry (the reduce of a map-reduce)."""

    def __init__(self, n=0, **arrays):
        self.n = int(n)
        self.arrays = arrays

    def __getitem__(self, key):
        return self.arrays[key]

    def __add__(self, other):
        if not isinstance(other, Sums) or set(other.arrays) != set(self.arrays):
            raise TypeError("only Sums with the same entries can be added")
        return Sums(self.n + other.n, **{k: self.arrays[k] + other.arrays[k] for k in self.arrays})


def row_signs(offset: int, n_rows: int) -> np.ndarray:
    r"""±1 for the rows ``offset … offset + n_rows − 1``, a fixed function of the global row index.

    The one-pass noise checks weight each row by a random sign (as the two-pass ones do with
    balanced signs); here the sign of row i is the top bit of the SplitMix64 hash of i, so
    it does not depend on how the rows are chunked. Cost O(n_rows).
    """
    z = np.arange(offset, offset + n_rows, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return 1.0 - 2.0 * (z >> np.uint64(63)).astype(float)


_CHUNK_ROWS = 16384


def _sym_triple_upper(Y, weights=None):
    r""":math:`\sum_i w_i\,y_i\otimes y_i\otimes y_i` on the entries (p, j, l) with p ≤ j ≤ l (zeros elsewhere).

    The tensor is symmetric, so these K(K+1)(K+2)/6 entries hold all of it: for each j one
    product :math:`(Y_{\cdot,\le j}\circ w\circ y_{\cdot j})^\top Y_{\cdot,\ge j}`, on blocks of 16384
    rows: a sixth of the multiplications of the full product, no gathered copies.
    :func:`_unpack_triple` fills in the other entries. Cost O(n K³/6), memory O(K³ + 16384 K)."""
    K = Y.shape[1]
    out = np.zeros((K, K, K))
    buf = np.empty((K, min(_CHUNK_ROWS, Y.shape[0])))      # reused: no fresh allocation per product
    for s in range(0, Y.shape[0], _CHUNK_ROWS):
        y = Y[s:s + _CHUNK_ROWS]
        m = y.shape[0]
        yt = y.T if y.strides[0] == y.itemsize else np.ascontiguousarray(y.T)   # rows of yt contiguous
        left = yt if weights is None else yt * weights[s:s + _CHUNK_ROWS][None, :]
        for j in range(K):
            out[:j + 1, j, j:] += np.multiply(left[:j + 1], yt[j], out=buf[:j + 1, :m]) @ y[:, j:]
    return out





@functools.lru_cache(maxsize=8)
def _sorted_index(K):
    """For every (a, b, c) in [K]³ the sorted triple, as three flat index arrays."""
    idx = np.sort(np.indices((K, K, K)).reshape(3, -1), axis=0)
    return idx[0], idx[1], idx[2]


def _unpack_triple(U, K=None):
    """The full symmetric (K, K, K) tensor from its entries with sorted indices p ≤ j ≤ l."""
    K = U.shape[0]
    p, j, l = _sorted_index(K)
    return U[p, j, l].reshape(K, K, K)


#: rows of X read at once by :func:`_project_block_sums` (a block stays in cache for its three uses)
_PROJECT_ROWS = 2048


def _project_block_sums(X, omega):
    """``Yᵀ = (X Ω)ᵀ`` (K, n), ``[Y, 1]ᵀX`` (Σ y xᵀ and Σ xᵀ, (K + 1, d)) and Σ‖x‖² in one read of X.

    The rows are taken 2048 at a time, so each block is read from memory once and reused from
    cache by the three products: the sketch's pass is bound by memory traffic, not arithmetic.
    Y is written transposed, the layout the third-moment product reads. Cost O(n d K);
    memory O(n K + 2048 K)."""
    n, K = X.shape[0], omega.shape[1]
    Yt = np.empty((K, n))
    Y1t = np.ones((K + 1, min(n, _PROJECT_ROWS)))
    Ot = np.ascontiguousarray(omega.T)
    YtX = np.zeros((K + 1, X.shape[1]))
    sq = 0.0
    for s in range(0, n, _PROJECT_ROWS):
        xb = X[s:s + _PROJECT_ROWS]
        m = xb.shape[0]
        np.matmul(Ot, xb.T, out=Y1t[:K, :m])
        Yt[:, s:s + m] = Y1t[:K, :m]
        YtX += Y1t[:, :m] @ xb
        sq += float(np.vdot(xb, xb))
    return Yt, YtX, sq


def _dense_chunk(X, name, finite=True):
    if sp.issparse(X):
        X = X.toarray()
    return check_array(X, name, ndim=2, min_rows=1, finite=finite)


def _finite(value, what, name="X"):
    """Refuse sums that overflowed (data of extreme scale in a one-pass sketch)."""
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{name} is of too large a scale for the one-pass {what} (the sums overflow float64); "
                         f"divide {name} by a power of two first")
    return value


def _check_addable(a, b, sketches_a, sketches_b):
    """Refuse to add accumulator ``b`` to ``a`` unless it is of the same kind and was built with the
    same sketch matrices (otherwise the sums are in different coordinates and mean nothing)."""
    kind = type(a).__name__
    if type(b) is not type(a):
        raise TypeError(f"only a {kind} can be added to a {kind}, got {type(b).__name__}")
    if len(sketches_a) != len(sketches_b) or any(
            x.shape != y.shape or not np.array_equal(x, y) for x, y in zip(sketches_a, sketches_b)):
        raise ValueError(
            f"these {kind} accumulators were built with different sketch matrices (omega): their sums "
            "are in different coordinates and cannot be added; build every part with the same omega")


class SketchedMoments:
    r"""One-pass sketched moments of one dense view: sums of x, :math:`xy^\top` and :math:`y^{\otimes3}`, :math:`y=\Omega^\top x`.

    ``update(X)`` adds a chunk (n_b, d); ``a + b`` merges. Results (divided by n):
    :meth:`mean` (d,), :meth:`cross` :math:`E[xy^\top]` (d, K), :meth:`second`
    :math:`E[yy^\top]=\Omega^\top E[xy^\top]` (K, K), :meth:`third` :math:`E[y^{\otimes3}]`
    (K, K, K). Memory O(d K + K³); a chunk costs O(n_b d K + n_b K³/6) (the third moment is
    summed on its entries with sorted indices only).
    Used by :class:`mvlib.SpectralGMM` with ``moments="one-pass"``. See :doc:`/chapters/11_moments_at_scale`.
    """

    def __init__(self, omega):
        self.omega = np.asarray(omega, dtype=float)
        d, K = self.omega.shape
        self.n = 0
        self.sum_x = np.zeros(d)
        self.sum_sq = 0.0
        self.sum_xy = np.zeros((d, K))
        self.sum_yyy = np.zeros((K, K, K))     # entries with sorted indices p <= j <= l only

    def update(self, X):
        # NaN/inf in X survive the projection X Ω (Ω is finite): the scan runs on the (n_b, K)
        # projection instead of the (n_b, d) chunk, the same error at K/d of the cost
        X = _dense_chunk(X, "X", finite=False)
        if X.shape[1] != self.omega.shape[0]:
            raise ValueError(f"a chunk of X has {X.shape[1]} columns but the sketch expects {self.omega.shape[0]}")
        with np.errstate(invalid="ignore", over="ignore"):
            Yt, YtX, sq = _project_block_sums(X, self.omega)
        if not np.all(np.isfinite(Yt)):
            raise ValueError("X contains NaN or infinity (or values so large that their projection overflows)")
        self.n += X.shape[0]
        self.sum_x += YtX[-1]
        self.sum_sq += sq
        self.sum_xy += YtX[:-1].T
        self.sum_yyy += _sym_triple_upper(Yt.T)
        return self

    def __add__(self, other):
        _check_addable(self, other, [self.omega], [getattr(other, "omega", None)])
        out = SketchedMoments(self.omega)
        out.n = self.n + other.n
        out.sum_x = self.sum_x + other.sum_x
        out.sum_sq = self.sum_sq + other.sum_sq
        out.sum_xy = self.sum_xy + other.sum_xy
        out.sum_yyy = self.sum_yyy + other.sum_yyy
        return out

    def require_samples(self):
        """Raise ``ValueError`` unless the accumulator has seen at least one sample."""
        if self.n == 0:
            raise ValueError("the sketched moments have seen no samples")

    def mean(self):
        self.require_samples()
        return _finite(self.sum_x / self.n, "mean")

    def cross(self):
        self.require_samples()
        return _finite(self.sum_xy / self.n, "cross moment")

    def second(self):
        S = self.omega.T @ self.cross()
        return 0.5 * (S + S.T)

    def third(self):
        self.require_samples()
        return _finite(_unpack_triple(self.sum_yyy, self.omega.shape[1]) / self.n, "third moment")

    @staticmethod
    def partial(X, offset, omega):
        """The accumulator of one chunk (for :func:`reduce_rows`)."""
        return SketchedMoments(omega).update(X)


class SketchedViewMoments:
    r"""One-pass sketched moments of three views, :math:`y_v=\Omega_v^\top x_v`.

    Keeps n, the sums of :math:`x_v`, the cross moments :math:`x_1y_2^\top`, :math:`x_2y_1^\top`,
    :math:`x_3y_1^\top` (which carry the bases back to the views' spaces), the sketched pairs
    :math:`y_2y_3^\top`, the sign-weighted sketched pairs :math:`\varepsilon y_1y_2^\top`,
    :math:`\varepsilon y_1y_3^\top` (the noise check) and :math:`y_1\otimes y_2\otimes y_3`.
    Memory O(Σ_v d_v K + K³). Used by :class:`mvlib.MultiViewMixture` with ``moments="one-pass"``. See :doc:`/chapters/11_moments_at_scale`.
    """

    def __init__(self, omegas):
        self.omegas = [np.asarray(O, dtype=float) for O in omegas]
        (d1, K1), (d2, K2), (d3, K3) = (O.shape for O in self.omegas)
        self.n = 0
        self.sums = [np.zeros(d1), np.zeros(d2), np.zeros(d3)]
        self.x1y2 = np.zeros((d1, K2))
        self.x2y1 = np.zeros((d2, K1))
        self.x3y1 = np.zeros((d3, K1))
        self.y2y3 = np.zeros((K2, K3))
        self.noise12 = np.zeros((K1, K2))
        self.noise13 = np.zeros((K1, K3))
        self.y123 = np.zeros((K1, K2, K3))

    _FIELDS = ("x1y2", "x2y1", "x3y1", "y2y3", "noise12", "noise13", "y123")

    def update(self, X1, X2, X3, offset=0):
        Xs = [_dense_chunk(X, f"X{v}") for v, X in enumerate((X1, X2, X3), start=1)]
        for v, (X, O) in enumerate(zip(Xs, self.omegas), start=1):
            if X.shape[1] != O.shape[0]:
                raise ValueError(f"a chunk of X{v} has {X.shape[1]} columns but the sketch expects {O.shape[0]}")
        if len({X.shape[0] for X in Xs}) != 1:
            raise ValueError("the chunks of the three views X1, X2, X3 have different numbers of rows")
        Y1, Y2, Y3 = (X @ O for X, O in zip(Xs, self.omegas))
        eps = row_signs(offset, Xs[0].shape[0])
        self.n += Xs[0].shape[0]
        for v, X in enumerate(Xs):
            self.sums[v] += X.sum(axis=0)
        self.x1y2 += Xs[0].T @ Y2
        self.x2y1 += Xs[1].T @ Y1
        self.x3y1 += Xs[2].T @ Y1
        self.y2y3 += Y2.T @ Y3
        self.noise12 += (Y1 * eps[:, None]).T @ Y2
        self.noise13 += (Y1 * eps[:, None]).T @ Y3
        self.y123 += triple_product(Y1, Y2, Y3)
        return self

    def __add__(self, other):
        _check_addable(self, other, self.omegas, getattr(other, "omegas", []))
        out = SketchedViewMoments(self.omegas)
        out.n = self.n + other.n
        out.sums = [a + b for a, b in zip(self.sums, other.sums)]
        for f in self._FIELDS:
            setattr(out, f, getattr(self, f) + getattr(other, f))
        return out

    def sketched_pairs(self):
        """Sketched :math:`\\Omega_a^\\top P_{ab}\\Omega_b` for (1,2), (1,3), (2,3), each (K, K)."""
        if self.n == 0:
            raise ValueError("the sketched moments have seen no samples")
        O1, O2, O3 = self.omegas
        n = self.n
        _finite(self.y123, "third moment", "X1, X2 or X3")
        return tuple(_finite(P, "pairs", "X1, X2 or X3") for P in (O1.T @ self.x1y2 / n, (O3.T @ self.x3y1).T / n, self.y2y3 / n))

    @staticmethod
    def partial(X1, X2, X3, offset, O1, O2, O3):
        return SketchedViewMoments((O1, O2, O3)).update(X1, X2, X3, offset)


class SketchedCountMoments:
    r"""One-pass sketched unbiased moments of documents × words counts, :math:`y=\Omega^\top c`.

    For documents of length :math:`\ell\ge3` with :math:`b=1/(\ell(\ell-1))`,
    :math:`a=1/(\ell(\ell-1)(\ell-2))` it keeps the sums of :math:`c/\ell`, :math:`b\,cy^\top`,
    :math:`b\,c`, :math:`a\,y^{\otimes3}`, :math:`a\,cy^\top`, :math:`a\,c` and the sign-weighted
    :math:`\varepsilon b\,yy^\top`, :math:`\varepsilon b\,c`: the diagonal corrections of
    :func:`mvlib.count_pairs` and :func:`mvlib.count_whitened_triples` accumulated in the same
    pass. Then :meth:`pairs_cross` = :math:`\widehat{\mathrm{Pairs}}\,\Omega` (d, K),
    :meth:`pairs_sketch` = :math:`\Omega^\top\widehat{\mathrm{Pairs}}\,\Omega`,
    :meth:`triples_sketch` = :math:`\widehat{\mathrm{Triples}}(\Omega,\Omega,\Omega)` exactly as
    :func:`mvlib.count_whitened_triples` with :math:`W=\Omega`, :meth:`mean`.
    Memory O(d K + K³); a chunk costs O(nnz K + n_b K³); the final triples O(d K³).
    ``skip_short=True`` drops documents with fewer than 3 words and counts them in ``n_skipped``
    (:class:`mvlib.SpectralLDA`); otherwise they raise ``ValueError``. See :doc:`/chapters/11_moments_at_scale`.
    """

    _FIELDS = ("sum_mean", "pair_cross", "pair_diag", "tri_main", "tri_z", "tri_s", "noise_yy", "noise_diag")

    def __init__(self, omega, *, skip_short=False):
        self.omega = np.asarray(omega, dtype=float)
        self.skip_short = bool(skip_short)
        d, K = self.omega.shape
        self.n = 0
        self.n_skipped = 0
        self.sum_mean = np.zeros(d)
        self.pair_cross = np.zeros((d, K))
        self.pair_diag = np.zeros(d)
        self.tri_main = np.zeros((K, K, K))      # sorted-index entries only (see _sym_triple_upper)
        self.tri_z = np.zeros((d, K))
        self.tri_s = np.zeros(d)
        self.noise_yy = np.zeros((K, K))
        self.noise_diag = np.zeros(d)

    def update(self, X, offset=0):
        X, lengths = check_counts(X, "X", min_length=0, min_rows=1)
        if X.shape[1] != self.omega.shape[0]:
            raise ValueError(f"a chunk of X has {X.shape[1]} columns but the sketch expects {self.omega.shape[0]} words")
        eps = row_signs(offset, X.shape[0])
        keep = lengths >= 3
        if not keep.all():
            if not self.skip_short:
                i = int(np.flatnonzero(~keep)[0])
                raise ValueError(f"document {offset + i} of X has {int(lengths[i])} words; third-order moments "
                                 "need at least 3 words per document")
            self.n_skipped += int(np.sum(~keep))
            X, lengths, eps = X[keep], lengths[keep], eps[keep]
        if X.shape[0] == 0:
            return self
        b = inv_falling(lengths, 2)
        a = inv_falling(lengths, 3)
        Y = np.asarray(X @ self.omega)
        Xt = X.T.tocsr()
        self.n += X.shape[0]
        self.sum_mean += np.asarray(Xt @ (1.0 / lengths)).ravel()
        self.pair_cross += np.asarray(Xt @ (Y * b[:, None]))
        self.pair_diag += np.asarray(Xt @ b).ravel()
        self.tri_main += _sym_triple_upper(Y, a)
        self.tri_z += np.asarray(Xt @ (Y * a[:, None]))
        self.tri_s += np.asarray(Xt @ a).ravel()
        eb = eps * b
        self.noise_yy += (Y * eb[:, None]).T @ Y
        self.noise_diag += np.asarray(Xt @ eb).ravel()
        return self

    def __add__(self, other):
        _check_addable(self, other, [self.omega], [getattr(other, "omega", None)])
        out = SketchedCountMoments(self.omega, skip_short=self.skip_short)
        out.n = self.n + other.n
        out.n_skipped = self.n_skipped + other.n_skipped
        for f in self._FIELDS:
            setattr(out, f, getattr(self, f) + getattr(other, f))
        return out

    def require_documents(self, min_docs=2):
        """Raise ``ValueError`` unless at least ``min_docs`` documents (of 3 words or more) were seen."""
        if self.n < min_docs:
            raise ValueError(f"X has {self.n} documents with at least 3 words; at least {min_docs} are required")

    def mean(self):
        r""":math:`\hat m_1=\frac1n\sum_d c_d/\ell_d` (d,)."""
        self.require_documents()
        return self.sum_mean / self.n

    def pairs_cross(self):
        r""":math:`\widehat{\mathrm{Pairs}}\,\Omega` (d, K)."""
        self.require_documents()
        return _finite((self.pair_cross - self.pair_diag[:, None] * self.omega) / self.n, "pairs")

    def pairs_sketch(self):
        r""":math:`\Omega^\top\widehat{\mathrm{Pairs}}\,\Omega` (K, K), symmetric."""
        S = self.omega.T @ self.pairs_cross()
        return 0.5 * (S + S.T)

    def noise_sketch(self):
        """The sign-weighted (symmetrised) sampling error of :meth:`pairs_sketch`, (K, K)."""
        self.require_documents()
        O = self.omega
        E = (self.noise_yy - (O * self.noise_diag[:, None]).T @ O) / self.n
        return 0.5 * (E + E.T)

    def triples_sketch(self):
        r""":math:`\widehat{\mathrm{Triples}}(\Omega,\Omega,\Omega)` (K, K, K) by inclusion–exclusion."""
        self.require_documents()
        O = self.omega
        E1 = triple_product(O, O, self.tri_z)
        E0 = triple_product(O * self.tri_s[:, None], O, O)
        T = (_unpack_triple(self.tri_main, O.shape[1]) - E1 - np.transpose(E1, (0, 2, 1))
             - np.transpose(E1, (2, 0, 1)) + 2 * E0)
        return _finite(T / self.n, "triples")

    @staticmethod
    def partial(X, offset, omega, skip_short=False):
        return SketchedCountMoments(omega, skip_short=skip_short).update(X, offset)


def n_features_of(data, what="X"):
    """Columns of in-memory or dask data, or of a stream's first chunk (which is then put back).

    Returns ``(n_features, data)``: for a stream, a new iterator that yields the peeked chunk first.
    """
    if is_stream(data):
        try:
            first = next(data)
        except StopIteration:
            raise ValueError(f"the stream {what} yielded no chunks") from None
        shape_of = first[0] if isinstance(first, (list, tuple)) else first
        if not hasattr(shape_of, "shape") or len(shape_of.shape) != 2:
            raise TypeError(f"the chunks of the stream {what} must be 2-d arrays, got {type(shape_of).__name__}")
        dims = [c.shape[1] for c in first] if isinstance(first, (list, tuple)) else shape_of.shape[1]
        return dims, itertools.chain([first], data)
    if isinstance(data, (list, tuple)):
        return [int(X.shape[1]) for X in data], data
    return int(data.shape[1]), data


@functools.lru_cache(maxsize=4)
def _cached_rademacher(n):
    from numpy.random import default_rng

    eps = np.ones(n)
    eps[default_rng(0).permutation(n)[: n // 2]] = -1.0
    return eps


def rademacher_slice(n_total: int, offset: int, n_rows: int) -> np.ndarray:
    """Rows ``offset … offset + n_rows − 1`` of the balanced signs the two-pass noise checks use
    (computed once per process: a Dask worker draws them itself, nothing is sent)."""
    return _cached_rademacher(int(n_total))[offset:offset + n_rows]



# ----------------------------------------------------------------------------- count data anywhere

def _check_count_chunk(X, offset, skip_short):
    X, lengths = check_counts(X, "X", min_length=0, min_rows=1)
    keep = lengths >= 3
    if not skip_short and not keep.all():
        i = int(np.flatnonzero(~keep)[0])
        raise ValueError(f"document {offset + i} of X has {int(lengths[i])} words; third-order moments "
                         "need at least 3 words per document")
    return X, lengths, keep


def _count_docs_partial(X, offset, skip_short):
    X, lengths, keep = _check_count_chunk(X, offset, skip_short)
    return Sums(int(keep.sum()), skipped=int((~keep).sum()), words=np.zeros(X.shape[1]))


def count_documents(X, *, skip_short=False):
    """Documents with ≥ 3 words and skipped ones, ``(n_kept, n_skipped)``, in one O(nnz) pass."""
    s = reduce_rows(X, _count_docs_partial, skip_short)
    return s.n, int(s["skipped"])


def _pairs_matmat_partial(X, offset, V, n_total, signed, skip_short):
    X, lengths, keep = _check_count_chunk(X, offset, skip_short)
    b = inv_falling(np.where(keep, lengths, 3.0), 2) * keep
    if signed:
        b = b * rademacher_slice(n_total, offset, X.shape[0])
    XV = np.asarray(X @ V)
    Xt = X.T.tocsr()
    return np.asarray(Xt @ (b[:, None] * XV)) - np.asarray(Xt @ b).ravel()[:, None] * V


class SourceCountPairs(SymmetricOperator):
    r"""The unbiased pairs moment of counts held anywhere (a ``dask.array`` of CSR blocks), (d, d).

    Every product :math:`\widehat{\mathrm{Pairs}}\,V` is one :func:`reduce_rows` pass of
    :math:`X^\top(b\circ XV)-\operatorname{diag}(X^\top b)V` over the blocks, divided by the
    number of documents (:class:`mvlib.CountPairsOperator` on data that are not in memory).
    ``signed=True`` weights document i by the balanced sign the two-pass noise check uses.
    Documents under 3 words raise, or are left out with ``skip_short=True``.
    """

    def __init__(self, X, n_docs, n_features, *, signed=False, skip_short=False, n_total=None):
        self.X, self.n_docs = X, int(n_docs)
        self.signed, self.skip_short = bool(signed), bool(skip_short)
        self.n_total = int(n_total if n_total is not None else n_docs)
        super().__init__(dtype=np.float64, shape=(n_features, n_features))

    def _matmat(self, V):
        V = np.asarray(V, dtype=float)
        one = V.ndim == 1
        V2 = V[:, None] if one else V
        out = reduce_rows(self.X, _pairs_matmat_partial, V2, self.n_total, self.signed, self.skip_short) / self.n_docs
        return out[:, 0] if one else out
