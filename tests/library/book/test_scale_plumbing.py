"""Tests of mvlib/book/_scale_plumbing.py: the figures and benchmark summaries of chapter 11."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from mvlib.book import bench_texts, plot_sketch_price, plot_sweep, sweep_summary, sweep_texts  # noqa: E402

METHODS = ("spectral_one_pass", "spectral_two_pass", "sklearn_em")


def _sweep():
    runs = []
    for m, sec in zip(METHODS, (1.0, 2.0, 4.0)):
        for n in (100, 1000):
            reps = [{"mean_error": 0.1, "passes": 1}, {"mean_error": 9.0 if m == "sklearn_em" else 0.2, "passes": 5}]
            runs.append({"method": m, "n": n, "seconds": sec * n / 100, "mean_error_median": 0.15, "n_stuck": 0,
                         "reps": reps, "passes": 2})
    runs.append({"method": "spectral_two_pass", "n": 10_000, "reps": []})   # did not finish
    runs += [{"method": m, "n": 10_000, "seconds": 50.0, "mean_error_median": 0.1, "n_stuck": 0,
              "reps": [{"mean_error": 0.1, "passes": 3}]} for m in ("spectral_one_pass", "sklearn_em")]
    return {"ns": [100, 1000, 10_000], "runs": runs}


def test_sweep_summary_skips_unfinished_sizes_and_counts_stuck_em_runs():
    s = sweep_summary(_sweep(), METHODS[:2] + ("sklearn_em",), stuck_level=1.0)
    assert s["n_max"] == 10_000 and s["ns_ok"] == [100, 1000]
    assert s["n_stuck"] == 2 and len(s["em_reps"]) == 5 and s["em_passes"] == [1, 5, 1, 5, 3]
    assert np.allclose(s["seconds"]["sklearn_em"], [4.0, 40.0]) and s["spec_stuck"] == 0
    assert np.isclose(s["em_good"], 0.1)


def test_sweep_texts_read_the_top_runs_in_order():
    top = {m: {"seconds": s, "mean_error_median": e} for m, s, e in zip(METHODS, (1.0, 3.0, 30.0), (0.2, 0.1, 0.4))}
    texts = sweep_texts(dict(n_max=5000, top=top, em_good=0.12, n_stuck=0, em_reps=[{}], em_passes=[7]),
                        {"d": 32, "sketch_dim": 8})
    assert texts["ch11_s_e"] == "0.200, 0.100, 0.400" and texts["ch11_s_speed_em"] == "30"
    assert texts["ch11_s_e_ratio"] == "2.00" and texts["ch11_s_sqrt"] == "2.00"
    assert texts["ch11_s_em_passes"] == "7 to 7" and all(key.startswith("ch11_s_") for key in texts)


def test_bench_texts_name_the_target_side_and_the_dask_speedups():
    fit = lambda where, w, m, s: dict(where=where, workers=w, moments=m, seconds=s)  # noqa: E731
    fits = [fit(where, w, m, s) for m in ("one-pass", "two-pass")
            for where, w, s in (("numpy", None, 4.0), ("dask", 1, 3.0), ("dask", 2, 2.0))]
    rate = lambda r, s: {"rows_per_s_compute": r, "compute_seconds": s}  # noqa: E731
    bench = dict(stream=dict(seconds=10.0, rows_per_s=1e6, fit_gib=0.5, rss_peak_gib=2.0, tracemalloc_peak_gib=0.25,
                             rows=2**27, mean_error=0.01),
                 throughput=dict(passes={"sketch": rate(2e5, 4.0), "xtx": rate(1e5, 2.0)}, ratio_compute=2.0,
                                 chunks=4, ratio_total=1.5,
                                 profile={"functions": [{"function": "a.py:other", "seconds_per_call": 0.9},
                                                        {"function": "s.py:_sym_triple_upper",
                                                         "seconds_per_call": 0.25}]}),
                 config={"d": 8}, dask=dict(rows=5000, fits=fits), environment={"threads": 2},
                 targets={"stream_fit_gib": 1, "throughput_ratio": 0.5})
    texts = bench_texts(bench)
    assert texts["ch11_b_rate_target"] == "above the benchmark's target of 0.5"
    assert texts["ch11_b_top_fn"] == "_sym_triple_upper" and texts["ch11_b_top_share"] == "25%"
    assert texts["ch11_b_whole_gib"] == "8.0 GiB" and texts["ch11_b_stream_traced"] == "256 MiB"
    assert texts["ch11_b_dask_speed_two"] == "1.50" and texts["ch11_b_dask_vsnp_one"] == "2.00"
    assert texts["ch11_b_dask_rows"] == "5,000" and texts["ch11_b_threads"] == "2"


def test_figures_draw_every_series():
    fig, axes = plt.subplots(1, 2)
    kept = {f"{r} {q}": np.array([0.3, 0.5]) for r in ("cross", "sketch") for q in ("signal", "noise")}
    plot_sketch_price(axes, [12, 48], np.array([[0.4, 0.2], [0.5, 0.3]]), 0.1, 300, kept)
    assert len(axes[0].get_lines()) == 5 and len(axes[1].get_lines()) == 6
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["12", "48"]
    plt.close(fig)
    fig, axes = plt.subplots(1, 2)
    plot_sweep(axes, _sweep(), dict(zip(METHODS, "ABC")), 1.0)
    assert [line.get_label() for line in axes[0].get_lines()] == ["A", "B", "C"]
    assert axes[0].get_lines()[1].get_xdata().tolist() == [100, 1000]        # the unfinished run is left out
    plt.close(fig)
