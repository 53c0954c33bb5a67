r"""Benchmark: mvlib.SpectralLDA at scale, the implicit pairs moment of SpectralTopicModel
against its old dense path, and both against the LDA fitters users run today.

Run ``.venv/bin/python bench/bench_lda.py`` (``--part all``, about 14 minutes on 2 cores;
more on a loaded machine). ``--part scale|dense|compare|sweep|reuters`` runs one part (a
sweep alone re-runs its n = 20,000 point, which ``all`` takes from ``compare``);
``--threads`` sets the BLAS/OpenMP threads of every fitting subprocess (default 2);
``--no-json`` prints only; ``--quick`` makes every corpus 10× smaller and writes nothing.
Writes ``chapters/data/lda_bench.json``; a single part replaces its own section of an
existing file and keeps the others. A measurement script, not a
test: it prints tables and never asserts on time. Issue 17 ("Scale target", "Against what
users run today").

How every fit is measured
-------------------------
Every fit runs in its **own subprocess** (``--child``), which generates or loads its corpus,
then measures the fit alone:

* ``seconds``: wall time of ``fit`` (``time.perf_counter``); a fit under 5 s is repeated
  twice more on fresh estimators in the same process and ``seconds`` is the median of the
  three (``seconds_repeats``: all of them), since on this shared 2-core machine a short fit
  with 2 BLAS threads sometimes stalls for seconds when another process holds a core;
* ``rss_before_gib``: the process's resident memory just before ``fit`` (interpreter,
  libraries, corpus); the kernel's peak-RSS counter is then reset
  (``/proc/self/clear_refs`` ← 5) and read after ``fit`` (``VmHWM``): ``rss_peak_gib`` is the
  process's peak during the fit, ``fit_gib = rss_peak_gib − rss_before_gib`` the memory the
  fit itself added at its peak. **The memory targets are checked on ``fit_gib``.**
* part 1 only, a second identical fit in the same process under ``tracemalloc``:
  ``tracemalloc_peak_gib`` is the peak of the Python/NumPy allocations made during that fit
  (it does not see BLAS/OpenMP scratch or the allocator's fragmentation) and
  ``traced_seconds`` its (slightly slower) time.
* ``load_start``/``load_end``: ``os.getloadavg()`` (1, 5, 15 min) around the child; other
  work on the machine (another helper may use one core) slows everything.

Corpora (all synthetic ones: every document exactly 100 words; int32 CSR generated in
chunks of 50,000 documents, as in ``tests/library/lda/test_lda.py::_sample_lda`` but drawing each
document's topic counts as Multinomial(100, θ) and each topic's words by inverse CDF)
-----------------------------------------------------------------------------------------
LDA corpus ``(n, d, k, η, α₀)``: topics :math:`\mu_h\sim\mathrm{Dir}(\eta\mathbf 1_d)`
(``numpy.random.default_rng(topic_seed)``), :math:`\theta_d\sim\mathrm{Dir}(\alpha_0/k\,\mathbf 1_k)`,
words as above (``default_rng(doc_seed)``). Single-topic corpus: each document's topic
uniform on k, all its 100 words from that topic.

Part 1 ``scale``: n = 1,000,000, d = 100,000, k = 20, η = 0.01 (about 1,750 words hold 90 % of
a topic's mass), α₀ = 1 (α_h = 0.05); topic_seed 0, doc_seed 1.
``SpectralLDA(20, alpha0=1.0, random_state=0).fit(X)``. Topic error: the k × k matrix of L1
distances :math:`\|\mu_h-\hat\mu_j\|_1` (in [0, 2]), Hungarian matching
(``scipy.optimize.linear_sum_assignment``), mean / median / max over the matched pairs;
``alpha_`` matched the same way against 0.05. Targets: fit < 120 s, ``fit_gib`` < 4 GiB.

Part 2 ``dense``: single-topic corpus n = 20,000, d = 20,000, k = 10, η = 0.01 (about 360 words
hold 90 % of a topic; topic_seed 20, doc_seed 21).
``SpectralTopicModel(10, method="tensor", random_state=0)`` twice: ``implicit`` (the default:
pairs moment applied as ``mvlib.CountPairsOperator`` above 500 words) and ``dense``
(``mvlib.topic._estimator._DENSE_MAX_WORDS = 10**9`` set in that subprocess before fitting:
the 20,000 × 20,000 pairs matrix and its noise matrix are formed, the old path).
Ratios dense / implicit of ``seconds`` and of ``fit_gib``; targets ≥ 10× faster, ≥ 4× leaner.
Reference: ``SpectralLDA(10, alpha0=0.01, random_state=0)`` on the same corpus (α₀ → 0 is
the single-topic model, so a small α₀ is the matching prior).

Part 3 ``compare``: LDA corpora n = 20,000, d = 2,000, k = 10, α₀ = 1 (α_h = 0.1), two topic
priors: ``overlap`` η = 0.1 (about 300 words hold 90 % of a topic; topic_seed 30, doc_seed 31)
and ``sparse`` η = 0.01 (about 40 words; topic_seed 40, doc_seed 41). Methods, each given the
true k and priors:

* ``spectral``: ``SpectralLDA(10, alpha0=1.0, random_state=rs)``;
* ``sklearn_batch`` / ``sklearn_online``: ``sklearn.decomposition.LatentDirichletAllocation(
  n_components=10, doc_topic_prior=0.1, topic_word_prior=η, learning_method="batch" /
  "online", random_state=rs)``, other arguments at their defaults (max_iter = 10, one job);
  topics = ``components_`` normalised by row;
* ``lda_gibbs``: ``lda.LDA(n_topics=10, n_iter=500, alpha=0.1, eta=η, random_state=rs)``
  (collapsed Gibbs sampler, Cython, single-threaded); topics = ``topic_word_``;
* ``tomotopy``: only if ``import tomotopy`` works; it was not installed when this bench was
  written, so the row is recorded as ``skipped`` (and as ``failed``, "no runner", if it ever
  becomes importable: no tomotopy code is written untested).

``rs`` = 0, 1, 2 on ``overlap`` (a likelihood fit's local optimum depends on its start) and
0 on ``sparse``. Same topic error as part 1 (``topic_l1_*``), plus ``n_recovered``: matched
topics with L1 < 0.5.

Part 4 ``sweep``: the first n ∈ {1,000, 3,000, 10,000, 20,000} documents of each part-3
corpus, ``spectral``, ``sklearn_batch``, ``lda_gibbs`` at rs = 0 (n = 20,000 is the part-3 fit).

Part 5 ``reuters``: ``lda.datasets.load_reuters()`` (395 documents × 4,258 words, shipped with
``lda``); documents permuted with ``default_rng(0)``, the first 300 train, the other 95
held out. k = 20, α₀ = 1 (α_h = 0.05), η = 0.01; the part-3 methods at rs = 0, fitted on the
train part. Held-out numbers:

* ``own_perplexity``: each library's own estimate on the 95 documents, where it has one:
  sklearn ``perplexity(X)`` = exp(−variational bound / words) of its E-step;
  ``SpectralLDA.perplexity`` = exp(−plug-in per-word log-likelihood) with θ from its
  mean-field fold-in of the same documents (optimistic: θ is fitted, not integrated out);
  lda has none, so ``lda.LDA.transform`` (iterated pseudo-counts, 20 steps) plugged in the same
  way (``own_kind`` says which).
* ``completion_perplexity`` (common to all methods, from each method's topic-word matrix
  φ only): document completion (Wallach et al. 2009). The tokens of each held-out document
  are shuffled (``default_rng(1)``); θ is estimated from the first ⌊ℓ/2⌋ by 100 steps of
  :math:`\theta_h\leftarrow(\alpha_h+\theta_h\sum_w c_w\phi_{hw}/\sum_{h'}\theta_{h'}\phi_{h'w})/(\ell_{obs}+\alpha_0)`
  from uniform θ, α_h = 0.05 for every method; the score is
  :math:`\exp(-\sum_w c'_w\log\sum_h\theta_h\phi_{hw}/\sum_w c'_w)` over the second half
  (probabilities floored at 1e-12). ``completion_perplexity_smoothed``: the same with every
  φ mixed with the uniform distribution at weight 0.01 (spectral topics have exact zeros
  where negative mass was clipped); ``zero_prob_tokens``: fraction of second-half tokens
  with probability < 1e-10. Reference rows: ``unigram`` (train word frequencies + 0.01,
  one topic) and ``uniform`` (1/4,258).

JSON schema (``chapters/data/lda_bench.json``)
----------------------------------------------
``{"environment": {python, numpy, scipy, sklearn, lda, mvlib, machine, nproc, threads,
load_start, load_end, date}, "targets": {scale_seconds, scale_gib, dense_speedup,
dense_leaner}, "seconds_total": wall time of the run, "parts_run": [...],
"scale": {<run>, corpus: <corpus>, traced, tracemalloc_peak_gib, traced_seconds,
alpha_true, alpha_matched, alpha_abs_err_max, alpha_sum, clipped_mass, met_seconds, met_gib,
part_seconds},
"dense": {corpus: <corpus>, runs: {implicit, dense, spectral_lda: <run>}, speedup (time
dense / implicit), leaner (fit_gib dense / implicit), leaner_total_peak (rss_peak_gib ratio),
met_speedup, met_leaner, part_seconds},
"compare": {corpora: {overlap, sparse: <corpus>}, runs: [<run>...], summary: [{corpus,
method, seeds, topic_l1_mean, topic_l1_median_mean, seconds_mean, fit_gib_max,
n_recovered_min}], part_seconds},
"sweep": {ns, methods, runs: [<run>... (``reused_from: "compare"`` for n = 20,000)], part_seconds},
"reuters": {config: {n_train, split_seed, k, alpha0, eta, completion_seed, completion_steps,
smoothing, floor}, runs: [{part, method, rs, seconds, seconds_repeats, rss_before_gib,
rss_peak_gib, fit_gib, warnings, own_perplexity, own_kind, completion_perplexity,
completion_perplexity_smoothed, zero_prob_tokens, n_train, n_test, load_start}...;
``unigram``/``uniform``: the completion fields only], part_seconds}}``

where ``<corpus>`` = ``{kind ("lda"/"single"), n, d, k, eta, alpha0, topic_seed, doc_seed}`` and
``<run>`` = ``{part, corpus (name), method, rs, n, nnz, generate_seconds, seconds,
seconds_repeats, rss_before_gib, rss_peak_gib, fit_gib, topic_l1_mean, topic_l1_median,
topic_l1_max, n_recovered, warnings, load_start, load_end}`` plus ``alpha_true``,
``alpha_matched``, ``alpha_sum``, ``clipped_mass`` (``alpha_abs_err_max`` when α₀ is known)
for SpectralLDA and ``weights`` for SpectralTopicModel (matched to the true topics);
``skipped`` or ``failed`` with a reason instead of the numbers when a method did not run.
Sizes in GiB (2³⁰ bytes), times in seconds, load averages as (1, 5, 15) minutes.

Measured on this 2-core machine (run of 2026-11-26, 833 s for ``all``): sub-second
SpectralLDA fits sometimes took 1.5–2.5 s instead of 0.02–0.2 s, in all three repeats, when
another process kept one core busy (``load_start`` ≥ 1.5): with 2 BLAS threads every BLAS
call of the tensor power method waits for the second core. The errors do not change.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from mvlib.book import (ChildError, child_reply, data_path, environment, measure_call, merged_sections, run_child,
                        run_parts, timed, versions_line)

OUT = data_path("lda_bench.json", Path(__file__).resolve().parent)
LENGTH = 100
CHUNK = 50_000
TARGETS = {"scale_seconds": 120.0, "scale_gib": 4.0, "dense_speedup": 10.0, "dense_leaner": 4.0}
RECOVERED_L1 = 0.5
GIBBS_ITER = 500
FAST_SECONDS = 5.0   # fits faster than this are timed three times (median)

CORPORA = {
    "scale": dict(kind="lda", n=1_000_000, d=100_000, k=20, eta=0.01, alpha0=1.0, topic_seed=0, doc_seed=1),
    "dense": dict(kind="single", n=20_000, d=20_000, k=10, eta=0.01, alpha0=None, topic_seed=20, doc_seed=21),
    "overlap": dict(kind="lda", n=20_000, d=2_000, k=10, eta=0.1, alpha0=1.0, topic_seed=30, doc_seed=31),
    "sparse": dict(kind="lda", n=20_000, d=2_000, k=10, eta=0.01, alpha0=1.0, topic_seed=40, doc_seed=41),
}
if os.environ.get("LDA_BENCH_QUICK"):   # --quick: every corpus 10x smaller (children inherit it)
    for _c in CORPORA.values():
        _c["n"] //= 10
COMPARE_METHODS = ["spectral", "sklearn_batch", "sklearn_online", "lda_gibbs", "tomotopy"]
COMPARE_SEEDS = {"overlap": [0, 1, 2], "sparse": [0]}
SWEEP_NS = [1_000, 3_000, 10_000, 20_000] if not os.environ.get("LDA_BENCH_QUICK") else [500, 1_000, 2_000]
SWEEP_METHODS = ["spectral", "sklearn_batch", "lda_gibbs"]
REUTERS = dict(n_train=300, split_seed=0, k=20, alpha0=1.0, eta=0.01, completion_seed=1,
               completion_steps=100, smoothing=0.01, floor=1e-12)


# --------------------------------------------------------------------------- corpora
def topics(c):
    """True topic-word matrix (k, d): rows ~ Dirichlet(eta)."""
    return np.random.default_rng(c["topic_seed"]).dirichlet(np.full(c["d"], c["eta"]), size=c["k"])


def sample_corpus(c, mu):
    """int32 CSR counts (n, d), every document LENGTH words, generated CHUNK documents at a time."""
    n, k, d = c["n"], c["k"], c["d"]
    rng = np.random.default_rng(c["doc_seed"])
    cmu = np.cumsum(mu, axis=1)
    cmu /= cmu[:, -1:]
    indptr, indices, data, off = [np.zeros(1, np.int64)], [], [], 0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        if c["kind"] == "lda":
            theta = rng.dirichlet(np.full(k, c["alpha0"] / k), size=m)
            counts = rng.multinomial(LENGTH, theta)                      # (m, k) topic counts
        else:
            counts = np.zeros((m, k), np.int64)
            counts[np.arange(m), rng.integers(0, k, size=m)] = LENGTH
        keys = []
        for h in range(k):
            docs = np.repeat(np.arange(m, dtype=np.int64), counts[:, h])
            words = np.minimum(np.searchsorted(cmu[h], rng.random(docs.size), side="right"), d - 1)
            keys.append(docs * d + words)
        u, cnt = np.unique(np.concatenate(keys), return_counts=True)
        rows = u // d
        indices.append((u - rows * d).astype(np.int32))
        data.append(cnt.astype(np.int32))
        indptr.append(off + np.cumsum(np.bincount(rows, minlength=m)))
        off += u.size
        del keys, u, cnt, rows
    ip = np.concatenate(indptr)
    ip = ip.astype(np.int32) if ip[-1] < 2**31 else ip
    return sp.csr_matrix((np.concatenate(data), np.concatenate(indices), ip), shape=(n, d))


def topic_error(mu, est):
    """Matched L1 distances (Hungarian): (per-pair distances in true-topic order, est index per true topic)."""
    from scipy.optimize import linear_sum_assignment

    C = np.stack([np.abs(mu[h][None, :] - est).sum(axis=1) for h in range(mu.shape[0])])
    r, col = linear_sum_assignment(C)
    return C[r, col], col


# --------------------------------------------------------------------------- fitting (child side)
def make_estimator(method, k, alpha0, eta, rs):
    """(fit function X -> fitted object, topic-word getter) of one method."""
    if method == "spectral":
        import mvlib
        return mvlib.SpectralLDA(k, alpha0=alpha0, random_state=rs), lambda m: m.topic_word_
    if method in ("sklearn_batch", "sklearn_online"):
        from sklearn.decomposition import LatentDirichletAllocation
        est = LatentDirichletAllocation(n_components=k, doc_topic_prior=alpha0 / k, topic_word_prior=eta,
                                        learning_method=method.split("_")[1], random_state=rs)
        return est, lambda m: m.components_ / m.components_.sum(axis=1, keepdims=True)
    if method == "lda_gibbs":
        import logging

        import lda
        logging.getLogger("lda").setLevel(logging.ERROR)
        return lda.LDA(n_topics=k, n_iter=GIBBS_ITER, alpha=alpha0 / k, eta=eta, random_state=rs), \
            lambda m: m.topic_word_
    if method == "tomotopy":
        raise NotImplementedError("tomotopy is importable but this bench has no tomotopy runner "
                                  "(it was not installed when the bench was written)")
    raise ValueError(method)


def timed_fit(make, X):
    """Fit ``make()`` on X: (fitted estimator, measurements). Memory from the first fit; a fit
    under FAST_SECONDS is repeated twice more on fresh estimators and ``seconds`` is the median."""
    est = make()
    fit = measure_call(est.fit, X)
    seconds = [fit.seconds]
    if seconds[0] < FAST_SECONDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds += [timed(make().fit, X)[1] for _ in range(2)]
    return est, {"seconds": float(np.median(seconds)), "seconds_repeats": seconds, **fit.memory(),
                 "warnings": fit.warnings}


def clone_like(est):
    """A fresh, unfitted estimator with the same parameters (all three libraries' estimators
    take their parameters as keyword arguments of the same names as their attributes)."""
    if hasattr(est, "get_params"):
        return type(est)(**est.get_params())
    return type(est)(n_topics=est.n_topics, n_iter=est.n_iter, alpha=est.alpha, eta=est.eta,
                     random_state=est.random_state, refresh=est.refresh)


def child(spec):
    out = {"load_start": list(os.getloadavg())}
    method = spec["method"]
    if method == "tomotopy":
        try:
            import tomotopy  # noqa: F401
        except ImportError as e:
            child_reply({**spec, "skipped": f"import tomotopy failed: {e}"})
            return
    if spec["part"] == "reuters":
        child_reply({**spec, **out, **reuters_child(spec)})
        return
    c = CORPORA[spec["corpus"]]
    mu = topics(c)
    X, out["generate_seconds"] = timed(sample_corpus, c, mu)
    if spec.get("n") and spec["n"] < X.shape[0]:
        X = X[: spec["n"]]
    out["n"], out["nnz"] = X.shape[0], int(X.nnz)
    k = c["k"]
    if spec["part"] == "dense":
        import mvlib
        import mvlib.topic._estimator as topic_mod
        if method == "dense":
            topic_mod._DENSE_MAX_WORDS = 10**9
        if method in ("dense", "implicit"):
            proto, get = mvlib.SpectralTopicModel(k, method="tensor", random_state=0), lambda m: m.topic_word_
        else:
            proto, get = mvlib.SpectralLDA(k, alpha0=0.01, random_state=0), lambda m: m.topic_word_
    else:
        proto, get = make_estimator(method, k, c["alpha0"], c["eta"], spec["rs"])
    est, meas = timed_fit(lambda: clone_like(proto), X)
    out.update(meas)
    err, col = topic_error(mu, get(est))
    out.update(topic_l1_mean=float(err.mean()), topic_l1_median=float(np.median(err)),
               topic_l1_max=float(err.max()), n_recovered=int(np.sum(err < RECOVERED_L1)))
    if hasattr(est, "alpha_"):
        a = est.alpha_[col]
        out.update(alpha_true=c["alpha0"] / k if c["alpha0"] else None, alpha_matched=a.tolist(),
                   alpha_sum=float(a.sum()), clipped_mass=float(est.clipped_mass_))
        if c["alpha0"]:
            out["alpha_abs_err_max"] = float(np.abs(a - c["alpha0"] / k).max())
    if hasattr(est, "weights_"):
        out["weights"] = est.weights_[col].tolist()
    if spec.get("traced"):
        import tracemalloc
        del est
        gc.collect()
        est = clone_like(proto)
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["traced_seconds"] = timed(est.fit, X)[1]
        out["tracemalloc_peak_gib"] = tracemalloc.get_traced_memory()[1] / 2**30
        tracemalloc.stop()
    out["load_end"] = list(os.getloadavg())
    child_reply({**spec, **out})


# --------------------------------------------------------------------------- Reuters
def reuters_split():
    import lda.datasets
    X = np.asarray(lda.datasets.load_reuters())
    perm = np.random.default_rng(REUTERS["split_seed"]).permutation(X.shape[0])
    return X[perm[:REUTERS["n_train"]]], X[perm[REUTERS["n_train"]:]]


def completion_split(X):
    """(observed first halves, evaluated second halves) of each document's shuffled tokens."""
    rng = np.random.default_rng(REUTERS["completion_seed"])
    obs, ev = np.zeros_like(X, dtype=float), np.zeros_like(X, dtype=float)
    for i, row in enumerate(X):
        tok = np.repeat(np.arange(X.shape[1]), row)
        rng.shuffle(tok)
        h = tok.size // 2
        obs[i] = np.bincount(tok[:h], minlength=X.shape[1])
        ev[i] = np.bincount(tok[h:], minlength=X.shape[1])
    return obs, ev


def completion(phi, X):
    """Document-completion perplexity of topics phi (k, d) on held-out counts X (see the docstring)."""
    floor = REUTERS["floor"]
    obs, ev = completion_split(X)
    k = phi.shape[0]
    alpha = np.full(k, REUTERS["alpha0"] / REUTERS["k"])
    theta = np.full((X.shape[0], k), 1.0 / k)
    for _ in range(REUTERS["completion_steps"]):
        p = np.maximum(theta @ phi, floor)
        theta = alpha + theta * ((obs / p) @ phi.T)
        theta /= theta.sum(axis=1, keepdims=True)
    p = theta @ phi
    ll = float(np.sum(ev * np.log(np.maximum(p, floor))) / ev.sum())
    return float(np.exp(-ll)), float(np.sum(ev * (p < 1e-10)) / ev.sum())


def reuters_child(spec):
    Xtr, Xte = reuters_split()
    cfg = REUTERS
    proto, get = make_estimator(spec["method"], cfg["k"], cfg["alpha0"], cfg["eta"], spec["rs"])
    Xfit = sp.csr_matrix(Xtr) if spec["method"] == "spectral" else Xtr
    est, out = timed_fit(lambda: clone_like(proto), Xfit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if spec["method"] == "lda_gibbs":
            theta = est.transform(Xte)
            p = theta @ est.topic_word_
            own = float(np.exp(-np.sum(Xte * np.log(np.maximum(p, cfg["floor"]))) / Xte.sum()))
            kind = "plug-in with lda.LDA.transform (iterated pseudo-counts, 20 steps) of the same documents"
        elif spec["method"] == "spectral":
            own = est.perplexity(sp.csr_matrix(Xte))
            kind = "SpectralLDA.perplexity: plug-in with its mean-field fold-in of the same documents"
        else:
            own = float(est.perplexity(Xte))
            kind = ("sklearn perplexity: exp(-variational bound / words); the bound adds the whole "
                    "model's topic-word term unscaled, which dominates on 95 documents")
    phi = get(est)
    cp, zero = completion(phi, Xte)
    d = phi.shape[1]
    cps, _ = completion((1 - cfg["smoothing"]) * phi + cfg["smoothing"] / d, Xte)
    out.update(own_perplexity=own, own_kind=kind, completion_perplexity=cp,
               completion_perplexity_smoothed=cps, zero_prob_tokens=zero, n_train=int(Xtr.shape[0]),
               n_test=int(Xte.shape[0]))
    return out


# --------------------------------------------------------------------------- parent side
def in_child(spec, threads):
    """One fit in its own subprocess with ``threads`` BLAS/OpenMP threads (:func:`child`): its
    measurements, or the last line of what failed."""
    try:
        return run_child(__file__, json.dumps(spec), threads=threads)
    except ChildError as e:
        return {**spec, "failed": e.last_line}


def run_row(r, label):
    if "skipped" in r or "failed" in r:
        return f"{label:<34} {'skipped' if 'skipped' in r else 'FAILED'}: {r.get('skipped') or r.get('failed')}"
    return (f"{label:<34} {r['seconds']:8.1f} {r['fit_gib']:8.3f} {r['rss_peak_gib']:8.3f} "
            f"{r['topic_l1_mean']:8.3f} {r['topic_l1_median']:8.3f} {r['topic_l1_max']:8.3f} "
            f"{r['n_recovered']:>4}/{CORPORA[r['corpus']]['k']}")


HEADER = (f"{'run':<34} {'time s':>8} {'fit GiB':>8} {'peak':>8} {'L1 mean':>8} {'median':>8} {'max':>8} "
          f"{'found':>7}")


def part_scale(threads):
    c = CORPORA["scale"]
    print(f"\nPart 1 (scale): SpectralLDA(20, alpha0=1) on n={c['n']:,} x d={c['d']:,}, {LENGTH} words/doc, "
          f"eta={c['eta']}, alpha_h={c['alpha0'] / c['k']}", flush=True)
    r = in_child({"part": "scale", "corpus": "scale", "method": "spectral", "rs": 0, "traced": True}, threads)
    if "failed" in r:
        print(f"  FAILED: {r['failed']}")
        return {"corpus": c, **r}
    print(f"  corpus: nnz {r['nnz']:,}, generated in {r['generate_seconds']:.1f} s (not part of the fit)")
    print(f"  fit time            {r['seconds']:8.1f} s     target < {TARGETS['scale_seconds']:g} s -> "
          f"{'met' if r['seconds'] < TARGETS['scale_seconds'] else 'NOT met'}")
    print(f"  fit memory (RSS peak - RSS before) {r['fit_gib']:.2f} GiB   target < {TARGETS['scale_gib']:g} GiB -> "
          f"{'met' if r['fit_gib'] < TARGETS['scale_gib'] else 'NOT met'}")
    print(f"  process RSS before fit {r['rss_before_gib']:.2f} GiB, peak during fit {r['rss_peak_gib']:.2f} GiB "
          f"(whole process, corpus included)")
    print(f"  tracemalloc peak of a second, traced fit {r['tracemalloc_peak_gib']:.2f} GiB "
          f"(its time {r['traced_seconds']:.1f} s)")
    print(f"  topic L1 (Hungarian): mean {r['topic_l1_mean']:.4f}, median {r['topic_l1_median']:.4f}, "
          f"max {r['topic_l1_max']:.4f}; recovered {r['n_recovered']}/{c['k']}")
    print(f"  alpha_: truth {r['alpha_true']:.3f} each; matched range [{min(r['alpha_matched']):.4f}, "
          f"{max(r['alpha_matched']):.4f}], max abs error {r['alpha_abs_err_max']:.4f}, sum {r['alpha_sum']:.4f}; "
          f"clipped mass {r['clipped_mass']:.3f}")
    print(f"  load average before/after: {r['load_start'][0]:.2f} / {r['load_end'][0]:.2f}")
    for w in r["warnings"]:
        print(f"  warning: {w}")
    r.update(corpus=c, met_seconds=r["seconds"] < TARGETS["scale_seconds"], met_gib=r["fit_gib"] < TARGETS["scale_gib"])
    return r


def part_dense(threads):
    c = CORPORA["dense"]
    print(f"\nPart 2 (dense): SpectralTopicModel(10, method='tensor') on a single-topic corpus n={c['n']:,} x "
          f"d={c['d']:,}, eta={c['eta']}", flush=True)
    print(HEADER)
    runs = {}
    for meth, label in (("implicit", "implicit (default)"), ("dense", "dense (_DENSE_MAX_WORDS=10**9)"),
                        ("spectral_lda", "SpectralLDA(alpha0=0.01), reference")):
        runs[meth] = r = in_child({"part": "dense", "corpus": "dense", "method": meth, "rs": 0}, threads)
        print(run_row(r, label), flush=True)
    out = {"corpus": c, "runs": runs}
    i, d = runs["implicit"], runs["dense"]
    if "seconds" in i and "seconds" in d:
        out.update(speedup=d["seconds"] / i["seconds"], leaner=d["fit_gib"] / i["fit_gib"],
                   leaner_total_peak=d["rss_peak_gib"] / i["rss_peak_gib"])
        out.update(met_speedup=out["speedup"] >= TARGETS["dense_speedup"],
                   met_leaner=out["leaner"] >= TARGETS["dense_leaner"])
        print(f"  dense / implicit: time {out['speedup']:.1f}x (target >= {TARGETS['dense_speedup']:g}x -> "
              f"{'met' if out['met_speedup'] else 'NOT met'}), fit memory {out['leaner']:.1f}x (target >= "
              f"{TARGETS['dense_leaner']:g}x -> {'met' if out['met_leaner'] else 'NOT met'}); whole-process peak "
              f"{out['leaner_total_peak']:.1f}x")
        print(f"  mean topic L1 to the truth: implicit {i['topic_l1_mean']:.4f}, dense {d['topic_l1_mean']:.4f}")
    for meth, r in runs.items():
        for w in r.get("warnings", []):
            print(f"  warning ({meth}): {w}")
    return out


def _compare_summary(runs):
    summ = []
    for corpus in COMPARE_SEEDS:
        for meth in COMPARE_METHODS:
            rs = [r for r in runs if r["corpus"] == corpus and r["method"] == meth and "seconds" in r]
            if not rs:
                continue
            summ.append({"corpus": corpus, "method": meth, "seeds": [r["rs"] for r in rs],
                         "topic_l1_mean": float(np.mean([r["topic_l1_mean"] for r in rs])),
                         "topic_l1_median_mean": float(np.mean([r["topic_l1_median"] for r in rs])),
                         "seconds_mean": float(np.mean([r["seconds"] for r in rs])),
                         "fit_gib_max": float(max(r["fit_gib"] for r in rs)),
                         "n_recovered_min": int(min(r["n_recovered"] for r in rs))})
    return summ


def part_compare(threads):
    print(f"\nPart 3 (compare): n=20,000 x d=2,000, k=10, alpha_h=0.1, {LENGTH} words/doc; each fit in its own "
          f"subprocess; lda Gibbs n_iter={GIBBS_ITER}", flush=True)
    runs = []
    for corpus, seeds in COMPARE_SEEDS.items():
        c = CORPORA[corpus]
        print(f"corpus '{corpus}': eta={c['eta']}")
        print(HEADER)
        for meth in COMPARE_METHODS:
            for rs in seeds:
                r = in_child({"part": "compare", "corpus": corpus, "method": meth, "rs": rs}, threads)
                runs.append(r)
                print(run_row(r, f"{meth} rs={rs}"), flush=True)
                if meth == "tomotopy":
                    break
    summ = _compare_summary(runs)
    print("summary (means over rs):")
    for s in summ:
        sp_ = [t for t in summ if t["corpus"] == s["corpus"] and t["method"] == "spectral"]
        ratio = s["seconds_mean"] / sp_[0]["seconds_mean"] if sp_ else float("nan")
        print(f"  {s['corpus']:<8} {s['method']:<15} L1 mean {s['topic_l1_mean']:.3f} (median-over-topics "
              f"{s['topic_l1_median_mean']:.3f}), time {s['seconds_mean']:6.1f} s ({ratio:5.1f}x spectral), fit "
              f"memory <= {s['fit_gib_max']:.3f} GiB, found >= {s['n_recovered_min']}/10")
    for r in runs:
        for w in r.get("warnings", []):
            print(f"  warning ({r['corpus']} {r['method']} rs={r['rs']}): {w}")
    return {"corpora": {k: CORPORA[k] for k in COMPARE_SEEDS}, "runs": runs, "summary": summ}


def part_sweep(threads, compare=None):
    print(f"\nPart 4 (sweep): first n documents of each part-3 corpus, rs=0", flush=True)
    runs = []
    for corpus in COMPARE_SEEDS:
        print(f"corpus '{corpus}' (eta={CORPORA[corpus]['eta']})")
        print(f"{'n':>7} " + " ".join(f"{m + ' L1':>20} {'s':>6}" for m in SWEEP_METHODS))
        for n in SWEEP_NS:
            line = f"{n:>7} "
            for meth in SWEEP_METHODS:
                reuse = [r for r in (compare or {}).get("runs", []) if r["corpus"] == corpus and
                         r["method"] == meth and r["rs"] == 0 and r.get("n") == n]
                r = dict(reuse[0], part="sweep", reused_from="compare") if reuse else in_child(
                    {"part": "sweep", "corpus": corpus, "method": meth, "rs": 0, "n": n}, threads)
                runs.append(r)
                if "seconds" in r:
                    line += f"{r['topic_l1_mean']:8.3f} (med {r['topic_l1_median']:.3f}) {r['seconds']:6.1f} "
                else:
                    line += f"{'failed':>20} {'-':>6} "
            print(line, flush=True)
    return {"ns": SWEEP_NS, "methods": SWEEP_METHODS, "runs": runs}


def part_reuters(threads):
    cfg = REUTERS
    print(f"\nPart 5 (reuters): lda.datasets.load_reuters(), {cfg['n_train']} train / 95 held-out documents, "
          f"k={cfg['k']}, alpha_h={cfg['alpha0'] / cfg['k']}, eta={cfg['eta']}", flush=True)
    print(f"{'method':<16} {'time s':>7} {'fit GiB':>8} {'own ppl':>9} {'completion':>11} {'smoothed':>9} "
          f"{'p~0 tokens':>10}  own estimate")
    runs = []
    for meth in COMPARE_METHODS:
        r = in_child({"part": "reuters", "method": meth, "rs": 0}, threads)
        runs.append(r)
        if "seconds" not in r:
            print(f"{meth:<16} {'skipped' if 'skipped' in r else 'FAILED'}: {r.get('skipped') or r.get('failed')}")
            continue
        print(f"{meth:<16} {r['seconds']:7.2f} {r['fit_gib']:8.3f} {r['own_perplexity']:9.1f} "
              f"{r['completion_perplexity']:11.1f} {r['completion_perplexity_smoothed']:9.1f} "
              f"{r['zero_prob_tokens']:10.4f}  {r['own_kind']}", flush=True)
        for w in r["warnings"]:
            print(f"  warning: {w}")
    Xtr, Xte = reuters_split()
    d = Xtr.shape[1]
    uni = (Xtr.sum(axis=0) + 0.01)[None, :]
    for name, phi in (("unigram", uni / uni.sum()), ("uniform", np.full((1, d), 1.0 / d))):
        cp, zero = completion(phi, Xte)
        runs.append({"part": "reuters", "method": name, "completion_perplexity": cp,
                     "completion_perplexity_smoothed": completion((1 - cfg["smoothing"]) * phi + cfg["smoothing"] / d,
                                                                   Xte)[0], "zero_prob_tokens": zero})
        print(f"{name:<16} {'-':>7} {'-':>8} {'-':>9} {cp:11.1f} {runs[-1]['completion_perplexity_smoothed']:9.1f} "
              f"{zero:10.4f}  (reference)")
    return {"config": cfg, "runs": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["scale", "dense", "compare", "sweep", "reuters", "all"], default="all")
    ap.add_argument("--no-json", action="store_true", help="print only")
    ap.add_argument("--threads", type=int, default=2, help="BLAS/OpenMP threads of each fitting subprocess")
    ap.add_argument("--quick", action="store_true", help="every corpus 10x smaller; nothing written")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        os.environ["LDA_BENCH_QUICK"] = "1"
        args.no_json = True
        for c in CORPORA.values():
            c["n"] //= 10
        SWEEP_NS[:] = [500, 1_000, 2_000]
    if args.child:
        child(json.loads(args.child))
        return
    import lda
    import scipy
    import sklearn

    import mvlib
    wall = time.perf_counter()
    versions = dict(scipy=scipy.__version__, sklearn=sklearn.__version__, lda=getattr(lda, "__version__", "?"))
    env = {**environment(**versions, mvlib=getattr(mvlib, "__version__", "?")), "threads": args.threads,
           "load_start": list(os.getloadavg()), "date": datetime.datetime.now().isoformat(timespec="seconds")}
    print(f"SpectralLDA benchmark; {versions_line(**versions)}, {env['machine']}, nproc {env['nproc']}, "
          f"threads {args.threads}, load {env['load_start'][0]:.2f}")
    parts = ["scale", "dense", "compare", "sweep", "reuters"] if args.part == "all" else [args.part]
    run = {"scale": part_scale, "dense": part_dense, "compare": part_compare, "reuters": part_reuters}
    res = run_parts(parts, lambda part, done: part_sweep(args.threads, done.get("compare")) if part == "sweep"
                    else run[part](args.threads))
    total = time.perf_counter() - wall
    env["load_end"] = list(os.getloadavg())
    print(f"\ntotal {total:.0f} s")
    if args.no_json:
        return
    data = merged_sections(OUT, res, keep_others=args.part != "all")
    data.update(environment=env, targets=TARGETS, seconds_total=total, parts_run=parts)
    OUT.write_text(json.dumps(data, indent=1))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
