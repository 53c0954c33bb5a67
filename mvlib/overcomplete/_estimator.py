r"""Overcomplete tensor decomposition (Anandkumar, Ge & Janzamin 2015) as an estimator.

Pipeline of :meth:`OvercompleteTensorDecomposition.fit` (the building blocks live
in :mod:`mvlib.overcomplete`):

1. starts: Procedure 3 (``init="svd"``), uniform on the sphere (``"random"``) or the
   normalised labelled means (``"labels"``, Theorem 1's semi-supervised setting);
2. Algorithm 1: N alternating asymmetric power updates (eq. 1) from all starts at
   once — the symmetric update :math:`u\leftarrow T(I,u,u)` when T is symmetric;
3. Procedure 2 (``"svd"``/``"random"`` only): k cluster centres, largest
   :math:`|T(a,b,c)|` first, no deflation. With labelled starts start j *is*
   component j, so no clustering is done and the columns keep the label order;
4. optional CP-ALS refinement (``refine=True``) started at the power-method result.

Two safeguards beyond the paper, both in the spirit of Procedure 2 (no
deflation anywhere):

* a centre whose N refinement updates land within ε/2 of a centre already found is
  not a new centre (its cluster is dropped all the same);
* when the L restarts run out before k centres are found, a fresh batch of L
  restarts is drawn (results near the centres found are dropped first), up to
  ``max_rounds`` batches and only while a batch still adds a centre; columns still
  missing after that are random unit vectors (a ``RuntimeWarning`` without
  refinement; with ``refine=True`` CP-ALS starts from them).

Defaults (measured on random unit components, k/d ≤ 1.5): N = 2 updates from
labelled starts and N = 10 from SVD/random starts. Theorem 1 asks for only
N = Θ(log 1/ε_T) updates, and longer runs *hurt*: the fixed points of the updates
carry an O(√k/d) bias, and for small d (≲ 100) the iterates drift on from the
components to spurious fixed points that mix several correlated components
(from labelled starts at d = 60, k = 90 the median error is 0.27 after 2
updates, 0.48 after 10, 0.72 after 30), which also spoils the ALS refinement
started there (at d = 200, k = 300 the median error is 0.158 after 2 updates and
0.183 at convergence). SVD/random starts need ~10 updates to reach a basin.
On the benchmark case d = 50, k = 100 (random unit components, equal weights, exact
tensor; ``bench/bench_overcomplete.py``) the defaults recover 97–100 % of the
components to error < 0.1 in 1.4–2.4 s on two idle cores; the power stage alone finds only
27–41 distinct centres there (k/d = 2 is beyond its reliable range) and the CP-ALS
refinement completes the rest from random columns — tensorly's ``parafac`` at its
defaults is 3–8 times faster there on an idle machine (93–100 %), slower under load.
ε = 1.4: restarts within 0.7 (:math:`|\langle u,v\rangle|>0.755`) join a cluster;
distinct random components in d ≥ 50 are further apart.
"""
from __future__ import annotations

import numpy as np
from tensorly.cp_tensor import CPTensor

from ..core.base import MomentEstimator
from ..core.power import blas_limit, random_sphere
from ..core.validation import (
    Integer,
    NonNegativeFloat,
    Options,
    OrNone,
    RandomState,
    Rule,
    check_array,
    scale_exponent,
    scaled,
    warn_user,
)
from ._algorithm import (
    ThirdMomentOperator,
    _as_operator,
    _check_epsilon,
    _check_starts,
    _check_variance,
    _Clusterer,
    _DenseTensor,
    _iterate,
    _normalise_rows,
    _procedure3,
    _resolve_symmetric,
    _value,
    als_refine,
)

__all__ = ["OvercompleteTensorDecomposition"]

_INITS = ("svd", "labels", "random")


def _check_true_false(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _check_symmetric(value, name):
    if not (isinstance(value, str) and value == "auto" or isinstance(value, (bool, np.bool_))):
        raise TypeError(f"{name} must be True, False or 'auto', got {value!r}")
    return value


class OvercompleteTensorDecomposition(MomentEstimator):
    r"""Decompose :math:`T=\sum_{j=1}^k w_j a_j\otimes b_j\otimes c_j` with k possibly > d.

    Alternating asymmetric power updates (Anandkumar, Ge & Janzamin 2015, Algorithm 1, eq. 1) from SVD
    (Procedure 3), random or labelled starts, clustering of the restarts
    (Procedure 2) and an optional CP-ALS refinement. Works on an explicit tensor
    (:meth:`fit`) and on the Lemma 1 / eq. (2) third moment of data without any
    d×d×d array (:meth:`fit_moments`). See :doc:`/chapters/02_whitening_power` for the
    orthogonal power method it generalises (derived in :doc:`/chapters/09_overcomplete`).

    Parameters
    ----------
    n_components : int
        k ≥ 1; may exceed d, up to the generic rank of a d×d×d tensor.
    init : {"svd", "labels", "random"}, default "svd"
        Procedure 3; the normalised labelled means passed as ``init_vectors``
        to ``fit`` (Theorem 1); or starts uniform on the sphere (independent a, b, c
        for an asymmetric tensor).
    n_restarts : int or None, default None
        L starts per batch for ``"svd"``/``"random"`` (None: 10 k). Ignored for
        ``"labels"`` (one start per component).
    n_iterations : int or None, default None
        N, updates per start, and again for each centre in Procedure 2; a start
        stops earlier once it moves by less than ``tol``. None: 2 for ``"labels"``
        and 10 for ``"svd"``/``"random"`` (see the defaults note below).
    refine : bool, default True
        Run CP-ALS from the power-method result: tensorly's ``parafac`` on an
        explicit tensor, ALS sweeps written with operator products on data
        (:func:`mvlib.overcomplete.als_refine`).
    random_state : None, int or numpy.random.Generator
    epsilon : float, default 1.4
        Procedure 2's ε: restarts within ε/2 (up to sign) of a centre join its cluster.
    tol : float, default 1e-10
        Early stop of the power updates (per start, sign-free 2-norm move).
    n_als_iterations : int, default 100
        Most ALS sweeps when ``refine`` (stops earlier on a change below 1e-10).
    max_rounds : int, default 5
        Most batches of L restarts for ``"svd"``/``"random"`` (a new batch only when
        the previous ones gave fewer than k centres and the last one added at least one).
    symmetric : "auto", True or False
        Symmetric updates :math:`u\leftarrow T(I,u,u)` for a symmetric T (``"auto"``
        detects symmetry); ``False`` runs eq. (1) with three factors even then.

    Attributes
    ----------
    weights_ : (k,)  :math:`\hat w_j`, made positive by the sign of the factors
    factors_ : (d, k)  unit columns :math:`\hat a_j`. For a symmetric T the three
        factors of the asymmetric iteration are aligned in sign with a and averaged
        (then renormalised); for an asymmetric T this is the mode-1 factor A.
    view_factors_ : list of three (d, k)  :math:`(\hat a_j, \hat b_j, \hat c_j)`,
        unit columns (all equal to ``factors_`` for a symmetric T)
    cp_tensor_ : tensorly ``CPTensor`` (``weights_``, ``view_factors_``)
    power_weights_, power_factors_ : the power-method result before refinement
    n_restarts_ : int  restarts actually run (all batches)
    n_power_components_ : int  distinct centres Procedure 2 found (k for labelled
        starts). When it is below k the missing columns start as random unit vectors;
        with ``refine=True`` the ALS refinement starts from them silently, without
        refinement a ``RuntimeWarning`` says so.
    symmetric_ : bool  whether the symmetric updates were used
    n_features_in_ : int  d

    See Also
    --------
    tensorly.decomposition.parafac : CP-ALS, the baseline (and the refinement on an explicit tensor).
    mvlib.tensor_power_method : the orthogonal case, k ≤ d after whitening.
    mvlib.ThirdMomentOperator : the third moment of data without a d×d×d array (used by ``fit_moments``).

    Notes
    -----
    Cost (explicit T, d×d×d): O(L N d³) for the batched power updates (a third with
    symmetric updates), O(L d³) for Procedure 3's slices and SVDs, O(k N d³ + k L d)
    for Procedure 2, O(k d³) per ALS sweep. On data (n samples) replace d³ by n d.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import OvercompleteTensorDecomposition, matched_error
    >>> from mvlib.overcomplete import random_overcomplete_tensor
    >>> T, w, A = random_overcomplete_tensor(12, 15, random_state=0)   # k = 15 > d = 12
    >>> dec = OvercompleteTensorDecomposition(15, random_state=0).fit(T)
    >>> dec.factors_.shape
    (12, 15)
    >>> matched_error(A, dec.factors_, sign_invariant=True) < 0.01
    True
    >>> np.round(dec.weights_, 1)
    array([1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.])
    """

    _parameter_constraints = {
        "n_components": Integer(),
        "init": Options(_INITS, style="list"),
        "n_restarts": OrNone(Integer()),
        "n_iterations": OrNone(Integer(minimum=0)),
        "refine": Rule(_check_true_false),
        "random_state": RandomState(),
        "epsilon": Rule(_check_epsilon, takes_name=False),
        "tol": NonNegativeFloat(),
        "n_als_iterations": Integer(minimum=0),
        "max_rounds": Integer(),
        "symmetric": Rule(_check_symmetric),
    }

    def __init__(self, n_components, init="svd", n_restarts=None, n_iterations=None, refine=True,
                 random_state=None, *, epsilon=1.4, tol=1e-10, n_als_iterations=100, max_rounds=5,
                 symmetric="auto"):
        self.n_components = n_components
        self.init = init
        self.n_restarts = n_restarts
        self.n_iterations = n_iterations
        self.refine = refine
        self.random_state = random_state
        self.epsilon = epsilon
        self.tol = tol
        self.n_als_iterations = n_als_iterations
        self.max_rounds = max_rounds
        self.symmetric = symmetric

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False   # fit takes a (d, d, d) tensor
        tags.input_tags.three_d_array = True
        return tags

    # ------------------------------------------------------------------ public
    def fit(self, T, y=None, *, init_vectors=None):
        """Decompose the explicit tensor T (d, d, d); returns ``self``.

        ``init_vectors`` (d, k) — or a list of three (d, k) arrays (a, b, c) — are the
        starts for ``init="labels"`` (e.g. :func:`mvlib.labelled_initialization`).
        """
        params = self._params()
        op = _as_operator(T)
        e = op.exponent if isinstance(op, _DenseTensor) else 0   # T of extreme scale: op holds T / 2**e
        return self._fit(op, params, init_vectors)._unscale_fitted(e, "T")

    def fit_moments(self, X, noise_variance=0.0, *, init_vectors=None, materialize="auto"):
        r"""Decompose the empirical :math:`\hat M_3` of Lemma 1 / eq. (2) of data X (n, d).

        ``noise_variance`` is the known ζ² of the spherical components (0: the plain
        third moment :math:`\frac1n\sum x^{\otimes3}`); ``init_vectors`` as in :meth:`fit`.

        ``materialize`` chooses how the tensor is applied. ``False``: through
        :class:`mvlib.ThirdMomentOperator`, O(n d) per contraction and no d³ array
        (Procedure 3 by block subspace iteration, ALS sweeps with operator products).
        ``True``: the d×d×d array is formed once, O(n d³), after which a contraction
        costs O(d³). ``"auto"`` forms it only when that is cheaper, n > d², and small,
        d³ ≤ 2²⁴ entries; ``materialized_`` records the choice. Returns ``self``.
        """
        params = self._params()
        X = check_array(X, "X", ndim=2, min_rows=2)  # a moment from one sample estimates nothing
        e = scale_exponent(X)
        if e != 0:   # extreme scale: the moment of X / 2**e (exact); weights scale back by 2**(3e)
            X = scaled(X, e)
            noise_variance = float(np.ldexp(_check_variance(noise_variance), -2 * e))
        op = ThirdMomentOperator(X, noise_variance)
        n, d = op.n_samples, op.dim
        if materialize == "auto":
            materialize = n > d * d and d ** 3 <= 2 ** 24
        elif not isinstance(materialize, (bool, np.bool_)):
            raise TypeError(f"materialize must be True, False or 'auto', got {materialize!r}")
        self.materialized_ = bool(materialize)
        if materialize:
            op = _DenseTensor(op.to_dense(), symmetric=True)
        return self._fit(op, params, init_vectors)._unscale_fitted(3 * e, "X")

    _scale_powers = {"weights_": (1, "the component weights"), "power_weights_": (1, "the component weights")}

    def _unscale_fitted(self, e, name="X"):
        """The weights fitted on a tensor divided by 2**e scaled back (the table); the CP tensor follows."""
        if e != 0:
            super()._unscale_fitted(e, name)
            self.cp_tensor_ = CPTensor((self.weights_.copy(), list(self.cp_tensor_.factors)))
        return self

    # ------------------------------------------------------------------ checks
    def _params(self):
        """The validated hyper-parameters, under the names ``_fit`` uses."""
        p = self._validate_params()
        N = (2 if p.init == "labels" else 10) if p.n_iterations is None else p.n_iterations
        return dict(k=p.n_components, L=p.n_restarts, N=N, rng=p.random_state, eps=p.epsilon, tol=p.tol,
                    n_als=p.n_als_iterations, rounds=p.max_rounds)

    def _check_rank(self, k, d, symmetric):
        # generic rank of d×d×d tensors (Alexander–Hirschowitz for symmetric ones):
        # above it the decomposition is never unique
        bound = -(-(d + 1) * (d + 2) // 6) if symmetric else -(-d ** 3 // (3 * d - 2))
        if k > max(bound, 1):
            raise ValueError(
                f"n_components={k} exceeds the generic rank {max(bound, 1)} of a "
                f"{'symmetric ' if symmetric else ''}{d}×{d}×{d} tensor, above which the "
                "decomposition is not identifiable")

    def _starts_from_labels(self, init_vectors, d, k):
        if init_vectors is None:
            raise ValueError("init='labels' needs init_vectors, the (d, n_components) normalised "
                             "labelled means (see mvlib.labelled_initialization)")
        if isinstance(init_vectors, (list, tuple)):
            if len(init_vectors) != 3:
                raise ValueError(f"init_vectors must be one array (d, k) or a list of three, "
                                 f"got a list of {len(init_vectors)}")
            return [_check_starts(V, f"init_vectors[{m}]", d, k) for m, V in enumerate(init_vectors)], True
        return [_check_starts(init_vectors, "init_vectors", d, k)] * 3, False

    # ------------------------------------------------------------------ core
    def _fit(self, op, p, init_vectors):
        # small d: one BLAS thread (the many small products only contend for a second one)
        with blas_limit(op.dim):
            return self._fit_impl(op, p, init_vectors)

    def _fit_impl(self, op, p, init_vectors):
        d, k, rng = op.dim, p["k"], p["rng"]
        if init_vectors is not None and self.init != "labels":
            raise ValueError(f"init_vectors are used only with init='labels', not init={self.init!r}")
        zero = not np.any(op.T) if isinstance(op, _DenseTensor) else not np.any(op.X)
        if zero:
            raise ValueError("T is identically zero: there is no component to recover")
        sym = _resolve_symmetric(op, self.symmetric, False)
        self._check_rank(k, d, op.symmetric)
        N, tol = p["N"], p["tol"]
        if self.init == "labels":
            (A0, B0, C0), three = self._starts_from_labels(init_vectors, d, k)
            sym_run = sym and not three
            A, B, C = _iterate(op, A0, B0, C0, N, tol, sym_run)
            w = _value(op, A, B, C)
            n_run = k
            self.n_power_components_ = k
        else:
            L = 10 * k if p["L"] is None else p["L"]
            w, A, B, C, n_run = self._restarts(op, k, L, N, tol, p["eps"], p["rounds"], sym, rng)
            sym_run = sym
        self.power_weights_, self.power_factors_ = self._finish(op, w, A.T, B.T, C.T)[:2]
        if self.refine and p["n_als"] > 0:
            w, (At, Bt, Ct) = als_refine(op, w, [A.T, B.T, C.T], n_iterations=p["n_als"], tol=1e-10)
            A, B, C = At.T, Bt.T, Ct.T
        self.weights_, self.factors_, self.view_factors_ = self._finish(op, w, A.T, B.T, C.T)
        if not np.all(np.isfinite(self.weights_)) or not np.all(np.isfinite(self.factors_)):
            raise FloatingPointError("the decomposition produced NaN or infinity")
        self.cp_tensor_ = CPTensor((self.weights_.copy(), [F.copy() for F in self.view_factors_]))
        self.n_restarts_ = int(n_run)
        self.symmetric_ = bool(sym_run)
        self.n_features_in_ = d
        return self

    def _restarts(self, op, k, L, N, tol, eps, rounds, sym, rng):
        """Algorithm 1 + Procedure 2 over batches of L restarts, until k centres are found."""
        clus = _Clusterer(op, k, eps, N, tol, sym)
        n_run = 0
        for _ in range(rounds):
            if self.init == "svd":
                A0, B0 = _procedure3(op, L, rng)
                if sym:
                    B0 = C0 = A0
                else:
                    C0 = _normalise_rows(op.contract(2, A0, B0), A0)
            else:
                A0 = random_sphere(rng, L, op.dim)
                B0, C0 = (A0, A0) if sym else (random_sphere(rng, L, op.dim), random_sphere(rng, L, op.dim))
            A, B, C = _iterate(op, A0, B0, C0, N, tol, sym)
            before = len(clus.centres)
            clus.feed(_value(op, A, B, C), A, B, C)
            n_run += L
            if len(clus.centres) >= k or len(clus.centres) == before:
                break  # done, or a whole batch found nothing new: more batches will not help
        _, A, B, C = clus.result()
        w = _value(op, A, B, C)  # ŵ = T(a, b, c) on T itself (Algorithm 1)
        m = len(w)
        self.n_power_components_ = int(m)
        if m < k:
            if not (self.refine and self.n_als_iterations):
                warn_user(f"only {m} of n_components={k} components were found in {n_run} "
                              "restarts; the other columns are random unit vectors (raise n_restarts "
                              "or max_rounds, or use refine=True)", RuntimeWarning)
            fill = random_sphere(rng, k - m, op.dim)
            A, B, C = (np.vstack([M, fill]) for M in (A, B, C))
            w = np.concatenate([w, _value(op, fill, fill, fill)])
        return w, A, B, C, n_run

    @staticmethod
    def _finish(op, w, A, B, C):
        """Sign conventions and the single factor matrix (columns are components)."""
        w = np.asarray(w, float).copy()
        A, B, C = (np.asarray(M, float).copy() for M in (A, B, C))
        if op.symmetric:
            sb = np.sign(np.sum(A * B, axis=0))
            sc = np.sign(np.sum(A * C, axis=0))
            sb[sb == 0] = 1
            sc[sc == 0] = 1
            F = A + B * sb + C * sc
            norms = np.linalg.norm(F, axis=0)
            F = np.where(norms > 0, F / np.where(norms > 0, norms, 1), A)
            w = w * sb * sc
            s = np.where(w < 0, -1.0, 1.0)
            F = F * s
            w = w * s
            return w, F, [F, F.copy(), F.copy()]
        s = np.where(w < 0, -1.0, 1.0)
        A = A * s
        w = w * s
        return w, A, [A, B, C]
