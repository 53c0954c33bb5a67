"""The kernel Algorithm 3 of Song & Dai as an estimator: :class:`LatentTreeEmbedding`.

The chain algebra (:func:`mvlib.tt_embedding`, :func:`mvlib.reshaping_errors`) lives in
:mod:`mvlib.tree`; this module holds the estimator that runs it on kernel matrices of a
sample. See :doc:`/chapters/08_latent_trees`.
"""
from __future__ import annotations


import numpy as np
import scipy.linalg as sla
from scipy.special import ndtr
from sklearn.base import DensityMixin
from tensorly.tt_tensor import TTTensor

from ..core.base import MomentEstimator
from ..core.validation import (
    NonNegativeFloat,
    Options,
    OrNone,
    PositiveFloat,
    Rule,
    Unchecked,
    IllConditionedWarning,
    check_array,
    check_bandwidth,
    check_n_features,
    check_views,
    scale_exponent,
    scaled,
    unscale,
    warn_user,
)
from ..kernel import delta_kernel, rbf_kernel, silverman_bandwidth
from ._latent_tree import LatentTree, TreeTensorNetwork, _edge_ranks_arg
from ._tensor_train import _check_ranks

__all__ = ["LatentTreeEmbedding"]


def _check_tree(value, name):
    if not isinstance(value, LatentTree):
        raise TypeError(f"{name} must be a mvlib.tree.LatentTree or None, got {type(value).__name__}")
    return value


class LatentTreeEmbedding(DensityMixin, MomentEstimator):
    r"""Low-rank decomposition of an empirical kernel embedding along a chain or a latent tree (Algorithm 3).

    Decomposes :math:`\widehat{\mathcal C}_{X_{1:d}}=\frac1n\sum_{i=1}^n\otimes_{j=1}^d
    \phi(x_j^i)` into the chain of Algorithm 1 using only kernel matrices (Song & Dai 2013,
    Appendix A). With :math:`K_j^{ii'}=k(x_j^i,x_j^{i'})` and
    :math:`L_j=K_{j+1}\circ\dots\circ K_d`, step j solves the generalised eigenproblem

    .. math:: \tfrac1{n^2}\tilde K_jL_j\tilde K_j\beta=\lambda\tilde K_j\beta

    through the Cholesky factor :math:`\tilde K_j+\text{jitter}\,I=R^\top R` (eq. (17)),
    keeps the reduced features :math:`\gamma=\beta^\top\tilde K_j` (eq. (18)) and moves on
    with :math:`\tilde K_{j+1}=\Gamma\circ K_{j+1}`, :math:`\Gamma=\gamma^\top\gamma`
    (eq. (21)); :math:`\tilde K_1=K_1`. Evaluating the decomposed embedding at
    :math:`(\phi(x_1),\dots,\phi(x_d))` contracts the cores of eqs. (19)–(20). See
    :doc:`/chapters/08_latent_trees`.

    **Along a latent tree** (``tree`` given; Song & Dai 2013, Algorithm 1 on the edges of
    the tree with the kernel steps of Appendix A). The edges are taken leaves to root
    (``tree.postorder()``), as :func:`mvlib.tree.tree_decomposition` does on an
    explicit table. At node v the rows of the reshaping are the features of v's group —
    :math:`\phi(x_v)` for a leaf, the reduced coordinates of its children for a hidden
    node — with Gram matrix :math:`G_v` (a leaf's kernel matrix, or the Hadamard product
    :math:`\circ_c\Gamma_c` of its children's); the columns are all other current modes
    (unfinished leaves and finished subtrees), Gram matrix :math:`L_v`. The step solves
    :math:`G_vWL_vWG_v\beta=\lambda G_v\beta` (the weighted form of eq. (17), W the
    diagonal of sample weights, 1/n each by default), keeps :math:`\gamma_v=\beta^\top G_v`
    (eq. (18)) and :math:`\Gamma_v=\gamma_v^\top\gamma_v`. What remains at the root is
    the root core :math:`\sum_iw_i\otimes_{c}\gamma_c^{i}`. A new point is evaluated
    leaves to root, :math:`z_v(x)=\beta_v^\top q_v(x)` with
    :math:`q_v(x)_i=\prod_{g}\langle f_g^i,f_g(x)\rangle` over v's group, and the root
    core contracted with its children's :math:`z_c(x)`. The reshaping along an edge of a
    latent tree has rank at most the hidden states at that edge, whereas a chain of
    prefixes of a branching tree needs products of them (chapter 8).

    Parameters
    ----------
    ranks : int, sequence of ints ≥ 1, or None
        Without ``tree``: the rank kept at each of the d − 1 edges of the chain (one int
        for all). With ``tree``: one rank per edge in ``tree.edges`` order, one int for
        all, or None for the hidden states at each edge (``tree.edge_states()``).
    kernel : {"rbf", "delta"}
        "rbf": the normalised Gaussian kernel of :func:`mvlib.kernel.rbf_kernel`, so the
        evaluated embedding is a density; "delta": :func:`mvlib.kernel.delta_kernel`,
        so it is a probability table (discrete data).
    bandwidth : float, sequence of d floats, or "silverman"
        Gaussian bandwidth per variable ("silverman": the rule of
        :func:`mvlib.kernel.silverman_bandwidth` for each variable). Ignored for "delta".
    jitter : float ≥ 0
        Added to the diagonal, relative to its mean, before each Cholesky factorisation.
    density_floor : float > 0
        A low-rank embedding can be negative at some points; :meth:`score_samples` takes
        the logarithm of ``max(density, density_floor)``.
    tree : LatentTree or None
        The structure to decompose along (:class:`mvlib.tree.LatentTree`); variable
        j of X is leaf ``tree.leaves[j]``, so X must have ``tree.n_leaves`` variables.
        None: the chain X_1 – X_2 – … – X_d of Algorithm 1.

    Attributes
    ----------
    n_variables_ : int (d)
    tree_ : LatentTree or None
    ranks_ : list of ints actually kept, one per edge (d − 1 for a chain; ``tree.edges``
        order for a tree)
    singular_values_ : list of arrays, the singular values of each step (same order)
    betas_ : list of arrays (n, r_e), the coefficients β (θ^i are their rows)
    gammas_ : list of arrays (r_e, n), the reduced features γ^i as columns
    root_core_ : array (r_{c_1}, …, r_{c_m}) over the root's children (tree only)
    bandwidths_ : array (d,) (rbf only)
    n_features_in_ : int (the columns of a 2-d X) or list of d ints (the columns of each view
        when X is a list of views)

    Cost: O(d n²) for the kernel matrices and O(n³) per step (Cholesky, eigenproblem),
    memory O(d n²); :meth:`density` costs O(m n Σ r_j) for m points.

    See Also
    --------
    mvlib.tt_embedding : the same chain decomposition of an explicit table.
    mvlib.tree.tree_decomposition : the same tree decomposition of an explicit table.
    sklearn.neighbors.KernelDensity : the full-rank kernel density estimate, the baseline.
    mvlib.KernelSpectral : kernel embeddings of a three-view mixture.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib import LatentTreeEmbedding
    >>> from mvlib.tree import binary_tree, random_latent_tree_model
    >>> tree = binary_tree(4)                                # 4 leaves, 3 hidden nodes of 2 states
    >>> model = random_latent_tree_model(tree, 3, random_state=0)   # 3 symbols per leaf
    >>> X = model.sample(200, random_state=1)                # (200, 4) symbols
    >>> emb = LatentTreeEmbedding(2, kernel="delta", tree=tree).fit(X)
    >>> emb.ranks_                                           # one rank per edge
    [2, 2, 2, 2, 2, 2]
    >>> grid = np.indices((3, 3, 3, 3)).reshape(4, -1).T     # every joint outcome
    >>> truth = model.joint_table().ravel()
    >>> freq = np.bincount(np.ravel_multi_index(X.T, (3, 3, 3, 3)), minlength=81) / len(X)
    >>> low_rank = np.abs(emb.density(grid) - truth).sum()   # L1 distance to the true table
    >>> raw = np.abs(freq - truth).sum()                     # that of the raw frequencies
    >>> print(f"{low_rank:.2f} {raw:.2f}")
    0.29 0.40
    """

    _parameter_constraints = {
        "ranks": Unchecked("one rank per edge of the tree: checked against the data in fit"),
        "kernel": Options(("rbf", "delta"), style="words"),
        "bandwidth": Unchecked("'silverman', or one value per variable: checked against the data in fit"),
        "jitter": NonNegativeFloat(),
        "density_floor": PositiveFloat(),
        "tree": OrNone(Rule(_check_tree)),
    }

    def __init__(self, ranks, kernel: str = "rbf", bandwidth=1.0, *, jitter: float = 1e-10,
                 density_floor: float = 1e-12, tree=None):
        self.ranks = ranks
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.jitter = jitter
        self.density_floor = density_floor
        self.tree = tree

    # ------------------------------------------------------------------ input
    def _views(self, X, name="X", fitted=False):
        if isinstance(X, (list, tuple)):
            views = check_views(list(X), n_views=None, allow_sparse=False, min_rows=1,
                                names=[f"{name}[{j}]" for j in range(len(X))])
        else:
            X = check_array(X, name, ndim=2)
            views = [X[:, [j]] for j in range(X.shape[1])]
        if fitted:
            if len(views) != self.n_variables_:
                if not isinstance(X, (list, tuple)):   # the columns of a 2-d X are the variables
                    check_n_features(len(views), self.n_variables_, type(self).__name__, name)
                raise ValueError(f"{name} has {len(views)} variables but the model was fitted on "
                                 f"{self.n_variables_}")
            for j, (V, T) in enumerate(zip(views, self._train)):
                if V.shape[1] != T.shape[1]:
                    raise ValueError(f"variable {j} of {name} has {V.shape[1]} columns but "
                                     f"{T.shape[1]} in the training data")
        return views

    def _check_params(self, views):
        """(ranks per edge, bandwidths per variable or None): the table's checks, then those that
        need the data (one rank per edge of the tree, one bandwidth per variable)."""
        self._validate_params()
        d = len(views)
        if self.tree is not None:
            if self.tree.n_leaves != d:
                raise ValueError(f"tree has {self.tree.n_leaves} leaves but X holds {d} variables "
                                 "(one leaf per variable)")
            ranks = _edge_ranks_arg(self.ranks, self.tree)
        elif self.ranks is None:
            raise ValueError("ranks=None needs a tree (the hidden states at each edge); "
                             "give the ranks of the chain")
        else:
            ranks = _check_ranks(self.ranks, d - 1)
        if self.kernel == "delta":
            return ranks, None
        bw = self.bandwidth
        if isinstance(bw, str):
            if bw != "silverman":
                raise ValueError(f"bandwidth must be 'silverman', a positive float or one per variable, got {bw!r}")
            bw = [silverman_bandwidth(V) for V in views]
        elif isinstance(bw, (list, tuple, np.ndarray)):
            if len(bw) != d:
                raise ValueError(f"bandwidth must hold one value per variable ({d}), got {len(bw)}")
            bw = [check_bandwidth(b, f"bandwidth[{j}]") for j, b in enumerate(bw)]
        else:
            bw = [check_bandwidth(bw)] * d
        return ranks, np.asarray(bw, dtype=float)

    def _gram(self, j, A, B):
        if self.kernel == "delta":
            return delta_kernel(A, B)
        return rbf_kernel(A, B, bandwidth=float(self._bandwidths_internal[j]), normalize=True)

    # ------------------------------------------------------------------- fit
    def fit(self, X, y=None, sample_weight=None):
        r"""Fit the chain (or the tree) to X: an array (n, d) of d scalar variables or a list
        of d views (n, p_j). Needs d ≥ 2 and n ≥ 2.

        ``sample_weight`` (n,), non-negative with a positive sum: the embedding becomes
        :math:`\sum_iw_i\otimes_j\phi(x_j^i)` with the weights scaled to sum to 1 (rows of
        zero weight are dropped). With the delta kernel, the distinct cells of a table as
        rows and their probabilities as weights, the embedding is that table exactly (a
        population check). Returns ``self``."""
        views = self._views(X)
        d, n = len(views), views[0].shape[0]
        if d < 2:
            raise ValueError(f"X must hold at least 2 variables, got {d} (n_features={d})")
        w = None
        if sample_weight is not None:
            w = check_array(sample_weight, "sample_weight", ndim=1)
            if w.shape[0] != n:
                raise ValueError(f"sample_weight has {w.shape[0]} entries but X has {n} samples")
            if np.any(w < 0):
                raise ValueError("sample_weight must be non-negative")
            if not w.sum() > 0:
                raise ValueError("sample_weight must not be all zero: the weights need a positive sum")
            keep = w > 0
            views = [V[keep] for V in views]
            w = w[keep] / w.sum()
            n = w.shape[0]
        if n < 2:
            raise ValueError(f"X has {n} samples (of positive weight) but at least 2 are required")
        ranks, bw = self._check_params(views)
        for k, r in enumerate(ranks):
            if r > n:
                raise ValueError(f"ranks[{k}]={r} exceeds the number of samples n={n}")
        # Variables of extreme magnitude are divided by exact powers of two (none for ordinary
        # data, whose arithmetic is unchanged): the chain is fitted in those units, densities
        # are multiplied back by the matching power, probabilities need nothing.
        exps = [scale_exponent(V) if self.kernel == "rbf" else 0 for V in views]
        views = [scaled(V, e) for V, e in zip(views, exps)]
        self._exponents = exps
        self._density_exponent = -sum(e * V.shape[1] for e, V in zip(exps, views))
        self._bandwidths_internal = None if bw is None else np.ldexp(bw, -np.asarray(exps))
        if bw is not None and not np.all(np.isfinite(self._bandwidths_internal) & (self._bandwidths_internal > 0)):
            raise ValueError(f"X has magnitudes near 2**{max(exps, key=abs)} but bandwidth={self.bandwidth!r}: "
                             "the bandwidth relative to the data cannot be held in float64; rescale X and "
                             "the bandwidth together")
        self.n_variables_, self.bandwidths_, self._train = d, bw, views
        self.n_features_in_ = [V.shape[1] for V in views] if isinstance(X, (list, tuple)) else d
        self._w, self.tree_ = w, self.tree
        Ks = [self._gram(j, V, V) for j, V in enumerate(views)]
        if self.tree is not None:
            return self._fit_tree(Ks, ranks)
        # L_j = K_{j+1} ∘ ... ∘ K_d, built from the right
        Ls = [None] * (d - 1)
        acc = Ks[-1]
        for j in range(d - 2, -1, -1):
            Ls[j] = acc
            if j > 0:
                acc = acc * Ks[j]
        if not all(np.all(np.isfinite(M)) for M in Ks + Ls):
            raise ValueError(f"the products of the normalised Gram matrices overflow float64: the kernel "
                             f"values 1/(sqrt(2 pi) s)^p at bandwidth={self.bandwidth!r} are too large; "
                             "rescale X (and the bandwidth) towards 1")
        Kt = Ks[0]
        self.betas_, self.gammas_, self.singular_values_ = [], [], []
        for j in range(d - 1):
            beta, lam = self._step(Kt, Ls[j], ranks[j], j)
            gamma = beta.T @ Kt                           # eq. (18)/(21)
            self.betas_.append(beta)
            self.gammas_.append(gamma)
            self.singular_values_.append(np.sqrt(np.maximum(lam, 0.0)))
            if j < d - 2:
                Kt = (gamma.T @ gamma) * Ks[j + 1]        # Γ ∘ K_{j+1}
        self.ranks_ = [b.shape[1] for b in self.betas_]
        return self

    def _fit_tree(self, Ks, ranks):
        """Algorithm 3 along the edges of ``self.tree`` (leaves to root); see the class docstring."""
        t = self.tree
        if not all(np.all(np.isfinite(K)) for K in Ks):
            raise ValueError(f"the normalised Gram matrices overflow float64 at bandwidth={self.bandwidth!r}; "
                             "rescale X (and the bandwidth) towards 1")
        rank = dict(zip([v for v, _ in t.edges], ranks))
        for (v, _), r in zip(t.edges, ranks):
            if r > Ks[0].shape[0]:
                raise ValueError(f"the rank {r} of edge ({v}, {t.parent[v]}) exceeds the number of "
                                 f"samples n={Ks[0].shape[0]}")
        mode = {leaf: j for j, leaf in enumerate(t.leaves)}
        gram = {leaf: Ks[mode[leaf]] for leaf in t.leaves}    # current modes -> their Gram matrix
        beta, gamma, sv = {}, {}, {}
        order = [v for v, _ in t.edges]
        n = Ks[0].shape[0]
        for v in t.postorder():
            group = [v] if not t.children[v] else list(t.children[v])
            G = _hadamard([gram.pop(g) for g in group], n)
            L = _hadamard(list(gram.values()), n)
            b, lam = self._step(G, L, rank[v], order.index(v))
            beta[v], gamma[v] = b, b.T @ G                   # eq. (18)
            sv[v] = np.sqrt(np.maximum(lam, 0.0))
            gram[v] = gamma[v].T @ gamma[v]                  # Γ_v
        self.betas_ = [beta[v] for v in order]
        self.gammas_ = [gamma[v] for v in order]
        self.singular_values_ = [sv[v] for v in order]
        self.ranks_ = [beta[v].shape[1] for v in order]
        self._beta, self._gamma = beta, gamma
        self.root_core_ = self._root_core([gamma[c] for c in t.children[t.root]])
        return self

    def _root_core(self, gammas):
        """Σ_i w_i ⊗_c γ_c[:, i], shape (r_{c_1}, ..., r_{c_m})."""
        n = gammas[0].shape[1]
        return _outer_columns(gammas) @ (np.full(n, 1.0 / n) if self._w is None else self._w)

    def _pairwise(self, L):
        """W L W with W the diagonal of the weights (L/n² without weights)."""
        if self._w is None:
            return L / L.shape[0] ** 2
        return self._w[:, None] * L * self._w[None, :]

    def _step(self, Kt, L, r, j):
        """Leading r solutions of K W L W K β = λ K β (W = I/n: eq. (17)) via K + jitter I = RᵀR."""
        n = Kt.shape[0]
        scale = float(np.mean(np.diag(Kt)))
        if not scale > 0:
            raise ValueError(f"the Gram matrix of step {j + 1} has a zero diagonal: the data carry "
                             "no signal at this edge, or the normalised kernel values 1/(sqrt(2 pi) s)^p "
                             f"underflow float64 at bandwidth={self.bandwidth!r}; rescale X (and the "
                             "bandwidth) towards 1")
        try:
            R = sla.cholesky(Kt + self.jitter * scale * np.eye(n), lower=False)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"the Cholesky factorisation of the Gram matrix of step {j + 1} failed with "
                f"jitter={self.jitter!r}; increase jitter (e.g. to 1e-8)") from None
        M = R @ self._pairwise(L) @ R.T
        lam, vec = sla.eigh((M + M.T) / 2.0, subset_by_index=[n - r, n - 1])
        lam, vec = lam[::-1], vec[:, ::-1]
        if lam[-1] <= max(1e-12, 100.0 * self.jitter) * max(lam[0], 0.0):
            warn_user(
                f"ranks[{j}]={r} exceeds the numerical rank of the reshaping at step {j + 1} "
                f"(its {r}-th singular value is {np.sqrt(max(lam[-1], 0.0)):.1e}, the first "
                f"{np.sqrt(max(lam[0], 0.0)):.1e}); the extra directions carry only noise",
                IllConditionedWarning)
        beta = sla.solve_triangular(R, vec, lower=False)   # β = R^{-1} β̃
        return beta, lam

    # -------------------------------------------------------------- queries
    def _contract(self, Kq):
        r"""Contract the chain with per-variable kernel rows Kq[j] (m, n): eqs. (19)–(20)."""
        if self.tree_ is not None:
            return self._contract_tree(Kq)
        n = Kq[0].shape[1]
        v = Kq[0] @ self.betas_[0]                        # G_1 •_1 φ(x_1): (m, r_1)
        for j in range(1, self.n_variables_ - 1):
            v = ((v @ self.gammas_[j - 1]) * Kq[j]) @ self.betas_[j]
        last = (v @ self.gammas_[-1]) * Kq[-1]
        return np.sum(last, axis=1) / n if self._w is None else last @ self._w

    def _contract_tree(self, Kq):
        """Leaves to root: z_v = β_vᵀ q_v with q_v the Hadamard product over v's group of
        the kernel rows (leaves) or z_c γ_c (children); the root core takes the z_c of the
        root's children. Kq[j] (m, n) for variable j; returns (m,)."""
        t = self.tree_
        mode = {leaf: j for j, leaf in enumerate(t.leaves)}
        z = {}
        for v in t.postorder():
            if not t.children[v]:
                q = Kq[mode[v]]
            else:
                q = _hadamard([z.pop(c) @ self._gamma[c] for c in t.children[v]], None)
            z[v] = q @ self._beta[v]
        out = self.root_core_
        m = Kq[0].shape[0]
        out = np.broadcast_to(out, (m,) + out.shape)
        for c in t.children[t.root]:                      # contract the leading core mode
            out = np.einsum("ma...,ma->m...", out, z[c])
        return out

    def density(self, X):
        r"""The decomposed embedding evaluated at new points, :math:`\tilde{\mathcal C}
        (\phi(x_1),\dots,\phi(x_d))`, shape (m,).

        With the normalised Gaussian kernel this is a density estimate of the joint
        distribution (the full-rank case is the product-kernel density estimate); with
        the delta kernel it is an estimated probability. May be slightly negative: a
        low-rank embedding is not constrained to be non-negative. Cost O(m n Σ r_j).
        See :doc:`/chapters/08_latent_trees`.
        """
        self._check_fitted("betas_")
        return unscale(self._density_internal(X), self._density_exponent, "X", "the density")

    def _density_internal(self, X):
        """The density in the fitted units (data divided by ``2**self._exponents``)."""
        views = [scaled(V, e) for V, e in zip(self._views(X, fitted=True), self._exponents)]
        return self._contract([self._gram(j, V, T) for j, (V, T)
                               in enumerate(zip(views, self._train))])

    def score_samples(self, X):
        """log max(density, density_floor) of each row, shape (m,).

        For data of extreme magnitude (beyond 2**±100, rescaled by exact powers of two at
        ``fit``) the floor applies to the density in the rescaled units, so the scores of
        data multiplied by s are those of the original data minus D·log s (D columns).
        """
        self._check_fitted("betas_")
        internal = np.log(np.maximum(self._density_internal(X), self.density_floor))
        return internal + self._density_exponent * np.log(2.0)

    def score(self, X, y=None):
        """Average of :meth:`score_samples` (a held-out log-likelihood)."""
        return float(np.mean(self.score_samples(X)))

    def box_probability(self, lower, upper):
        r"""Integral of the decomposed embedding over boxes (an integral query).

        Each kernel row :math:`k(x_j^i,\cdot)` is replaced by its integral over
        ``[lower_j, upper_j]`` (for the normalised Gaussian kernel a difference of normal
        CDFs per coordinate; for the delta kernel an indicator), then the chain is
        contracted as in :meth:`density`. ±inf bounds integrate a variable out, so
        ``lower=-inf, upper=+inf`` in all but some variables gives marginal probabilities.

        Parameters
        ----------
        lower, upper : arrays (m, D) with D the total number of columns of the views

        Returns
        -------
        array (m,). Cost O(m n Σ r_j).
        """
        self._check_fitted("betas_")
        D = sum(T.shape[1] for T in self._train)
        lo = check_array(lower, "lower", ndim=2, finite=False)
        hi = check_array(upper, "upper", ndim=2, finite=False)
        for nm, A in (("lower", lo), ("upper", hi)):
            if A.shape[1] != D:
                raise ValueError(f"{nm} has {A.shape[1]} columns but the data have {D}")
            if np.any(np.isnan(A)):
                raise ValueError(f"{nm} contains NaN")
        if lo.shape != hi.shape:
            raise ValueError(f"lower has shape {lo.shape} but upper has {hi.shape}")
        if np.any(lo > hi):
            raise ValueError("lower must not exceed upper")
        Kq, c = [], 0
        for j, T in enumerate(self._train):
            p = T.shape[1]
            e = self._exponents[j]
            a, b = np.ldexp(lo[:, None, c:c + p], -e), np.ldexp(hi[:, None, c:c + p], -e)
            if self.kernel == "delta":
                w = np.all((T[None] >= a) & (T[None] <= b), axis=2).astype(float)
            else:
                s = self._bandwidths_internal[j]
                w = np.prod(ndtr((b - T[None]) / s) - ndtr((a - T[None]) / s), axis=2)
            Kq.append(w)
            c += p
        return self._contract(Kq)

    def to_tt(self, grids):
        r"""The decomposed embedding evaluated on a product grid, as a TTTensor.

        ``grids[j]`` is an array (m_j,) or (m_j, p_j) of points for variable j. Core j is
        the matrix of eq. (19) at every grid point, shape (r_{j-1}, m_j, r_j), so
        ``tensorly.tt_to_tensor`` gives the (m_1, ..., m_d) table of :meth:`density` values
        without evaluating every combination. With the delta kernel and the alphabets as
        grids this is the low-rank probability table. See :doc:`/chapters/08_latent_trees`.
        """
        self._check_fitted("betas_")
        if not isinstance(grids, (list, tuple)) or len(grids) != self.n_variables_:
            raise ValueError(f"grids must be a list of {self.n_variables_} arrays (one per variable)")
        G = []
        for j, (g, T) in enumerate(zip(grids, self._train)):
            g = np.asarray(g, dtype=float)
            g = g[:, None] if g.ndim == 1 else g
            G.append(self._gram(j, scaled(check_array(g, f"grids[{j}]", ndim=2), self._exponents[j]), T))
        if self.tree_ is not None:
            raise ValueError("this model was fitted along a tree, which is not a tensor train; "
                             "use to_network(grids)")
        n, d = self._train[0].shape[0], self.n_variables_
        cores = [unscale((G[0] @ self.betas_[0])[None], self._density_exponent, "grids", "the density")]
        for j in range(1, d - 1):
            cores.append(np.einsum("ai,qi,ib->aqb", self.gammas_[j - 1], G[j], self.betas_[j]))
        w = np.full(n, 1.0 / n) if self._w is None else self._w
        cores.append(((self.gammas_[-1] * w) @ G[-1].T)[:, :, None])
        return TTTensor(cores)

    def to_network(self, grids):
        r"""The decomposed embedding on a product grid, as a tree tensor network.

        For a model fitted along a tree (``tree`` given). ``grids[j]`` is an array (m_j,) or
        (m_j, p_j) of points for variable j (leaf ``tree.leaves[j]``). The cores
        (:class:`mvlib.tree.TreeTensorNetwork` layout) are: leaf v, the matrix
        :math:`z_v` at its grid points (m_v, r_v); hidden node v with children
        c_1..c_m, :math:`\sum_i\prod_c\gamma_c[a_c,i]\,\beta_v[i,b]`, shape
        (r_{c_1}, …, r_{c_m}, r_v); the root, :attr:`root_core_`. ``.contract()`` gives the
        (m_1, …, m_d) table of :meth:`density` values; with the delta kernel and the
        alphabets as grids it is the low-rank probability table. Cost O(n Σ_v ∏ r) plus
        O(n Σ m_j r_j) for the leaves.
        """
        self._check_fitted("betas_")
        t = self.tree_
        if t is None:
            raise ValueError("this model was fitted along a chain; use to_tt(grids)")
        if not isinstance(grids, (list, tuple)) or len(grids) != self.n_variables_:
            raise ValueError(f"grids must be a list of {self.n_variables_} arrays (one per variable)")
        cores = [None] * t.n_nodes
        for j, (g, T, leaf) in enumerate(zip(grids, self._train, t.leaves)):
            g = np.asarray(g, dtype=float)
            g = g[:, None] if g.ndim == 1 else g
            G = self._gram(j, scaled(check_array(g, f"grids[{j}]", ndim=2), self._exponents[j]), T)
            cores[leaf] = G @ self._beta[leaf]
        for v in t.hidden:
            if v == t.root:
                continue
            cores[v] = _outer_columns([self._gamma[c] for c in t.children[v]]) @ self._beta[v]
        cores[t.root] = unscale(self.root_core_, self._density_exponent, "grids", "the density")
        return TreeTensorNetwork(t, cores)


def _outer_columns(gammas):
    """Column-wise outer products: (r_1, n), ..., (r_m, n) -> (r_1, ..., r_m, n)."""
    acc = gammas[0]
    for g in gammas[1:]:
        acc = acc[..., None, :] * g
    return acc


def _hadamard(mats, n):
    """Elementwise product of a list of (n, n) matrices (all ones for an empty list)."""
    if not mats:
        return np.ones((n, n))
    out = mats[0].copy()
    for M in mats[1:]:
        out *= M
    return out
