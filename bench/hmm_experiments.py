r"""Heavy experiments of the hidden-Markov chapter; results go to ``chapters/data/hmm_*.json``.

Run ``OMP_NUM_THREADS=1 .venv/bin/python bench/hmm_experiments.py`` (about 5 minutes on
2 cores). The chapter ``chapters/06_hidden_markov.ipynb`` loads and plots the files; it
does not re-run Baum–Welch (too slow for the book's time budget).

``hmm_compare.json`` — spectral vs Baum–Welch on data sampled by hmmlearn
    For seeds 0, 1, 2: the model of ``bench/bench_hmm.py`` (k = 3, d = 8, emission rows
    Dirichlet(0.4), fixed transition matrix, uniform start); 1,000 sequences of length 50
    sampled by ``CategoricalHMM.sample``. Methods: ``SpectralHMM(3, random_state=seed)``;
    Baum–Welch (``CategoricalHMM(3, n_iter=1, random_state=r)``, r = 0..4, hmmlearn's random
    initialisation) and Baum–Welch from the spectral start (``to_hmmlearn``), both advanced
    one EM iteration per ``fit`` call (``init_params=""`` after the first) so that the
    log-likelihood, the errors and the elapsed time are recorded after every iteration;
    stopped as hmmlearn stops (gain < tol = 1e-2) or after 100 iterations.

``hmm_reuters.json`` — held-out log-likelihood on real text
    The 395 Reuters titles of ``lda.datasets.load_reuters_titles()``: running index and
    trailing date removed, lower-cased, letters a–z → 0..25, every other run of characters
    → 26 (a separator); titles 0..299 train, 300..394 test. For k = 2, 4, 6, 8 states:
    spectral with ``method="observable"`` (the default tensor route refuses these data: the
    symmetrised second moment has fewer than k positive eigenvalues; held-out score with
    the 1e-3 smoothing of ``to_hmmlearn``), Baum–Welch from 3
    random starts, and spectral → Baum–Welch (100 iterations at most each); average
    log-likelihood per character, train and test, iterations and seconds. The unigram
    (0-state) baseline is the empirical symbol distribution of the training titles.

Timings are measured with ``time.perf_counter`` on whatever machine runs the script; the
chapter shows them only in plots.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from hmmlearn.hmm import CategoricalHMM
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mvlib  # noqa: E402
from bench_hmm import K, LENGTH, errors, make_data  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
TOL, MAX_ITER = 1e-2, 100


def reuters_sequences():
    """Symbol sequences (lists of ints in 0..26) of the Reuters titles shipped with ``lda``."""
    import lda.datasets

    seqs = []
    for title in lda.datasets.load_reuters_titles():
        t = re.sub(r"^\d+ ", "", title)
        t = re.sub(r"\s*\d{4}-\d\d-\d\d\s*$", "", t).lower()
        t = re.sub(r"[^a-z]+", " ", t)
        seqs.append([ord(c) - 97 if c != " " else 26 for c in t])
    return seqs


def stack(seqs):
    return np.concatenate(seqs)[:, None], np.array([len(s) for s in seqs])


def em_trace(model, X, lengths, true=None):
    """Baum–Welch one iteration per call; per-iteration (loglik/symbol, seconds, errors)."""
    n = len(X)
    trace = {"loglik": [], "seconds": [], "err_emission": [], "err_transition": []}
    start = time.perf_counter()
    prev = -np.inf
    for it in range(MAX_ITER):
        model.n_iter = 1
        model.fit(X, lengths)
        model.init_params = ""
        ll = float(model.monitor_.history[-1])           # log-likelihood before this update
        trace["loglik"].append(ll / n)
        trace["seconds"].append(time.perf_counter() - start)
        if true is not None:
            e_O, e_T = errors(true, model)
            trace["err_emission"].append(e_O)
            trace["err_transition"].append(e_T)
        if ll - prev < TOL:
            break
        prev = ll
    return trace


def compare(seeds=(0, 1, 2), n_sequences=1000, n_random=5):
    out = []
    for seed in seeds:
        X, lengths, model = make_data(n_sequences, seed)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            spec = mvlib.SpectralHMM(K, random_state=seed).fit(X, lengths)
        t_spec = time.perf_counter() - t0
        e_O, e_T = errors(model, spec)
        row = {"seed": seed, "n_sequences": n_sequences, "length": LENGTH,
               "true_loglik": model.score(X, lengths) / len(X),
               "spectral": {"seconds": t_spec, "err_emission": e_O, "err_transition": e_T,
                            "loglik": spec.score(X, lengths) / len(X)},
               "random": []}
        for r in range(n_random):
            row["random"].append(em_trace(CategoricalHMM(K, random_state=r), X, lengths, model))
            print(f"seed {seed} random {r}: {len(row['random'][-1]['loglik'])} iterations", flush=True)
        tr = em_trace(spec.to_hmmlearn(), X, lengths, model)
        tr["seconds"] = [s + t_spec for s in tr["seconds"]]
        row["spectral_start"] = tr
        out.append(row)
    return out


def reuters(ks=(2, 4, 6, 8), n_random=3, n_train=300):
    seqs = reuters_sequences()
    Xtr, Ltr = stack(seqs[:n_train])
    Xte, Lte = stack(seqs[n_train:])
    f = np.bincount(Xtr[:, 0], minlength=27) / len(Xtr)
    res = {"n_train_chars": int(len(Xtr)), "n_test_chars": int(len(Xte)),
           "unigram": {"train": float(np.log(f[Xtr[:, 0]]).mean()),
                       "test": float(np.log(f[Xte[:, 0]]).mean())},
           "k": {}}

    def scores(m):
        return {"train": m.score(Xtr, Ltr) / len(Xtr), "test": m.score(Xte, Lte) / len(Xte)}

    for k in ks:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            spec = mvlib.SpectralHMM(k, random_state=0, n_symbols=27,
                                     method="observable").fit(Xtr, Ltr)
        t_spec = time.perf_counter() - t0
        entry = {"spectral": {**scores(spec.to_hmmlearn()), "seconds": t_spec,
                              "projection": spec.projection_}}
        t0 = time.perf_counter()
        ref = spec.to_hmmlearn(n_iter=MAX_ITER).fit(Xtr, Ltr)
        entry["spectral_bw"] = {**scores(ref), "seconds": t_spec + time.perf_counter() - t0,
                                "iters": ref.monitor_.iter}
        entry["random_bw"] = []
        for r in range(n_random):
            t0 = time.perf_counter()
            m = CategoricalHMM(k, n_iter=MAX_ITER, random_state=r, n_features=27).fit(Xtr, Ltr)
            entry["random_bw"].append({**scores(m), "seconds": time.perf_counter() - t0,
                                       "iters": m.monitor_.iter})
        res["k"][str(k)] = entry
        print(f"reuters k={k} done", flush=True)
    return res


def _rounded(obj, digits=7):
    """Round every float (keeps the JSON files small)."""
    if isinstance(obj, float):
        return round(obj, digits)
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v, digits) for v in obj]
    return obj


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    quick = "--quick" in sys.argv
    with threadpool_limits(limits=1):
        comp = compare(seeds=(0,), n_sequences=200, n_random=2) if quick else compare()
        (OUT / ("hmm_compare_quick.json" if quick else "hmm_compare.json")).write_text(
            json.dumps(_rounded(comp), indent=1))
        reu = reuters(ks=(2,), n_random=1) if quick else reuters()
        (OUT / ("hmm_reuters_quick.json" if quick else "hmm_reuters.json")).write_text(
            json.dumps(_rounded(reu), indent=1))
    print("load average", os.getloadavg()[0])


if __name__ == "__main__":
    main()
