r"""Mixtures of spherical Gaussians by the method of moments (Hsu & Kakade 2013).

Model: :math:`x=\mu_h+\sigma_h z`, :math:`h\sim w`, :math:`z\sim N(0,I_d)`, with k ≤ d and
linearly independent means. Theorem 2 of Hsu & Kakade (2013): the smallest eigenvalue
of :math:`\operatorname{Cov}(x)` equals :math:`\bar\sigma^2=\sum_h w_h\sigma_h^2` and has
multiplicity at least d − k + 1 (the centred means :math:`\mu_h-\bar\mu` span at most
k − 1 dimensions); for *any* unit eigenvector u of it

.. math::
   \tilde m &= E[x\,(u^\top(x-E x))^2] = \sum_h w_h\sigma_h^2\mu_h,\\
   \mathcal M_2 &= E[xx^\top]-\bar\sigma^2 I = \sum_h w_h\mu_h\mu_h^\top,\\
   \mathcal M_3 &= E[x\otimes x\otimes x]-\sum_{i=1}^d(\tilde m\otimes e_i\otimes e_i
         +e_i\otimes\tilde m\otimes e_i+e_i\otimes e_i\otimes\tilde m)
       = \sum_h w_h\mu_h^{\otimes 3}.

From data, :func:`spherical_moments` takes :math:`\bar\sigma^2` as the *mean* of the
d − k + 1 smallest eigenvalues of the sample covariance (the smallest one alone sits near
the lower Marchenko–Pastur edge and is biased low) and :math:`\tilde m` as the statistic
above averaged over the d − k + 1 corresponding eigenvectors (any of them is valid, and
the average has a smaller variance).

With a common variance σ² this is :math:`\tilde m=\sigma^2E[x]` — the correction of
Anandkumar, Ge & Janzamin (2015, Lemma 1) with known ζ² = σ². Whitening
:math:`\mathcal M_2` and applying :func:`mvlib.tensor_power_method` to
:math:`\mathcal M_3(W,W,W)` gives :math:`\mu_h=\lambda_h(W^\top)^+v_h`,
:math:`w_h=\lambda_h^{-2}`; finally the per-component variances solve
:math:`M\operatorname{diag}(w)\,\sigma^2=\tilde m` (least squares).

The whitened :math:`\mathcal M_3` is computed from the data: the sample third moment through
:func:`mvlib.whitened_triples`, the correction in whitened coordinates, where
:math:`\sum_i W^\top e_i\otimes W^\top e_i=W^\top W`, so the correction is
:math:`\alpha\otimes G+\ldots` with :math:`\alpha=W^\top\tilde m` and :math:`G=W^\top W`
(k × k), see :func:`third_order_correction`: no d×d×d array is ever formed.
Derived and checked in :doc:`/chapters/05_gaussian_mixtures`.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from sklearn.base import DensityMixin

from ..core.base import MOMENTS_CONSTRAINTS, MixtureInferenceMixin, MomentEstimator
from ..core.moments import WhitenedTripleSum, whitened_triples
from ..core.power import tensor_power_method
from ..core.scale import (
    open_source,
    SketchedMoments,
    resolve_sketch,
    sketch_dewhiten,
)
from ..core.tensors import multilinear
from ..core.validation import (
    Integer,
    Options,
    RandomState,
    check_array,
    check_positive_int,
    scale_exponent,
    scaled,
    warn_user,
)
from ..core.whitening import dewhiten, whitening_matrix

__all__ = ["SpectralGMM", "spherical_moments", "third_order_correction", "whitened_third_moment"]


def third_order_correction(alpha, G):
    r"""The whitened noise correction :math:`C(\alpha,G)_{pqr}=\alpha_pG_{qr}+\alpha_qG_{pr}+\alpha_rG_{pq}`.

    For :math:`G=\sum_i g_ig_i^\top` this is
    :math:`\sum_i(\alpha\otimes g_i\otimes g_i+g_i\otimes \alpha\otimes g_i+g_i\otimes g_i\otimes \alpha)`;
    with :math:`\alpha=W^\top\tilde m`, :math:`G=W^\top W` it equals
    :math:`\Delta(\tilde m)(W,W,W)`, the noise term of the third moment in whitened
    coordinates (Hsu & Kakade 2013, Theorem 2; eq. ``eq-ch5-whitened`` of
    :doc:`/chapters/05_gaussian_mixtures`).

    Parameters: ``alpha`` (k,), ``G`` (k, k) symmetric. Returns (k, k, k). Cost O(k³).
    """
    alpha, G = np.asarray(alpha, dtype=float), np.asarray(G, dtype=float)
    return (np.einsum("p,qr->pqr", alpha, G) + np.einsum("q,pr->pqr", alpha, G)
            + np.einsum("r,pq->pqr", alpha, G))




def spherical_moments(X, n_components):
    r"""First- and second-order quantities of Hsu & Kakade (2013), Theorem 2, from data.

    Derived in :doc:`/chapters/05_gaussian_mixtures`. With the eigenvalues
    :math:`\hat\lambda_1\le\dots\le\hat\lambda_d` and eigenvectors :math:`\hat u_a` of the
    sample covariance and :math:`r=d-k+1` (the multiplicity of the noise eigenvalue),

    .. math::
       \bar\sigma^2=\frac1r\sum_{a=1}^r\hat\lambda_a,\qquad
       \tilde m=\frac1r\sum_{a=1}^r\frac1n\sum_{i=1}^n x_i\,\bigl(\hat u_a^\top(x_i-\hat\mu)\bigr)^2 .

    Averaging over the noise eigenspace removes the downward bias of the smallest
    eigenvalue alone (near the Marchenko–Pastur edge
    :math:`\bar\sigma^2(1-\sqrt{(d-k)/n})^2`) and reduces the variance of :math:`\tilde m`.

    Parameters
    ----------
    X : array (n, d), d ≥ n_components
    n_components : int k

    Returns
    -------
    dict with ``mean`` (d,), ``sigma2_bar`` (the average variance
    :math:`\sum_h w_h\sigma_h^2`), ``m_tilde`` (d,) :math:`=\sum_h w_h\sigma_h^2\mu_h`,
    ``M2`` (d, d) :math:`\mathcal M_2=\sum_h w_h\mu_h\mu_h^\top` and
    ``noise_eigenvalues`` (d − k + 1,), the smallest eigenvalues of the sample covariance.

    Notes
    -----
    Cost O(n d²) for the covariance and for :math:`\tilde m`, O(d³) for the
    eigendecomposition.
    """
    X = check_array(X, "X", ndim=2, min_rows=2)
    n, d = X.shape
    k = check_positive_int(n_components, "n_components")
    if k > d:
        raise ValueError(f"n_components={k} exceeds n_features={d}: the means must be linearly "
                         "independent, so k <= d (Hsu & Kakade 2013, Thm. 2)")
    mom = _noise_space(_scatter(X, 0), k)
    m_tilde = _m_tilde_sum(X, 0, mom["mean"], mom["noise_vectors"]) / n
    out = {key: mom[key] for key in ("mean", "sigma2_bar", "M2", "noise_eigenvalues", "total_variance")}
    out["m_tilde"] = m_tilde
    return out


class _Scatter:
    r"""Row count, mean and centred scatter :math:`\sum_i(x_i-\bar x)(x_i-\bar x)^\top` of a chunk;
    ``+`` merges two chunks exactly (Chan, Golub & LeVeque 1979), so chunked sums stay centred."""

    def __init__(self, n, mean, scatter):
        self.n, self.mean, self.scatter = n, mean, scatter

    def __add__(self, other):
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        scatter = self.scatter + other.scatter + np.outer(delta, delta) * (self.n * other.n / n)
        return _Scatter(n, mean, scatter)


def _check_fit_input(X):
    return check_array(X, "X", ndim=2, min_rows=2)


def _one_component_exact(src):
    r"""One component from in-memory X: :math:`\bar x` and :math:`\operatorname{tr}\widehat{\operatorname{Cov}}(x)/d`,
    the squares taken at a power-of-two scale of the centred data (no overflow, no underflow)."""
    X = src.data
    mean = X.mean(axis=0)
    Xc = X - mean
    top = float(np.max(np.abs(Xc)))
    s = 2.0 ** np.floor(np.log2(top)) if top > 0 and np.isfinite(top) else 1.0
    return mean, float(np.mean((Xc / s) ** 2)) * s * s


def _one_component_chunked(src):
    """One component from chunked X (Dask, stream): the same two moments from pass 1's sums."""
    stats = src.reduce(_scatter)
    return stats.mean, float(np.trace(stats.scatter)) / (stats.n * src.n_features)


def _scatter(X, offset):
    """Pass 1 of the two-pass fit on a chunk (n_b, d): O(n_b d²)."""
    X = check_array(X.toarray() if hasattr(X, "toarray") else X, "X", ndim=2, min_rows=1)
    mean = X.mean(axis=0)
    Xc = X - mean
    return _Scatter(X.shape[0], mean, Xc.T @ Xc)


def _noise_space(stats, k):
    """Noise eigenvalues and vectors, σ̄² and M2 from pass 1's (n, mean, scatter)."""
    n, mean = stats.n, stats.mean
    d = mean.shape[0]
    r = d - k + 1
    cov = stats.scatter / n
    evals, evecs = sla.eigh(cov)
    noise = evals[:r]
    sigma2_bar = float(noise.mean())
    M2 = cov + np.outer(mean, mean) - sigma2_bar * np.eye(d)
    return {"n": n, "mean": mean, "sigma2_bar": sigma2_bar, "M2": M2, "noise_eigenvalues": noise,
            "noise_vectors": evecs[:, :r], "total_variance": float(np.sum(evals))}


def _m_tilde_sum(X, offset, mean, U):
    r""":math:`\sum_i x_i\,\frac1r\sum_a(u_a^\top(x_i-\bar x))^2` over a chunk, (d,)."""
    proj2 = ((X - mean) @ U) ** 2
    return X.T @ proj2.mean(axis=1)


class _Pass2:
    """Pass 2 of the two-pass fit on a chunk: the sum behind m̃ and the whitened triples."""

    def __init__(self, m_sum, triples):
        self.m_sum, self.triples = m_sum, triples

    def __add__(self, other):
        t = WhitenedTripleSum(self.triples.Ws)
        t.total, t.exponent = self.triples.merged(other.triples)
        return _Pass2(self.m_sum + other.m_sum, t)


def _pass2(X, offset, mean, U, W):
    X = check_array(X.toarray() if hasattr(X, "toarray") else X, "X", ndim=2, min_rows=1)
    acc = WhitenedTripleSum([W, W, W])
    acc.add(X, X, X)
    return _Pass2(_m_tilde_sum(X, offset, mean, U), acc)


def whitened_third_moment(X, W, m_tilde):
    r"""Whitened :math:`\mathcal M_3(W,W,W)` of Theorem 2 from data, (k, k, k).

    ``whitened_triples(X, X, X, W, W, W)`` minus :func:`third_order_correction`
    with :math:`\alpha=W^\top\tilde m`, :math:`G=W^\top W`
    (:doc:`/chapters/05_gaussian_mixtures`).
    Cost O(n d k + n k³).
    """
    return whitened_triples(X, X, X, W, W, W) - third_order_correction(W.T @ m_tilde, W.T @ W)


class SpectralGMM(MixtureInferenceMixin, DensityMixin, MomentEstimator):
    r"""Mixture of spherical Gaussians fitted by the method of moments.

    Follows scikit-learn's ``GaussianMixture`` conventions. The moments identify the
    weights, the means and one variance per component (Hsu & Kakade 2013, Theorem 2,
    which needs positive weights and linearly independent means, so k ≤ d); ``covariances_`` holds these
    per-component variances, as ``GaussianMixture(covariance_type="spherical")`` does.
    See :doc:`/chapters/05_gaussian_mixtures` for the derivation, the exact checks and the
    comparison with EM, and :doc:`/chapters/02_whitening_power` for the whitening and
    power method it uses.

    Parameters
    ----------
    n_components : int
    covariance_type : {"spherical"}
    n_restarts, n_iterations : int
        Passed to :func:`mvlib.tensor_power_method`.
    random_state : None, int or numpy.random.Generator
    moments : {"two-pass", "one-pass"}, default "two-pass"
        ``"two-pass"``: pass 1 gives the covariance and its noise eigenspace, pass 2 the
        statistic :math:`\tilde m` and the whitened third moment (memory O(d² + k³)).
        ``"one-pass"``: one pass over the data accumulates the moments of the sketch
        :math:`y=\Omega^\top x` (:class:`mvlib.core.scale.SketchedMoments`: memory O(d K + K³)); the
        theorem is applied in the sketch and the means carried back through
        :math:`E[xy^\top]` (:doc:`/chapters/11_moments_at_scale`). Streams need it.
    sketch_dim : int, optional
        K for ``moments="one-pass"`` (default min(d, 2k + 10); k ≤ K ≤ d). With K = d the
        one-pass fit equals the two-pass one up to rounding.

    Attributes
    ----------
    means_ : (n_components, n_features)
    weights_ : (n_components,)
    covariances_ : (n_components,) spherical variances σ_h²
    precisions_ : (n_components,) 1/σ_h²

    See Also
    --------
    sklearn.mixture.GaussianMixture : EM, the baseline (``covariance_type="spherical"``).
    mvlib.tensor_power_method : the power method run on the whitened third moment.
    mvlib.MultiViewMixture : mixtures observed through three conditionally independent views.

    Notes
    -----
    Cost of ``fit``: O(n d² + d³ + n d k + n k³) and the power method's
    O(k⁴ L N) — one pass over the data for each moment, no iterations over it.

    Warns (``UserWarning``) when d = k: the theorem holds, but the noise eigenvalue then
    has multiplicity one, so the data cannot show whether the smallest covariance
    eigenvalues are equal, the model's testable prediction; d > k is the practical choice.
    Raises ``ValueError`` when k > d, and when the k-th eigenvalue of
    :math:`\mathcal M_2` does not stand out of the sampling noise, i.e. is at most
    3·max(spread of the d − k + 1 noise eigenvalues, :math:`2\bar\sigma^2\sqrt{d/n}`): the
    rank condition cannot be confirmed from these data (too few samples, means too close
    or nearly dependent, or noise that is not spherical), and when X has no variance
    outside the span of the means (e.g. a constant column), where the noise variance would
    be zero. Data of extreme magnitude (beyond 2**±100) are divided by an exact power of two
    before the moments are formed and the parameters multiplied back, so X·s gives means·s
    and variances·s² wherever float64 holds the third moment (a named error beyond).

    With ``n_components=1`` the first two moments identify the model:
    :math:`\hat\mu=\bar x`, :math:`\hat\sigma^2=\operatorname{tr}\widehat{\operatorname{Cov}}(x)/d`
    (the maximum-likelihood estimates), with no rank condition, no sphericity test and no
    third moment; any real X with two rows and a positive variance is accepted.

    A scikit-learn density estimator (``sklearn.base.clone``, ``get_params``/``set_params``,
    ``NotFittedError`` before ``fit``, ``n_features_in_``); with ``n_components=1`` it passes
    ``sklearn.utils.estimator_checks.check_estimator`` in full.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import SpectralGMM, matched_error
    >>> rng = np.random.default_rng(0)
    >>> means = 4 * rng.standard_normal((3, 6))            # k = 3 means in d = 6
    >>> h = rng.choice(3, size=3000, p=[0.3, 0.3, 0.4])
    >>> X = means[h] + rng.standard_normal((3000, 6))      # spherical noise of variance 1
    >>> gmm = SpectralGMM(3, random_state=0).fit(X)
    >>> matched_error(means.T, gmm.means_.T, relative=True) < 0.1
    True
    >>> np.round(gmm.covariances_, 1)
    array([1., 1., 1.])
    >>> np.round(np.sort(gmm.weights_), 1)
    array([0.3, 0.3, 0.4])
    """

    _scale_powers = {"means_": (1, "the component means"), "covariances_": (2, "the component variances"),
                     "precisions_": (-2, "the component precisions")}

    _parameter_constraints = {
        "n_components": Integer(),
        "covariance_type": Options(("spherical",), style="words"),
        "n_restarts": Integer(),
        "n_iterations": Integer(),
        "random_state": RandomState(),
        **MOMENTS_CONSTRAINTS,
    }

    def __init__(self, n_components, covariance_type="spherical", *, n_restarts=10,
                 n_iterations=100, random_state=None, moments="two-pass", sketch_dim=None):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.n_restarts = n_restarts
        self.n_iterations = n_iterations
        self.random_state = random_state
        self.moments = moments
        self.sketch_dim = sketch_dim

    def fit(self, X, y=None):
        """Estimate the parameters from X (n_samples, n_features); returns ``self``.

        ``X`` is an array, a ``dask.array`` chunked by rows (the moments are Dask reductions on the
        active scheduler; the data stay on the workers), or, with ``moments="one-pass"``, a stream:
        an iterator of (n_b, n_features) chunks, read once (:func:`mvlib.core.scale.row_chunks`).
        """
        p = self._validate_params()
        k, moments, sketch_dim, rng = p.n_components, p.moments, p.sketch_dim, p.random_state
        # in memory, X of extreme scale is fitted as X / 2**e (exact); the parameters scale back at the end
        src = open_source(X, moments=moments, check=_check_fit_input, rescale=True)
        d = src.n_features
        if k > d:
            raise ValueError(
                f"n_components={k} exceeds n_features={d}: the means must be linearly independent, "
                "so k <= d (Hsu & Kakade 2013, Thm. 2)")
        if moments == "one-pass":
            self._fit_one_pass(src, k, d, sketch_dim, rng)
        else:
            self._fit_two_pass(src, k, d, rng)
        return self._unscale_fitted(src.exponent)

    def _fit_two_pass(self, src, k, d, rng):
        """Two passes: the mean and scatter, then the whitened third moment and m~ (O(n d²) each)."""
        if k == 1:
            return self._set_one(*src.passes(_one_component_exact, _one_component_chunked), d)
        stats = src.reduce(_scatter)      # pass 1: mean and centred scatter
        n = stats.n
        self._warn_square(k, d)
        if n <= d:
            raise ValueError(f"X has {n} rows but more than n_features={d} are needed to estimate the covariance")
        mom = _noise_space(stats, k)
        W = self._whiten(mom, k, d, n)
        part = src.reduce(_pass2, mom["mean"], mom["noise_vectors"], W)   # pass 2
        m_tilde = part.m_sum / n
        T = part.triples.result(n) - third_order_correction(W.T @ m_tilde, W.T @ W)
        lam, V = self._decompose(T, k, rng)
        means = dewhiten(W, V, lam)  # (d, k)
        return self._set(means, lam, means, m_tilde, mom["sigma2_bar"], d)

    def _fit_one_pass(self, src, k, d, sketch_dim, rng):
        r"""One pass: the moments of :math:`y=\Omega^\top x` (K dimensions, a spherical mixture
        again since :math:`\Omega` has orthonormal columns), Theorem 2 applied in the sketch, the
        means carried back by :func:`mvlib.core.scale.sketch_dewhiten` with
        :math:`C=E[xy^\top]-\bar\sigma^2\Omega=\mathcal M_2\Omega`."""
        omega = resolve_sketch(sketch_dim, k, d, rng)
        K = omega.shape[1]
        acc = src.reduce(SketchedMoments.partial, omega)
        n = acc.n
        if n < 2:
            raise ValueError(f"X has {n} rows; at least 2 are required")
        mean = acc.mean()
        if k == 1:
            return self._set_one(mean, (acc.sum_sq / n - float(mean @ mean)) / d, d)
        self._warn_square(k, d)
        if K == k < d:
            warn_user(
                f"sketch_dim={K} equals n_components={k}: the noise variance is read off a single "
                "eigenvalue of the sketched covariance, so the spherical model cannot be checked; "
                "sketch_dim > n_components (default 2k + 10) is recommended", UserWarning)
        if n <= K:
            raise ValueError(f"X has {n} rows but more than sketch_dim={K} are needed to estimate the covariance")
        m_y, S_y = omega.T @ mean, acc.second()
        cov = S_y - np.outer(m_y, m_y)
        evals, evecs = sla.eigh(0.5 * (cov + cov.T))
        r = K - k + 1
        sigma2_bar = float(evals[:r].mean())
        mom = {"mean": m_y, "sigma2_bar": sigma2_bar, "M2": S_y - sigma2_bar * np.eye(K),
               "noise_eigenvalues": evals[:r], "total_variance": float(np.sum(evals))}
        W = self._whiten(mom, k, K, n)
        # m~ in the sketch from the third moment: E[y (u^T(y - m))^2] averaged over the noise space
        P = evecs[:, :r] @ evecs[:, :r].T / r
        T3 = acc.third()
        m_tilde = np.einsum("pqr,qr->p", T3, P) - 2 * S_y @ (P @ m_y) + m_y * float(m_y @ P @ m_y)
        T = multilinear(T3, W, W, W) - third_order_correction(W.T @ m_tilde, W.T @ W)
        lam, V = self._decompose(T, k, rng)
        sketched = dewhiten(W, V, lam)                        # (K, k): Ω^T μ_h
        means = sketch_dewhiten(acc.cross() - sigma2_bar * omega, W, V, lam)
        return self._set(means, lam, sketched, m_tilde, sigma2_bar, d)

    @staticmethod
    def _warn_square(k, d):
        if k == d:
            warn_user(
                f"n_components={k} equals n_features={d}: the noise variance is read off a single "
                "covariance eigenvalue, so the spherical model cannot be checked on these data "
                "(the d - k + 1 smallest eigenvalues should be equal); d > k is recommended",
                UserWarning)

    @staticmethod
    def _whiten(mom, k, d, n):
        """Whitening of M2 after the positive-variance and rank checks (d: working dimension)."""
        if not mom["sigma2_bar"] > 16 * d * np.finfo(float).eps * mom["total_variance"]:
            raise ValueError(
                f"X has no variance outside the span of the means: the {d - k + 1} smallest "
                f"eigenvalues of its covariance average {mom['sigma2_bar']:.3g} (constant columns, "
                "duplicated rows or noiseless data); the spherical model needs a positive variance")
        W, m2_evals = whitening_matrix(mom["M2"], k, return_eigenvalues=True)
        # rank condition: the k-th eigenvalue of M2 must stand out of the sampling noise
        # (the spread of the d - k + 1 noise eigenvalues, at least 2 σ̄² sqrt(d/n) as for
        # isotropic noise), else a component is not identified from these data
        noise = mom["noise_eigenvalues"]
        level = 3 * max(noise.max() - noise.min(), 2 * mom["sigma2_bar"] * np.sqrt(d / n))
        if m2_evals[-1] <= level:
            raise ValueError(
                f"n_components={k} exceeds the number of components these data identify: the "
                f"eigenvalue number {k} of M2 ({m2_evals[-1]:.3g}) is within the noise level ({level:.3g}); "
                "the means must be linearly independent (rank condition)")
        return W

    def _decompose(self, T, k, rng):
        cp = tensor_power_method(T, k, n_restarts=self.n_restarts, n_iterations=self.n_iterations,
                                 random_state=rng)
        lam, V = np.asarray(cp.weights), np.asarray(cp.factors[0])
        if np.any(lam <= 0):
            raise ValueError("the whitened third moment has a non-positive eigenvalue: the data do not "
                             "look like a mixture of n_components spherical Gaussians with independent means")
        return lam, V

    def _set(self, means, lam, working_means, m_tilde, sigma2_bar, d):
        """Weights λ^-2, variances from M diag(w) σ² = m~ (in the working coordinates), sorted."""
        weights = lam ** -2.0
        weights = weights / weights.sum()
        var, *_ = np.linalg.lstsq(working_means * weights, m_tilde, rcond=None)
        floor = 1e-6 * max(sigma2_bar, np.finfo(float).tiny)
        if np.any(var < floor):
            warn_user(f"{int(np.sum(var < floor))} estimated component variances were not positive "
                          f"and were raised to {floor:.1e}", RuntimeWarning)
            var = np.maximum(var, floor)
        order = np.argsort(-weights, kind="stable")
        self.means_ = means.T[order]
        self.weights_ = weights[order]
        self.covariances_ = var[order]
        self.precisions_ = 1.0 / self.covariances_
        self.n_features_in_ = d
        return self

    def _set_one(self, mean, var, d):
        if not (np.isfinite(var) and var > 0):
            raise ValueError(f"X has a total variance of {var!r}: one spherical Gaussian needs a "
                             "positive, finite variance (the rows of X are all equal, or too large)")
        self.means_ = np.asarray(mean)[None, :]
        self.weights_ = np.ones(1)
        self.covariances_ = np.array([var])
        self.precisions_ = 1.0 / self.covariances_
        self.n_features_in_ = d
        return self

    # ------------------------------------------------------------------ inference
    def _check_X(self, X):
        self._check_fitted("means_")
        X = check_array(X, "X", ndim=2)
        self._check_n_features(X.shape[1])
        return X

    def _log_joint(self, X):
        """log w_h + log N(x | μ_h, σ_h² I), shape (n, k); gives predict, predict_proba,
        score_samples and score (``MixtureInferenceMixin``)."""
        X = self._check_X(X)
        d = X.shape[1]
        means, cov, log_shift = self.means_, self.covariances_, 0.0
        e = scale_exponent(cov, even=True)
        if e != 0:   # variances of extreme scale: work in units of 2**(e/2) (exact)
            X, means, cov = scaled(X, e // 2), scaled(means, e // 2), scaled(cov, e)
            log_shift = e * np.log(2.0)
        sq = ((X ** 2).sum(1)[:, None] - 2 * X @ means.T + (means ** 2).sum(1)[None, :])
        return (np.log(self.weights_) - 0.5 * d * (np.log(2 * np.pi * cov) + log_shift)
                - 0.5 * np.maximum(sq, 0) / cov)

    def to_sklearn(self, **kwargs):
        """A ``sklearn.mixture.GaussianMixture`` initialised at this estimate, ready to ``fit``.

        Extra keyword arguments go to ``GaussianMixture`` (e.g. ``max_iter``, ``tol``).
        """
        self._check_fitted("means_")
        from sklearn.mixture import GaussianMixture

        return GaussianMixture(n_components=self.means_.shape[0], covariance_type="spherical",
                               weights_init=self.weights_, means_init=self.means_,
                               precisions_init=self.precisions_, **kwargs)
