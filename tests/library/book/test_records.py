"""mvlib.book helpers for the chapters' JSON tables: rows_where, columns, range_text, glue_texts."""
from __future__ import annotations

import numpy as np
import pytest

from mvlib.book import columns, glue_texts, range_text, rows_where

ROWS = [{"d": 20, "method": "a", "x": 1.5}, {"d": 40, "method": "a", "x": 2.5},
        {"d": 20, "method": "b", "x": 3.5}, {"d": 20, "x": 4.5}]


def test_rows_where_keeps_order_and_needs_every_condition():
    assert [r["x"] for r in rows_where(ROWS, d=20)] == [1.5, 3.5, 4.5]
    assert rows_where(ROWS, d=20, method="b") == [ROWS[2]]
    assert rows_where(ROWS, method=None) == []          # a missing key is not None
    assert rows_where(ROWS) == ROWS


def test_columns_one_or_several_keys():
    x = columns(ROWS, "x")
    assert isinstance(x, np.ndarray) and x.tolist() == [1.5, 2.5, 3.5, 4.5]
    d, x2 = columns(ROWS[:2], "d", "x")
    assert d.dtype.kind == "i" and d.tolist() == [20, 40] and x2.tolist() == [1.5, 2.5]
    with pytest.raises(KeyError):
        columns(ROWS, "method")
    with pytest.raises(TypeError):
        columns(ROWS)


def test_range_text_is_min_to_max_whatever_the_order():
    assert range_text([0.3, 0.1, 0.25], ".2f") == "0.10 to 0.30"
    assert range_text([3000, 30], ",") == "30 to 3,000"
    assert range_text(np.array([2.0])) == "2.0 to 2.0"


def test_glue_texts_glues_each_formatted_value(monkeypatch):
    glued = []
    import mvlib.book._records as records
    monkeypatch.setattr(records, "glue_text", lambda name, value, fmt="": glued.append((name, format(value, fmt))))
    assert glue_texts({"a": 0.125, "b": 2}, ".2f") is None
    assert glued == [("a", "0.12"), ("b", "2.00")]
    glued.clear()
    glue_texts({"c": "ready text", "d": 7})
    assert glued == [("c", "ready text"), ("d", "7")]
