"""Quick checks of ``experiments/hmm_start.py`` (the start-law table of chapter 6).

The stored rows are reproduced (same draws, same fit), and the column the chapter compares
``startprob_`` with vanishes when the first symbols' law is exact.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scripts import load_script

from mvlib import hmm

ROOT = Path(__file__).resolve().parents[2]


hmm_start = load_script("experiments", "hmm_start")


def test_stored_rows_are_reproduced():
    stored = json.loads((ROOT / "chapters" / "data" / "hmm_start.json").read_text())
    assert stored["columns"] == hmm_start.COLUMNS and len(stored["rows"]) == len(hmm_start.SEEDS)
    for seed in (0, 3):
        assert np.allclose(hmm_start.one_row(seed), stored["rows"][seed], atol=1e-9, rtol=0)


def test_true_O_fit_is_exact_on_the_exact_law_of_the_first_symbol():
    pi0, T0, O0 = hmm_start.model()
    assert np.allclose(hmm.simplex_least_squares(O0, O0 @ pi0), pi0, atol=1e-12)
    out = hmm_start.run(seeds=range(1), n_sequences=200)
    assert len(out["rows"][0]) == len(out["columns"]) and all(0 <= v <= 1 for v in out["rows"][0])
