"""Plumbing of the chapter on overcomplete tensors (chapter 9): what it reads from the data of its
big scripts (``chapters/data/overcomplete_error_vs_N.json``, ``overcomplete_bench.json`` and
``overcomplete_grid.json``), the glue texts built from it, and the figure of the iterations.
They compute no estimate: the chapter asserts on what they return."""
from __future__ import annotations

import numpy as np

from ._records import columns, range_text, rows_where

__all__ = ["GRID_METHODS", "bench_case_summary", "bench_case_texts", "grid_score", "grid_summary",
           "grid_table", "grid_texts", "iteration_curves", "iteration_texts", "plot_grid", "plot_iterations"]

#: The methods of the grid, in the order of its table and figure.
GRID_METHODS = ("power", "default", "parafac", "parafac_equal_time", "parafac_converged")
_SHORT = {"power": "power", "default": "default", "parafac": "parafac",
          "parafac_equal_time": "pf equal t", "parafac_converged": "pf converged"}


def iteration_curves(data: dict) -> dict:
    """The medians over the tensors of each curve of the iterations' data, per dimension and start.

    Parameters
    ----------
    data : dict, the content of ``overcomplete_error_vs_N.json``: ``n_grid`` (the numbers of
        updates N) and ``rows``, one dict per tensor with ``d``, ``k`` and, for each start
        ``"labels"`` and ``"exact"``, a dict of lists (one entry per N) ``median_error``,
        ``share_own`` and ``distinct``.

    Returns
    -------
    dict, ``(d, start) -> (median_error, share_own, distinct)``: the medians over the tensors of
    dimension d of the first two (arrays, one entry per N) and the smallest ``distinct``, in
    increasing d and in the start order ``"labels"``, ``"exact"``.

    Examples
    --------
    >>> from mvlib.book import iteration_curves
    >>> part = lambda e: {"median_error": e, "share_own": [1.0, 0.5], "distinct": [3, 2]}
    >>> rows = [{"d": 4, "k": 6, "labels": part([0.2, 0.4]), "exact": part([0.0, 0.1])},
    ...         {"d": 4, "k": 6, "labels": part([0.4, 0.6]), "exact": part([0.0, 0.3])}]
    >>> med, own, distinct = iteration_curves({"n_grid": [0, 2], "rows": rows})[4, "labels"]
    >>> med.tolist(), own.tolist(), distinct.tolist()
    ([0.30000000000000004, 0.5], [1.0, 0.5], [3, 2])
    """
    curves = {}
    for dd in sorted({r["d"] for r in data["rows"]}):
        rows_d = rows_where(data["rows"], d=dd)
        for start in ("labels", "exact"):
            med, own = (np.median([r[start][key] for r in rows_d], axis=0) for key in ("median_error", "share_own"))
            curves[dd, start] = (med, own, np.min([r[start]["distinct"] for r in rows_d], axis=0))
    return curves


def plot_iterations(axes, data: dict, curves: dict) -> None:
    """Draw the median error (left) and the share of iterates nearest their own component (right)
    against the number of updates N, one colour per dimension, for the labelled and the exact starts.

    Parameters
    ----------
    axes : two matplotlib Axes.
    data : dict, the content of ``overcomplete_error_vs_N.json`` (see :func:`iteration_curves`).
    curves : dict, what :func:`iteration_curves` returns for ``data`` (up to three dimensions).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from mvlib.book import iteration_curves, plot_iterations
    >>> part = {"median_error": [0.2, 0.4], "share_own": [1.0, 0.5], "distinct": [3, 2]}
    >>> data = {"n_grid": [0, 2], "rows": [{"d": 4, "k": 6, "labels": part, "exact": part}]}
    >>> fig, axes = plt.subplots(1, 2)
    >>> plot_iterations(axes, data, iteration_curves(data))
    >>> len(axes[0].get_lines()), len(axes[1].get_lines())
    (3, 2)
    """
    from ._figures import label_axes

    ax, ax2 = axes
    x_it = np.maximum(np.array(data["n_grid"]), 0.5)        # N = 0 drawn at 0.5 on the log axis
    for col, dd in zip(("C0", "C1", "C2"), sorted({r["d"] for r in data["rows"]})):
        for start, style in (("labels", "o-"), ("exact", "s--")):
            med, own, _ = curves[dd, start]
            ax.semilogx(x_it, med, style, color=col, ms=4, label=f"d = {dd}, {start} start")
            ax2.semilogx(x_it, own, style, color=col, ms=4)
        ax.axhline(np.sqrt(rows_where(data["rows"], d=dd)[0]["k"]) / dd, color=col, lw=0.6, ls=":")
    label_axes(ax, "updates N (N = 0 at 0.5)", r"median $\min_\pm\|\hat a_j\pm a_j\|$", legend={"fontsize": 7})
    label_axes(ax2, "updates N (N = 0 at 0.5)", "share of iterates nearest their own $a_j$")


def iteration_texts(curves: dict, i2: int, i100: int) -> dict:
    """The chapter's glue texts of the iterations: the labelled-start medians at N = 2 (index ``i2``)
    and N = 100 (index ``i100``) for d = 50, 100 and 200, and the plateaus in units of sqrt(k)/d.

    Parameters
    ----------
    curves : dict, what :func:`iteration_curves` returns; it must hold d = 50, 100 and 200 with
        k = 3d/2.
    i2, i100 : int, the positions of N = 2 and N = 100 in the grid of N.

    Returns
    -------
    dict, glue name -> text.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.book import iteration_texts
    >>> c = lambda e: (np.array([1.0, e]), np.array([1.0, 0.5]), np.array([4, 3]))
    >>> curves = {(dd, s): c(0.1 * i) for i, dd in enumerate((50, 100, 200)) for s in ("labels", "exact")}
    >>> t = iteration_texts(curves, 0, 1)
    >>> t["ch9_it_d100_n100"], t["ch9_it_plateau"]
    ('0.10', '0.8 and 2.3')
    """
    (lab50, own50, _), (lab100, own100, _), (lab200, _, _) = (curves[dd, "labels"] for dd in (50, 100, 200))
    values = {"ch9_it_d50_n2": lab50[i2], "ch9_it_d50_n100": lab50[i100], "ch9_it_d50_own": own50[i100],
              "ch9_it_d100_n2": lab100[i2], "ch9_it_d100_n100": lab100[i100], "ch9_it_d100_own": own100[i100],
              "ch9_it_d200_n2": lab200[i2], "ch9_it_d200_n100": lab200[i100],
              "ch9_it_exact50": curves[50, "exact"][0][i100]}
    texts = {name: format(value, ".2f") for name, value in values.items()}
    texts["ch9_it_plateau"] = f"{lab100[i100] * 100 / np.sqrt(150):.1f} and {lab200[i100] * 200 / np.sqrt(300):.1f}"
    return texts


def bench_case_summary(bench: dict) -> dict:
    """What the chapter reads from the benchmark of ``overcomplete_bench.json``.

    Parameters
    ----------
    bench : dict with ``case_a`` and ``case_b``, each with ``rows``: dicts with ``method``,
        ``seed``, ``recovered``, ``seconds`` and (case b) ``median_error``.

    Returns
    -------
    dict with ``"a"``: method -> (number of rows, mean recovered, mean seconds) for the methods
    ``"mvlib"``, ``"power"`` and ``"parafac"`` of case a, in this order; ``"n_tensors"``: the
    number of seeds of case a; and the rows of case b: ``"power_b"`` (labels, power only),
    ``"als_b"`` (labels + ALS) and ``"parafac_b"`` (the methods whose name starts with parafac).

    Examples
    --------
    >>> from mvlib.book import bench_case_summary
    >>> a = [{"method": m, "seed": s, "recovered": r, "seconds": t} for m, s, r, t in
    ...      (("mvlib", 0, 1.0, 4.0), ("mvlib", 1, 0.5, 2.0), ("power", 0, 0.0, 1.0), ("parafac", 0, 0.9, 0.5))]
    >>> b = [{"method": "parafac (100 sweeps)", "seed": 0, "recovered": 0.7, "seconds": 9.0, "median_error": 0.1}]
    >>> s = bench_case_summary({"case_a": {"rows": a}, "case_b": {"rows": b}})
    >>> s["a"]["mvlib"], s["n_tensors"], len(s["parafac_b"]), s["power_b"]
    ((2, 0.75, 3.0), 2, 1, [])
    """
    case_a, case_b = bench["case_a"]["rows"], bench["case_b"]["rows"]
    stats = {}
    for name in ("mvlib", "power", "parafac"):
        rr = rows_where(case_a, method=name)
        stats[name] = (len(rr), float(np.mean(columns(rr, "recovered"))), float(np.mean(columns(rr, "seconds"))))
    return {"a": stats, "n_tensors": len({r["seed"] for r in case_a}),
            "power_b": rows_where(case_b, method="labels, power only"),
            "als_b": rows_where(case_b, method="labels + ALS"),
            "parafac_b": [r for r in case_b if r["method"].startswith("parafac")]}


def bench_case_texts(summary: dict, threads) -> dict:
    """The chapter's glue texts of the benchmark, from what :func:`bench_case_summary` returns.

    Parameters
    ----------
    summary : dict, what :func:`bench_case_summary` returns (with rows in all three lists of case b).
    threads : the number of threads the benchmark ran on (glued as given).

    Returns
    -------
    dict, glue name -> value (``threads`` and the number of tensors as given, the others as text).

    Examples
    --------
    >>> from mvlib.book import bench_case_texts
    >>> row = lambda t: {"median_error": 0.05, "recovered": 0.8, "seconds": t}
    >>> s = {"a": {"mvlib": (3, 0.9, 6.0), "power": (3, 0.0, 1.0), "parafac": (3, 0.95, 2.0)},
    ...      "n_tensors": 3, "power_b": [row(1.0), row(2.0)], "als_b": [row(5.0)], "parafac_b": [row(9.0)]}
    >>> t = bench_case_texts(s, 1)
    >>> t["ch9_b_ratio"], t["ch9_b_mv_rec"], t["ch9_b_pow_time"]
    ('3.0', '90.0 %', '1.0 to 2.0')
    """
    stats, pow_b, als_b, pf_b = summary["a"], summary["power_b"], summary["als_b"], summary["parafac_b"]
    return {"ch9_b_n": summary["n_tensors"], "ch9_b_threads": threads,
            "ch9_b_pow_err": range_text(columns(pow_b, "median_error"), ".3f"),
            "ch9_b_mv_rec": f"{100 * stats['mvlib'][1]:.1f} %",
            "ch9_b_pf_rec": f"{100 * stats['parafac'][1]:.1f} %",
            "ch9_b_pow_time": range_text(columns(pow_b, "seconds"), ".1f"),
            "ch9_b_als_time": range_text(columns(als_b, "seconds"), ".1f"),
            "ch9_b_pf_b": f"{100 * pf_b[0]['recovered']:.0f} % in {pf_b[0]['seconds']:.1f} s "
                          f"(median error {pf_b[0]['median_error']:.3f})",
            "ch9_b_mv_t": format(stats["mvlib"][2], ".2f"), "ch9_b_pf_t": format(stats["parafac"][2], ".2f"),
            "ch9_b_pow_t": format(stats["power"][2], ".2f"),
            "ch9_b_ratio": format(stats["mvlib"][2] / stats["parafac"][2], ".1f")}


def grid_score(cell: dict, method: str, key: str = "success_mean"):
    """The summary entry ``key`` of ``method`` in one cell of the grid: ``cell["methods"][method]["summary"][key]``.

    Examples
    --------
    >>> from mvlib.book import grid_score
    >>> grid_score({"methods": {"power": {"summary": {"success_mean": 0.25}}}}, "power")
    0.25
    """
    return cell["methods"][method]["summary"][key]


def grid_table(cells) -> str:
    """The grid's table of mean success, one line per cell (d, k/d) and one column per method.

    Examples
    --------
    >>> from mvlib.book import GRID_METHODS, grid_table
    >>> cell = {"d": 20, "k_over_d": 0.5, "methods": {m: {"summary": {"success_mean": 1.0}} for m in GRID_METHODS}}
    >>> print(grid_table([cell]).splitlines()[1])
     20  0.5          1.00          1.00          1.00          1.00          1.00
    """
    lines = [f"{'d':>3s} {'k/d':>4s} " + " ".join(f"{_SHORT[m]:>13s}" for m in GRID_METHODS)]
    for c in cells:
        lines.append(f"{c['d']:3d} {c['k_over_d']:4.1f} " + " ".join(f"{grid_score(c, m):13.2f}" for m in GRID_METHODS))
    return "\n".join(lines)


def grid_summary(cells) -> dict:
    """What the chapter asserts on in the grid of ``overcomplete_grid.json`` (its ``cells``).

    Parameters
    ----------
    cells : list of dicts with ``d``, ``k_over_d``, ``methods`` (method -> ``summary`` with
        ``success_mean`` and ``time_mean``, and for ``parafac_converged`` the list ``sweeps``) and
        ``success_differences`` (``"default-parafac_equal_time"`` -> ``ci95``, a pair). The cells
        (20, 0.5), (20, 1.5), (20, 2.0), (20, 2.5), (20, 3.0) and (40, 0.5) must be present.

    Returns
    -------
    dict with ``power_best`` (the best mean success of the power stage alone), ``faster`` (the
    number of cells where parafac at its defaults takes less time than the power stage),
    ``parafac_minus_power`` (per cell, the success of parafac less that of the power stage),
    ``equal_time_ci`` (per cell, the 95 % interval of default less parafac at equal time),
    ``c25_conv`` and ``c25_best100`` (at d = 20, k/d = 2.5: converged parafac, and the best of the
    four other methods), ``c30_best`` (the best method at d = 20, k/d = 3), ``wins`` (the cells
    (d, k/d) where the default beats parafac at its defaults), ``time_ratio`` (per cell, the time
    of the default over that of parafac), ``power_share`` (per cell, the share of the default's
    time spent in the power stage) and ``cells``, the cells above by ``(d, k/d)``.

    Examples
    --------
    >>> from mvlib.book import GRID_METHODS, grid_summary
    >>> def cell(d, q, s):
    ...     m = {name: {"summary": {"success_mean": s[i], "time_mean": 1.0 + i}} for i, name in enumerate(GRID_METHODS)}
    ...     return {"d": d, "k_over_d": q, "methods": m,
    ...             "success_differences": {"default-parafac_equal_time": {"ci95": [-0.1, 0.0]}}}
    >>> cells = [cell(20, q, [0.0, 0.5, 0.4, 0.4, 1.0]) for q in (0.5, 1.5, 2.0, 2.5, 3.0)]
    >>> cells.append(cell(40, 0.5, [0.0, 0.2, 0.4, 0.4, 1.0]))
    >>> g = grid_summary(cells)
    >>> g["wins"], g["faster"], g["c25_best100"], float(g["power_share"][0])
    ([(20, 0.5), (20, 1.5), (20, 2.0), (20, 2.5), (20, 3.0)], 0, 0.5, 0.5)
    """
    S = grid_score
    at = {(d, q): rows_where(cells, d=d, k_over_d=q)[0] for d, q in
          ((20, 0.5), (20, 1.5), (20, 2.0), (20, 2.5), (20, 3.0), (40, 0.5))}
    c25, c30 = at[20, 2.5], at[20, 3.0]
    return {"power_best": max(S(c, "power") for c in cells),
            "faster": sum(S(c, "parafac", "time_mean") < S(c, "power", "time_mean") for c in cells),
            "parafac_minus_power": [S(c, "parafac") - S(c, "power") for c in cells],
            "equal_time_ci": [c["success_differences"]["default-parafac_equal_time"]["ci95"] for c in cells],
            "c25_conv": S(c25, "parafac_converged"),
            "c25_best100": max(S(c25, m) for m in GRID_METHODS[:4]),
            "c30_best": max(S(c30, m) for m in GRID_METHODS),
            "wins": [(c["d"], c["k_over_d"]) for c in cells if S(c, "default") > S(c, "parafac")],
            "time_ratio": [S(c, "default", "time_mean") / S(c, "parafac", "time_mean") for c in cells],
            "power_share": np.array([S(c, "power", "time_mean") / S(c, "default", "time_mean") for c in cells]),
            "cells": at}


def grid_texts(summary: dict, n_cells: int) -> dict:
    """The chapter's glue texts of the grid, from what :func:`grid_summary` returns for its ``n_cells`` cells.

    Examples
    --------
    >>> from mvlib.book import GRID_METHODS, grid_summary, grid_texts
    >>> def cell(d, q):
    ...     m = {name: {"summary": {"success_mean": 0.5, "time_mean": 2.0}, "sweeps": [100, 300]} for name in GRID_METHODS}
    ...     return {"d": d, "k_over_d": q, "methods": m,
    ...             "success_differences": {"default-parafac_equal_time": {"ci95": [-0.1, 0.0]}}}
    >>> cells = [cell(20, q) for q in (0.5, 1.5, 2.0, 2.5, 3.0)] + [cell(40, 0.5)]
    >>> t = grid_texts(grid_summary(cells), len(cells))
    >>> t["ch9_g_faster"], t["ch9_g_win15"], t["ch9_g_c25_sweeps"], t["ch9_g_powshare"]
    ('0 of 6', '0.50 against 0.50', '200', '100 to 100 %')
    """
    S, at = grid_score, summary["cells"]
    vs = lambda c: f"{S(c, 'default'):.2f} against {S(c, 'parafac'):.2f}"  # noqa: E731
    values = {"ch9_g_power_best": summary["power_best"], "ch9_g_c25_conv": summary["c25_conv"],
              "ch9_g_c25_best100": summary["c25_best100"],
              "ch9_g_eq15": S(at[20, 1.5], "parafac_equal_time"), "ch9_g_eq20": S(at[20, 2.0], "parafac_equal_time")}
    texts = {name: format(value, ".2f") for name, value in values.items()}
    texts.update({"ch9_g_faster": f"{summary['faster']} of {n_cells}", "ch9_g_win15": vs(at[20, 1.5]),
                  "ch9_g_win20": vs(at[20, 2.0]),
                  "ch9_g_small": " and ".join(f"{vs(c)} (d = {c['d']})" for c in (at[20, 0.5], at[40, 0.5])),
                  "ch9_g_c25_sweeps": format(np.mean(at[20, 2.5]["methods"]["parafac_converged"]["sweeps"]), ".0f"),
                  "ch9_g_tratio": range_text(summary["time_ratio"], ".1f"),
                  "ch9_g_powshare": range_text(100 * summary["power_share"], ".0f") + " %"})
    return texts


def plot_grid(axes, grid: dict) -> None:
    """Draw the grid's share of components recovered against k/d, one panel per dimension d and one
    curve per method (with its 95 % interval), the methods offset a little along k/d.

    Parameters
    ----------
    axes : one matplotlib Axes per dimension of ``grid["grid"]["d"]``.
    grid : dict, the content of ``overcomplete_grid.json``: ``grid`` (with ``d``) and ``cells``
        (see :func:`grid_summary`; each summary also with ``success_ci95``, a pair).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from mvlib.book import GRID_METHODS, plot_grid
    >>> summary = {"success_mean": 0.5, "success_ci95": [0.4, 0.6]}
    >>> cells = [{"d": 20, "k_over_d": q, "methods": {m: {"summary": summary} for m in GRID_METHODS}}
    ...          for q in (0.5, 1.0)]
    >>> fig, axes = plt.subplots(1, 1, squeeze=False)
    >>> plot_grid(axes[0], {"grid": {"d": [20]}, "cells": cells})
    >>> len(axes[0][0].containers)
    5
    """
    from ._figures import label_axes

    style = {"power": ("C3", "v-"), "default": ("C0", "o-"), "parafac": ("C1", "s-"),
             "parafac_equal_time": ("C2", "^--"), "parafac_converged": ("k", "d:")}
    for ax, dd in zip(axes, grid["grid"]["d"]):
        cs = rows_where(grid["cells"], d=dd)
        x = columns(cs, "k_over_d")
        for j, m in enumerate(GRID_METHODS):
            mean = np.array([grid_score(c, m) for c in cs])
            lo, hi = np.array([grid_score(c, m, "success_ci95") for c in cs]).T
            col, st = style[m]
            ax.errorbar(x + 0.03 * (j - 2), mean, yerr=[mean - lo, hi - mean], fmt=st, color=col,
                        ms=4, capsize=2, label=_SHORT[m])
        label_axes(ax, "$k/d$", title=f"$d={dd}$, 10 tensors per point")
    label_axes(axes[0], ylabel="share of components recovered")
    label_axes(axes[-1], legend={"fontsize": 8, "loc": "lower left"})
