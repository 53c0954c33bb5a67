"""Quick checks of the bounds part of ``experiments/tree_experiments.py`` (chapter 8).

A few cases only: they carry the keys the chapter reads, the bounds the chapter asserts hold,
and they are the first cases of the stored ``chapters/data/tree_bounds.json`` (same seeds, same
order of draws).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("hmmlearn")

tree_experiments = load_script("experiments", "tree_experiments")
STORED = json.loads((ROOT / "chapters" / "data" / "tree_bounds.json").read_text())


def test_chain_cases_match_the_stored_file_and_the_bound():
    cases = tree_experiments.chain_bound_cases(6)
    assert len(STORED["chain"]) == 100
    for case, stored in zip(cases, STORED["chain"]):
        assert {"d", "structured", "err", "delta", "eps"} <= set(case)
        assert case["d"] == stored["d"] and case["structured"] == stored["structured"]
        np.testing.assert_allclose(case["eps"], stored["eps"], rtol=1e-12)
        assert np.isclose(case["err"], stored["err"], rtol=1e-12)
        assert case["err"] <= np.sqrt(case["d"] - 1) * np.max(case["eps"]) * (1 + 1e-12)
        assert np.isclose(case["err"] ** 2, np.sum(np.square(case["delta"])), rtol=1e-9)


def test_tree_cases_match_the_stored_file():
    cases = tree_experiments.tree_bound_cases(4)
    assert len(STORED["tree"]) == 40
    for case, stored in zip(cases, STORED["tree"]):
        assert {"n_edges", "norm", "err", "delta", "eps"} <= set(case)
        assert case["n_edges"] == stored["n_edges"] == len(case["eps"]) == len(case["delta"])
        np.testing.assert_allclose(case["eps"], stored["eps"], rtol=1e-9, atol=1e-12 * case["norm"])
        assert np.all(np.asarray(case["delta"]) <= np.asarray(case["eps"]) * (1 + 1e-9) + 1e-12 * case["norm"])


def test_quick_run_writes_nothing(tmp_path, monkeypatch):
    written = []
    monkeypatch.setattr(tree_experiments, "write_json", lambda *a, **k: written.append(a))
    out = tree_experiments.bounds(quick=True)
    assert not written and set(out) == {"chain", "tree"}
