"""Plumbing of the chapter on moments at scale (chapter 11): its two figures and the summary of
the benchmark's sweep, which the chapter reads from ``chapters/data/scale_sketch.json`` and
``chapters/data/scale_bench.json``. They compute no estimate: the chapter asserts on what they return."""
from __future__ import annotations

import numpy as np

__all__ = ["bench_texts", "plot_sketch_price", "plot_sweep", "sweep_summary", "sweep_texts"]


def plot_sketch_price(axes, Ks, err_K, err_two: float, d: int, kept: dict) -> None:
    """Draw the price of a narrow sketch (left) and the fractions of signal and noise kept (right).

    Parameters
    ----------
    axes : two matplotlib Axes.
    Ks : sequence of int, the sketch widths K.
    err_K : array (n_corpora, len(Ks)), the one-pass topic error of each corpus at each K.
    err_two : float, the mean two-pass error (drawn as a line, and times sqrt(d / K)).
    d : int, the number of words.
    kept : dict with the arrays (len(Ks),) ``"cross signal"``, ``"cross noise"``,
        ``"sketch signal"`` and ``"sketch noise"``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from mvlib.book import plot_sketch_price
    >>> fig, axes = plt.subplots(1, 2)
    >>> kept = {f"{r} {q}": np.array([0.2, 0.4]) for r in ("cross", "sketch") for q in ("signal", "noise")}
    >>> plot_sketch_price(axes, [12, 48], np.array([[0.3, 0.2]]), 0.1, 300, kept)
    >>> len(axes[1].get_lines())
    6
    """
    Ks = list(Ks)
    frac = np.array(Ks) / d
    ax = axes[0]
    for e in err_K:
        ax.loglog(Ks, e, "-", color="C0", alpha=0.3, lw=1)
    ax.loglog(Ks, np.mean(err_K, axis=0), "o-", color="C0", lw=2, label=f"one pass, mean of {len(err_K)} corpora")
    ax.axhline(err_two, color="k", lw=1.5, label="two passes")
    ax.loglog(Ks, err_two * np.sqrt(1 / frac), "k--", lw=1, label=r"two passes $\times\sqrt{d/K}$")
    ax.set_ylabel(r"largest matched $\ell_2$ topic error")
    ax = axes[1]
    for route, col, sig_lab, noise_lab in (
            ("cross", "C0", r"$\mathcal{M}_2\Omega$", r"$E\Omega$"),
            ("sketch", "C1", r"$\Omega^\top\mathcal{M}_2\Omega$", r"$\Omega^\top E\Omega$")):
        ax.loglog(Ks, kept[f"{route} signal"], "o-", color=col, label=f"signal {sig_lab}")
        ax.loglog(Ks, kept[f"{route} noise"], "s--", color=col, label=f"noise {noise_lab}")
    ax.loglog(Ks, np.sqrt(frac), "k:", lw=1, label=r"$\sqrt{K/d}$")
    ax.loglog(Ks, frac, "k-.", lw=1, label=r"$K/d$")
    ax.set_ylabel("fraction kept by the sketch")
    from ._figures import label_axes

    for ax in axes:
        label_axes(ax, "sketch width $K$", legend={"fontsize": 7})
        ax.set_xticks(Ks, [str(K) for K in Ks])
        ax.tick_params(axis="x", which="minor", bottom=False, labelbottom=False)


def _runs(sweep: dict) -> dict:
    return {(r["method"], r["n"]): r for r in sweep["runs"]}


def plot_sweep(axes, sweep: dict, labels: dict, stuck_level: float) -> None:
    """Draw the benchmark's sweep: seconds per fit (left) and the error of the means (right) against n.

    Parameters
    ----------
    axes : two matplotlib Axes.
    sweep : the ``"sweep"`` section of ``scale_bench.json``: ``ns`` and ``runs``, a list of dicts
        with ``method``, ``n``, and (when the run finished) ``seconds``, ``mean_error_median`` and
        ``reps`` (dicts with ``mean_error``).
    labels : dict, method -> legend label (up to three methods, drawn in this order).
    stuck_level : float, the error above which a fit is stuck (a dotted line).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from mvlib.book import plot_sweep
    >>> run = lambda n: {"method": "a", "n": n, "seconds": n / 1e3, "mean_error_median": 0.1,
    ...                  "reps": [{"mean_error": 0.1}]}
    >>> fig, axes = plt.subplots(1, 2)
    >>> plot_sweep(axes, {"ns": [1000, 2000], "runs": [run(1000), run(2000)]}, {"a": "A"}, 1.0)
    >>> axes[0].get_lines()[0].get_xdata().tolist()
    [1000, 2000]
    """
    from ._figures import label_axes

    runs = _runs(sweep)
    for (method, label), mk, col in zip(labels.items(), "osd", ("C0", "C1", "C2")):
        ok = [n for n in sweep["ns"] if "seconds" in runs[(method, n)]]
        axes[0].loglog(ok, [runs[(method, n)]["seconds"] for n in ok], mk + "-", color=col, label=label)
        for n in ok:
            errs_n = [rep["mean_error"] for rep in runs[(method, n)]["reps"] if "mean_error" in rep]
            axes[1].loglog([n] * len(errs_n), errs_n, mk, color=col, alpha=0.35, ms=4)
        axes[1].loglog(ok, [runs[(method, n)]["mean_error_median"] for n in ok], mk + "-", color=col, label=label)
    axes[1].axhline(stuck_level, color="k", ls=":", lw=1)
    axes[1].text(min(sweep["ns"]), stuck_level * 1.15, "half the closest distance of two means", fontsize=7)
    label_axes(axes[0], "rows $n$", "seconds (median of repetitions)", legend={"fontsize": 7, "loc": "upper left"})
    label_axes(axes[1], "rows $n$", "largest matched error of a mean")


def sweep_summary(sweep: dict, labels, stuck_level: float, em: str = "sklearn_em") -> dict:
    """What the chapter reads from the benchmark's sweep (see :func:`plot_sweep` for ``sweep``).

    Returns a dict: ``n_max``; ``top`` (method -> its run at ``n_max``); ``ns_ok`` (the sizes at
    which every method of ``labels`` finished); ``seconds`` and ``errors`` (method -> array over
    ``ns_ok`` of the median seconds and the median error); for the EM method ``em``: ``em_reps``
    (its repetitions with an error, at every n), ``n_stuck`` (how many of them have an error above
    ``stuck_level``), ``em_passes`` (their reads of X), ``em_good`` (the mean error of its
    repetitions at ``n_max`` that are not stuck); and ``spec_stuck``, the stuck repetitions of the
    other methods over ``ns_ok``.

    Examples
    --------
    >>> from mvlib.book import sweep_summary
    >>> rep = lambda e: {"mean_error": e, "passes": 3}
    >>> runs = [{"method": m, "n": n, "seconds": 1.0, "mean_error_median": 0.1, "n_stuck": 0,
    ...          "reps": [rep(0.1), rep(5.0)]} for m in ("one", "sklearn_em") for n in (10, 20)]
    >>> s = sweep_summary({"ns": [10, 20], "runs": runs}, ["one", "sklearn_em"], 1.0)
    >>> s["n_max"], s["n_stuck"], len(s["em_reps"]), s["em_good"], s["spec_stuck"]
    (20, 2, 4, 0.1, 0)
    """
    runs = _runs(sweep)
    n_max = max(sweep["ns"])
    ns_ok = [n for n in sweep["ns"] if all("seconds" in runs[(m, n)] for m in labels)]
    top = {m: runs[(m, n_max)] for m in labels}
    em_reps = [rep for n in sweep["ns"] for rep in runs[(em, n)]["reps"] if "mean_error" in rep]
    return dict(
        n_max=n_max, ns_ok=ns_ok, top=top, em_reps=em_reps,
        n_stuck=sum(rep["mean_error"] > stuck_level for rep in em_reps),
        em_good=float(np.mean([rep["mean_error"] for rep in top[em]["reps"] if rep["mean_error"] <= stuck_level])),
        spec_stuck=sum(runs[(m, n)]["n_stuck"] for m in labels if m != em for n in ns_ok),
        em_passes=[rep["passes"] for rep in em_reps],
        seconds={m: np.array([runs[(m, n)]["seconds"] for n in ns_ok]) for m in labels},
        errors={m: np.array([runs[(m, n)]["mean_error_median"] for n in ns_ok]) for m in labels})


def bench_texts(bench: dict) -> dict:
    """The glue texts (name -> text) of the stream and throughput sections of ``scale_bench.json``.

    ``ch11_b_stream_*`` (seconds, rows per second, memory added, process and tracemalloc peaks,
    largest mean error), ``ch11_b_target_gib``, ``ch11_b_whole_gib`` (the rows held whole, GiB) and
    ``ch11_b_rate_*`` (rows per second of the accumulator and of ``X.T @ X``, their ratio against
    the benchmark's target, the ratio with the generation of the chunks, its inverse), and
    ``ch11_b_top_fn`` / ``ch11_b_top_share``: the profiled function of the third moment and its
    share of a chunk's time; and, from the ``dask`` section, ``ch11_b_dask_one`` / ``_two`` (the
    seconds with NumPy, one and two workers), ``ch11_b_dask_speed_*`` (one -> two workers),
    ``ch11_b_dask_vsnp_*`` (NumPy -> two workers), ``ch11_b_dask_rows`` and ``ch11_b_threads``.

    Examples
    --------
    >>> from mvlib.book import bench_texts
    >>> st = dict(seconds=60.0, rows_per_s=2e5, fit_gib=0.2, rss_peak_gib=1.0, tracemalloc_peak_gib=0.1,
    ...           rows=10**7, mean_error=0.05)
    >>> rate = lambda r, s: {"rows_per_s_compute": r, "compute_seconds": s}
    >>> tp = dict(passes={"sketch": rate(1e5, 10.0), "xtx": rate(4e5, 2.5)}, ratio_compute=0.25, chunks=10,
    ...           ratio_total=0.5, profile={"functions": [{"function": "scale.py:_sym_triple_upper",
    ...                                                    "seconds_per_call": 0.5}]})
    >>> fit = lambda where, w, m, s: dict(where=where, workers=w, moments=m, seconds=s)
    >>> dask = dict(rows=1000, fits=[fit(where, w, m, s) for m in ("one-pass", "two-pass")
    ...                              for where, w, s in (("numpy", None, 3.0), ("dask", 1, 2.0), ("dask", 2, 1.0))])
    >>> texts = bench_texts(dict(stream=st, throughput=tp, config={"d": 30}, dask=dask, environment={"threads": 1},
    ...                          targets={"stream_fit_gib": 1, "throughput_ratio": 0.5}))
    >>> texts["ch11_b_dask_two"], texts["ch11_b_dask_vsnp_one"]
    ('3.00 s, 2.00 s and 1.00 s', '3.00')
    >>> print(texts["ch11_b_rate_target"], texts["ch11_b_top_share"], texts["ch11_b_whole_gib"], sep="; ")
    below the benchmark's target of 0.5; 50%; 2.2 GiB
    """
    st, tp, targets = bench["stream"], bench["throughput"], bench["targets"]
    ratio, target = tp["ratio_compute"], targets["throughput_ratio"]
    top_fn = next(f for f in tp["profile"]["functions"] if "_sym_triple" in f["function"])
    per_chunk = tp["passes"]["sketch"]["compute_seconds"] / tp["chunks"]
    dk = {(f["where"], f["workers"], f["moments"]): f["seconds"] for f in bench["dask"]["fits"]}
    texts = {"ch11_b_dask_rows": f"{bench['dask']['rows']:,}", "ch11_b_threads": f"{bench['environment']['threads']}"}
    for m in ("one-pass", "two-pass"):
        t_np, t_1, t_2 = (dk[key] for key in (("numpy", None, m), ("dask", 1, m), ("dask", 2, m)))
        texts[f"ch11_b_dask_{m[:3]}"] = f"{t_np:.2f} s, {t_1:.2f} s and {t_2:.2f} s"
        texts[f"ch11_b_dask_speed_{m[:3]}"] = f"{t_1 / t_2:.2f}"
        texts[f"ch11_b_dask_vsnp_{m[:3]}"] = f"{t_np / t_2:.2f}"
    return texts | {
        "ch11_b_stream_s": f"{st['seconds']:.0f} s",
        "ch11_b_stream_rate": f"{st['rows_per_s']:,.0f}",
        "ch11_b_stream_gib": f"{st['fit_gib']:.2f} GiB",
        "ch11_b_stream_peak": f"{st['rss_peak_gib']:.2f} GiB",
        "ch11_b_stream_traced": f"{st['tracemalloc_peak_gib'] * 1024:.0f} MiB",
        "ch11_b_target_gib": f"{targets['stream_fit_gib']:.0f} GiB",
        "ch11_b_whole_gib": f"{st['rows'] * bench['config']['d'] * 8 / 2**30:.1f} GiB",
        "ch11_b_stream_err": f"{st['mean_error']:.3f}",
        "ch11_b_rate_sketch": f"{tp['passes']['sketch']['rows_per_s_compute']:,.0f}",
        "ch11_b_rate_xtx": f"{tp['passes']['xtx']['rows_per_s_compute']:,.0f}",
        "ch11_b_rate_ratio": f"{ratio:.3f}",
        "ch11_b_rate_target": f"{'below' if ratio < target else 'above'} the benchmark's target of {target}",
        "ch11_b_rate_total": f"{tp['ratio_total']:.2f}",
        "ch11_b_rate_factor": f"{1 / ratio:.1f}",
        "ch11_b_top_fn": f"{top_fn['function'].split(':')[-1]}",
        "ch11_b_top_share": f"{top_fn['seconds_per_call'] / per_chunk:.0%}",
    }


def sweep_texts(summary: dict, config: dict) -> dict:
    """The glue texts ``ch11_s_*`` (name -> text) of the benchmark's sweep, from :func:`sweep_summary`
    of the methods ``spectral_one_pass``, ``spectral_two_pass`` and ``sklearn_em`` (in this order) and
    the benchmark's ``config`` (``d``, ``sketch_dim``): at ``n_max``, the seconds and median errors
    of the three, EM's time over the one-pass time, the one-pass over the two-pass error, sqrt(d/K);
    EM's good mean error, its stuck repetitions and its reads of X, and the two-pass time against EM's.

    Examples
    --------
    >>> from mvlib.book import sweep_texts
    >>> top = {m: {"seconds": s, "mean_error_median": 0.1} for m, s in
    ...        (("spectral_one_pass", 1.0), ("spectral_two_pass", 2.0), ("sklearn_em", 8.0))}
    >>> summary = dict(n_max=10**6, top=top, em_good=0.1, n_stuck=1, em_reps=[{}] * 4, em_passes=[3, 9])
    >>> texts = sweep_texts(summary, {"d": 50, "sketch_dim": 8})
    >>> print(texts["ch11_s_nmax"], texts["ch11_s_t"], texts["ch11_s_stuck"], texts["ch11_s_sqrt"], sep="; ")
    1,000,000; 1.0 s, 2.0 s, 8.0 s; 1 of 4; 2.50
    """
    top = summary["top"]
    one, two, em = (top[m] for m in ("spectral_one_pass", "spectral_two_pass", "sklearn_em"))
    return {
        "ch11_s_nmax": f"{summary['n_max']:,}",
        "ch11_s_t": ", ".join(f"{r['seconds']:.1f} s" for r in (one, two, em)),
        "ch11_s_speed_em": f"{em['seconds'] / one['seconds']:.0f}",
        "ch11_s_e": ", ".join(f"{r['mean_error_median']:.3f}" for r in (one, two, em)),
        "ch11_s_e_ratio": f"{one['mean_error_median'] / two['mean_error_median']:.2f}",
        "ch11_s_sqrt": f"{np.sqrt(config['d'] / config['sketch_dim']):.2f}",
        "ch11_s_em_good": f"{summary['em_good']:.3f}",
        "ch11_s_stuck": f"{summary['n_stuck']} of {len(summary['em_reps'])}",
        "ch11_s_em_passes": f"{min(summary['em_passes'])} to {max(summary['em_passes'])}",
        "ch11_s_t_two_em": f"{two['seconds']:.1f} s against {em['seconds']:.1f} s",
    }
