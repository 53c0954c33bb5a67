"""Tests of mvlib/book/_overcomplete_plumbing.py: what chapter 9 reads from its big scripts' data."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mvlib.book import (GRID_METHODS, bench_case_summary, bench_case_texts, grid_score, grid_summary,  # noqa: E402
                        grid_table, grid_texts, iteration_curves, iteration_texts, plot_grid, plot_iterations)


def _iterations():
    rng = np.random.default_rng(0)
    rows = []
    for d in (50, 100, 200):
        for _ in range(3):
            part = lambda: {"median_error": rng.uniform(0, 1, 4).tolist(),  # noqa: E731
                            "share_own": rng.uniform(0, 1, 4).tolist(), "distinct": rng.integers(1, 9, 4).tolist()}
            rows.append({"d": d, "k": 3 * d // 2, "labels": part(), "exact": part()})
    return {"n_grid": [0, 2, 10, 100], "rows": rows}


def test_iteration_curves_are_the_medians_and_minima_over_the_tensors_of_each_dimension():
    data = _iterations()
    curves = iteration_curves(data)
    assert list(curves) == [(d, s) for d in (50, 100, 200) for s in ("labels", "exact")]
    for (d, start), (med, own, distinct) in curves.items():
        parts = [r[start] for r in data["rows"] if r["d"] == d]
        for j in range(4):
            assert med[j] == sorted(p["median_error"][j] for p in parts)[1]      # median of three
            assert own[j] == sorted(p["share_own"][j] for p in parts)[1]
            assert distinct[j] == min(p["distinct"][j] for p in parts)


def test_iteration_texts_read_the_labelled_curves_at_n2_and_n100():
    curves = iteration_curves(_iterations())
    t = iteration_texts(curves, 1, 3)
    assert t["ch9_it_d50_n2"] == f"{curves[50, 'labels'][0][1]:.2f}"
    assert t["ch9_it_d100_own"] == f"{curves[100, 'labels'][1][3]:.2f}"
    assert t["ch9_it_exact50"] == f"{curves[50, 'exact'][0][3]:.2f}"
    plateau = curves[200, "labels"][0][3] * 200 / np.sqrt(300)
    assert t["ch9_it_plateau"].endswith(f"and {plateau:.1f}")


def test_plot_iterations_draws_two_curves_per_dimension_and_start_lines():
    data = _iterations()
    fig, axes = plt.subplots(1, 2)
    plot_iterations(axes, data, iteration_curves(data))
    assert len(axes[0].get_lines()) == 3 * 2 + 3 and len(axes[1].get_lines()) == 3 * 2
    assert axes[0].get_lines()[0].get_xdata()[0] == 0.5                  # N = 0 drawn at 0.5
    plt.close(fig)


def _bench():
    a = [{"method": m, "seed": s, "recovered": r, "seconds": t} for m, s, r, t in
         (("mvlib", 0, 1.0, 4.0), ("mvlib", 1, 0.6, 2.0), ("power", 0, 0.0, 1.0), ("power", 1, 0.1, 3.0),
          ("parafac", 0, 0.9, 0.5), ("parafac", 1, 0.8, 1.5))]
    b = [{"method": "labels, power only", "seed": 0, "recovered": 0.0, "seconds": 7.0, "median_error": 0.3},
         {"method": "labels, power only", "seed": 1, "recovered": 0.0, "seconds": 6.0, "median_error": 0.2},
         {"method": "labels + ALS", "seed": 0, "recovered": 1.0, "seconds": 20.0, "median_error": 0.01},
         {"method": "parafac, 100 sweeps", "seed": 0, "recovered": 0.5, "seconds": 30.0, "median_error": 0.1}]
    return {"case_a": {"rows": a}, "case_b": {"rows": b}, "threads": 1}


def test_bench_case_summary_and_texts_agree_with_a_direct_computation():
    s = bench_case_summary(_bench())
    assert list(s["a"]) == ["mvlib", "power", "parafac"]
    expected = {"mvlib": (2, 0.8, 3.0), "power": (2, 0.05, 2.0), "parafac": (2, 0.85, 1.0)}
    for name, row in expected.items():
        assert s["a"][name] == pytest.approx(row)
    assert s["n_tensors"] == 2 and [r["seed"] for r in s["power_b"]] == [0, 1]
    assert len(s["als_b"]) == 1 and s["parafac_b"][0]["seconds"] == 30.0
    t = bench_case_texts(s, 1)
    assert t["ch9_b_ratio"] == "3.0" and t["ch9_b_mv_rec"] == "80.0 %" and t["ch9_b_pf_t"] == "1.00"
    assert t["ch9_b_pow_err"] == "0.200 to 0.300" and t["ch9_b_pow_time"] == "6.0 to 7.0"
    assert t["ch9_b_pf_b"] == "50 % in 30.0 s (median error 0.100)"


def _grid():
    rng = np.random.default_rng(1)
    cells = []
    for d in (20, 40):
        for q in (0.5, 1.5, 2.0, 2.5, 3.0):
            methods = {}
            for m in GRID_METHODS:
                s = float(rng.uniform())
                methods[m] = {"summary": {"success_mean": s, "time_mean": float(rng.uniform(1, 5)),
                                          "success_ci95": [s - 0.1, s + 0.1]}, "sweeps": [100, 200]}
            lo = float(rng.uniform(-1, 0))
            cells.append({"d": d, "k_over_d": q, "methods": methods,
                          "success_differences": {"default-parafac_equal_time": {"ci95": [lo, lo + 0.5]}}})
    return {"grid": {"d": [20, 40]}, "cells": cells}


def test_grid_summary_agrees_with_a_direct_computation():
    cells = _grid()["cells"]
    g = grid_summary(cells)
    succ = {(c["d"], c["k_over_d"]): {m: v["summary"]["success_mean"] for m, v in c["methods"].items()} for c in cells}
    tm = {(c["d"], c["k_over_d"]): {m: v["summary"]["time_mean"] for m, v in c["methods"].items()} for c in cells}
    assert g["power_best"] == max(v["power"] for v in succ.values())
    assert g["faster"] == sum(tm[key]["parafac"] < tm[key]["power"] for key in tm)
    assert g["wins"] == [key for key in succ if succ[key]["default"] > succ[key]["parafac"]]
    assert g["c25_conv"] == succ[20, 2.5]["parafac_converged"]
    assert g["c25_best100"] == max(succ[20, 2.5][m] for m in GRID_METHODS if m != "parafac_converged")
    assert g["c30_best"] == max(succ[20, 3.0].values())
    assert np.allclose(g["power_share"], [tm[key]["power"] / tm[key]["default"] for key in tm])
    assert g["parafac_minus_power"][3] == succ[20, 2.5]["parafac"] - succ[20, 2.5]["power"]
    assert grid_score(cells[0], "default", "time_mean") == tm[20, 0.5]["default"]


def test_grid_table_and_texts():
    cells = _grid()["cells"]
    lines = grid_table(cells).splitlines()
    assert len(lines) == 1 + len(cells) and lines[0].split()[-2:] == ["pf", "converged"]
    assert float(lines[4].split()[3]) == round(grid_score(cells[3], "default"), 2)
    t = grid_texts(grid_summary(cells), len(cells))
    assert t["ch9_g_faster"].endswith(f"of {len(cells)}") and t["ch9_g_c25_sweeps"] == "150"
    assert t["ch9_g_win15"] == f"{grid_score(cells[1], 'default'):.2f} against {grid_score(cells[1], 'parafac'):.2f}"
    assert t["ch9_g_small"].endswith("(d = 40)") and t["ch9_g_powshare"].endswith(" %")


def test_plot_grid_draws_one_errorbar_per_method_in_each_panel():
    fig, axes = plt.subplots(1, 2)
    plot_grid(axes, _grid())
    assert [len(ax.containers) for ax in axes] == [len(GRID_METHODS)] * 2
    assert axes[1].get_legend() is not None and axes[0].get_legend() is None
    plt.close(fig)
