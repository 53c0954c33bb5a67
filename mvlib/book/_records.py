"""Helpers for the chapters' data files: pick rows of a table, glue many values, quote a range."""
from __future__ import annotations

import numpy as np

from ._display import glue_text

__all__ = ["columns", "glue_texts", "range_text", "rows_where"]


def rows_where(rows, **conditions) -> list:
    """The rows (dicts, as in the chapters' JSON tables) whose entries equal all ``conditions``.

    The order of ``rows`` is kept; a condition naming a key that a row lacks excludes the row.

    Examples
    --------
    >>> from mvlib.book import rows_where
    >>> rows = [{"d": 20, "m": "a", "x": 1}, {"d": 40, "m": "a", "x": 2}, {"d": 20, "m": "b", "x": 3}]
    >>> [r["x"] for r in rows_where(rows, d=20)]
    [1, 3]
    >>> rows_where(rows, d=20, m="b")
    [{'d': 20, 'm': 'b', 'x': 3}]
    """
    missing = object()
    return [r for r in rows if all(r.get(key, missing) == value for key, value in conditions.items())]


def columns(rows, *keys):
    """The entries ``row[key]`` of ``rows`` (dicts, as in the chapters' JSON tables) as NumPy arrays.

    One array per key, in the order of ``rows``; a single key gives one array, several a tuple.

    Examples
    --------
    >>> from mvlib.book import columns
    >>> rows = [{"n": 10, "err": 0.5}, {"n": 100, "err": 0.25}]
    >>> columns(rows, "n")
    array([ 10, 100])
    >>> n, err = columns(rows, "n", "err")
    >>> err.tolist()
    [0.5, 0.25]
    """
    if not keys:
        raise TypeError("columns() needs at least one key")
    arrays = tuple(np.array([row[key] for row in rows]) for key in keys)
    return arrays[0] if len(keys) == 1 else arrays


def range_text(values, fmt: str = "") -> str:
    """``"LOW to HIGH"``: the smallest and the largest of ``values``, each formatted with ``fmt``.

    Examples
    --------
    >>> from mvlib.book import range_text
    >>> range_text([0.25, 0.5, 0.125], ".2f")
    '0.12 to 0.50'
    """
    values = np.asarray(values)
    return f"{values.min():{fmt}} to {values.max():{fmt}}"


def glue_texts(values: dict, fmt: str = "") -> None:
    """:func:`glue_text` every ``name: value`` of ``values``, each formatted with the one ``fmt``.

    Nothing is displayed and nothing returned (so a call can end a cell). Use one call per
    format; a value that needs its own format can be given as a ready string with ``fmt=""``.

    Examples
    --------
    >>> from mvlib.book import glue_texts
    >>> glue_texts({"ch0_a": 0.5, "ch0_b": 2}, ".1f")   # glues "0.5" and "2.0"
    """
    for name, value in values.items():
        glue_text(name, value, fmt)
