r"""Synthetic experiments of the chapter "Topic models" (03_topic_models).

Run ``OMP_NUM_THREADS=1 python experiments/ch3_experiments.py`` (about fifteen seconds on one core;
name parts, e.g. ``rare``, to run only those; ``--quick`` runs every part at small sizes and
writes nothing). It writes ``chapters/data/ch3_<part>.json``, which the chapter loads, asserts
on and glues from. The Reuters fits and the document-length grid are in
``experiments/topic_experiments.py``.

* ``ch3_rate.json`` — the k = 3, d = 30 model (``random_topic_model(3, 30,
  concentration=0.5, random_state=1)``), n = 1e3 .. 1e5 documents of 5 words, four data sets
  per n: the matched topic error of ``SpectralTopicModel(3, variant="A")`` and the Frobenius
  error of ``count_pairs``.
* ``ch3_eta.json`` — one data set of 3000 documents of 5 words from the k = 4, d = 30 model
  (``random_state=2``): for 300 random directions theta, the smallest gap between the
  eigenvalues of B_hat(U_hat theta) relative to the largest |eigenvalue| and the error of the
  topics its eigenvectors give (step 4 of Algorithm A); the largest |imaginary part| relative
  to that eigenvalue; and the error and retries of ``SpectralTopicModel(4, variant="A")``.
* ``ch3_routes.json`` — five data sets of 10,000 documents from the k = 3 model: topic error
  and wall time (``time.perf_counter``, one BLAS thread) of the three routes of
  ``SpectralTopicModel`` (``variant="A"``, ``variant="B"``, ``method="tensor"``).
* ``ch3_rare.json`` — the k = 3 model with its third topic made rare (weight 0.1 .. 0.003, the
  others sharing the rest equally), five data sets of 10,000 documents per weight: the error
  of the rare topic relative to its norm and whether the default estimator raised
  ``IllConditionedWarning``.
* ``ch3_tilt.json`` — exercise "Why normalise": ``mvlib.algorithm_a`` on the exact moments of
  the k = 4 model, the fourth column of the exact U tilted by an angle alpha (0 .. 0.5)
  towards a unit vector orthogonal to the range of M: the topic error, the gap to the
  normalised projections P_S mu_h and the eigenvalue error.

Every part uses the seeds and the order of random draws of the chapter's former cells, so the
chapter prints the same numbers. Floats are stored unrounded (the chapter formats them).
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.linalg as sla

import mvlib
from mvlib.book import experiment_main
from mvlib.core.observable import projected_operator
from mvlib.topic import SingleTopicModel, random_topic_model

EXACT = None   # write_json digits: every float exactly (printed digits of tiny values must not move)


def model_k3():
    """The chapter's k = 3 model over 30 words."""
    return random_topic_model(3, 30, concentration=0.5, random_state=1)


def rate(ns=(1000, 3000, 10000, 30000, 100000), n_rep=4):
    """Topic error and Pairs error (Frobenius) against n, arrays (len(ns), n_rep)."""
    model3 = model_k3()
    topic_err, pairs_err = np.zeros((len(ns), n_rep)), np.zeros((len(ns), n_rep))
    for a, n in enumerate(mvlib.progress(ns, desc="n")):
        for r in range(n_rep):
            X, _ = model3.sample(int(n), doc_length=5, random_state=1000 * r + int(n))
            fit = mvlib.SpectralTopicModel(3, variant="A", random_state=r).fit(X)
            topic_err[a, r] = mvlib.matched_error(model3.M, fit.topic_word_.T)
            pairs_err[a, r] = np.linalg.norm(mvlib.count_pairs(X) - model3.pairs())
    return dict(ns=list(ns), topic_error=topic_err, pairs_error=pairs_err)


def eta(n_docs=3000, n_theta=300):
    """Relative eigengap of B_hat(U_hat theta) and the topic error, for n_theta random theta."""
    model4 = random_topic_model(4, 30, concentration=0.5, random_state=2)
    X_gap, _ = model4.sample(n_docs, doc_length=5, random_state=5)
    Pg = mvlib.count_pairs(X_gap)
    Ug = np.linalg.eigh(Pg)[1][:, ::-1][:, :4]
    Pg_t, Tg = Ug.T @ Pg @ Ug, mvlib.count_whitened_triples(X_gap, Ug)
    rng = np.random.default_rng(0)
    gaps, errs, imag = [], [], []
    for _ in range(n_theta):
        th = rng.standard_normal(4)
        ev, R = sla.eig(projected_operator(Tg, Pg_t, th / np.linalg.norm(th)))
        scale = np.abs(ev).max()
        imag.append(np.abs(ev.imag).max() / scale)
        gaps.append(np.diff(np.sort(ev.real)).min() / scale)
        Mg = Ug @ R.real                                   # step 4 of Algorithm A
        errs.append(mvlib.matched_error(model4.M, Mg / Mg.sum(axis=0)))
    fit = mvlib.SpectralTopicModel(4, variant="A", random_state=0).fit(X_gap)
    return dict(gaps=gaps, errors=errs, imag_rel_max=max(imag),
                error_mvlib=mvlib.matched_error(model4.M, fit.topic_word_.T),
                retries_mvlib=fit.n_retries_)


ROUTES = {"A": dict(variant="A"), "B (default)": dict(variant="B"), "tensor": dict(method="tensor")}


def routes(n_sets=5, n_docs=10000):
    """Topic error and seconds of the three routes, per data set (same data for all)."""
    model3 = model_k3()
    err, secs = {name: [] for name in ROUTES}, {name: [] for name in ROUTES}
    for r in range(n_sets):
        X, _ = model3.sample(n_docs, doc_length=5, random_state=100 + r)
        for name, kw in ROUTES.items():
            t0 = time.perf_counter()
            fit = mvlib.SpectralTopicModel(3, random_state=r, **kw).fit(X)
            secs[name].append(time.perf_counter() - t0)
            err[name].append(mvlib.matched_error(model3.M, fit.topic_word_.T))
    return dict(routes=list(ROUTES), errors=err, seconds=secs)


def rare(w_rare=(0.1, 0.03, 0.01, 0.003), n_sets=5, n_docs=10000):
    """Relative error of the rare topic and whether the noise check warned, (len(w_rare), n_sets)."""
    model3 = model_k3()
    rel_err = np.zeros((len(w_rare), n_sets))
    warned = np.zeros((len(w_rare), n_sets), dtype=bool)
    norm_rare = np.linalg.norm(model3.M[:, 2])
    for a, w3 in enumerate(w_rare):
        rare_model = SingleTopicModel(np.array([(1 - w3) / 2, (1 - w3) / 2, w3]), model3.topic_word)
        for r in range(n_sets):
            X, _ = rare_model.sample(n_docs, doc_length=5, random_state=r)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fit = mvlib.SpectralTopicModel(3, random_state=r).fit(X)
            warned[a, r] = any(issubclass(c.category, mvlib.IllConditionedWarning) for c in caught)
            rel_err[a, r] = mvlib.column_errors(model3.M, fit.topic_word_.T)[2] / norm_rare
    return dict(w_rare=list(w_rare), n_docs=n_docs, relative_error=rel_err, warned=warned)


def tilt(alphas=(0.0, 0.05, 0.2, 0.5)):
    """Exercise "Why normalise": Algorithm A on the exact moments of the k = 4 model with the
    fourth column of U tilted by alpha towards a unit vector outside the range of M."""
    model4 = random_topic_model(4, 30, concentration=0.5, random_state=2)
    Pairs4, M4 = model4.pairs(), model4.M
    U4 = np.linalg.eigh(Pairs4)[1][:, ::-1][:, :4]
    d4 = M4.shape[0]
    u_out = np.linalg.qr(np.column_stack([U4, np.random.default_rng(8).standard_normal(d4)]))[0][:, 4]
    tilt_err, proj_gap, ev_gap = [], [], []
    for alpha in alphas:
        U_t = np.column_stack([U4[:, :3], np.cos(alpha) * U4[:, 3] + np.sin(alpha) * u_out])
        M_t, info_t = mvlib.algorithm_a(U_t, U_t.T @ Pairs4 @ U_t, model4.whitened_triples(U_t),
                                        random_state=0, return_info=True)
        perm_t, _ = mvlib.match_columns(M4, M_t)
        ev_gap.append(np.abs(info_t["eigenvalues"][perm_t] - M4.T @ info_t["eta"]).max())
        projected = U_t @ (U_t.T @ M4)                 # P_S mu_h, normalised to sum one
        projected /= projected.sum(axis=0)
        proj_gap.append(np.abs(M_t[:, perm_t] - projected).max())
        tilt_err.append(mvlib.matched_error(M4, M_t))
    return dict(alphas=list(alphas), topic_error=tilt_err, projection_gap=proj_gap,
                eigenvalue_gap=ev_gap)


PARTS = {"rate": rate, "eta": eta, "routes": routes, "rare": rare, "tilt": tilt}
QUICK = {   # small sizes for --quick (nothing is written)
    "rate": dict(ns=(1000, 10000), n_rep=2),
    "eta": dict(n_theta=20),
    "routes": dict(n_sets=1, n_docs=3000),
    "rare": dict(w_rare=(0.1, 0.003), n_sets=1),
    "tilt": dict(alphas=(0.0, 0.2)),
}


def main(argv=None):
    experiment_main(PARTS, QUICK, prefix="ch3_", script="experiments/ch3_experiments.py",
                    description=__doc__.splitlines()[0], digits=EXACT, argv=argv)


if __name__ == "__main__":
    main()
