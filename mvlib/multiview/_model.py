r"""The three-view mixture model (Anandkumar, Hsu & Kakade 2012 §3.1).

A hidden component :math:`h\in[k]` with :math:`\Pr[h]=w_h`; given h the views
:math:`x_1,x_2,x_3` are independent with :math:`E[x_v\mid h]=\mu_{v,h}`, the h-th
column of :math:`M_v\in\mathbb R^{d_v\times k}`. Two conditional laws are
provided:

* ``"categorical"``: :math:`x_v=e_i` with probability :math:`(M_v)_{ih}` (columns of
  :math:`M_v` are probability vectors; three words of a single-topic document);
* ``"gaussian"``: :math:`x_v=\mu_{v,h}+\sigma z`, :math:`z\sim N(0,I)`, or, with per-component
  covariances :math:`\Sigma_{v,h}=L_{v,h}L_{v,h}^\top` (``covariances``),
  :math:`x_v=\mu_{v,h}+L_{v,h}z` (the covariance model of :doc:`/chapters/04_three_view_mixtures`);
* ``"poisson"``: independent coordinates :math:`x_{v,a}\sim\mathrm{Poisson}((M_v)_{ah})`;
* ``"bernoulli"``: independent coordinates :math:`x_{v,a}\sim\mathrm{Bernoulli}((M_v)_{ah})`.

``kind`` names one law for all three views or a tuple of three, one per view (the mixed
model of :doc:`/chapters/04_three_view_mixtures`: Gaussian, Poisson and Bernoulli views).

Either way the population moments are (Lemma 3.1; derived and checked in
:doc:`/chapters/01_multiview_moments`)

.. math:: P_{ab}=M_a\operatorname{diag}(w)M_b^\top,\qquad
          P_{123}=\sum_h w_h\,\mu_{1,h}\otimes\mu_{2,h}\otimes\mu_{3,h},\qquad
          P_{123}(\eta)=M_1\operatorname{diag}(M_3^\top\eta)\operatorname{diag}(w)M_2^\top .
"""
from __future__ import annotations

import numbers

import numpy as np
from tensorly.cp_tensor import CPTensor

from ..core.tensors import cp_tensor, cp_to_dense
from ..core.validation import check_array, check_matrix, check_positive_int, check_random_state

__all__ = ["MultiViewMixtureModel", "random_multiview_model"]

_KINDS = ("categorical", "gaussian", "poisson", "bernoulli")


class MultiViewMixtureModel:
    r"""Three-view mixture with exact population moments.

    Parameters
    ----------
    weights : array (k,)
        Mixing weights, positive, summing to 1.
    means : list of three arrays (d_v, k)
        Conditional means :math:`M_v`; for ``"categorical"`` each column is a
        probability vector, for ``"poisson"`` the entries are non-negative rates, for
        ``"bernoulli"`` probabilities in [0, 1].
    kind : {"categorical", "gaussian", "poisson", "bernoulli"} or a tuple of three of them
        The conditional law of every view, or of views 1, 2, 3 in turn. The attribute
        ``kind`` keeps the argument; ``kinds`` is always the tuple of three.
    noise : float, default 1.0
        Standard deviation σ of the Gaussian views (ignored for the other laws).
    covariances : None or list of three entries, each None or an array (k, d_v, d_v)
        Per-component covariances :math:`\Sigma_{v,h}` (symmetric positive definite) of a
        Gaussian view v; a view whose entry is None keeps :math:`\sigma^2 I`. Only Gaussian
        views may have one. The moments :math:`P_{ab}`, :math:`P_{123}` do not depend on them.

    Examples
    --------
    A Gaussian, a Poisson and a Bernoulli view of two components; ``sample`` returns the
    views (n, d_v) and the labels (n,):

    >>> import numpy as np
    >>> from mvlib.multiview import MultiViewMixtureModel
    >>> means = [np.array([[-2.0, 2.0]]), np.array([[1.0, 5.0]]), np.array([[0.2, 0.9]])]
    >>> model = MultiViewMixtureModel([0.5, 0.5], means, kind=("gaussian", "poisson", "bernoulli"))
    >>> (X1, X2, X3), h = model.sample(4, random_state=0)
    >>> X1.shape, X2.shape, X3.shape, h.shape
    ((4, 1), (4, 1), (4, 1), (4,))
    >>> model.pairs(1, 2)          # M_1 diag(w) M_2^T, whatever the laws
    array([[4.]])

    Gaussian views with a full covariance per component (here view 3, dimension 2):

    >>> S3 = np.array([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 0.0], [0.0, 0.1]]])
    >>> M = [np.array([[-2.0, 2.0]]), np.array([[1.0, 5.0]]), np.zeros((2, 2))]
    >>> cov_model = MultiViewMixtureModel([0.5, 0.5], M, kind="gaussian", covariances=[None, None, S3])
    >>> (X1, X2, X3), h = cov_model.sample(100_000, random_state=0)
    >>> np.round(np.cov(X3[h == 0].T), 1)
    array([[2. , 0.5],
           [0.5, 1. ]])
    """

    def __init__(self, weights, means, kind: str = "categorical", noise: float = 1.0, covariances=None):
        w = check_array(weights, "weights", ndim=1)
        if np.any(w <= 0) or not np.isclose(w.sum(), 1.0, atol=1e-10):
            raise ValueError("weights must be positive and sum to 1")
        if not isinstance(means, (list, tuple)) or len(means) != 3:
            raise TypeError("means must be a list of three arrays (d_v, k)")
        Ms = [check_matrix(M, f"means[{v}]", shape=(None, w.size)) for v, M in enumerate(means)]
        kinds = tuple(kind) if isinstance(kind, (list, tuple)) else (kind,) * 3
        if len(kinds) != 3 or any(kd not in _KINDS for kd in kinds):
            raise ValueError(f"kind must be one of {_KINDS} or a tuple of three of them, got {kind!r}")
        for v, (M, kd) in enumerate(zip(Ms, kinds)):
            if kd == "categorical" and (np.any(M < 0) or not np.allclose(M.sum(axis=0), 1.0, atol=1e-10)):
                raise ValueError(f"means[{v}] must have probability vectors as columns for kind='categorical'")
            if kd == "poisson" and np.any(M < 0):
                raise ValueError(f"means[{v}] must hold non-negative rates for kind='poisson'")
            if kd == "bernoulli" and (np.any(M < 0) or np.any(M > 1)):
                raise ValueError(f"means[{v}] must hold probabilities in [0, 1] for kind='bernoulli'")
        if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not noise > 0:
            raise ValueError(f"noise must be a positive number, got {noise!r}")
        self.weights, self.means, self.kind, self.noise = w, Ms, kind, float(noise)
        self.kinds = kinds
        self.covariances, self._chol = self._check_covariances(covariances)

    def _check_covariances(self, covariances):
        """The per-view covariances (None or (k, d_v, d_v)) and their Cholesky factors."""
        if covariances is None:
            return [None] * 3, [None] * 3
        if not isinstance(covariances, (list, tuple)) or len(covariances) != 3:
            raise TypeError("covariances must be None or a list of three entries (None or (k, d_v, d_v))")
        covs, chols = [], []
        for v, (S, M, kd) in enumerate(zip(covariances, self.means, self.kinds)):
            if S is None:
                covs.append(None)
                chols.append(None)
                continue
            if kd != "gaussian":
                raise ValueError(f"covariances[{v}] is given but view {v + 1} is {kd!r}, not Gaussian")
            S = check_array(S, f"covariances[{v}]", ndim=3)
            d, k = M.shape
            if S.shape != (k, d, d) or not np.allclose(S, np.swapaxes(S, 1, 2)):
                raise ValueError(f"covariances[{v}] must hold {k} symmetric ({d}, {d}) matrices, got shape {S.shape}")
            try:
                chols.append(np.linalg.cholesky(S))
            except np.linalg.LinAlgError as exc:
                raise ValueError(f"covariances[{v}] must be positive definite") from exc
            covs.append(S)
        return covs, chols

    @property
    def n_components(self) -> int:
        return self.weights.size

    @property
    def dims(self) -> tuple:
        return tuple(M.shape[0] for M in self.means)

    # ------------------------------------------------------------------ sampling
    def sample(self, n_samples: int, random_state=None):
        r"""Draw n_samples samples: returns ``([X1, X2, X3], h)`` with X_v (n_samples, d_v) and labels h (n_samples,).

        Categorical views are one-hot rows; Poisson views counts and Bernoulli views 0/1
        indicators, as floats. Draws from one generator: the labels, then views 1, 2, 3 in
        turn (a Gaussian view: one standard normal (n, d_v) matrix Z, then
        :math:`M_v[:, h]^\top+\sigma Z`, or :math:`\mu_{v,h}+L_{v,h}z` per row with
        ``covariances``; Poisson: one ``rng.poisson`` call; Bernoulli: one uniform (n, d_v)
        matrix). Cost O(n Σ d_v), or O(n Σ d_v²) for views with covariances.
        """
        n = check_positive_int(n_samples, "n_samples")
        rng = check_random_state(random_state)
        h = rng.choice(self.n_components, size=n, p=self.weights)
        views = []
        for M, kind, L in zip(self.means, self.kinds, self._chol):
            d = M.shape[0]
            if kind == "gaussian" and L is not None:
                X = M[:, h].T + np.einsum("nij,nj->ni", L[h], rng.standard_normal((n, d)))
            elif kind == "gaussian":
                X = M[:, h].T + self.noise * rng.standard_normal((n, d))
            elif kind == "poisson":
                X = rng.poisson(M[:, h].T).astype(float)
            elif kind == "bernoulli":
                X = (rng.random((n, d)) < M[:, h].T).astype(float)
            else:
                # inverse-CDF per sample, vectorised: column h of the cumulative table
                cum = np.cumsum(M, axis=0)
                u = rng.random(n)
                idx = np.empty(n, dtype=int)
                for j in range(self.n_components):  # loop over components, not samples
                    sel = h == j
                    idx[sel] = np.minimum(np.searchsorted(cum[:, j], u[sel], side="right"), d - 1)
                X = np.zeros((n, d))
                X[np.arange(n), idx] = 1.0
            views.append(X)
        return views, h

    # ------------------------------------------------------------------ moments
    def pairs(self, a: int, b: int) -> np.ndarray:
        r""":math:`P_{ab}=M_a\operatorname{diag}(w)M_b^\top` for views a ≠ b in {1,2,3}."""
        Ma, Mb = self.means[a - 1], self.means[b - 1]
        return (Ma * self.weights) @ Mb.T

    def triples_cp(self) -> CPTensor:
        r""":math:`P_{123}` as a CP tensor ``(w, [M1, M2, M3])``."""
        return cp_tensor(self.weights, self.means)

    def triples(self) -> np.ndarray:
        """Dense :math:`P_{123}` (d1, d2, d3); small dimensions only."""
        return cp_to_dense(self.triples_cp())

    def triples_slice(self, eta) -> np.ndarray:
        r""":math:`P_{123}(\eta)=M_1\operatorname{diag}(M_3^\top\eta)\operatorname{diag}(w)M_2^\top`."""
        eta = check_array(eta, "eta", ndim=1)
        M1, M2, M3 = self.means
        return (M1 * (M3.T @ eta) * self.weights) @ M2.T

    def whitened_triples(self, W1, W2, W3) -> np.ndarray:
        r""":math:`P_{123}(W_1,W_2,W_3)=\sum_j w_j (W_1^\top\mu_{1j})\otimes(W_2^\top\mu_{2j})\otimes(W_3^\top\mu_{3j})`."""
        factors = [W.T @ M for W, M in zip((W1, W2, W3), self.means)]
        return cp_to_dense(cp_tensor(self.weights, factors))


def random_multiview_model(n_components: int, dims=(10, 10, 10), *, kind: str = "categorical",
                           concentration: float = 0.5, noise: float = 1.0, mean_scale: float = 3.0,
                           min_weight: float = 0.05, random_state=None) -> MultiViewMixtureModel:
    """A random, well-conditioned three-view mixture.

    Weights are Dirichlet(1) draws floored at ``min_weight`` (then renormalised).
    Categorical columns are Dirichlet(``concentration``) draws; Gaussian means are
    ``mean_scale`` times standard normal draws. ``dims`` gives d_1, d_2, d_3 (each ≥ k).
    """
    k = check_positive_int(n_components, "n_components")
    rng = check_random_state(random_state)
    if len(dims) != 3:
        raise ValueError(f"dims must give three view dimensions, got {dims}")
    for v, d in enumerate(dims):
        if check_positive_int(d, f"dims[{v}]") < k:
            raise ValueError(f"dims[{v}]={d} is smaller than n_components={k}: M_v cannot have full column rank")
    w = np.maximum(rng.dirichlet(np.ones(k)), min_weight)
    w /= w.sum()
    if kind == "categorical":
        means = [rng.dirichlet(np.full(d, concentration), size=k).T for d in dims]
    else:
        means = [mean_scale * rng.standard_normal((d, k)) for d in dims]
    return MultiViewMixtureModel(w, means, kind=kind, noise=noise)
