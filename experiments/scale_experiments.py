r"""The sample experiments of the chapter on moments at scale; results in ``chapters/data/scale_sketch.json``,
``chapters/data/scale_exact.json`` and ``chapters/data/scale_shift.json``.

Run ``OMP_NUM_THREADS=1 python experiments/scale_experiments.py`` from the repository root
(about half a minute on one core; ``python experiments/scale_experiments.py exact`` writes only
``scale_exact.json``, in about a second, and ``... shift`` only ``scale_shift.json``, in about a
second; ``--quick`` runs every part at small sizes, prints a summary
and writes nothing). The chapter ``chapters/11_moments_at_scale.ipynb`` loads the files, prints
its tables, asserts the claims it makes about the numbers, glues them into the prose and plots
them. The timings of large runs are ``bench/bench_scale.py`` (``scale_bench.json``), not this
script. Every part uses the seeds the chapter used when it ran the experiments itself, so the
chapter prints the same numbers.

Parts (keys of the JSON):

``rate``
    The running example of the chapter (d = 30, k = 4, weights (0.1, 0.2, 0.3, 0.4), standard
    deviations (0.6, 0.5, 0.4, 0.3), means ``2 * default_rng(0).standard_normal((30, 4))``,
    sampled by ``mvlib.gmm.SphericalGMMModel``): four samples (``default_rng([7, a, rep])``) at
    each n in 10^3, 10^3.5, ..., 10^5, fitted by ``SpectralGMM(4, random_state=rep)`` with
    ``moments="one-pass"`` (default sketch width) and ``"two-pass"``; the largest relative error
    of a matched mean.
``price``
    Four LDA corpora (d = 300 words, k = 3 topics from Dirichlet(0.2) drawn by
    ``default_rng(100 + seed)``, alpha = (0.2, 0.3, 0.5), n = 6000 documents of 3 to 30 words,
    ``random_state=seed``) fitted by ``SpectralLDA(3, 1.0, random_state=seed)`` with two passes
    and with one pass at K = 12, 24, 48, 96: the largest matched l2 distance of a topic.
``kept``
    On the first corpus, averaged over five sketches (``sketch_matrix(300, K, random_state=s)``):
    the fraction of the signal (k-th singular value of the population M2 times Omega, or of
    Omega^T M2 Omega, against that of M2) and of the sampling error E of the corrected M2
    (spectral norm of E Omega or Omega^T E Omega, against that of E) that each route keeps.

Parts of ``scale_exact.json`` (written with every digit, ``digits=None``, because the chapter
prints the sizes of rounding errors and asserts them against tolerances):

``cubature``
    The one-pass ``SpectralGMM(4, random_state=0)`` fitted to the cubature data of the running
    example (``gaussian_cubature(M, [1, 2, 3, 4], sigmas)``, exact population moments up to order
    three) at the sketch widths K = k, 2k + 10 and d: the largest error of a matched mean, weight
    and variance, and whether the fit warned that its noise variance rests on a single eigenvalue.
``k_equals_d``
    One pass at K = d against two passes, ``random_state=0``, after matching the components: the
    largest difference of the fitted attributes of ``SpectralGMM`` on the running example
    (n = 20,000 drawn by ``default_rng(1)``), of ``SpectralTopicModel(3, method="tensor")`` on
    5,000 documents of 20 words of ``random_topic_model(3, 40, random_state=0)`` (sampled with
    ``random_state=1``) and of ``SpectralLDA(3, 1.0)`` on 5,000 LDA documents of 3 to 30 words over
    40 words (topics ``default_rng(5).dirichlet(0.3)``, ``random_state=1``).

Part of ``scale_shift.json`` (the solution of the exercise on merging, ``digits=None``):

``fits``
    ``SpectralGMM(4, random_state=0)``, two passes and one pass (route -> case), on the running
    sample (n = 20,000, ``default_rng(1)``) as it is (``plain``), shifted by 10^6 in every
    coordinate (``shifted``; the means shifted back), and shifted less its first row (``offset``;
    the means moved back): the largest relative error of a matched mean and whether the fit warned.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import mvlib
from mvlib.book import data_path, write_json
from mvlib.core.cubature import gaussian_cubature
from mvlib.core.metrics import match_columns, matched_error
from mvlib.core.scale import sketch_matrix
from mvlib.gmm import SphericalGMMModel
from mvlib.lda import LDAModel, LDASecondMoment
from mvlib.topic import random_topic_model

RATE_NS = [1_000, 3_162, 10_000, 31_623, 100_000]   # 10^3 .. 10^5
KS = [12, 24, 48, 96]
ALPHA = np.array([0.2, 0.3, 0.5])
VOCABULARY, DOCUMENTS = 300, 6000


def running_example() -> SphericalGMMModel:
    """The chapter's running example: d = 30, k = 4, per-component standard deviations."""
    M = 2.0 * np.random.default_rng(0).standard_normal((30, 4))
    return SphericalGMMModel(np.array([0.1, 0.2, 0.3, 0.4]), M, np.array([0.6, 0.5, 0.4, 0.3]))


def rate(ns=RATE_NS, reps: int = 4) -> dict:
    """Relative error of the means, one-pass and two-pass, arrays (len(ns), reps) per route."""
    model = running_example()
    err = {m: np.zeros((len(ns), reps)) for m in ("one-pass", "two-pass")}
    for a, n in enumerate(mvlib.progress(ns, desc="sample sizes")):
        for rep in range(reps):
            X, _ = model.sample(int(n), np.random.default_rng([7, a, rep]))
            for m in err:
                g = mvlib.SpectralGMM(model.n_components, random_state=rep, moments=m).fit(X)
                err[m][a, rep] = matched_error(model.means, g.means_.T, relative=True)
    return dict(ns=list(ns), reps=reps, errors=err)


def corpus(seed: int, n: int = DOCUMENTS, d: int = VOCABULARY):
    """The topics mu (3, d) and the sampled corpus X (n, d) of one LDA corpus of the price experiment."""
    mu = np.random.default_rng(100 + seed).dirichlet(np.full(d, 0.2), size=3)
    X, _ = LDAModel(ALPHA, mu).sample(n, (3, 30), random_state=seed)
    return mu, X


def price(seeds=range(4), Ks=KS, n: int = DOCUMENTS) -> dict:
    """Topic errors of SpectralLDA, two passes (seeds,) and one pass per sketch width (seeds, len(Ks))."""
    err_K, err_two = np.zeros((len(seeds), len(Ks))), np.zeros(len(seeds))
    for i, seed in enumerate(mvlib.progress(seeds, desc="corpora")):
        mu, X = corpus(seed, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)          # clipped negative mass at small K
            fit = mvlib.SpectralLDA(3, 1.0, random_state=seed).fit(X)
            err_two[i] = matched_error(mu.T, fit.topic_word_.T)
            for j, K in enumerate(Ks):
                fit = mvlib.SpectralLDA(3, 1.0, random_state=seed, moments="one-pass", sketch_dim=K).fit(X)
                err_K[i, j] = matched_error(mu.T, fit.topic_word_.T)
    return dict(Ks=list(Ks), seeds=list(seeds), one_pass=err_K, two_pass=err_two)


def kept(Ks=KS, sketches: int = 5, n: int = DOCUMENTS) -> dict:
    """Fractions of signal and noise of M2 kept by the cross moment and the sketched moment."""
    mu, X = corpus(0, n)
    d = mu.shape[1]
    M2 = mu.T @ np.diag(ALPHA / (1.0 * 2.0)) @ mu            # alpha_0 = 1: alpha_h / (alpha_0 (alpha_0 + 1))
    E = LDASecondMoment(X, 1.0) @ np.eye(d) - M2              # sampling error of the corrected M2
    sig_full, noise_full = np.linalg.svd(M2, compute_uv=False)[2], np.linalg.norm(E, 2)
    out = {key: np.zeros(len(Ks)) for key in ("cross signal", "cross noise", "sketch signal", "sketch noise")}
    for j, K in enumerate(Ks):
        for s in range(sketches):
            om = sketch_matrix(d, K, random_state=s)
            out["cross signal"][j] += np.linalg.svd(M2 @ om, compute_uv=False)[2] / sig_full / sketches
            out["cross noise"][j] += np.linalg.norm(E @ om, 2) / noise_full / sketches
            out["sketch signal"][j] += np.linalg.svd(om.T @ M2 @ om, compute_uv=False)[2] / sig_full / sketches
            out["sketch noise"][j] += np.linalg.norm(om.T @ E @ om, 2) / noise_full / sketches
    return dict(Ks=list(Ks), d=d, sketches=sketches, fractions=out)


def running_sample(n: int = 20_000) -> np.ndarray:
    """The chapter's sample X (n, 30) of the running example, drawn by ``default_rng(1)``."""
    X, _ = running_example().sample(n, np.random.default_rng(1))
    return X


def cubature(sketch_dims=None) -> dict:
    """One-pass SpectralGMM on the running example's cubature data, per sketch width K (default k, 2k + 10, d)."""
    model = running_example()
    d, k = model.means.shape
    X = gaussian_cubature(model.means, [1, 2, 3, 4], model.sigmas)          # weights 0.1, ..., 0.4
    fits = []
    for K in sketch_dims or (k, 2 * k + 10, d):
        with warnings.catch_warnings(record=True) as caught:     # at K = k the fit warns that the noise
            warnings.simplefilter("always")                        # variance rests on one eigenvalue
            g = mvlib.SpectralGMM(k, random_state=0, moments="one-pass", sketch_dim=K).fit(X)
        perm, _ = match_columns(model.means, g.means_.T)
        fits.append(dict(K=K, warned=any("single eigenvalue" in str(w.message) for w in caught),
                         means=matched_error(model.means, g.means_.T),
                         weights=np.abs(g.weights_[perm] - model.weights).max(),
                         variances=np.abs(g.covariances_[perm] - model.sigmas ** 2).max()))
    return dict(n_points=len(X), d=d, fits=fits)


def fit_gap(a, b, attrs, match_attr: str) -> float:
    """Largest |difference| of the fitted ``attrs`` of a and b after matching b's components to a's
    by the columns of ``match_attr`` (components along the first axis of every attribute)."""
    perm = match_columns(np.atleast_2d(getattr(a, match_attr)).T, np.atleast_2d(getattr(b, match_attr)).T)[0]
    return max(np.abs(getattr(a, at) - getattr(b, at)[perm]).max() for at in attrs)


def k_equals_d(n: int = 20_000, n_docs: int = 5000) -> dict:
    """One pass at K = d against two passes: estimator name -> largest difference (see the docstring)."""
    gaps = {}
    X = running_sample(n)
    g2, g1 = (mvlib.SpectralGMM(4, random_state=0, moments=m, sketch_dim=30 if m == "one-pass" else None).fit(X)
              for m in ("two-pass", "one-pass"))
    gaps["SpectralGMM"] = fit_gap(g2, g1, ("means_", "weights_", "covariances_"), "means_")
    X_top, _ = random_topic_model(3, 40, random_state=0).sample(n_docs, 20, random_state=1)
    t2, t1 = (mvlib.SpectralTopicModel(3, method="tensor", random_state=0, moments=m,
                                       sketch_dim=40 if m == "one-pass" else None).fit(X_top)
              for m in ("two-pass", "one-pass"))
    gaps["SpectralTopicModel (tensor)"] = fit_gap(t2, t1, ("topic_word_", "weights_"), "topic_word_")
    mu40 = np.random.default_rng(5).dirichlet(np.full(40, 0.3), size=3)
    X_l40, _ = LDAModel(ALPHA, mu40).sample(n_docs, (3, 30), random_state=1)
    l2, l1 = (mvlib.SpectralLDA(3, 1.0, random_state=0, moments=m, sketch_dim=40 if m == "one-pass" else None)
              .fit(X_l40) for m in ("two-pass", "one-pass"))
    gaps["SpectralLDA"] = fit_gap(l2, l1, ("topic_word_", "alpha_"), "topic_word_")
    return gaps


def shifted_fits(X: np.ndarray, shift: float = 1e6) -> dict:
    """Route -> case -> dict(error, warned) of ``SpectralGMM`` on X, X + shift and X + shift less its
    first row (see the module docstring); the errors are relative, against the running example's means."""
    M = running_example().means
    X_sh = X + shift
    fits = {}
    for m in ("two-pass", "one-pass"):
        fits[m] = {}
        for case, data, back in (("plain", X, 0.0), ("shifted", X_sh, -shift),
                                 ("offset", X_sh - X_sh[0], X_sh[0] - shift)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                g = mvlib.SpectralGMM(M.shape[1], random_state=0, moments=m).fit(data)
            fits[m][case] = dict(error=matched_error(M, (g.means_ + back).T, relative=True),
                                 warned=len(caught) > 0)
    return fits


def shift_main(quick: bool = False) -> None:
    """Run the part of ``scale_shift.json`` (``--quick``: 2,000 rows, nothing written)."""
    t0 = time.perf_counter()
    fits = shifted_fits(running_sample(2000 if quick else 20_000))
    print("shift: relative errors " + "; ".join(f"{m} " + ", ".join(f"{c} {f['error']:.1e}" for c, f in cases.items())
                                              for m, cases in fits.items()) + f"; {time.perf_counter() - t0:.1f} s")
    if quick:
        return
    out = dict(fits=fits, description="chapter 11, exercise on merging: SpectralGMM on shifted data; "
                                      "see experiments/scale_experiments.py",
               total_seconds=time.perf_counter() - t0)
    print(f"wrote {write_json(out, data_path('scale_shift.json'), digits=None)}")


def exact_main(quick: bool = False) -> None:
    """Run the parts of ``scale_exact.json`` (``--quick``: smaller samples, nothing written)."""
    t0 = time.perf_counter()
    exact = dict(cubature=cubature(), k_equals_d=k_equals_d(n=2000, n_docs=1000) if quick else k_equals_d())
    worst = max(max(f["means"], f["weights"], f["variances"]) for f in exact["cubature"]["fits"])
    gaps = ", ".join(f"{name} {gap:.1e}" for name, gap in exact["k_equals_d"].items())
    print(f"exact: largest cubature error {worst:.1e}; K = d against two passes: {gaps}; "
          f"{time.perf_counter() - t0:.1f} s")
    if quick:
        return
    exact["description"] = ("chapter 11: one-pass fits on exact (cubature) data and at K = d against two passes; "
                            "see experiments/scale_experiments.py")
    exact["total_seconds"] = time.perf_counter() - t0
    print(f"wrote {write_json(exact, data_path('scale_exact.json'), digits=None)}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="which files to write, 'sketch' (scale_sketch.json), 'exact' (scale_exact.json) and/or "
                             "'shift' (scale_shift.json); default all three")
    parser.add_argument("--quick", action="store_true", help="small sizes, print a summary, write nothing")
    args = parser.parse_args(argv)
    files = args.files or ["sketch", "exact", "shift"]
    if set(files) - {"sketch", "exact", "shift"}:
        parser.error(f"unknown files {sorted(set(files) - {'sketch', 'exact', 'shift'})}; "
                     "choose from sketch, exact, shift")
    if "exact" in files:
        exact_main(args.quick)
    if "shift" in files:
        shift_main(args.quick)
    if "sketch" not in files:
        return
    t0 = time.perf_counter()
    if args.quick:
        out = dict(rate=rate(ns=[1000, 3162], reps=2), price=price(seeds=range(1), Ks=[12, 48], n=1000),
                   kept=kept(Ks=[12, 48], sketches=2, n=1000))
    else:
        out = dict(rate=rate(), price=price(), kept=kept())
    seconds = time.perf_counter() - t0
    for m, e in out["rate"]["errors"].items():
        print(f"rate, {m}: mean error at the largest n {e[-1].mean():.4f}")
    print(f"price: mean one-pass error per K {out['price']['one_pass'].mean(axis=0).round(4)}, "
          f"two-pass {out['price']['two_pass'].mean():.4f}")
    print(f"total {seconds:.1f} s")
    if args.quick:
        return
    out["description"] = ("chapter 11: 1/sqrt(n) rate of the one-pass SpectralGMM, the price of a narrow sketch "
                          "for SpectralLDA, signal and noise kept; see experiments/scale_experiments.py")
    out["total_seconds"] = seconds
    print(f"wrote {write_json(out, data_path('scale_sketch.json'), digits=12)}")


if __name__ == "__main__":
    main()
