r"""The sample experiments of the chapter on moments at scale; results in ``chapters/data/scale_sketch.json``.

Run ``OMP_NUM_THREADS=1 python experiments/scale_experiments.py`` from the repository root
(about half a minute on one core; ``--quick`` runs every part at small sizes, prints a summary
and writes nothing). The chapter ``chapters/11_moments_at_scale.ipynb`` loads the file, prints
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
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import mvlib
from mvlib.book import data_path, write_json
from mvlib.core.metrics import matched_error
from mvlib.core.scale import sketch_matrix
from mvlib.gmm import SphericalGMMModel
from mvlib.lda import LDAModel, LDASecondMoment

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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, print a summary, write nothing")
    args = parser.parse_args(argv)
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
