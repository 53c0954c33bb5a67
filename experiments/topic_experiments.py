r"""Heavy experiments of the topic-model chapter; results go to ``chapters/data/topic_*.json``.

Run ``OMP_NUM_THREADS=1 python experiments/topic_experiments.py`` (a few minutes on 2 cores;
``--quick``: one split, fewer sweeps, to check the script; ``tests/book/test_experiments_topic.py``
runs its functions at small sizes). The chapter
``chapters/03_topic_models.ipynb`` loads and plots the files; it does not re-run the fits. The
chapter's smaller synthetic experiments are in ``experiments/ch3_experiments.py``.

``topic_reuters.json`` — the single-topic model and LDA on the Reuters articles of ``lda``
    Five random splits (seed s = 0..4) of the 395 articles into 316 training and 79
    held-out documents; vocabulary: words in at least 10 training documents. For
    k = 3, 5, 10 topics, four methods on the same training counts:

    * ``spectral`` — ``SpectralTopicModel(k, random_state=s)`` (the default route);
    * ``em`` — EM for the mixture of unigrams (``UnigramMixtureEM``, Laplace smoothing,
      5 random starts, best objective kept, tol 1e-7 nats/word);
    * ``spectral_em`` — the same EM started from the spectral estimate (its time includes
      the spectral fit);
    * ``lda`` — ``lda.LDA(k, n_iter=SWEEPS, random_state=s)``, the package defaults
      alpha = 0.1 and eta = 0.01 (the book writes the topic-word prior as beta); its
      log-likelihood trace (every 10 sweeps) is stored for split 0.

    Metrics, identical for every method: every topic is smoothed as
    0.95 * topic + 0.05 * (add-one smoothed training unigram distribution). Held-out
    document completion: each held-out document's words are split at random into two
    halves (seeded); from the first half, the posterior over topics (the two single-topic
    fits: exact posterior under the fitted model with the smoothed topics) or the topic
    proportions (LDA: lda's iterated pseudo-counts, ``transform``, with the smoothed topics
    and alpha — a point estimate, an approximation to LDA's predictive distribution); the
    score is the log-likelihood per word of the second half under the mixture of smoothed
    topics. NPMI coherence (Bouma 2009) of each topic's 10 top words, with document
    co-occurrences counted in the 79 held-out documents (``mvlib.core.metrics.npmi_coherence``),
    and UMass coherence (Mimno et al. 2011) on the training documents, for comparison.
    Warnings raised by the spectral fit are recorded. Seconds per fit (``time.perf_counter``,
    one thread).

``topic_length.json`` — document length at a fixed word budget
    The chapter's k = 3, d = 30 model (``random_topic_model(3, 30, concentration=0.5,
    random_state=1)``); 300,000 words split into documents of length l = 3 ... 30,000
    (n = 300,000 / l documents, down to 10); 8 data sets per l; ``SpectralTopicModel(3)`` (default route),
    error max_h ||mu_h - mu_hat_h||_2 after matching, and the error max_h |w_h - w_hat_h| of the
    weights (the between-document, topic-draw part of the noise: variance of order l / N).
"""
from __future__ import annotations

import argparse
import json
import logging
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sps
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.topic import UnigramMixtureEM
from mvlib.core.metrics import npmi_coherence
from mvlib.topic import random_topic_model

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
SPLITS, KS, SWEEPS, N_TEST, MIN_DOCS, TOP = 5, (3, 5, 10), 1000, 79, 10, 10
METHODS = ("spectral", "em", "spectral_em", "lda")
LENGTHS = (3, 10, 30, 100, 300, 1000, 3000, 10000, 30000)
WORD_BUDGET, LENGTH_REPS = 300_000, 8


def split_corpus(X_all, s):
    """Split s: train/test indices, vocabulary filter on the training documents, halves of test docs."""
    rng = np.random.default_rng(s)
    order = rng.permutation(X_all.shape[0])
    test_idx, train_idx = order[:N_TEST], order[N_TEST:]
    keep = np.flatnonzero((X_all[train_idx] > 0).sum(axis=0) >= MIN_DOCS)
    X_tr, X_te = X_all[np.ix_(train_idx, keep)], X_all[np.ix_(test_idx, keep)]
    rng_h = np.random.default_rng(100 + s)
    first, second = np.zeros_like(X_te), np.zeros_like(X_te)
    for i, c in enumerate(X_te):
        tokens = rng_h.permutation(np.repeat(np.arange(c.size), c))
        first[i] = np.bincount(tokens[::2], minlength=c.size)
        second[i] = np.bincount(tokens[1::2], minlength=c.size)
    return keep, X_tr, X_te, first, second


def umass(topic_word, X_tr):
    present = X_tr > 0
    out = []
    for t in topic_word:
        v = np.argsort(-t, kind="stable")[:TOP]
        out.append(sum(np.log(((present[:, v[i]] & present[:, v[j]]).sum() + 1) / present[:, v[j]].sum())
                       for i in range(1, TOP) for j in range(i)))
    return np.array(out)


def evaluate(name, fit, unigram, first, second, X_tr, X_te):
    """Completion log-likelihood per word, NPMI (held-out), UMass (training), topic sizes."""
    B = fit.topic_word_
    Bs = 0.95 * B + 0.05 * unigram
    if name == "lda":
        fit.components_ = Bs                 # lda's transform reads components_
        mix = fit.transform(first)
        sizes = fit.nz_ / fit.nz_.sum()
    else:
        L = first @ np.log(Bs).T + np.log(np.maximum(fit.weights_, 1e-300))
        mix = np.exp(L - L.max(axis=1, keepdims=True))
        mix /= mix.sum(axis=1, keepdims=True)
        sizes = fit.weights_
    ll = float((second * np.log(mix @ Bs)).sum() / second.sum())
    return {"loglik": ll, "npmi": npmi_coherence(B, X_te, top=TOP).tolist(),
            "umass": umass(B, X_tr).tolist(), "sizes": np.asarray(sizes).tolist()}


def fit_method(name, k, s, X_tr, X_tr_csr):
    import lda

    caught = []
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if name == "spectral":
            fit = mvlib.SpectralTopicModel(k, random_state=s).fit(X_tr_csr)
        elif name == "em":
            fit = UnigramMixtureEM(k, init="random", n_init=5, random_state=s).fit(X_tr_csr)
        elif name == "spectral_em":
            fit = UnigramMixtureEM(k, init="spectral", random_state=s).fit(X_tr_csr)
        else:
            fit = lda.LDA(k, n_iter=SWEEPS, random_state=s).fit(X_tr)
        caught = [f"{x.category.__name__}: {x.message}" for x in w]
    return fit, time.perf_counter() - t0, caught


def reuters(splits, progress_desc="Reuters splits"):
    import lda.datasets

    logging.getLogger("lda").setLevel(logging.ERROR)
    X_all = lda.datasets.load_reuters()
    vocab_all = np.array(lda.datasets.load_reuters_vocab())
    runs, traces, top_words = [], {}, {}
    for s in mvlib.progress(range(splits), desc=progress_desc):
        keep, X_tr, X_te, first, second = split_corpus(X_all, s)
        X_tr_csr = sps.csr_matrix(X_tr)
        unigram = (X_tr.sum(axis=0) + 1) / (X_tr.sum() + X_tr.shape[1])
        base = float((second * np.log(unigram)).sum() / second.sum())
        for k in KS:
            for name in METHODS:
                fit, secs, caught = fit_method(name, k, s, X_tr, X_tr_csr)
                row = {"split": s, "k": k, "method": name, "seconds": secs, "warnings": caught,
                       "unigram_loglik": base, "n_words": int(keep.size)}
                row.update(evaluate(name, fit, unigram, first, second, X_tr, X_te))
                if name in ("em", "spectral_em"):
                    row["em_iterations"], row["em_converged"] = fit.n_iter_, bool(fit.converged_)
                if name == "lda" and s == 0:
                    traces[str(k)] = np.asarray(fit.loglikelihoods_, float).tolist()
                if s == 0 and k == 5:
                    vocab = vocab_all[keep]
                    top_words[name] = [" ".join(vocab[np.argsort(-t, kind="stable")[:8]])
                                       for t in fit.topic_word_]
                runs.append(row)
    return {"config": {"splits": splits, "ks": list(KS), "methods": list(METHODS), "sweeps": SWEEPS,
                       "n_test": N_TEST, "min_docs": MIN_DOCS, "top": TOP, "smoothing": 0.05,
                       "em_restarts": 5, "lda_alpha": 0.1, "lda_beta": 0.01},
            "runs": runs, "lda_trace_split0": {"every": 10, "loglik": traces},
            "top_words_split0_k5": top_words}


def doc_length(reps):
    model = random_topic_model(3, 30, concentration=0.5, random_state=1)
    errs, werrs = {}, {}
    for ell in mvlib.progress(LENGTHS, desc="document length"):
        n = WORD_BUDGET // ell
        errs[str(ell)], werrs[str(ell)] = [], []
        for r in range(reps):
            X, _ = model.sample(n, doc_length=ell, random_state=10_000 * r + ell)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")      # the noise check may warn at n = 10 documents
                fit = mvlib.SpectralTopicModel(3, random_state=r).fit(X)
            perm, _ = mvlib.match_columns(model.M, fit.topic_word_.T)
            errs[str(ell)].append(mvlib.matched_error(model.M, fit.topic_word_.T))
            werrs[str(ell)].append(float(np.abs(fit.weights_[perm] - model.weights).max()))
    return {"config": {"k": 3, "d": 30, "word_budget": WORD_BUDGET, "lengths": list(LENGTHS),
                       "reps": reps, "weights": model.weights.tolist()},
            "errors": errs, "weight_errors": werrs}


def _rounded(obj, digits=6):
    if isinstance(obj, float):
        return round(obj, digits)
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v, digits) for v in obj]
    return obj


def main():
    global SWEEPS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one split, 100 sweeps, 2 repetitions; no files written")
    args = ap.parse_args()
    if args.quick:
        SWEEPS = 100
    OUT.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=1):
        t0 = time.perf_counter()
        length = doc_length(2 if args.quick else LENGTH_REPS)
        print(f"document length: {time.perf_counter() - t0:.0f} s")
        t0 = time.perf_counter()
        reu = reuters(1 if args.quick else SPLITS)
        print(f"Reuters: {time.perf_counter() - t0:.0f} s")
    if args.quick:
        print(json.dumps(_rounded(reu["runs"][:4], 3))[:2000])
        return
    (OUT / "topic_length.json").write_text(json.dumps(_rounded(length), indent=1))
    (OUT / "topic_reuters.json").write_text(json.dumps(_rounded(reu), indent=1))
    print("wrote", OUT / "topic_length.json", "and", OUT / "topic_reuters.json")


if __name__ == "__main__":
    main()
