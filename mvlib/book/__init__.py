"""Helpers the chapters and their experiment scripts share, defined once.

The chapters of the book (``chapters/*.ipynb``) and the scripts that compute their data
(``experiments/``) and their timings (``bench/``) import these instead of retyping them. They hold
no algorithm: every estimator and identity lives in its family package. This package stands on
the top floor: it may import any family, and nothing in mvlib imports it.

Display and glue (chapters)
    :func:`show` typesets ``lhs = expr``; :func:`glue_text` glues a formatted number for the
    prose; :func:`load_data` reads a chapter's data file (``chapters/data/*.json``).
Figures
    :func:`figure` (a context manager yielding ``(fig, axes)`` that lays out and shows the
    figure), :func:`label_axes`.
Records (lists of dicts loaded from a data file)
    :func:`rows_where`, :func:`columns`, :func:`range_text` ("LOW to HIGH"), :func:`glue_texts`.
Checks
    :func:`raised` (the message of the error a call must raise), :func:`warning_messages` (the
    messages of the warnings a call emits).
Small statistics
    :func:`loglog_slope`, :func:`mean_sd`.
Scripts
    :func:`data_path` (where scripts write chapter data), :func:`rounded` (JSON-ready numbers),
    :func:`write_json`, :func:`experiment_main` (the command line of a script made of named parts),
    :func:`timed`, :func:`peak_rss_gib` and :func:`reset_peak_rss` (peak
    memory of this process, Linux).
Benches
    :func:`run_child` runs one measurement in a fresh interpreter (:func:`thread_env` sizes its
    thread pools) and reads back what :func:`child_reply` printed, or raises :class:`ChildError`;
    :func:`measure_call` (time, peak memory and warnings of one call: :class:`Measurement`),
    :func:`max_rss_gib`, :func:`median_timed` (:class:`Timing`), :func:`thread_limit`;
    :func:`environment`, :func:`versions_line` and :func:`machine_line` (what ran where),
    :func:`format_row` (fixed-width tables), :func:`run_parts` and :func:`merged_sections` (benches
    run by parts).
Shared cases
    :data:`HMM_BENCH`, :func:`hmm_bench_model` and :func:`hmm_bench_data`: the hidden-Markov
    benchmark case that ``bench/bench_hmm.py`` and ``experiments/hmm_experiments.py`` both use;
    :func:`mixed_views_model`, the Gaussian/Poisson/Bernoulli three-view mixture that chapter 4
    and ``experiments/multiview_experiments.py`` both use.
Chapter 9
    :func:`plot_iterations` and :func:`plot_grid` (two of its figures), :func:`iteration_curves`,
    :func:`bench_case_summary` and :func:`grid_summary` (what it reads from the data of its big
    scripts; :func:`grid_score` and :data:`GRID_METHODS` index the grid), :func:`grid_table` (the
    grid's printed table), and :func:`iteration_texts`, :func:`bench_case_texts` and
    :func:`grid_texts` (its glue texts of that data).
Chapter 11
    :func:`plot_sketch_price` and :func:`plot_sweep` (its two figures), :func:`sweep_summary` (what it
    reads from the benchmark's sweep), :func:`bench_texts` and
    :func:`sweep_texts` (its glue texts of the benchmark).
"""
from ._bench import (ChildError, Measurement, Timing, child_reply, environment, format_row, machine_line,
                     max_rss_gib, measure_call, median_timed, merged_sections, run_child, run_parts, thread_env,
                     thread_limit, versions_line)
from ._cases import HMM_BENCH, hmm_bench_data, hmm_bench_model
from ._checks import raised, warning_messages
from ._display import glue_text, load_data, show
from ._figures import figure, label_axes
from ._mixed_views import mixed_views_model
from ._records import columns, glue_texts, range_text, rows_where
from ._overcomplete_plumbing import (
    GRID_METHODS,
    bench_case_summary,
    bench_case_texts,
    grid_score,
    grid_summary,
    grid_table,
    grid_texts,
    iteration_curves,
    iteration_texts,
    plot_grid,
    plot_iterations,
)
from ._runs import (
    data_path,
    experiment_main,
    loglog_slope,
    mean_sd,
    peak_rss_gib,
    reset_peak_rss,
    rounded,
    timed,
    write_json,
)
from ._scale_plumbing import bench_texts, plot_sketch_price, plot_sweep, sweep_summary, sweep_texts
from ._streams import CountedChunks, local_client

__all__ = [
    "ChildError",
    "CountedChunks",
    "GRID_METHODS",
    "HMM_BENCH",
    "Measurement",
    "Timing",
    "bench_case_summary",
    "bench_case_texts",
    "bench_texts",
    "child_reply",
    "columns",
    "data_path",
    "environment",
    "experiment_main",
    "figure",
    "format_row",
    "glue_text",
    "glue_texts",
    "grid_score",
    "grid_summary",
    "grid_table",
    "grid_texts",
    "hmm_bench_data",
    "hmm_bench_model",
    "iteration_curves",
    "iteration_texts",
    "label_axes",
    "load_data",
    "local_client",
    "loglog_slope",
    "machine_line",
    "max_rss_gib",
    "mean_sd",
    "measure_call",
    "median_timed",
    "merged_sections",
    "mixed_views_model",
    "peak_rss_gib",
    "plot_grid",
    "plot_iterations",
    "plot_sketch_price",
    "plot_sweep",
    "raised",
    "range_text",
    "reset_peak_rss",
    "rounded",
    "rows_where",
    "run_child",
    "run_parts",
    "show",
    "sweep_summary",
    "sweep_texts",
    "thread_env",
    "thread_limit",
    "timed",
    "versions_line",
    "warning_messages",
    "write_json",
]
