r"""The three-view mixture model (Anandkumar, Hsu & Kakade 2012 §3.1).

A hidden component :math:`h\in[k]` with :math:`\Pr[h]=w_h`; given h the views
:math:`x_1,x_2,x_3` are independent with :math:`E[x_v\mid h]=\mu_{v,h}`, the h-th
column of :math:`M_v\in\mathbb R^{d_v\times k}`. Two conditional laws are
provided:

* ``"categorical"``: :math:`x_v=e_i` with probability :math:`(M_v)_{ih}` (columns of
  :math:`M_v` are probability vectors; three words of a single-topic document);
* ``"gaussian"``: :math:`x_v=\mu_{v,h}+\sigma z`, :math:`z\sim N(0,I)`.

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

_KINDS = ("categorical", "gaussian")


class MultiViewMixtureModel:
    """Three-view mixture with exact population moments.

    Parameters
    ----------
    weights : array (k,)
        Mixing weights, positive, summing to 1.
    means : list of three arrays (d_v, k)
        Conditional means :math:`M_v`; for ``"categorical"`` each column is a
        probability vector.
    kind : {"categorical", "gaussian"}
    noise : float, default 1.0
        Standard deviation σ of the Gaussian views (ignored for categorical).
    """

    def __init__(self, weights, means, kind: str = "categorical", noise: float = 1.0):
        w = check_array(weights, "weights", ndim=1)
        if np.any(w <= 0) or not np.isclose(w.sum(), 1.0, atol=1e-10):
            raise ValueError("weights must be positive and sum to 1")
        if not isinstance(means, (list, tuple)) or len(means) != 3:
            raise TypeError("means must be a list of three arrays (d_v, k)")
        Ms = [check_matrix(M, f"means[{v}]", shape=(None, w.size)) for v, M in enumerate(means)]
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if kind == "categorical":
            for v, M in enumerate(Ms):
                if np.any(M < 0) or not np.allclose(M.sum(axis=0), 1.0, atol=1e-10):
                    raise ValueError(f"means[{v}] must have probability vectors as columns for kind='categorical'")
        if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not noise > 0:
            raise ValueError(f"noise must be a positive number, got {noise!r}")
        self.weights, self.means, self.kind, self.noise = w, Ms, kind, float(noise)

    @property
    def n_components(self) -> int:
        return self.weights.size

    @property
    def dims(self) -> tuple:
        return tuple(M.shape[0] for M in self.means)

    # ------------------------------------------------------------------ sampling
    def sample(self, n_samples: int, random_state=None):
        """Draw n_samples samples: returns ``([X1, X2, X3], h)`` with X_v (n_samples, d_v) and labels h (n_samples,).

        Categorical views are one-hot rows. Cost O(n Σ d_v).
        """
        n = check_positive_int(n_samples, "n_samples")
        rng = check_random_state(random_state)
        h = rng.choice(self.n_components, size=n, p=self.weights)
        views = []
        for M in self.means:
            d = M.shape[0]
            if self.kind == "gaussian":
                X = M[:, h].T + self.noise * rng.standard_normal((n, d))
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
