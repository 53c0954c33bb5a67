r"""The small measurements of the overcomplete chapter (09_overcomplete) that loop over methods,
sizes or draws; writes ``chapters/data/overcomplete_<part>.json`` for the parts ``coherence``,
``variants``, ``semi_supervised`` and ``incoherence``.

Run ``OMP_NUM_THREADS=1 python experiments/overcomplete_chapter.py`` (about twenty seconds on one
core; name parts, e.g. ``variants``, to run only those), or add ``--quick`` (smaller sizes;
writes nothing). The chapter loads the files, prints them and asserts on them.

* ``coherence`` (section "The model and incoherence") — for d in {25, 50, 100, 200, 400} and
  k = 2d, three draws of ``mvlib.random_unit_columns(d, 2 d, rng)`` per size from one
  ``numpy.random.default_rng(0)`` (sizes increasing): the mean over the draws of the largest
  overlap :math:`\mu=\max_{i\ne j}|\langle a_i,a_j\rangle|`.

* ``variants`` (section "The algorithm, step by step") — the exact tensor
  ``T, w, A = mvlib.random_overcomplete_tensor(20, 30, 4)`` (equal weights, random unit
  components) decomposed by ``mvlib.OvercompleteTensorDecomposition(30, init=init,
  refine=refine, random_state=0).fit(T)`` for ``init`` in ("svd", "random") and ``refine`` in
  (False, True): the error :math:`\min_\pm\|\hat a_j\pm a_j\|` of every component after the best
  matching of columns (``column_errors``, sign-free) and the number of centres the power method
  found (``n_power_components_``). Floats are stored exactly (errors after ALS are ~1e-10).
* ``semi_supervised`` (section "Semi-supervised starts") — from ``numpy.random.default_rng(6)``
  in turn: k = 75 random unit components in d = 50, 5 labelled samples of
  :math:`N(a_j,\zeta^2 I)` per component (:math:`\zeta^2=1/d`), whose normalised means
  (``mvlib.labelled_initialization``) start
  ``mvlib.OvercompleteTensorDecomposition(k, init="labels").fit_moments(X, zeta2, init_vectors=V)``
  on n = 20,000 unlabelled draws. Stores the median sign-free errors of the starts, of the power
  updates and after ALS, and both weight vectors (``power_weights_``, ``weights_``).
* ``incoherence`` (exercise "Incoherence when k grows faster than d") — for d in
  {16, 36, 64, 121, 196} and the two laws k = 2d and k = round(d^{3/2}), two draws of
  ``mvlib.random_unit_columns(d, k, rng)`` per size from one ``numpy.random.default_rng(9)``
  (laws in that order, sizes increasing): the mean over the draws of the largest overlap
  :math:`\mu=\max_{i\ne j}|\langle a_i,a_j\rangle|` (``mvlib.overcomplete.coherence``) and of
  :math:`\mu\|A\|^2` (spectral norm squared, the largest eigenvalue of :math:`AA^\top`).
"""
from __future__ import annotations

import warnings

import numpy as np

import mvlib
from mvlib.book import experiment_main
from mvlib.core.metrics import column_errors
from mvlib.overcomplete import coherence, random_unit_columns

LAWS = {"k = 2d": lambda d: 2 * d, "k = d^(3/2)": lambda d: int(round(d ** 1.5))}


def variants(d=20, k=30, seed=4):
    """Errors of the estimator's four variants (SVD or random starts, with or without ALS) on one tensor."""
    T, _, A_true = mvlib.random_overcomplete_tensor(d, k, seed)
    rows = []
    for init in ("svd", "random"):
        for refine in (False, True):
            est = mvlib.OvercompleteTensorDecomposition(k, init=init, refine=refine, random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # too few centres, only without ALS
                est.fit(T)
            rows.append(dict(init=init, refine=refine, n_power_components=int(est.n_power_components_),
                             errors=column_errors(A_true, est.factors_, sign_invariant=True)))
    return dict(d=d, k=k, seed=seed, rows=rows)


def coherence_scaling(dims=(25, 50, 100, 200, 400), seed=0, draws=3):
    """Largest overlap of k = 2d random unit vectors (mean over ``draws`` draws) for each d."""
    rng = np.random.default_rng(seed)
    mu_max = [np.mean([coherence(random_unit_columns(d, 2 * d, rng)) for _ in range(draws)]) for d in dims]
    return dict(dims=list(dims), seed=seed, draws=draws, max_overlap=mu_max)


def semi_supervised(d=50, k=75, n=20_000, seed=6, per_label=5):
    """The estimator from labelled starts on n unlabelled samples: median errors and the weights."""
    zeta2 = 1 / d
    rng = np.random.default_rng(seed)
    A = random_unit_columns(d, k, rng)
    y = np.repeat(np.arange(k), per_label)
    V = mvlib.labelled_initialization(A.T[y] + np.sqrt(zeta2) * rng.standard_normal((len(y), d)), y, k)
    X = A.T[rng.integers(k, size=n)] + np.sqrt(zeta2) * rng.standard_normal((n, d))
    est = mvlib.OvercompleteTensorDecomposition(k, init="labels").fit_moments(X, zeta2, init_vectors=V)
    e_lab, e_pow, e_als = (float(np.median(column_errors(A, F, sign_invariant=True)))
                           for F in (V, est.power_factors_, est.factors_))
    return dict(d=d, k=k, n=n, zeta2=zeta2, seed=seed, per_label=per_label,
                median_error=dict(labels=e_lab, power=e_pow, als=e_als),
                power_weights=est.power_weights_, weights=est.weights_)


def collective(A):
    r""":math:`\mu\|A\|^2`: the largest overlap times the squared spectral norm of ``A`` (d, k)."""
    return coherence(A) * np.linalg.eigvalsh(A @ A.T)[-1]


def incoherence(dims=(16, 36, 64, 121, 196), seed=9, draws=2):
    """Largest overlap and mu ||A||^2 (means over ``draws`` draws) for k = 2d and k = d^(3/2)."""
    rng = np.random.default_rng(seed)
    laws = {}
    for law, k_of in LAWS.items():
        mus, colls = [], []
        for d in dims:
            As = [random_unit_columns(d, k_of(d), rng) for _ in range(draws)]
            mus.append(np.mean([coherence(A) for A in As]))
            colls.append(np.mean([collective(A) for A in As]))
        laws[law] = dict(k=[k_of(d) for d in dims], max_overlap=mus, mu_norm2=colls)
    return dict(dims=list(dims), seed=seed, draws=draws, laws=laws)


PARTS = {"coherence": coherence_scaling, "variants": variants, "semi_supervised": semi_supervised,
         "incoherence": incoherence}
QUICK = {"coherence": dict(dims=(9, 16)), "variants": dict(d=8, k=10),
         "semi_supervised": dict(d=10, k=12, n=2000), "incoherence": dict(dims=(9, 16, 25))}


def main(argv=None):
    return experiment_main(PARTS, QUICK, prefix="overcomplete_", script="experiments/overcomplete_chapter.py",
                           description=__doc__.splitlines()[0], digits=None, argv=argv)


if __name__ == "__main__":
    main()
