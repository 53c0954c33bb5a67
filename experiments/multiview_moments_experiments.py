r"""Experiments of chapter 1 (``chapters/01_multiview_moments.ipynb``): sampling error of the
empirical moments, and what happens to the estimator's inputs near the rank condition.

Run ``OMP_NUM_THREADS=1 python experiments/multiview_moments_experiments.py`` (about half a
minute on one core); ``--quick`` runs both experiments at small sizes and writes nothing. The
chapter loads the two files, asserts on them, glues from them and plots them.

``multiview_moments_convergence.json`` — the :math:`1/\sqrt n` rate
    For a categorical and then a Gaussian three-view mixture (``random_multiview_model`` with
    k = 3 and d_v = 5, drawn from one ``default_rng(31415)`` together with a direction
    eta ~ N(0, I_5) and all samples, in this order), seven sample sizes ``logspace(3, 5, 7)``
    with six repetitions each: the relative Frobenius errors :math:`\|\hat P-P\|_F/\|P\|_F` of
    ``mvlib.pairs(X1, X2)``, ``mvlib.triples`` and ``mvlib.triples_slice(..., eta)`` against the
    model's exact moments. Stored: the sizes and, per kind, the mean over the repetitions,
    shape (sizes, 3 moments).

``multiview_moments_degrade.json`` — approaching the rank condition
    Gaussian views, k = 3, d_v = 5, unit noise, weights (0.3, 0.3, 0.4). From
    ``default_rng(7)``: two fixed means per view (3 N(0, I)), then per view a direction u_v of
    length 3 orthogonal to them; the third mean is mu_{v,3}(t) = 2 mu_{v,1} - mu_{v,2} + t u_v
    for seven t in ``logspace(0, -2, 7)``. At each t, five samples of n = 10,000
    (``random_state`` = seed 0..4). Stored per t: sigma_3(P12) of the population; per t and
    seed: ||P12^ - P12||_2, the sine of the largest principal angle between the top-3 left
    singular vectors of P12^ and the columns of M_1, the matched relative error of the view-3
    means of ``mvlib.MultiViewMixture(3, random_state=seed)``, and whether that fit raised an
    ``mvlib.IllConditionedWarning``.
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

import mvlib
from mvlib.book import data_path, write_json
from mvlib.core.metrics import largest_sine, relative_error
from mvlib.multiview import MultiViewMixtureModel, random_multiview_model

KINDS = ("categorical", "gaussian")


def convergence(sizes=None, n_reps=6, seed=31415):
    """Mean relative errors of pairs, triples and slice, per kind: ``{"sizes", "n_reps", "errors"}``."""
    sizes = np.round(np.logspace(3, 5, 7)).astype(int) if sizes is None else np.asarray(sizes)
    rng = np.random.default_rng(seed)
    errors = {}   # kind -> (len(sizes), 3 moments), mean over repetitions
    for kind in KINDS:
        model = random_multiview_model(3, (5, 5, 5), kind=kind, random_state=rng)
        e = rng.normal(size=5)
        truth = (model.pairs(1, 2), model.triples(), model.triples_slice(e))
        err = np.zeros((len(sizes), n_reps, 3))
        for i, n in enumerate(mvlib.progress(sizes, desc=kind)):
            for r in range(n_reps):
                (X1, X2, X3), _ = model.sample(int(n), random_state=rng)
                estimates = (mvlib.pairs(X1, X2), mvlib.triples(X1, X2, X3),
                             mvlib.triples_slice(X1, X2, X3, e))
                err[i, r] = [relative_error(est, tru) for est, tru in zip(estimates, truth)]
        errors[kind] = err.mean(axis=1)
    return {"sizes": sizes, "n_reps": n_reps, "errors": errors}


def degenerate_means(ts, d=5, seed=7):
    """The view means of the degradation study: for each t, ``[M_1(t), M_2(t), M_3(t)]`` (d, 3)."""
    rng = np.random.default_rng(seed)
    base = [rng.normal(scale=3.0, size=(d, 2)) for _ in range(3)]
    u_dirs = [3.0 * np.linalg.qr(np.column_stack([B, rng.normal(size=d)]))[0][:, 2] for B in base]
    return [[np.column_stack([B, 2 * B[:, 0] - B[:, 1] + t * u]) for B, u in zip(base, u_dirs)]
            for t in ts]


def degradation(ts=None, n=10_000, seeds=range(5), weights=(0.3, 0.3, 0.4)):
    """Inputs and outputs of the estimator as the third means approach an affine combination."""
    ts = np.logspace(0, -2, 7) if ts is None else np.asarray(ts)
    w, seeds, k = np.asarray(weights), list(seeds), len(weights)
    sk = np.zeros(len(ts))
    err, sine, mean_err = (np.zeros((len(ts), len(seeds))) for _ in range(3))
    warned = np.zeros((len(ts), len(seeds)), dtype=bool)
    for a, Ms_t in enumerate(degenerate_means(ts)):
        model = MultiViewMixtureModel(w, Ms_t, kind="gaussian", noise=1.0)
        P12_t = model.pairs(1, 2)
        sk[a] = np.linalg.svd(P12_t, compute_uv=False)[k - 1]
        for b, seed in enumerate(seeds):
            (X1, X2, X3), _ = model.sample(n, random_state=seed)
            P12_hat = mvlib.pairs(X1, X2)
            err[a, b] = np.linalg.norm(P12_hat - P12_t, 2)
            sine[a, b] = largest_sine(np.linalg.svd(P12_hat)[0][:, :k], Ms_t[0])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fit = mvlib.MultiViewMixture(k, random_state=seed).fit([X1, X2, X3])
            warned[a, b] = any(issubclass(c.category, mvlib.IllConditionedWarning) for c in caught)
            mean_err[a, b] = mvlib.matched_error(Ms_t[2], fit.means_[2].T, relative=True)
    return {"t": ts, "n": n, "seeds": seeds, "weights": w, "sigma_k": sk, "error": err,
            "sine": sine, "mean_error": mean_err, "warned": warned}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes; write nothing")
    args = parser.parse_args(argv)
    if args.quick:
        conv = convergence(sizes=[200, 400], n_reps=2)
        deg = degradation(ts=[1.0, 0.01], n=2000, seeds=range(2))
        print({kind: np.round(e, 3).tolist() for kind, e in conv["errors"].items()})
        print("sigma_k", deg["sigma_k"], "warned", deg["warned"].tolist())
        return
    # 10 decimals: the chapter fits slopes to these errors and prints them to two digits
    for name, result in (("multiview_moments_convergence.json", convergence()),
                         ("multiview_moments_degrade.json", degradation())):
        print("wrote", write_json(result, data_path(name), digits=10))


if __name__ == "__main__":
    main()
