r"""Experiments of the chapter "Dirichlet priors and independent components" (chapter 10).

Run ``OMP_NUM_THREADS=1 python experiments/dirichlet_ica_experiments.py`` from the repository root
(about 40 s of CPU on one thread), or ``--quick`` (small sizes, for testing the script; prints a
summary and writes nothing). Writes ``chapters/data/dirichlet_ica_experiments.json`` (numbers
rounded to twelve decimals), which ``chapters/10_dirichlet_ica.ipynb`` loads, asserts on, glues
from and plots. The chapter never re-runs this script. The seeds and the order of the random
draws are those the chapter used when it ran these loops itself.

Parts
-----
``rate``
    ``SpectralLDA(3, alpha0=1)`` on sampled corpora: k = 3 topics over d = 30 words, topics
    drawn from Dirichlet(0.2) (one model per seed 0-4, generator seed 100 + seed),
    α = (0.2, 0.3, 0.5), documents of 3 to 30 words, n ∈ {2000, 8000, 32000} (corpus generator
    ``default_rng([seed, j])``). ``topic_error[seed][j]``: the largest matched ℓ1 distance
    between a true and an estimated topic; ``alpha_error[seed][j]``: the largest absolute error
    of the matched α.
``reuters``
    The 395 Reuters stories of the ``lda`` package, five random 300/95 splits
    (``default_rng(split).permutation``); on the 300, ``SpectralLDA(k, 1)``, the single-topic
    ``SpectralTopicModel(k)`` and scikit-learn's ``LatentDirichletAllocation(k,
    doc_topic_prior=1/k)`` for k ∈ {5, 10}. ``npmi[method][k]``: the mean NPMI coherence of the
    topics on the 95 held-out stories, per split. ``topics``: for the last split,
    ``SpectralLDA(5, 1)``'s α and its eight most probable words per topic, by decreasing α.
``kernel_groups``
    ``KernelSpectral(3, alpha0=...)`` on 5,000 groups of three observations with Dirichlet
    proportions α = (0.3, 0.3, 0.4) over N(−2, 0.5²), N(1, 0.7²) and a Gamma(2, scale 0.6)
    shifted to 3, seeds 0-2. ``error[a0]`` (a0 = "none": no prior, "1.0": α0 = 1): the
    weighted L¹ density error on a grid of 701 points on [−5, 9]; ``alpha_sum``: the sum of the
    estimated α with α0 = 1.
``fastica``
    Amari index of the unmixing matrix of ``TensorICA(4)``, ``FastICA`` (logcosh) and
    ``FastICA(fun="cube")`` on 10 data sets (seeds 0-9) of n = 20,000 samples of two Laplace and
    two uniform unit-variance sources mixed by a random 4×4 matrix.
``gaussian``
    ``TensorICA(3)`` on 20,000 samples with one or two Gaussian sources among three (the others
    Laplace), seeds 0-4: per data set, the largest leakage into a non-Gaussian source
    (``leakage``), whether an ``IllConditionedWarning`` was raised (``warned``) and the Amari
    index (``amari``).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import mvlib
from mvlib.book import data_path, write_json
from mvlib.core.metrics import match_columns, npmi_coherence
from mvlib.ica import amari_index
from mvlib.lda import LDAModel

NAME = "dirichlet_ica_experiments.json"
ALPHA_TRUE = np.array([0.2, 0.3, 0.5])
REUTERS_METHODS = ["spectral LDA", "single-topic", "sklearn LDA"]


def part_rate(ns=(2000, 8000, 32000), n_seeds=5):
    """Topic and α errors of SpectralLDA on sampled corpora (``rate`` above)."""
    ns = np.asarray(ns)
    err = np.zeros((n_seeds, ns.size))
    alpha_err = np.zeros((n_seeds, ns.size))
    for seed in range(n_seeds):
        mu = np.random.default_rng(100 + seed).dirichlet(np.full(30, 0.2), size=3)
        gen = LDAModel(ALPHA_TRUE, mu)
        for j, n in enumerate(ns):
            X_n, _ = gen.sample(int(n), (3, 30), random_state=np.random.default_rng([seed, j]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)          # clipped negative mass
                fit = mvlib.SpectralLDA(3, 1.0, random_state=seed).fit(X_n)
            perm = match_columns(mu.T, fit.topic_word_.T)[0]
            err[seed, j] = np.abs(mu - fit.topic_word_[perm]).sum(axis=1).max()
            alpha_err[seed, j] = np.abs(fit.alpha_[perm] - ALPHA_TRUE).max()
    return {"ns": ns, "alpha": ALPHA_TRUE, "topic_error": err, "alpha_error": alpha_err}


def part_reuters(n_splits=5, ks=(5, 10), n_train=300):
    """NPMI coherence on held-out Reuters stories, and the last split's five topics (``reuters``)."""
    import lda.datasets
    from sklearn.decomposition import LatentDirichletAllocation

    X_reu, vocab = lda.datasets.load_reuters(), lda.datasets.load_reuters_vocab()
    npmi = {name: {str(k): [] for k in ks} for name in REUTERS_METHODS}
    for split in range(n_splits):
        perm = np.random.default_rng(split).permutation(X_reu.shape[0])
        tr, te = perm[:n_train], perm[n_train:]
        for k in ks:
            with warnings.catch_warnings():          # clipped mass, noise-level warnings
                warnings.simplefilter("ignore")
                tws = {"spectral LDA": mvlib.SpectralLDA(k, 1.0, random_state=0).fit(X_reu[tr]).topic_word_,
                       "single-topic": mvlib.SpectralTopicModel(k, random_state=0).fit(X_reu[tr]).topic_word_}
            tws["sklearn LDA"] = LatentDirichletAllocation(k, doc_topic_prior=1 / k,
                                                           random_state=0).fit(X_reu[tr]).components_
            for name, tw in tws.items():
                npmi[name][str(k)].append(np.mean(npmi_coherence(tw, X_reu[te])))
    fit5 = mvlib.SpectralLDA(5, 1.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit5.fit(X_reu[tr])
    order = np.argsort(fit5.alpha_)[::-1]
    topics = [{"alpha": fit5.alpha_[h], "words": [str(vocab[i]) for i in np.argsort(fit5.topic_word_[h])[::-1][:8]]}
              for h in order]
    return {"n_train": n_train, "n_splits": n_splits, "ks": list(ks), "methods": REUTERS_METHODS, "npmi": npmi,
            "topics": topics, "alpha_sum": fit5.alpha_.sum()}


def part_kernel_groups(n_groups=5000, n_seeds=3):
    """Density errors of KernelSpectral with and without the Dirichlet prior (``kernel_groups``)."""
    from scipy import stats

    dists = [stats.norm(-2, 0.5), stats.norm(1, 0.7), stats.gamma(2, loc=3, scale=0.6)]
    alpha_g = np.array([0.3, 0.3, 0.4])
    grid = np.linspace(-5, 9, 701)
    P = np.stack([dd.pdf(grid) for dd in dists], 1)
    dens_err = {None: [], 1.0: []}
    alpha_sum = []
    for seed in range(n_seeds):
        rg = np.random.default_rng(seed)
        theta = rg.dirichlet(alpha_g, size=n_groups)                            # one theta per group
        h = np.minimum((rg.random((n_groups, 3, 1)) > theta.cumsum(1)[:, None]).sum(-1), 2)
        x = np.choose(h, [dd.rvs(size=h.shape, random_state=rg) for dd in dists])
        for a0 in (None, 1.0):
            est = mvlib.KernelSpectral(3, alpha0=a0, random_state=0).fit([x[:, 0], x[:, 1], x[:, 2]])
            dens_err[a0].append(mvlib.weighted_density_error(P, est.conditional_density(grid), alpha_g,
                                                             grid[1] - grid[0]))
        alpha_sum.append(est.alpha_.sum())
    return {"alpha": alpha_g, "n_groups": n_groups, "error": {"none": dens_err[None], "1.0": dens_err[1.0]},
            "alpha_sum": alpha_sum}


def part_fastica(n_seeds=10, n=20000):
    """Amari indices of TensorICA and FastICA on Laplace and uniform sources (``fastica``)."""
    from sklearn.decomposition import FastICA

    amari = {}
    for seed in range(n_seeds):
        r_i = np.random.default_rng(seed)
        S = np.column_stack([r_i.laplace(size=n) / np.sqrt(2) if j % 2 == 0
                             else r_i.uniform(-np.sqrt(3), np.sqrt(3), n) for j in range(4)])
        A = r_i.standard_normal((4, 4))
        X = S @ A.T
        for name, make in (("TensorICA", lambda: mvlib.TensorICA(4, random_state=seed)),
                           ("FastICA logcosh", lambda: FastICA(4, whiten="unit-variance", random_state=seed)),
                           ("FastICA cube", lambda: FastICA(4, fun="cube", whiten="unit-variance",
                                                            random_state=seed))):
            est = make().fit(X)
            amari.setdefault(name, []).append(amari_index(est.components_, A))
    return {"n": n, "amari": amari}


def gaussian_case(n_gauss, seed, n=20000):
    """TensorICA with ``n_gauss`` Gaussian sources among three: (leakage, warned, Amari index)."""
    r_i = np.random.default_rng(seed)
    cols = [r_i.laplace(size=n) / np.sqrt(2) for _ in range(3 - n_gauss)]
    cols += [r_i.standard_normal(n) for _ in range(n_gauss)]
    A = r_i.standard_normal((3, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = mvlib.TensorICA(3, random_state=seed).fit(np.column_stack(cols) @ A.T)
    P = np.abs(est.components_ @ A)
    P = P / P.max(axis=0, keepdims=True)                  # per true source: 1 at its match
    ng = 3 - n_gauss                                       # non-Gaussian sources are the first columns
    clean = np.sort(P[:, :ng], axis=0)[-2].max() if ng else np.nan   # leakage into them
    warned = any(issubclass(w.category, mvlib.IllConditionedWarning) for w in caught)
    return clean, warned, amari_index(est.components_, A)


def part_gaussian(n_seeds=5, n=20000):
    """:func:`gaussian_case` for one and two Gaussian sources (``gaussian``)."""
    out = {}
    for n_gauss in (1, 2):
        rows = [gaussian_case(n_gauss, s, n) for s in range(n_seeds)]
        out[str(n_gauss)] = {key: [row[i] for row in rows] for i, key in enumerate(("leakage", "warned", "amari"))}
    return {"n": n, "cases": out}


def run(quick=False):
    """Every part (small sizes with ``quick``), with the CPU seconds each took."""
    parts = {
        "rate": lambda: part_rate((300, 600), 2) if quick else part_rate(),
        "reuters": lambda: part_reuters(1, (5,)) if quick else part_reuters(),
        "kernel_groups": lambda: part_kernel_groups(500, 1) if quick else part_kernel_groups(),
        "fastica": lambda: part_fastica(2, 2000) if quick else part_fastica(),
        "gaussian": lambda: part_gaussian(2, 2000) if quick else part_gaussian(),
    }
    out, cpu = {}, {}
    for name, fn in parts.items():
        t0 = time.process_time()
        out[name] = fn()
        cpu[name] = time.process_time() - t0
    out["cpu_seconds"] = cpu
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes; print a summary, write nothing")
    args = parser.parse_args(argv)
    out = run(quick=args.quick)
    for name, sec in out["cpu_seconds"].items():
        print(f"{name:14s} {sec:6.1f} s CPU")
    if not args.quick:
        print("wrote", write_json(out, data_path(NAME), digits=12))


if __name__ == "__main__":
    main()
