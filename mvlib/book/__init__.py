"""Helpers the chapters and their experiment scripts share, defined once.

The chapters of the book (``chapters/*.ipynb``) and the scripts that compute their data
(``experiments/``) and their timings (``bench/``) import these instead of retyping them. They hold
no algorithm: every estimator and identity lives in its family package. This package stands on
the top floor: it may import any family, and nothing in mvlib imports it.

Display and glue (chapters)
    :func:`show` typesets ``lhs = expr``; :func:`glue_text` glues a formatted number for the
    prose; :func:`load_data` reads a chapter's data file (``chapters/data/*.json``).
Small statistics
    :func:`loglog_slope`, :func:`mean_sd`.
Symbolic checks
    :func:`is_zero_polynomial` (an exact polynomial identity, without ``sympy.expand``).
Scripts
    :func:`data_path` (where scripts write chapter data), :func:`rounded` (JSON-ready numbers),
    :func:`write_json`, :func:`timed`, :func:`peak_rss_gib` and :func:`reset_peak_rss` (peak
    memory of this process, Linux).
"""
from ._display import glue_text, load_data, show
from ._runs import data_path, loglog_slope, mean_sd, peak_rss_gib, reset_peak_rss, rounded, timed, write_json
from ._symbolic import is_zero_polynomial

__all__ = [
    "data_path",
    "glue_text",
    "is_zero_polynomial",
    "load_data",
    "loglog_slope",
    "mean_sd",
    "peak_rss_gib",
    "reset_peak_rss",
    "rounded",
    "show",
    "timed",
    "write_json",
]
