r"""The experiments of the Gaussian-mixtures chapter that run in seconds; results in ``chapters/data/gmm_chapter.json``.

Run ``OMP_NUM_THREADS=1 python experiments/gmm_chapter.py`` from the repository root (under
half a minute on one core; ``--quick`` runs every part at small sizes, prints a summary and
writes nothing). The chapter ``chapters/05_gaussian_mixtures.ipynb`` loads the file, prints its
tables, asserts every claim it makes about the numbers, glues them into the prose and plots them.
The slow grid over separations is ``experiments/gmm_experiments.py`` (``gmm_separation.json``);
this script only summarises that file (part ``separation``).

Every part uses the seeds and the order of random draws the chapter used when it ran the
experiments itself, so the chapter prints the same numbers. The running example is ``d = 10``,
``k = 4``, weights (0.1, 0.2, 0.3, 0.4), standard deviations (0.6, 0.5, 0.4, 0.3) and means
``2 * numpy.random.default_rng(0).standard_normal((10, 4))``, sampled with
``mvlib.gmm.SphericalGMMModel``.

Parts (keys of the JSON):

``plugin``
    Twenty samples (``default_rng(1000 + s)``) of n = 10,000: the bias and spread of the
    smallest covariance eigenvalue and of the mean of the d - k + 1 smallest (the plug-in of
    ``mvlib.gmm.spherical_moments``) as estimates of the average variance, and the error of
    the variance-weighted mean from one noise eigenvector or averaged over all of them.
``rate``
    Eight samples (``default_rng(100 a + r)``) at each n in 10^3, 10^3.5, ..., 10^5 fitted by
    ``SpectralGMM(4, random_state=r)``: the relative errors of the means and variances and the
    absolute errors of the weights, after matching.
``compare``
    The comparison with scikit-learn's EM: random problems (means N(0, I), Dirichlet(5)
    weights, sigma = 0.5) on a grid over n (d = 20, k = 5, three seeds) and over k (d = 30,
    n = 5000, two seeds), fitted by the spectral estimate, spectral->EM and EM with k-means (one
    or three starts) or random (one start) initialisation, one BLAS thread. Errors, seconds,
    convergence flags, EM iterations, the tables the chapter prints and, for the first data set
    with k >= 8 on which default EM fails, the close-up of that poor local optimum.
``wine``
    scikit-learn's wine data divided by the standard deviations, projected on the top p
    principal directions (p = 3..7): whether ``SpectralGMM(3)`` refuses, and the adjusted Rand
    index of EM with five k-means starts for five random states; EM on all 13 dimensions with
    spherical and diagonal covariances (ARI and BIC).
``separation``
    Per (n, separation, method) of ``gmm_separation.json``: failures, refusals, the errors,
    log-likelihood gaps and iterations of the fitted runs, and the aggregates the chapter
    asserts on.
"""
from __future__ import annotations

import argparse
import itertools
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_wine
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.book import data_path, write_json
from mvlib.gmm import SphericalGMMModel, spherical_moments

EM_VARIANTS = {"km x1": ("kmeans", 1), "km x3": ("kmeans", 3), "rand x1": ("random", 1)}
METHODS = ["spectral", "spec->EM", *EM_VARIANTS]
N_GRID, K_GRID = [1000, 3000, 10000, 30000], [2, 4, 8, 12]
RATE_NS = [1_000, 3_162, 10_000, 31_623, 100_000]   # 10^3 .. 10^5


def running_example() -> SphericalGMMModel:
    """The chapter's running example: d = 10, k = 4, per-component standard deviations."""
    M = 2.0 * np.random.default_rng(0).standard_normal((10, 4))
    return SphericalGMMModel(np.array([0.1, 0.2, 0.3, 0.4]), M, np.array([0.6, 0.5, 0.4, 0.3]))


def plugin_bias(n: int = 10_000, samples: int = 20) -> dict:
    """Smallest covariance eigenvalue against the mean of the d - k + 1 smallest (eq-ch5-plugin)."""
    model = running_example()
    k = model.n_components
    sig2_bar, m_tilde = model.sigma2_bar, model.m_tilde()
    r_noise = model.n_features - k + 1
    one, avg, m_one, m_avg = [], [], [], []
    for seed in range(samples):
        X, _ = model.sample(n, np.random.default_rng(1000 + seed))
        Xc = X - X.mean(axis=0)
        evals, U = np.linalg.eigh(Xc.T @ Xc / n)
        one.append(evals[0])                                    # smallest eigenvalue alone
        m_one.append(np.linalg.norm(X.T @ (Xc @ U[:, 0]) ** 2 / n - m_tilde))
        mom = spherical_moments(X, k)                           # eq-ch5-plugin
        avg.append(mom["sigma2_bar"])
        m_avg.append(np.linalg.norm(mom["m_tilde"] - m_tilde))
    one, avg = np.array(one), np.array(avg)
    return dict(
        n=n, samples=samples, r_noise=r_noise, sig2_bar=sig2_bar,
        bias_one=one.mean() - sig2_bar, sd_one=one.std(ddof=1), se_one=one.std(ddof=1) / np.sqrt(samples),
        bias_avg=avg.mean() - sig2_bar, sd_avg=avg.std(ddof=1), se_avg=avg.std(ddof=1) / np.sqrt(samples),
        edge=sig2_bar * (1 - np.sqrt(r_noise / n)) ** 2 - sig2_bar,
        mt_one=np.mean(m_one), mt_avg=np.mean(m_avg))


def rate(ns=RATE_NS, reps: int = 8) -> dict:
    """Errors of ``SpectralGMM`` on ``reps`` samples at each n: arrays (len(ns), reps) per key."""
    model = running_example()
    M, w, s = model.means, model.weights, model.sigmas
    err = {key: np.zeros((len(ns), reps)) for key in ("means", "weights", "variances")}
    for a, n in enumerate(mvlib.progress(ns, desc="sample sizes")):
        for r in range(reps):
            X, _ = model.sample(int(n), np.random.default_rng(100 * a + r))
            g = mvlib.SpectralGMM(model.n_components, random_state=r).fit(X)
            perm, _ = mvlib.match_columns(M, g.means_.T)
            err["means"][a, r] = mvlib.matched_error(M, g.means_.T, relative=True)
            err["weights"][a, r] = np.abs(g.weights_[perm] - w).max()
            err["variances"][a, r] = np.max(np.abs(g.covariances_[perm] - s**2) / s**2)
    return dict(ns=list(ns), reps=reps, errors=err)


def random_problem(n: int, d: int, k: int, seed: int, sigma: float = 0.5):
    """Means N(0, I_d) (d, k), weights Dirichlet(5), common sigma: the sample X (n, d) and M."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((d, k))
    w = rng.dirichlet(np.full(k, 5.0))
    X, _ = SphericalGMMModel(w, M, np.full(k, sigma)).sample(n, rng)
    return X, M


def fit_all(X, k: int, seed: int) -> dict:
    """Every method on the same data: {method: (fitted model, seconds)}."""
    out = {}
    t0 = time.perf_counter()
    spec = mvlib.SpectralGMM(k, random_state=seed).fit(X)
    t_spec = time.perf_counter() - t0
    out["spectral"] = (spec, t_spec)
    t0 = time.perf_counter()
    refined = spec.to_sklearn().fit(X)
    out["spec->EM"] = (refined, t_spec + time.perf_counter() - t0)
    for name, (init, n_init) in EM_VARIANTS.items():
        t0 = time.perf_counter()
        em = GaussianMixture(k, covariance_type="spherical", init_params=init, n_init=n_init,
                             random_state=seed).fit(X)
        out[name] = (em, time.perf_counter() - t0)
    return out


def run_grid(cases):
    """Fit every method on ``random_problem(*case)`` for each case (n, d, k, seed).

    Returns the runs (one dict per case: its parameters and, per method, the relative error of
    the means, seconds, convergence flag and EM iterations), the categories of the warnings
    raised, and the fitted models {case: fit_all(...)}.
    """
    runs, fits = [], {}
    with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for case in mvlib.progress(cases, desc="data sets"):
            X, M = random_problem(*case)
            fits[case] = fit_all(X, case[2], case[3])
            methods = {name: dict(error=mvlib.matched_error(M, model.means_.T, relative=True),
                                  seconds=secs, converged=bool(getattr(model, "converged_", True)),
                                  iters=int(getattr(model, "n_iter_", 0)))
                       for name, (model, secs) in fits[case].items()}
            runs.append(dict(n=case[0], d=case[1], k=case[2], seed=case[3], methods=methods))
    return runs, sorted({wn.category.__name__ for wn in caught}), len(caught), fits


def grid_table(runs, key: str, groups) -> dict:
    """Per group and method: median error of the runs with error <= 0.5, failures, median seconds."""
    table = {}
    for g in groups:
        rows = [r["methods"] for r in runs if r[key] == g]
        cells = {}
        for m in METHODS:
            e = np.array([row[m]["error"] for row in rows])
            ok = e[e <= 0.5]
            cells[m] = dict(median_ok=float(np.median(ok)) if ok.size else None, fail=int(np.sum(e > 0.5)),
                            seconds=float(np.median([row[m]["seconds"] for row in rows])))
        table[str(g)] = cells
    return table


def close_up(run, fits, d: int = 2, n_shown: int = 1500) -> dict:
    """The poor local optimum of default EM on one data set: scores, nearest means, a projection."""
    case = (run["n"], run["d"], run["k"], run["seed"])
    X, M = random_problem(*case)
    models = {"EM (default)": fits[case]["km x1"][0], "spectral": fits[case]["spectral"][0],
              "spectral->EM": fits[case]["spec->EM"][0]}
    report = {name: dict(error=mvlib.matched_error(M, model.means_.T, relative=True), score=model.score(X))
              for name, model in models.items()}
    em = models["EM (default)"]
    dist2 = ((M.T[:, None, :] - em.means_[None]) ** 2).sum(-1)
    nearest = np.argmin(dist2, axis=1)
    U = np.linalg.svd(M, full_matrices=False)[0][:, :d]          # top-2 plane of the true means
    sub = np.random.default_rng(0).choice(len(X), n_shown, replace=False)
    return dict(case=list(case), report=report, converged=bool(em.converged_), nearest=nearest,
                shared=[int(c) for c in np.unique(nearest) if np.sum(nearest == c) > 1],
                unused=sorted(set(range(case[2])) - set(nearest.tolist())),
                projected=dict(data=U.T @ X[sub].T, truth=U.T @ M,
                               **{name: U.T @ models[name].means_.T for name in ("EM (default)", "spectral")}))


def compare(n_grid=N_GRID, k_grid=K_GRID, seeds_n: int = 3, seeds_k: int = 2) -> dict:
    """The spectral estimate, spectral->EM and three EM variants on the n-grid and the k-grid."""
    cases_n = [(n, 20, 5, 10 * n + s) for n in n_grid for s in range(seeds_n)]
    cases_k = [(5000, 30, kk, 100 * kk + s) for kk in k_grid for s in range(seeds_k)]
    runs_n, cat_n, warn_n, fits_n = run_grid(cases_n)
    runs_k, cat_k, warn_k, fits_k = run_grid(cases_k)
    runs = runs_n + runs_k
    fails = {m: int(sum(r["methods"][m]["error"] > 0.5 for r in runs)) for m in METHODS}
    same = [abs(r["methods"]["km x3"]["error"] - r["methods"]["spec->EM"]["error"])
            for r in runs if r["methods"]["km x3"]["error"] < 0.5]
    closest = []                                   # separation of the closest two means / sigma
    for r in runs:
        M = np.random.default_rng(r["seed"]).standard_normal((r["d"], r["k"]))   # as random_problem
        closest.append(min(np.linalg.norm(M[:, a] - M[:, b])
                           for a, b in itertools.combinations(range(r["k"]), 2)) / 0.5)
    lost = [r for r in runs_k if r["k"] >= 8 and r["methods"]["km x1"]["error"] > 0.5]
    return dict(
        methods=METHODS, n_grid=list(n_grid), k_grid=list(k_grid), runs_n=runs_n, runs_k=runs_k,
        table_n=grid_table(runs_n, "n", n_grid), table_k=grid_table(runs_k, "k", k_grid),
        warnings=dict(n=warn_n, k=warn_k, categories=sorted(set(cat_n) | set(cat_k))),
        not_converged=dict(n=sum(not m["converged"] for r in runs_n for m in r["methods"].values()),
                           k=sum(not m["converged"] for r in runs_k for m in r["methods"].values())),
        fails=fails, same_max=max(same),
        ratio=[r["methods"]["spectral"]["error"] / r["methods"]["spec->EM"]["error"] for r in runs],
        iters={m: float(np.median([r["methods"][m]["iters"] for r in runs])) for m in METHODS[1:]},
        closest=closest, close_up=close_up(lost[0], fits_k) if lost else None)


def wine(seeds=range(5), ps=range(3, 8)) -> dict:
    """Projections of the scaled wine data: SpectralGMM refusals and EM's ARI against the cultivars."""
    X_raw, y = load_wine(return_X_y=True)
    Z = X_raw / X_raw.std(axis=0)
    evals, evecs = np.linalg.eigh(np.cov(Z.T, bias=True))
    evals, evecs = evals[::-1], evecs[:, ::-1]
    refusals, ari_em, ll_em, noise_ratio = {}, {}, {}, {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for p in ps:
            Zp = Z @ evecs[:, :p]
            noise_ratio[p] = evals[2] / evals[p - 1]   # p - k + 1 smallest
            try:
                mvlib.SpectralGMM(3, random_state=0).fit(Zp)
                refusals[p] = None
            except ValueError as exc:
                refusals[p] = str(exc).split(";")[0]
            ems = [GaussianMixture(3, covariance_type="spherical", n_init=5, random_state=s).fit(Zp)
                   for s in seeds]
            ari_em[p] = [adjusted_rand_score(y, e.predict(Zp)) for e in ems]
            ll_em[p] = [e.score(Zp) for e in ems]
        full = {ct: [GaussianMixture(3, covariance_type=ct, n_init=5, random_state=s).fit(Z) for s in seeds]
                for ct in ("spherical", "diag")}
    return dict(
        ps=list(ps), seeds=list(seeds), warnings=[str(wn.message) for wn in caught],
        noise_ratio={str(p): v for p, v in noise_ratio.items()},
        refusals={str(p): v for p, v in refusals.items()},
        ari_em={str(p): v for p, v in ari_em.items()}, ll_em={str(p): v for p, v in ll_em.items()},
        ari_full={ct: [adjusted_rand_score(y, mod.predict(Z)) for mod in mods] for ct, mods in full.items()},
        bic={ct: [mod.bic(Z) for mod in mods] for ct, mods in full.items()})


def separation(payload: dict) -> dict:
    """Summary of ``gmm_separation.json`` (the payload of experiments/gmm_experiments.py)."""
    ns, seps, methods = payload["ns"], payload["separations"], payload["methods"]

    def runs(n, sep, m):
        return [r["methods"][m] for r in payload["runs"] if r["n"] == n and r["separation"] == sep]

    def cell(n, sep, m):
        rs = runs(n, sep, m)
        fitted = [r for r in rs if "error" in r]
        return dict(runs=len(rs), fail=sum("refused" in r or r["error"] > sep / 2 for r in rs),
                    refused=len(rs) - len(fitted), e=[r["error"] for r in fitted],
                    ll=[r["dll"] for r in fitted], iters=[r["iters"] for r in fitted])

    def fitted_fail(n, m):
        return sum("error" in r and r["error"] > s / 2 for s in seps for r in runs(n, s, m))

    small = ns[0]
    accepted = [r["methods"] for r in payload["runs"] if r["n"] == small and r["separation"] == 2.0
                and "error" in r["methods"]["spectral"]]
    acc = [(r["separation"], r["methods"]) for r in payload["runs"] if "error" in r["methods"]["spectral"]]
    table = {str(n): {str(s): {m: cell(n, s, m) for m in methods} for s in seps} for n in ns}
    return dict(
        ns=ns, separations=seps, methods=methods, n_seeds=len(payload["seeds"]), table=table,
        fitted_fail={m: {str(n): fitted_fail(n, m) for n in ns} for m in ("spectral", "spec->EM")},
        km_big={str(n): sum(table[str(n)][str(s)]["km x1"]["fail"] for s in seps if s >= 3) for n in ns},
        big_runs=len(payload["seeds"]) * sum(1 for s in seps if s >= 3),
        accepted_2={m: dict(e=[r[m]["error"] for r in accepted], ll=[r[m]["dll"] for r in accepted])
                    for m in ("spectral", "spec->EM", "km x1")},
        accepted=dict(n=len(acc),
                      close_to_km=sum(m["spec->EM"]["dll"] >= m["km x1"]["dll"] - 1e-3 for _, m in acc),
                      above_spec=sum(m["spec->EM"]["dll"] >= m["spectral"]["dll"] for _, m in acc),
                      km_lost=sum(m["km x1"]["error"] > s / 2 for s, m in acc)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, print a summary, write nothing")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    sep_payload = json.loads(data_path("gmm_separation.json").read_text(encoding="utf-8"))
    if args.quick:
        out = dict(plugin=plugin_bias(n=2000, samples=4), rate=rate(ns=[1000, 3162], reps=2),
                   compare=compare(n_grid=[1000], k_grid=[2, 8], seeds_n=1, seeds_k=1),
                   wine=wine(seeds=range(1), ps=range(3, 5)), separation=separation(sep_payload))
    else:
        out = dict(plugin=plugin_bias(), rate=rate(), compare=compare(), wine=wine(),
                   separation=separation(sep_payload))
    seconds = time.perf_counter() - t0
    print(f"plugin: bias of the smallest eigenvalue {out['plugin']['bias_one']:+.5f}, "
          f"of the mean of the smallest {out['plugin']['bias_avg']:+.5f}")
    print(f"compare: failures {out['compare']['fails']}")
    print(f"wine: refused for p = {[p for p, r in out['wine']['refusals'].items() if r]}")
    print(f"total {seconds:.1f} s")
    if args.quick:
        return
    out["description"] = ("chapter 5: plug-in bias, 1/sqrt(n) rate, comparison with EM, wine data, summary "
                          "of gmm_separation.json; see experiments/gmm_chapter.py")
    out["total_seconds"] = seconds
    print(f"wrote {write_json(out, data_path('gmm_chapter.json'), digits=12)}")


if __name__ == "__main__":
    main()
