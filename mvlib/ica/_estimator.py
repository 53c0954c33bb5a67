r"""Independent component analysis by the tensor power method on the fourth cumulant.

Model: :math:`x=As+m`, A (d × k) of full column rank, independent sources of zero mean,
unit variance and non-zero excess kurtosis :math:`\kappa_j=E[s_j^4]-3` (at most one of
them may be Gaussian). With the whitening W (d × k) of the sample covariance
(:math:`W^\top\hat\Sigma_xW=I_k`, :func:`mvlib.whitening_matrix`), :math:`z=W^\top(x-\bar x)`
has the fourth cumulant :math:`\sum_j\kappa_jq_j^{\otimes4}` with :math:`Q=W^\top A`
orthogonal; :func:`mvlib.ica.fourth_order_power_method` on the implicit cumulant of the
whitened data (:class:`mvlib.ica.FourthCumulantOperator`, O(n k) per contraction, no k⁴
array) returns :math:`(\kappa_j,q_j)`. Derivation in the docstring of :mod:`mvlib.ica`
(Comon & Jutten 2010; Hyvärinen, Karhunen & Oja 2001, Ch. 11; Anandkumar et al. 2014).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from ..core.base import MomentEstimator
from ..core.validation import (
    Integer,
    Options,
    OrNone,
    RandomState,
    IllConditionedWarning,
    check_array,
    check_rank,
    scale_exponent,
    scaled,
    warn_user,
)
from ..core.whitening import dewhiten, whitening_matrix
from ._algorithm import DEFLATIONS, SELECTIONS, FourthCumulantOperator, fourth_order_power_method, sample_kurtosis

__all__ = ["TensorICA"]

#: warn when an estimated |kurtosis| is below this many of its standard errors
_NOISE_FACTOR = 4.0


class TensorICA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, MomentEstimator):
    r"""Independent component analysis by the power method on the whitened fourth cumulant.

    Follows scikit-learn's ``FastICA`` conventions: ``transform`` gives the sources
    :math:`\hat s=\mathtt{components\_}\,(x-\mathtt{mean\_})`, and
    :math:`x\approx\mathtt{mixing\_}\,\hat s+\mathtt{mean\_}`. Steps:

    1. centre X and whiten with its covariance: :math:`z=W^\top(x-\bar x)`, W (d × k) from
       the top k eigenpairs (:func:`mvlib.whitening_matrix`); for k < d this keeps the
       principal subspace, as ``FastICA(whiten=...)`` does;
    2. run :func:`mvlib.ica.fourth_order_power_method` on the fourth cumulant of z,
       :math:`\mathcal K_4(I,u,u,u)=E[z(u^\top z)^3]-3\|u\|^2u`, whose population value is
       :math:`\sum_j\kappa_jq_j^{\otimes4}` (derivation in :mod:`mvlib.ica`), by default
       with each deflation step confined to the orthogonal complement of the vectors
       already found (``deflation="orthogonal"``) and the most significant kurtosis
       extracted first (``selection="significance"``);
    3. replace the k vectors by the nearest orthogonal matrix,
       :math:`Q\leftarrow Q(Q^\top Q)^{-1/2}` (a no-op up to rounding after orthogonal
       deflation; after ``deflation="subtract"`` the vectors are orthogonal only up to the
       sampling error, and the sources of the model are uncorrelated), and set
       ``components_`` :math:`=Q^\top W^\top`, ``mixing_`` :math:`=(W^\top)^+Q`
       (:func:`mvlib.dewhiten`);
    4. order the sources by decreasing :math:`|\hat\kappa_j|`, the excess kurtosis of the
       recovered sources, and fix each sign so that the largest entry of each column of
       ``mixing_`` is positive (ICA identifies neither order nor sign).

    See :doc:`/chapters/10_dirichlet_ica` for the cumulant identity and the comparison with
    FastICA, and :doc:`/chapters/02_whitening_power` for the whitening and the power method.

    Parameters
    ----------
    n_components : int
        Number of sources k, 1 ≤ k ≤ n_features.
    n_restarts : int or None, default None
        Starts per deflation step (L); None means max(10, 2k).
    n_iterations : int, default 100
        Power iterations per start and for the refinement (N).
    deflation : {"orthogonal", "subtract"}, default "orthogonal"
        Passed to :func:`mvlib.ica.fourth_order_power_method`. Plain subtraction (Algorithm 1
        of Anandkumar et al. 2014) lets the search for a source of near-zero kurtosis land
        near a source already found, which the final orthogonalisation then mixes up.
    selection : {"significance", "value"}, default "significance"
        Passed to :func:`mvlib.ica.fourth_order_power_method`: extract first the source whose
        kurtosis is most significant (:math:`|\hat\kappa|` over its standard error), or the
        largest :math:`|\hat\kappa|` (Algorithm 1).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    components_ : (n_components, n_features) unmixing matrix
    mixing_ : (n_features, n_components) mixing matrix, the pseudo-inverse of ``components_``
    mean_ : (n_features,)
    whitening_ : (n_components, n_features) the whitening :math:`W^\top`
    kurtosis_ : (n_components,) excess kurtosis of each recovered source (training data)
    kurtosis_se_ : (n_components,) its standard error (:func:`mvlib.ica.sample_kurtosis`)
    n_features_in_ : int

    Warns
    -----
    IllConditionedWarning
        When some :math:`|\hat\kappa_j|` is below 4 of its standard errors: that source is
        indistinguishable from a Gaussian one at this sample size, and its direction (and
        that of any other such source) is not identified by the fourth cumulant. Also from
        :func:`mvlib.whitening_matrix` when the covariance is ill-conditioned.

    Raises
    ------
    ValueError
        n_components > n_features, fewer than two samples, a covariance of numerical rank
        below n_components, or data whose fourth cumulant vanishes in all kept directions.

    See Also
    --------
    sklearn.decomposition.FastICA : the fixed-point baseline, with the same conventions.
    mvlib.ica.amari_index : the score of an unmixing matrix against the true mixing.
    mvlib.tensor_power_method : the third-order power method this one extends to order four.

    Notes
    -----
    Cost of ``fit``: O(n d² + d³) for the covariance and whitening, O(n d k) to whiten,
    O(k (L + 1) N n k) for the power method (early stopping usually cuts N to a few
    iterations) and O(n k) for the kurtoses; memory O(n (d + k)).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import TensorICA
    >>> from mvlib.ica import amari_index
    >>> rng = np.random.default_rng(0)
    >>> S = np.column_stack([rng.laplace(size=2000), rng.uniform(-1.7, 1.7, size=2000),
    ...                      rng.exponential(size=2000)])   # three non-Gaussian sources
    >>> A = rng.standard_normal((3, 3))                     # mixing matrix
    >>> X = S @ A.T
    >>> ica = TensorICA(3, random_state=0).fit(X)
    >>> ica.transform(X).shape
    (2000, 3)
    >>> amari_index(ica.components_, A) < 0.05
    True
    """

    _scale_powers = {"mean_": (1, "the mean"), "whitening_": (-1, "the whitening matrix"),
                     "components_": (-1, "the unmixing matrix"), "mixing_": (1, "the mixing matrix")}

    _parameter_constraints = {
        "n_components": Integer(),
        "n_restarts": OrNone(Integer()),
        "n_iterations": Integer(),
        "deflation": Options(DEFLATIONS),
        "selection": Options(SELECTIONS),
        "random_state": RandomState(),
    }

    def __init__(self, n_components, *, n_restarts=None, n_iterations=100, deflation="orthogonal",
                 selection="significance", random_state=None):
        self.n_components = n_components
        self.n_restarts = n_restarts
        self.n_iterations = n_iterations
        self.deflation = deflation
        self.selection = selection
        self.random_state = random_state

    def fit(self, X, y=None):
        """Estimate the mixing from X (n_samples, n_features); returns ``self``."""
        p = self._validate_params()
        k, n_iterations, rng = p.n_components, p.n_iterations, p.random_state
        n_restarts = max(10, 2 * k) if p.n_restarts is None else p.n_restarts
        X = check_array(X, "X", ndim=2, min_rows=2)
        n, d = X.shape
        k = check_rank(k, "n_components", d, "n_features")
        e = scale_exponent(X)
        Xs = scaled(X, e)   # extreme scale: fit X / 2**e (exact), the matrices scale back at the end
        mean = Xs.mean(axis=0)
        Xc = Xs - mean
        cov = Xc.T @ Xc / n
        try:
            W = whitening_matrix(cov, k)                  # (d, k)
        except ValueError:
            ev = np.linalg.eigvalsh(cov)   # the rank rule of whitening_matrix
            rank = int(np.sum(ev > d * np.finfo(float).eps * max(np.abs(ev).max(), np.finfo(float).tiny)))
            raise ValueError(
                f"n_components={k} exceeds the numerical rank {rank} of the covariance of X "
                "(constant or linearly dependent columns, or too few samples): only that many "
                "sources can be whitened") from None
        Z = Xc @ W
        cp = fourth_order_power_method(FourthCumulantOperator(Z), k, n_restarts=n_restarts,
                                       n_iterations=n_iterations, deflation=self.deflation,
                                       selection=self.selection, random_state=rng)
        Q = np.asarray(cp.factors[0])
        if not np.all(np.isfinite(Q)) or np.max(np.abs(np.asarray(cp.weights))) == 0:
            raise ValueError("the fourth cumulant of the whitened data is zero in every direction: "
                             "the data look Gaussian and no source can be identified")
        U, _, Vt = sla.svd(Q)
        Q = U @ Vt                                        # nearest orthogonal matrix
        S = Z @ Q
        kurt, se = sample_kurtosis(S)
        order = np.argsort(-np.abs(kurt), kind="stable")
        Q, kurt, se = Q[:, order], kurt[order], se[order]
        mixing = dewhiten(W, Q)                           # (d, k) = (W^T)^+ Q
        signs = np.sign(mixing[np.argmax(np.abs(mixing), axis=0), np.arange(k)])
        signs[signs == 0] = 1.0
        Q, mixing = Q * signs, mixing * signs
        weak = np.flatnonzero(np.abs(kurt) < _NOISE_FACTOR * se)
        if weak.size:
            listed = ", ".join(f"{j} ({kurt[j]:+.3g} ± {se[j]:.2g})" for j in weak)
            warn_user(
                f"the excess kurtosis of source(s) {listed} is within {_NOISE_FACTOR:g} standard "
                f"errors of 0 (n_samples={n}): at this sample size such a source is "
                "indistinguishable from a Gaussian one, whose direction the fourth cumulant does "
                "not identify (one such source is fixed only as the orthogonal complement of the "
                "others; among two or more, any rotation fits equally well); these components are "
                "unreliable (more samples, or fewer n_components, may help)",
                IllConditionedWarning)
        self.mean_ = mean
        self.whitening_ = W.T
        self.components_ = Q.T @ W.T
        self.mixing_ = mixing
        self.kurtosis_ = kurt
        self.kurtosis_se_ = se
        self.n_features_in_ = d
        return self._unscale_fitted(e)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def transform(self, X):
        """Recovered sources of X (n_samples, n_features), shape (n_samples, n_components)."""
        self._check_fitted("components_")
        X = check_array(X, "X", ndim=2)
        self._check_n_features(X.shape[1])
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, X):
        """Data from sources X (n_samples, n_components): ``X @ mixing_.T + mean_``."""
        self._check_fitted("components_")
        S = check_array(X, "X", ndim=2)
        k = self.components_.shape[0]
        if S.shape[1] != k:
            raise ValueError(f"X has {S.shape[1]} columns but TensorICA has n_components={k} sources")
        return S @ self.mixing_.T + self.mean_
