"""The introduction's map of the book (chapters/figures/book_map.svg) matches its reading path."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("book_map", ROOT / "chapters" / "figures" / "book_map.py")
book_map = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(book_map)


def test_reading_path_is_parsed():
    deps = book_map.reading_path()
    chapters = sorted(int(p.name[:2]) for p in (ROOT / "chapters").glob("[01][0-9]_*.ipynb"))
    assert sorted(deps) == chapters, "every chapter has an item in the reading path"
    assert deps[1]["needs"] == [] and all(deps[n]["needs"] for n in chapters if n > 1)
    assert all(m < n for n, info in deps.items() for m in info["needs"] + info["helps"]), \
        "a chapter may only need earlier chapters"


def test_direct_edges_drop_only_implied_prerequisites():
    deps = {1: {"needs": [], "helps": []}, 2: {"needs": [1], "helps": []}, 3: {"needs": [1, 2], "helps": [1]}}
    assert book_map.direct_edges(deps) == [(1, 2, "needs"), (2, 3, "needs")]


def test_committed_figure_is_up_to_date():
    svg = (ROOT / "chapters" / "figures" / "book_map.svg").read_text(encoding="utf-8")
    drawn = set(re.findall(r'id="edge-(\d+)-(\d+)-(needs|helps)"', svg))
    expected = {(str(m), str(n), kind) for m, n, kind in book_map.direct_edges(book_map.reading_path())}
    assert drawn == expected, ("chapters/figures/book_map.svg is out of date: run "
                               "`.venv/bin/python chapters/figures/book_map.py`", drawn ^ expected)
    nodes = set(re.findall(r'id="chapter-(\d+)"', svg))
    assert nodes == {str(n) for n in book_map.titles()}
