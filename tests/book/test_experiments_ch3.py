"""Quick checks of ``experiments/ch3_experiments.py`` (the synthetic data of chapter 03, topic models).

Small sizes only (a few seconds): the parts return the keys the chapter reads, and results that
theory fixes hold (more documents, smaller errors; exact moments, exact eigenpairs). Nothing is
written to ``chapters/data``, and no timing is asserted.
"""
from __future__ import annotations

import numpy as np
import pytest
from scripts import load_script

ch3 = load_script("experiments", "ch3_experiments")


def test_rate_errors_fall_with_n():
    out = ch3.rate(**ch3.QUICK["rate"])
    assert out["topic_error"].shape == out["pairs_error"].shape == (2, 2)
    assert out["pairs_error"][1].mean() < out["pairs_error"][0].mean()     # 10x the documents


def test_eta_records_every_direction_and_the_estimator():
    out = ch3.eta(n_theta=20)
    assert len(out["gaps"]) == len(out["errors"]) == 20
    assert all(0 <= g <= 2 for g in out["gaps"]) and out["imag_rel_max"] < 1e-9
    assert out["error_mvlib"] < np.max(out["errors"]) and out["retries_mvlib"] >= 0


def test_routes_and_rare_keys():
    rts = ch3.routes(**ch3.QUICK["routes"])
    assert rts["routes"] == list(ch3.ROUTES) and set(rts["errors"]) == set(rts["seconds"]) == set(ch3.ROUTES)
    assert all(len(v) == 1 and v[0] < 0.2 for v in rts["errors"].values())
    rare = ch3.rare(**ch3.QUICK["rare"])
    assert rare["relative_error"].shape == rare["warned"].shape == (2, 1)
    assert rare["relative_error"][0, 0] < rare["relative_error"][1, 0]      # the rarer, the worse


def test_tilt_is_exact_without_tilt_and_projects_with_it():
    out = ch3.tilt(**ch3.QUICK["tilt"])
    assert out["topic_error"][0] < 1e-10 < out["topic_error"][1]
    assert max(out["projection_gap"]) < 1e-10 and max(out["eigenvalue_gap"]) < 1e-10


def test_main_quick_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ch3.main(["tilt", "--quick"])
    assert "nothing written" in capsys.readouterr().out
    assert not any(tmp_path.rglob("*.json"))
    with pytest.raises(SystemExit):
        ch3.main(["no-such-part"])
