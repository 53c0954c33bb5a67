r"""Three-view mixtures: :class:`MultiViewMixture` (Anandkumar, Hsu & Kakade 2012 §3;
Anandkumar et al. 2014 §3.3).

Model: a hidden :math:`h\in[k]` with :math:`\Pr[h=j]=w_j`; given h the three views
are independent with :math:`E[x_v\mid h=j]=\mu_{v,j}`, the columns of :math:`M_v`
(Condition 3.1: :math:`w_j>0`, every :math:`M_v` of full column rank). Only
conditional means are modelled: views may be Gaussian, categorical (one-hot),
counts, anything with finite conditional means (identifiability) and finite conditional
variances (the :math:`n^{-1/2}` rate).
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .._validation import IllConditionedWarning, check_positive_int, check_random_state, check_views
from ..moments import pairs as _pairs
from ..moments import whitened_triples
from ..observable import _check_gap_options, algorithm_b, mixture_weights, view_bases
from ..power import tensor_power_method
from ..whitening import dewhiten, symmetrize_views, whitening_matrix

__all__ = ["MultiViewMixture"]

_METHODS = ("observable", "tensor")


class _Estimator:
    """Minimal scikit-learn estimator protocol: ``get_params``, ``set_params``, ``repr``."""

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        """Hyper-parameters as a dict (scikit-learn protocol)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set hyper-parameters (scikit-learn protocol); returns ``self``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"{name!r} is not a parameter of {type(self).__name__}; valid: {valid}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def _check_common(self):
        k = check_positive_int(self.n_components, "n_components")
        if not isinstance(self.method, str) or self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        _check_gap_options(self.min_gap, self.max_retries)
        rng = check_random_state(self.random_state)
        return k, rng

    def _check_fitted(self, attr):
        if not hasattr(self, attr):
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")


def _clip_weights(w, what="weights"):
    """Clip estimated mixing weights to >= 0 and renormalise (warning when clipping was needed)."""
    w = np.asarray(w, float).copy()
    if not np.all(np.isfinite(w)):
        raise RuntimeError(f"the estimated {what} are not finite; the moments are too noisy or degenerate")
    if np.any(w < 0):
        warnings.warn(
            f"{int(np.sum(w < 0))} estimated {what} were negative (smallest {w.min():.3g}) and were "
            "clipped to 0 before renormalising; the sample may be too small for n_components",
            RuntimeWarning,
            stacklevel=3,
        )
        w = np.maximum(w, 0.0)
    total = w.sum()
    if not total > 0:
        raise RuntimeError(f"the estimated {what} are all zero or negative; estimation failed")
    return w / total


def _rademacher(n):
    """Balanced random signs from a fixed seed (the noise check must not depend on random_state)."""
    eps = np.ones(n)
    eps[np.random.default_rng(0).permutation(n)[: n // 2]] = -1.0
    return eps


def _spectral_norm(A):
    """Largest singular value; Lanczos (ARPACK, deterministic start) for large matrices."""
    if min(A.shape) <= 500:
        return float(sla.svdvals(A)[0])
    return float(spla.svds(A, k=1, v0=np.ones(min(A.shape)), return_singular_vectors=False)[0])


#: warn when the k-th singular value is below this multiple of the complement noise
_NOISE_FACTOR = 1.5


def _warn_noise_level(k, s_k, E, L, R, what):
    r"""Warn when the k-th singular value of a pairs matrix is at the level of its sampling noise.

    ``E`` is a symmetrised (Rademacher) copy of the sampling error,
    :math:`\frac1n\sum_i\varepsilon_i x_{a,i}x_{b,i}^\top` with balanced random signs (half the
    difference of the pairs matrices of two random halves of the sample), and ``L``, ``R`` the top
    k−1 left/right singular vectors of the pairs matrix. If there were only k−1 components, the
    k-th singular value would be the largest singular value of the error restricted to the
    complement of ``L`` and ``R``, which :math:`\|(I-LL^\top)E(I-RR^\top)\|_2` estimates; a
    genuine k-th component stands clearly above it. Warns (``IllConditionedWarning``) below
    1.5 times that level.
    """
    Ec = E - L @ (L.T @ E)
    Ec = Ec - (Ec @ R) @ R.T
    noise = _spectral_norm(Ec)
    if s_k < _NOISE_FACTOR * noise:
        warnings.warn(
            f"singular value number {k} ({s_k:.2e}) of {what} is at the level of its sampling noise "
            f"({noise:.2e}, estimated by splitting the sample): n_components={k} may exceed the number "
            "of components these data identify (Condition 3.1), and the weakest components are unreliable",
            IllConditionedWarning,
            stacklevel=3,
        )


class MultiViewMixture(_Estimator):
    r"""Conditional means and weights of a three-view mixture by the method of moments.

    See :doc:`/chapters/04_three_view_mixtures` for the derivation and a numerical check.

    Parameters
    ----------
    n_components : int
        Number k of mixture components; must not exceed the rank of the pairs
        matrices :math:`\hat P_{12}`, :math:`\hat P_{13}` (Condition 3.1).
    method : {"observable", "tensor"}, default "observable"
        ``"observable"``: Algorithm B of Anandkumar, Hsu & Kakade (2012) (Lemma 3.3,
        Appendix B.4 for one column order, see :func:`mvlib.algorithm_b`): :math:`U_1,U_2`
        from the SVD of :math:`\hat P_{12}`, :math:`U_3` from that of :math:`\hat P_{13}`;
        the eigenvectors of :math:`\hat B_{123}(U_3\theta_1)` diagonalise every
        :math:`\hat B_{123}(U_3\theta_i)` and :math:`\hat B_{132}(U_2\theta_i)`, whose
        eigenvalues give :math:`\hat M_3=U_3\Theta^{-1}L` and :math:`\hat M_2`; the columns
        of :math:`U_2^\top\hat M_2` then diagonalise :math:`\hat B_{231}(U_1\theta_i)`, giving
        :math:`\hat M_1` in the same order (the book's variant of Appendix B.4, which matches
        eigenvalues instead). Weights from :math:`\hat M_v\hat w=\hat E[x_v]`
        (Appendix B.5 uses view 3 alone), least squares over the three views stacked with each
        view divided by its RMS standard deviation (:func:`mvlib.observable.mixture_weights`),
        clipped to ≥ 0.
        ``"tensor"``: views 1, 2 symmetrised to view 3 (:func:`mvlib.symmetrize_views`),
        whitened by :func:`mvlib.whitening_matrix` of :math:`E[\tilde x_1\tilde x_2^\top]`,
        whitened triples from the data (:func:`mvlib.whitened_triples`),
        :func:`mvlib.tensor_power_method`, un-whitening (:func:`mvlib.dewhiten`):
        :math:`\mu_{3,j}=\lambda_j(W^\top)^+v_j`, :math:`w_j=\lambda_j^{-2}`,
        :math:`M_1=S_1^{-1}M_3`, :math:`M_2=S_2^{-1}M_3` (Anandkumar et al. 2014 §3.3, §4.3).
    random_state : None, int or numpy.random.Generator
        Randomness of Θ (observable) or of the power-method starts (tensor).
    min_gap : float, default 0.02
        ``"observable"``: redraw Θ while the eigenvalues of :math:`\hat B_{123}(U_3\theta_1)`
        are closer than ``min_gap`` × the largest absolute eigenvalue, or complex.
    max_retries : int, default 20
        Redraws of Θ before giving up with ``RuntimeError``.

    Attributes
    ----------
    means_ : list of three arrays (n_components, d_v)
        Row j of ``means_[v]`` estimates :math:`\mu_{v+1,j}`; all views share one order.
    weights_ : array (n_components,)
        Mixing weights, non-negative, summing to 1.
    n_retries_ : int
        Redraws of Θ that were needed (``"observable"``; 0 for ``"tensor"``).

    Everything runs in k-dimensional projected coordinates :math:`y_v=U_v^\top x_v`:
    cost O(n Σ_v d_v k + n k³ + d1 d2 min(d1, d2) + d1 d3 min(d1, d3)) for n samples,
    memory O(d1 d2 + d1 d3 + n k) besides the data. Inputs are not modified.
    """

    def __init__(self, n_components, method="observable", random_state=None, *,
                 min_gap=0.02, max_retries=20):
        self.n_components = n_components
        self.method = method
        self.random_state = random_state
        self.min_gap = min_gap
        self.max_retries = max_retries

    def fit(self, views, y=None):
        """Estimate ``means_`` and ``weights_`` from ``views = [X1, X2, X3]``; returns ``self``.

        ``X_v`` are (n_samples, d_v) arrays or scipy.sparse matrices with the same
        rows (one sample per row); ``y`` is ignored.
        """
        k, rng = self._check_common()
        X1, X2, X3 = check_views(views, n_views=3, min_rows=2)
        n = X1.shape[0]
        P12, P13 = _pairs(X1, X2), _pairs(X1, X3)
        Us = view_bases(P12, P13, k)
        eps = _rademacher(n)
        for name, Xa, Xb, P in (("P12", X1, X2, P12), ("P13", X1, X3, P13)):
            Xb_eps = (sp.diags(eps) @ Xb) if sp.issparse(Xb) else Xb * eps[:, None]
            E = Xa.T @ Xb_eps
            E = (E.toarray() if sp.issparse(E) else np.asarray(E)) / n
            U, s, Vt = sla.svd(P, full_matrices=False)
            _warn_noise_level(k, s[k - 1], E, U[:, :k - 1], Vt[:k - 1].T, f"the pairs matrix {name}")
        Ys = [np.asarray(Xv @ U) for Xv, U in zip((X1, X2, X3), Us)]
        Pt = {(a, b): Ys[a].T @ Ys[b] / n for a, b in ((0, 1), (0, 2), (1, 2))}
        means_proj = [Y.mean(axis=0) for Y in Ys]
        if self.method == "observable":
            T = whitened_triples(X1, X2, X3, *Us)
            A, info = algorithm_b(T, Pt[0, 1], Pt[0, 2], Pt[1, 2], random_state=rng,
                                  min_gap=self.min_gap, max_retries=self.max_retries, return_info=True)
            self.n_retries_ = info["n_retries"]
            # Appendix B.5 per view, stacked; each view's rows divided by its RMS standard
            # deviation so that no view dominates by its units (mixture_weights)
            scales = [max(float(np.sqrt(Y.var(axis=0).mean())), np.finfo(float).tiny) for Y in Ys]
            weights = _clip_weights(mixture_weights(A, means_proj, scales))
        else:
            S1, S2 = symmetrize_views(Pt[0, 1], Pt[0, 2], Pt[1, 2])
            S_pair = S1 @ Pt[0, 1] @ S2.T          # = E[x~1 x~2^T] = C diag(w) C^T
            ev = sla.eigvalsh(0.5 * (S_pair + S_pair.T))
            rank = int(np.sum(ev > k * np.finfo(float).eps * np.max(np.abs(ev))))
            if rank < k:
                raise ValueError(
                    f"n_components={k} exceeds the rank {rank} of the pairs matrix (Condition 3.1): the "
                    f"symmetrised second moment E[x~1 x~2^T] = M3 diag(w) M3^T has only {rank} positive eigenvalues"
                )
            W = whitening_matrix(S_pair, k)
            T = whitened_triples(X1, X2, X3, Us[0] @ (S1.T @ W), Us[1] @ (S2.T @ W), Us[2] @ W)
            cp = tensor_power_method(T, k, random_state=rng)
            lam, V = np.asarray(cp.weights), np.asarray(cp.factors[0])
            if np.any(lam <= 0):
                raise RuntimeError(
                    "the tensor power method found a non-positive eigenvalue; the whitened moment is "
                    "not close to orthogonally decomposable (too few samples or n_components too large)"
                )
            C = dewhiten(W, V, lam)
            A = [sla.solve(S1, C), sla.solve(S2, C), C]
            weights = _clip_weights(lam ** -2.0)
            self.n_retries_ = 0
        means = [U @ Av for U, Av in zip(Us, A)]
        for v, M in enumerate(means, start=1):
            if not np.all(np.isfinite(M)):
                raise RuntimeError(f"the estimated means of view {v} are not finite; estimation failed")
        self.means_ = [M.T.copy() for M in means]
        self.weights_ = weights
        self.n_features_in_ = [Xv.shape[1] for Xv in (X1, X2, X3)]
        return self

