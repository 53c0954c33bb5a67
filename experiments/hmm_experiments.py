r"""Heavy experiments of the hidden-Markov chapter; results go to ``chapters/data/hmm_*.json``.

Run ``OMP_NUM_THREADS=1 python experiments/hmm_experiments.py`` (about 15 minutes with the default
``--processes 2``; every task runs with one BLAS thread) or add ``--quick`` (one small
data set and one split, a few seconds; writes ``*_quick.json``). The chapter
``chapters/06_hidden_markov.ipynb`` loads and plots the files; it does not re-run
Baum–Welch (too slow for the book's time budget). Each part prints and stores its run time.

Baum–Welch is hmmlearn's ``CategoricalHMM`` everywhere. Three kinds of start:

* ``default`` — hmmlearn 0.3.3's own initialisation (``BaseHMM._init``: ``startprob_`` and
  every row of ``transmat_`` drawn from Dirichlet(1/k, ..., 1/k), which makes the rows
  nearly one-hot; ``CategoricalHMM._init``: emission rows uniform(0, 1) entries normalised),
  ``random_state = r``;
* ``reasonable`` — what a careful user would write: ``transmat_`` rows
  0.5·e_i + 0.5·Dirichlet(1, ..., 1) (diagonal-dominant), emission rows Dirichlet(1, ..., 1),
  uniform ``startprob_``; drawn with ``numpy.random.default_rng([seed, r])``;
* ``spectral`` — ``SpectralHMM(k, random_state=seed).to_hmmlearn()`` (every distribution
  mixed with 0.1 % of the uniform one); its time includes the spectral fit.

Every Baum–Welch run stops as hmmlearn stops (gain of the total training log-likelihood
below ``tol``) or at an iteration cap; ``iters`` is the number of EM iterations done and
``converged`` says whether the gain criterion (not the cap) stopped it.

``hmm_compare.json`` — synthetic data (list, one row per data set)
    For seeds 0..4: the model of ``bench/bench_hmm.py`` (``mvlib.book.hmm_bench_model``) (k = 3, d = 8, emission rows
    Dirichlet(0.4), fixed transition matrix, uniform start); 1,000 training sequences of
    length 50 sampled by ``CategoricalHMM.sample`` (``RandomState(seed)``) and 500 held-out
    ones (``RandomState(seed + 1000)``). Baum–Welch from 3 default starts (r = 0..2, key
    ``random``), 3 reasonable starts (``reasonable``) and the spectral start
    (``spectral_start``), advanced one EM iteration per ``fit`` call (``init_params=""``
    after the first) so that the training log-likelihood, the matched errors and the elapsed
    time are recorded after every iteration; tol = 1e-2 (total log-likelihood of 50,000
    symbols, i.e. 2e-7 per symbol), at most 1,000 iterations. Held-out log-likelihood per
    symbol of: the true model, ``SpectralHMM`` (raw, mvlib's forward pass, and smoothed
    through ``to_hmmlearn()``), ``SpectralHMM(refine=True)`` (same two),
    ``ObservableOperatorHMM`` (with the count of floored probabilities) and the end point of
    every Baum–Welch run.

``hmm_reuters.json`` — held-out log-likelihood on real text
    The 395 Reuters titles of ``lda.datasets.load_reuters_titles()``: running index and
    trailing date removed, lower-cased, letters a–z → 0..25, every other run of characters
    → 26 (a separator). Five train/test splits of the titles into 300 / 95: split 0 is
    titles 0..299 / 300..394 (the chapter's split), split s ≥ 1 a permutation drawn with
    ``numpy.random.default_rng(s)``. For k = 2, 3, 4, 6, 8 states:
    ``ObservableOperatorHMM(k, n_symbols=27)`` (its flooring counts on the held-out
    titles), ``SpectralHMM(k, random_state=0, n_symbols=27)`` (scored through
    ``to_hmmlearn()``, 0.1 % smoothing; with the ℓ1 moves of its simplex constraints,
    ``projection_``, and the move the former route — T = (U₃ᵀÔ)⁻¹U₃ᵀM̂₃ divided by its
    column sums, then projected — would have made on the same moments), the same with
    ``refine=True``, Baum–Welch from 2 reasonable starts and from the spectral start
    (tol = 1e-2, at most 1,000 iterations). Where ``SpectralHMM`` refuses the data (a
    ``RuntimeError``: Algorithm B's eigenvalues not separated, or the projected emission
    matrix of rank < k), its three entries hold ``{"failed": message}``. Unigram baseline: the symbol frequencies of the
    training titles. All log-likelihoods are per character.

``hmm_vowels.json`` — the model of the exercise "Vowels and consonants" (part ``vowels``)
    On the training titles of split 0: ``SpectralHMM(2, random_state=0, n_symbols=27)`` handed to
    hmmlearn with ``to_hmmlearn()`` and Baum–Welch from it (tol = 1e-2, at most 1,000
    iterations). Stored: the fitted ``startprob``, ``transmat`` and ``emissionprob`` (17
    decimals; the script checks that decoding with them equals decoding with the fit), the
    iterations, whether hmmlearn's rule stopped it, and the time. ``--parts vowels`` runs only
    this part (seconds).

Timings are measured with ``time.perf_counter`` on whatever machine runs the script
(single runs, one BLAS thread, two tasks at a time); the chapter shows them only in plots.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import time
import warnings
from pathlib import Path

import numpy as np
from hmmlearn.hmm import CategoricalHMM
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.book import HMM_BENCH, data_path, hmm_bench_data, rounded, write_json
from mvlib.hmm import oo_log_likelihood, parameter_errors


K, LENGTH = HMM_BENCH["k"], HMM_BENCH["length"]
errors, make_data = parameter_errors, hmm_bench_data

ObservableOperatorHMM = mvlib.ObservableOperatorHMM

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
TOL = 1e-2
MAX_ITER_SYNTH, MAX_ITER_REUTERS = 1000, 1000
N_SYMBOLS_REUTERS, N_TRAIN_TITLES = 27, 300


# --------------------------------------------------------------------------- data
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


def reuters_split(split, n_titles):
    """Indices (train, test) of split ``split``: 0 = the chapter's titles 0..299 / 300..394."""
    order = np.arange(n_titles) if split == 0 else np.random.default_rng(split).permutation(n_titles)
    return np.sort(order[:N_TRAIN_TITLES]), np.sort(order[N_TRAIN_TITLES:])


# --------------------------------------------------------------------------- starts
def reasonable_start(k, d, rng):
    """A careful user's random start: diagonal-dominant T, Dirichlet(1) emissions (hmmlearn layout)."""
    model = CategoricalHMM(k, n_features=d, init_params="")
    model.startprob_ = np.full(k, 1.0 / k)
    model.transmat_ = 0.5 * np.eye(k) + 0.5 * rng.dirichlet(np.ones(k), size=k)
    model.emissionprob_ = rng.dirichlet(np.ones(d), size=k)
    return model


def _converged(model, tol=TOL):
    h = model.monitor_.history
    return bool(len(h) >= 2 and h[-1] - h[-2] < tol)


def per_symbol(score, n):
    score = float(score)
    return score / n if np.isfinite(score) else None


def em_trace(model, X, lengths, true, X_test, L_test, max_iter=MAX_ITER_SYNTH, t_offset=0.0):
    """Baum–Welch one iteration per ``fit`` call; per-iteration training log-lik/symbol,
    seconds and matched errors; end point with held-out log-lik/symbol."""
    n = len(X)
    trace = {"loglik": [], "seconds": [], "err_emission": [], "err_transition": []}
    start = time.perf_counter()
    prev, converged = -np.inf, False
    for _ in range(max_iter):
        model.n_iter = 1
        model.fit(X, lengths)
        model.init_params = ""
        ll = float(model.monitor_.history[-1])           # log-likelihood before this update
        trace["loglik"].append(ll / n)
        trace["seconds"].append(t_offset + time.perf_counter() - start)
        e_O, e_T = errors(true, model)
        trace["err_emission"].append(e_O)
        trace["err_transition"].append(e_T)
        if ll - prev < TOL:
            converged = True
            break
        prev = ll
    trace["iters"] = len(trace["loglik"])
    trace["converged"] = converged
    trace["test_loglik"] = per_symbol(model.score(X_test, L_test), len(X_test))
    return trace


def oo_score(est, X, lengths):
    """Total log-likelihood of an ObservableOperatorHMM and its flooring counts (no warning)."""
    ll, n_floor, n_obs, n_values = oo_log_likelihood(est.b1_, est.binf_, est.operators_, X, lengths,
                                                     floor=est.floor)
    return float(np.sum(ll)), {"n_floored": int(n_floor), "n_floored_observed": int(n_obs),
                               "n_values": int(n_values)}


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _timed(fn):
    t0 = time.perf_counter()
    out = _quiet(fn)
    return out, time.perf_counter() - t0


# --------------------------------------------------------------------------- synthetic
def compare_seed(seed, n_sequences=1000, n_test=500, n_random=3, max_iter=MAX_ITER_SYNTH):
    t_all = time.perf_counter()
    X, lengths, model = make_data(n_sequences, seed)
    X_test, L_test = _resample_test(model, n_test, seed + 1000)   # same model, new sequences
    n, n_te = len(X), len(X_test)

    spec, t_spec = _timed(lambda: mvlib.SpectralHMM(K, random_state=seed).fit(X, lengths))
    ref, t_ref = _timed(lambda: mvlib.SpectralHMM(K, random_state=seed, refine=True).fit(X, lengths))
    oo, t_oo = _timed(lambda: ObservableOperatorHMM(K, random_state=seed).fit(X, lengths))
    e_O, e_T = errors(model, spec)
    r_O, r_T = errors(model, ref)
    oo_train, _ = oo_score(oo, X, lengths)
    oo_test, oo_floor = oo_score(oo, X_test, L_test)
    row = {"seed": seed, "n_sequences": n_sequences, "length": LENGTH, "n_test_sequences": n_test,
           "true_loglik": model.score(X, lengths) / n,
           "true_test_loglik": model.score(X_test, L_test) / n_te,
           "spectral": {"seconds": t_spec, "err_emission": e_O, "err_transition": e_T,
                        "loglik": per_symbol(spec.score(X, lengths), n),
                        "test_loglik": per_symbol(spec.score(X_test, L_test), n_te),
                        "test_loglik_smoothed": spec.to_hmmlearn().score(X_test, L_test) / n_te,
                        "projection": spec.projection_},
           "spectral_refine": {"seconds": t_ref, "err_emission": r_O, "err_transition": r_T,
                               "loglik": per_symbol(ref.score(X, lengths), n),
                               "test_loglik": per_symbol(ref.score(X_test, L_test), n_te),
                               "test_loglik_smoothed": ref.to_hmmlearn().score(X_test, L_test) / n_te,
                               "n_iter": int(ref.refinement_["n_iter"]),
                               "converged": bool(ref.refinement_["converged"])},
           "observable_operator": {"seconds": t_oo, "loglik": oo_train / n, "test_loglik": oo_test / n_te,
                                   **oo_floor},
           "random": [], "reasonable": []}
    for r in range(n_random):
        row["random"].append(em_trace(CategoricalHMM(K, random_state=r), X, lengths, model,
                                      X_test, L_test, max_iter))
        row["reasonable"].append(em_trace(reasonable_start(K, model.n_features, np.random.default_rng([seed, r])),
                                          X, lengths, model, X_test, L_test, max_iter))
        print(f"seed {seed} start {r}: default {row['random'][-1]['iters']} iterations, "
              f"reasonable {row['reasonable'][-1]['iters']}", flush=True)
    row["spectral_start"] = em_trace(spec.to_hmmlearn(), X, lengths, model, X_test, L_test, max_iter,
                                     t_offset=t_spec)
    row["seconds_total"] = time.perf_counter() - t_all
    print(f"seed {seed} done in {row['seconds_total']:.0f} s", flush=True)
    return row


def _resample_test(model, n_test, seed):
    rs = np.random.RandomState(seed)
    X = np.concatenate([model.sample(LENGTH, random_state=rs)[0] for _ in range(n_test)])
    return X, np.full(n_test, LENGTH)


# --------------------------------------------------------------------------- Reuters
def old_route_move(X, lengths, k, random_state=0, d=N_SYMBOLS_REUTERS):
    r"""ℓ1 move of the former T route on the moments of ``SpectralHMM(k, random_state).fit``.

    Before the simplex-constrained least squares, ``SpectralHMM`` computed
    T = (U₃ᵀÔ)⁻¹U₃ᵀM̂₃ with Ô = M̂₂ scaled to unit column sums (not yet projected), divided
    T by its column sums and projected the columns onto the simplex. Recomputed here from
    the same steps and the same random rotation (``_recover`` draws from the generator
    exactly as ``fit`` does); returns the largest ℓ1 change of a column and the smallest
    |column sum| divided by.
    """
    from mvlib.core.validation import check_random_state
    from mvlib.hmm._estimator import _recover
    from mvlib.hmm import check_symbol_sequences, project_simplex, window_views
    from mvlib.core.moments import pairs, whitened_triples
    from mvlib.core.observable import view_bases

    x, lengths, d = check_symbol_sequences(X, lengths, d, min_length=3)
    (X1, X2, X3), _ = window_views(x[:, None], lengths, d)
    P12, P13, P23 = pairs(X1, X2), pairs(X1, X3), pairs(X2, X3)
    O, M3, _ = _quiet(lambda: _recover(P12, P13, P23,
                                       lambda U1, U2, U3: whitened_triples(X1, X2, X3, U1, U2, U3),
                                       k, check_random_state(random_state), 0.02, 20))
    U3 = view_bases(P12, P13, k)[2]                 # M3 = U3 A3 in Algorithm B's coordinates
    T = np.linalg.solve(U3.T @ O, U3.T @ M3)
    sums = T.sum(axis=0)
    T = T / sums
    moved = float(np.max(np.abs(project_simplex(T, axis=0) - T).sum(axis=0)))
    return moved, float(np.min(np.abs(sums)))


def reuters_split_run(split, ks=(2, 3, 4, 6, 8), n_random=2, max_iter=MAX_ITER_REUTERS):
    t_all = time.perf_counter()
    seqs = reuters_sequences()
    tr, te = reuters_split(split, len(seqs))
    Xtr, Ltr = stack([seqs[i] for i in tr])
    Xte, Lte = stack([seqs[i] for i in te])
    ntr, nte = len(Xtr), len(Xte)
    counts = np.bincount(Xtr[:, 0], minlength=N_SYMBOLS_REUTERS)
    f = counts / ntr
    res = {"split": split, "test_titles": te.tolist(), "n_train_chars": int(ntr), "n_test_chars": int(nte),
           "unigram": {"train": float(np.log(f[Xtr[:, 0]]).mean()),
                       "test": float(np.log(f[Xte[:, 0]]).mean()) if np.all(f[Xte[:, 0]] > 0) else None},
           "k": {}}

    def scores(m):
        return {"train": m.score(Xtr, Ltr) / ntr, "test": m.score(Xte, Lte) / nte}

    def bw_entry(m, t_extra=0.0):
        # hmmlearn 0.3.3 builds its ConvergenceMonitor in __init__: its n_iter and tol, which
        # decide when ``fit`` stops, must be set too (setting m.n_iter alone stops at 10)
        m.n_iter, m.tol = max_iter, TOL
        m.monitor_.n_iter, m.monitor_.tol = max_iter, TOL
        m, secs = _timed(lambda: m.fit(Xtr, Ltr))
        return {**scores(m), "seconds": secs + t_extra, "iters": int(m.monitor_.iter),
                "converged": _converged(m)}

    for k in ks:
        entry = {}
        oo, t_oo = _timed(lambda: ObservableOperatorHMM(k, n_symbols=N_SYMBOLS_REUTERS).fit(Xtr, Ltr))
        oo_tr, fl_tr = oo_score(oo, Xtr, Ltr)
        oo_te, fl_te = oo_score(oo, Xte, Lte)
        entry["observable_operator"] = {"train": oo_tr / ntr, "test": oo_te / nte, "seconds": t_oo,
                                        **fl_te, "train_floor": fl_tr}
        try:
            spec, t_spec = _timed(lambda: mvlib.SpectralHMM(k, random_state=0,
                                                            n_symbols=N_SYMBOLS_REUTERS).fit(Xtr, Ltr))
        except RuntimeError as exc:              # the estimator refused (message recorded)
            spec, failure = None, str(exc)
        if spec is None:
            entry["spectral"] = entry["spectral_refine"] = entry["spectral_bw"] = {"failed": failure}
        else:
            moved_old, min_sum = old_route_move(Xtr, Ltr, k)
            entry["spectral"] = {**scores(spec.to_hmmlearn()), "seconds": t_spec,
                                 "projection": spec.projection_, "transmat_moved_old_route": moved_old,
                                 "old_route_min_abs_column_sum": min_sum}
            ref, t_ref = _timed(lambda: mvlib.SpectralHMM(k, random_state=0, n_symbols=N_SYMBOLS_REUTERS,
                                                          refine=True).fit(Xtr, Ltr))
            entry["spectral_refine"] = {**scores(ref.to_hmmlearn()), "seconds": t_ref,
                                        "n_iter": int(ref.refinement_["n_iter"]),
                                        "converged": bool(ref.refinement_["converged"])}
            entry["spectral_bw"] = bw_entry(spec.to_hmmlearn(), t_spec)
        entry["random_bw"] = [bw_entry(reasonable_start(k, N_SYMBOLS_REUTERS,
                                                        np.random.default_rng([1000 + split, k, r])))
                              for r in range(n_random)]
        res["k"][str(k)] = entry
        print(f"reuters split {split} k={k} done ({time.perf_counter() - t_all:.0f} s)", flush=True)
    res["seconds_total"] = time.perf_counter() - t_all
    return res


# --------------------------------------------------------------------------- vowels (exercise)
def vowels_fit(max_iter=MAX_ITER_REUTERS):
    """Baum–Welch with k = 2 from ``SpectralHMM(2, random_state=0)`` on the training titles of split 0.

    The exercise "Vowels and consonants" of the chapter decodes the titles with this model. The
    spectral start and the stopping rule are those of :func:`reuters_split_run` (tol ``TOL``, at
    most ``max_iter`` iterations). Returns the fitted ``startprob``, ``transmat`` and
    ``emissionprob`` (hmmlearn's rows), ``iters``, ``converged`` and ``seconds``; raises if
    decoding with the parameters as stored (17 decimals) differs from decoding with the fit.
    """
    seqs = reuters_sequences()
    tr, _ = reuters_split(0, len(seqs))
    Xtr, Ltr = stack([seqs[i] for i in tr])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)           # simplex notices of the fit
        bw2 = mvlib.SpectralHMM(2, random_state=0, n_symbols=N_SYMBOLS_REUTERS).fit(Xtr, Ltr).to_hmmlearn()
    # hmmlearn builds its ConvergenceMonitor in __init__: its n_iter and tol must be set too
    bw2.n_iter = bw2.monitor_.n_iter = max_iter
    bw2.tol = bw2.monitor_.tol = TOL
    bw2.fit(Xtr, Ltr)
    out = {"split": 0, "n_train_chars": int(len(Xtr)), "startprob": bw2.startprob_,
           "transmat": bw2.transmat_, "emissionprob": bw2.emissionprob_, "iters": int(bw2.monitor_.iter),
           "converged": bool(bw2.monitor_.converged), "seconds": time.perf_counter() - t0}
    stored = CategoricalHMM(2, n_features=N_SYMBOLS_REUTERS, init_params="")
    stored.startprob_, stored.transmat_, stored.emissionprob_ = (
        np.array(rounded(out[key].tolist(), 17)) for key in ("startprob", "transmat", "emissionprob"))
    if not np.array_equal(stored.predict(Xtr, Ltr), bw2.predict(Xtr, Ltr)):
        raise RuntimeError("decoding with the stored parameters differs from decoding with the fit")
    return out


# --------------------------------------------------------------------------- driver
def _rounded(obj, digits=7):
    """Round every float (keeps the JSON files small); non-finite floats become None."""
    if isinstance(obj, (float, np.floating)):
        return round(float(obj), digits) if np.isfinite(obj) else None
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, dict):
        return {k: _rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v, digits) for v in obj]
    return obj


def _task(args):
    kind, arg, kwargs = args
    with threadpool_limits(limits=1):
        t0 = time.perf_counter()
        out = compare_seed(arg, **kwargs) if kind == "compare" else reuters_split_run(arg, **kwargs)
        return kind, arg, out, time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one small data set, one split; *_quick.json")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--parts", nargs="+", default=["compare", "reuters", "vowels"],
                        choices=["compare", "reuters", "vowels"])
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    suffix = "_quick" if args.quick else ""
    if "vowels" in args.parts:
        vowels = vowels_fit(max_iter=20 if args.quick else MAX_ITER_REUTERS)
        print(f"vowels: {vowels['iters']} iterations, converged {vowels['converged']}", flush=True)
        if not args.quick:
            write_json(vowels, data_path("hmm_vowels.json", root=OUT.parents[1]), digits=17)
        if args.parts == ["vowels"]:
            return
    tasks = []
    if "reuters" in args.parts:                   # the longer tasks first
        kw = dict(ks=(2, 4), n_random=1, max_iter=20) if args.quick else {}
        tasks += [("reuters", s, kw) for s in ((0,) if args.quick else range(5))]
    if "compare" in args.parts:
        kw = dict(n_sequences=200, n_test=100, n_random=2, max_iter=30) if args.quick else {}
        tasks += [("compare", s, kw) for s in ((0,) if args.quick else range(5))]
    wall = time.perf_counter()
    print(f"{len(tasks)} tasks on {args.processes} processes, load average {os.getloadavg()[0]:.2f}", flush=True)
    if args.processes > 1:
        with mp.get_context("fork").Pool(args.processes) as pool:
            done = pool.map(_task, tasks, chunksize=1)
    else:
        done = [_task(t) for t in tasks]
    wall = time.perf_counter() - wall
    comp = [out for kind, _, out, _ in done if kind == "compare"]
    splits = [out for kind, _, out, _ in done if kind == "reuters"]
    if comp:
        (OUT / f"hmm_compare{suffix}.json").write_text(json.dumps(_rounded(comp), indent=1))
        print(f"compare: {sum(r['seconds_total'] for r in comp):.0f} s of task time", flush=True)
    if splits:
        reu = {**{key: splits[0][key] for key in ("n_train_chars", "n_test_chars", "unigram", "k")},
               "ks": sorted(int(k) for k in splits[0]["k"]), "splits": splits,
               "seconds_total": sum(s["seconds_total"] for s in splits)}
        (OUT / f"hmm_reuters{suffix}.json").write_text(json.dumps(_rounded(reu), indent=1))
        print(f"reuters: {reu['seconds_total']:.0f} s of task time", flush=True)
    runtime = {"wall_seconds": wall, "processes": args.processes,
               "compare_task_seconds": [r["seconds_total"] for r in comp],
               "reuters_task_seconds": [s["seconds_total"] for s in splits],
               "load_average_end": os.getloadavg()[0]}
    (OUT / f"hmm_experiments_runtime{suffix}.json").write_text(json.dumps(_rounded(runtime), indent=1))
    print(f"wall {wall:.0f} s, load average {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
