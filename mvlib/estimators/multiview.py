r"""Three-view mixtures: :class:`MultiViewMixture` (Anandkumar, Hsu & Kakade 2012 §3;
Anandkumar et al. 2014 §3.3).

Model: a hidden :math:`h\in[k]` with :math:`\Pr[h]=w_h`; given h the three views
are independent with :math:`E[x_v\mid h]=\mu_{v,h}`, the columns of :math:`M_v`
(Condition 3.1: :math:`w_h>0`, every :math:`M_v` of full column rank). Only
conditional means are modelled: views may be Gaussian, categorical (one-hot),
counts, anything with finite conditional means (identifiability) and finite conditional
variances (the :math:`n^{-1/2}` rate).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .._validation import check_views, scale_exponent, scaled, unscale
from ..moments import pairs as _pairs
from ..moments import whitened_triples
from ..observable import algorithm_b, mixture_weights, view_bases
from ..power import tensor_power_method
from ..whitening import dewhiten, symmetrize_views, whitening_matrix
from ._base import _clip_weights, _Estimator, _rademacher, _warn_noise_level

__all__ = ["MultiViewMixture"]

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
        :math:`\mu_{3,h}=\lambda_h(W^\top)^+v_h`, :math:`w_h=\lambda_h^{-2}`,
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
        Row h of ``means_[v]`` estimates :math:`\mu_{v+1,h}`; all views share one order.
    weights_ : array (n_components,)
        Mixing weights, non-negative, summing to 1.
    n_retries_ : int
        Redraws of Θ that were needed (``"observable"``; 0 for ``"tensor"``).
    n_features_in_ : list of three ints
        The numbers of columns d_v of the views seen in ``fit``.

    Notes
    -----
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False   # a list of three views, not one 2-d array
        tags.input_tags.sparse = True
        return tags

    def fit(self, views, y=None):
        """Estimate ``means_`` and ``weights_`` from ``views = [X1, X2, X3]``; returns ``self``.

        ``X_v`` are (n_samples, d_v) arrays or scipy.sparse matrices with the same
        rows (one sample per row); ``y`` is ignored.
        """
        k, rng = self._check_common()
        X1, X2, X3 = check_views(views, n_views=3, min_rows=2)
        es = [scale_exponent(X) for X in (X1, X2, X3)]
        if any(es):   # views of extreme scale: fit them divided by exact powers of two, scale the means back
            self.fit([scaled(X, e) for X, e in zip((X1, X2, X3), es)])
            self.means_ = [unscale(M, e, f"X{v}", "the means") for v, (M, e) in enumerate(zip(self.means_, es), 1)]
            return self
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

