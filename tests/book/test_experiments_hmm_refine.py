"""Quick checks of ``experiments/hmm_refine.py`` (the refinement table of chapter 6).

Small sizes and one stored row only: the script's row has the columns the chapter reads, the
true model's log-likelihood from hmmlearn agrees with mvlib's forward algorithm, and the first
row of the committed ``chapters/data/hmm_refine.json`` is reproduced (same draws, same fits).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("hmmlearn")


hmm_refine = load_script("experiments", "hmm_refine")


def test_small_row_columns_and_two_likelihood_routes_agree():
    from mvlib import hmm

    true = hmm_refine.running_model()
    row = hmm_refine.one_row(300, 0, true)
    assert len(row) == len(hmm_refine.COLUMNS) and row[:2] == [300, 0]
    # the chapter reads these positions
    assert hmm_refine.COLUMNS[2::3] == ["moments_err_emission", "refined_err_emission", "true_loglik"]
    errs = np.array(row[2:8]).reshape(2, 3)[:, :2]
    assert np.all((errs >= 0) & (errs <= 1))
    X, lengths, _ = hmm.sample_hmm(true.startprob_, true.transmat_.T, true.emissionprob_.T, 300,
                                   hmm_refine.LENGTH, random_state=100)
    forward = hmm.forward_log_likelihood(X, lengths, true.startprob_, true.transmat_.T,
                                         true.emissionprob_.T)
    assert np.isclose(row[-1], np.sum(forward) / len(X), atol=1e-10)


def test_first_stored_row_is_reproduced():
    stored = json.loads((ROOT / "chapters" / "data" / "hmm_refine.json").read_text())
    assert stored["columns"] == hmm_refine.COLUMNS
    assert len(stored["rows"]) == len(hmm_refine.SIZES) * len(hmm_refine.SEEDS)
    first = stored["rows"][0]
    row = hmm_refine.one_row(first[0], first[1])
    assert np.allclose(row, first, atol=1e-9, rtol=0)
