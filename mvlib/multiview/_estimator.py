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

from ..core.base import MOMENTS_CONSTRAINTS, SPECTRAL_CONSTRAINTS, MomentEstimator, clip_weights, power_decomposition, rademacher_signs, warn_noise_level
from ..core.moments import pairs as _pairs
from ..core.moments import triple_product, whitened_triples
from ..core.observable import algorithm_b, mixture_weights, view_bases
from ..core.scale import (
    open_source,
    SketchedViewMoments,
    Sums,
    rademacher_slice,
    resolve_sketch,
)
from ..core.tensors import multilinear
from ..core.validation import check_array, check_views
from ..core.whitening import dewhiten, symmetrize_views, whitening_matrix

__all__ = ["MultiViewMixture"]

class MultiViewMixture(MomentEstimator):
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
        view divided by its RMS standard deviation (:func:`mvlib.core.observable.mixture_weights`),
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
    moments : {"two-pass", "one-pass"}, default "two-pass"
        ``"two-pass"``: pass 1 gives the pairs matrices and the bases, pass 2 the projected
        moments. ``"one-pass"`` (with ``method="tensor"``): one pass accumulates the moments of the
        sketches :math:`y_v=\Omega_v^\top x_v` and the cross moments that carry the bases back
        (:class:`mvlib.core.scale.SketchedViewMoments`, memory O(Σ d_v K + K³);
        :doc:`/chapters/11_moments_at_scale`). Streams need it.
    sketch_dim : int, optional
        K per view for ``moments="one-pass"`` (default min(d_v, 2k + 10)).

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

    See Also
    --------
    mvlib.ProductMixtureEM : EM for the same mixture when the view laws are known.
    mvlib.SpectralTopicModel : three word positions of a document as the three views.
    mvlib.SpectralHMM : windows of three observations of an HMM as the three views.
    mvlib.KernelSpectral : views with nonparametric conditional laws.

    Notes
    -----
    Everything runs in k-dimensional projected coordinates :math:`y_v=U_v^\top x_v`:
    cost O(n Σ_v d_v k + n k³ + d1 d2 min(d1, d2) + d1 d3 min(d1, d3)) for n samples,
    memory O(d1 d2 + d1 d3 + n k) besides the data. Inputs are not modified.

    Examples
    --------
    >>> from mvlib import MultiViewMixture, matched_error
    >>> from mvlib.multiview import random_multiview_model
    >>> model = random_multiview_model(3, dims=(8, 8, 8), kind="gaussian", random_state=2)
    >>> views, _ = model.sample(2000, random_state=1)    # three (2000, 8) arrays
    >>> est = MultiViewMixture(3, random_state=0).fit(views)
    >>> [M.shape for M in est.means_]
    [(3, 8), (3, 8), (3, 8)]
    >>> matched_error(model.means[2], est.means_[2].T, relative=True) < 0.1
    True
    """

    _parameter_constraints = {**SPECTRAL_CONSTRAINTS, **MOMENTS_CONSTRAINTS}
    _scale_powers = {"means_": (1, "the means")}

    def __init__(self, n_components, method="observable", random_state=None, *,
                 min_gap=0.02, max_retries=20, moments="two-pass", sketch_dim=None):
        self.n_components = n_components
        self.method = method
        self.random_state = random_state
        self.min_gap = min_gap
        self.max_retries = max_retries
        self.moments = moments
        self.sketch_dim = sketch_dim

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False   # a list of three views, not one 2-d array
        tags.input_tags.sparse = True
        return tags

    def fit(self, views, y=None):
        """Estimate ``means_`` and ``weights_`` from ``views = [X1, X2, X3]``; returns ``self``.

        ``X_v`` are (n_samples, d_v) arrays or scipy.sparse matrices with the same
        rows (one sample per row), or three ``dask.array`` s chunked by rows (the moments are
        Dask reductions; the data stay on the workers), or, with ``moments="one-pass"``, a stream:
        an iterator of ``(X1_chunk, X2_chunk, X3_chunk)``, read once. ``y`` is ignored.
        """
        p = self._validate_params()
        k, rng, moments, sketch_dim = p.n_components, p.random_state, p.moments, p.sketch_dim
        if moments == "one-pass" and self.method != "tensor":
            raise ValueError("moments='one-pass' needs method='tensor': Algorithm B's weights and bases use "
                             "the exact singular vectors of the pairs matrices, which one pass cannot give")
        # in memory, views of extreme scale are fitted divided by exact powers of two; the means scale back
        src = open_source(views, moments=moments, what="views", check=_check_fit_views, rescale=True)
        dims = src.n_features
        if not isinstance(dims, list) or len(dims) != 3:
            raise ValueError("views must be three views [X1, X2, X3] (a stream yields 3-tuples of chunks)")
        if moments == "one-pass":
            self._fit_one_pass(src, k, dims, sketch_dim, rng)
        else:
            passes = src.passes(_ExactPasses, _ChunkedPasses)
            P12, P13, noise = passes.pairs()
            Us = view_bases(P12, P13, k)
            for name, P, E in (("P12", P12, noise[0]), ("P13", P13, noise[1])):
                U, sv, Vt = sla.svd(P, full_matrices=False)
                warn_noise_level(k, sv[k - 1], E, U[:, :k - 1], Vt[:k - 1].T, f"the pairs matrix {name}")
            self._from_projected(Us, *passes.projected(Us), k, rng, dims)
        return self._unscale_fitted(src.exponent)

    def _fit_one_pass(self, src, k, dims, sketch_dim, rng):
        r"""One pass over the three views: the sketched moments of :math:`y_v=\Omega_v^\top x_v`
        (:class:`mvlib.core.scale.SketchedViewMoments`), the tensor route in the sketch, and the
        bases carried back through the cross moments: with :math:`\Omega_1^\top P_{12}\Omega_2
        =U_1^yS\,U_2^{y\top}`, :math:`U_1=E[x_1y_2^\top]U_2^yS^{-1}`,
        :math:`U_2=E[x_2y_1^\top]U_1^yS^{-1}` and likewise :math:`U_3` from :math:`P_{13}`
        (with K = d exactly the two-pass bases)."""
        omegas = [resolve_sketch(sketch_dim, k, d, rng) for d in dims]
        acc = src.reduce(SketchedViewMoments.partial, *omegas)
        n = acc.n
        if n < 2:
            raise ValueError(f"views have {n} rows; at least 2 are required")
        Q12, Q13, Q23 = acc.sketched_pairs()
        U1, U2, U3 = view_bases(Q12, Q13, k)
        for name, Q, E in (("P12", Q12, acc.noise12 / n), ("P13", Q13, acc.noise13 / n)):
            U, sv, Vt = sla.svd(Q, full_matrices=False)
            warn_noise_level(k, sv[k - 1], E, U[:, :k - 1], Vt[:k - 1].T, f"the sketched pairs matrix {name}")
        Pt = {(0, 1): U1.T @ Q12 @ U2, (0, 2): U1.T @ Q13 @ U3, (1, 2): U2.T @ Q23 @ U3}
        T_y = acc.y123 / n

        def triples(Ms):
            return multilinear(T_y, U1 @ Ms[0], U2 @ Ms[1], U3 @ Ms[2])

        s12 = np.diag(Pt[0, 1])
        G13 = Q13 @ U3
        bases = [acc.x1y2 / n @ U2 / s12, acc.x2y1 / n @ U1 / s12,
                 acc.x3y1 / n @ G13 / np.sum(G13 ** 2, axis=0)]
        return self._from_projected(bases, Pt, None, None, triples, k, rng, dims)

    def _from_projected(self, Us, Pt, means_proj, variances, triples, k, rng, dims):
        """Everything after the projection: Algorithm B or the tensor route in the k-dimensional
        coordinates, the means ``U_v A_v`` in the views' spaces."""
        if self.method == "observable":
            A, info = algorithm_b(triples(), Pt[0, 1], Pt[0, 2], Pt[1, 2], random_state=rng,
                                  min_gap=self.min_gap, max_retries=self.max_retries, return_info=True)
            self.n_retries_ = info["n_retries"]
            # Appendix B.5 per view, stacked; each view's rows divided by its RMS standard
            # deviation so that no view dominates by its units (mixture_weights)
            scales = [max(float(np.sqrt(v.mean())), np.finfo(float).tiny) for v in variances]
            weights = clip_weights(mixture_weights(A, means_proj, scales))
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
            T = triples((S1.T @ W, S2.T @ W, W))
            lam, V = power_decomposition(T, k, rng)
            C = dewhiten(W, V, lam)
            A = [sla.solve(S1, C), sla.solve(S2, C), C]
            weights = clip_weights(lam ** -2.0)
            self.n_retries_ = 0
        means = [U @ Av for U, Av in zip(Us, A)]
        for v, M in enumerate(means, start=1):
            if not np.all(np.isfinite(M)):
                raise RuntimeError(f"the estimated means of view {v} are not finite; estimation failed")
        self.means_ = [M.T.copy() for M in means]
        self.weights_ = weights
        self.n_features_in_ = list(dims)
        return self


def _dense(X, name):
    X = X.toarray() if sp.issparse(X) else X
    return check_array(X, name, ndim=2, min_rows=1)


def _check_fit_views(views):
    return check_views(views, n_views=3, min_rows=2)


class _ExactPasses:
    """The moments of three in-memory views, each by one product over the whole data."""

    def __init__(self, src):
        self.views, self.n = src.data, src.n_rows

    def pairs(self):
        """P12, P13 and their copies with the rows weighted by balanced random signs (noise check)."""
        X1, X2, X3 = self.views
        eps = rademacher_signs(self.n)
        noise = []
        for Xa, Xb in ((X1, X2), (X1, X3)):
            Xb_eps = (sp.diags(eps) @ Xb) if sp.issparse(Xb) else Xb * eps[:, None]
            E = Xa.T @ Xb_eps
            noise.append((E.toarray() if sp.issparse(E) else np.asarray(E)) / self.n)
        return _pairs(X1, X2), _pairs(X1, X3), noise

    def projected(self, Us):
        """The moments of the projections y_v = U_v^T x_v, and the whitened triples of the data."""
        Ys = [np.asarray(Xv @ U) for Xv, U in zip(self.views, Us)]
        Pt = {(a, b): Ys[a].T @ Ys[b] / self.n for a, b in ((0, 1), (0, 2), (1, 2))}
        views = self.views

        def triples(Ms=None):
            Ws = Us if Ms is None else [U @ M for U, M in zip(Us, Ms)]
            return whitened_triples(*views, *Ws)
        return Pt, [Y.mean(axis=0) for Y in Ys], [Y.var(axis=0) for Y in Ys], triples


class _ChunkedPasses:
    """The same moments as reductions (Dask): pass 1 the pairs and their signed copies, pass 2 every
    moment of the projections at once (then the triples are the k×k×k projected tensor)."""

    def __init__(self, src):
        self.src, self.n = src, src.n_rows

    def pairs(self):
        n = self.n
        s1 = self.src.reduce(_pass1, n)
        return s1["p12"] / n, s1["p13"] / n, [s1["e12"] / n, s1["e13"] / n]

    def projected(self, Us):
        n = self.n
        s2 = self.src.reduce(_pass2, *Us)
        Pt = {(a, b): s2[f"y{a}y{b}"] / n for a, b in ((0, 1), (0, 2), (1, 2))}
        means_proj = [s2[f"y{v}"] / n for v in range(3)]
        variances = [s2[f"yy{v}"] / n - m ** 2 for v, m in enumerate(means_proj)]
        T_U = s2["y012"] / n

        def triples(Ms=None):
            return T_U if Ms is None else multilinear(T_U, *Ms)
        return Pt, means_proj, variances, triples


def _pass1(X1, X2, X3, offset, n_total):
    """Pass 1 on a chunk: sums of x1 x2^T, x1 x3^T and their copies weighted by the balanced signs."""
    X1, X2, X3 = (_dense(X, f"X{v}") for v, X in enumerate((X1, X2, X3), 1))
    eps = rademacher_slice(n_total, offset, X1.shape[0])[:, None]
    return Sums(X1.shape[0], p12=X1.T @ X2, p13=X1.T @ X3, e12=X1.T @ (X2 * eps), e13=X1.T @ (X3 * eps))


def _pass2(X1, X2, X3, offset, U1, U2, U3):
    """Pass 2 on a chunk: moments of the projections y_v = U_v^T x_v (k numbers per view)."""
    Ys = [_dense(X, f"X{v}") @ U for v, (X, U) in enumerate(zip((X1, X2, X3), (U1, U2, U3)), 1)]
    out = {f"y{a}y{b}": Ys[a].T @ Ys[b] for a, b in ((0, 1), (0, 2), (1, 2))}
    for v, Y in enumerate(Ys):
        out[f"y{v}"], out[f"yy{v}"] = Y.sum(axis=0), (Y ** 2).sum(axis=0)
    out["y012"] = triple_product(*Ys)
    return Sums(Ys[0].shape[0], **out)
