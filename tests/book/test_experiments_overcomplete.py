"""Quick checks of the overcomplete chapter's scripts ``experiments/overcomplete_budget.py`` and
``experiments/overcomplete_chapter.py``.

Small sizes only (a few seconds): the functions run end to end and return the keys the chapter
reads, the recovered share agrees with a direct count of the matched errors, and the committed data
file has the layout the chapter loads. No timing is asserted, nothing is written.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scripts import load_script

import mvlib

ROOT = Path(__file__).resolve().parents[2]


budget = load_script("experiments", "overcomplete_budget")


def test_recovered_counts_sign_free_matched_columns():
    A = mvlib.overcomplete.random_unit_columns(6, 4, 0)
    F = -A[:, ::-1].copy()                      # permuted and sign-flipped: all recovered
    assert budget.recovered(A, F) == 1.0
    F[:, 0] = mvlib.overcomplete.random_unit_columns(6, 1, 1)[:, 0]
    errors = np.sort(np.minimum(np.linalg.norm(A[:, ::-1] + F, axis=0), np.linalg.norm(A[:, ::-1] - F, axis=0)))
    assert budget.recovered(A, F) == np.mean(errors < budget.THRESHOLD) == 0.75


def test_run_returns_what_the_chapter_reads():
    res = budget.run(d=10, k=12, seeds=(0,))
    assert set(res["recovered"]) == set(budget.METHODS) and res["sweeps"] == [100, 300]
    for shares in res["recovered"].values():
        assert len(shares) == 1 and 0.0 <= shares[0] <= 1.0
    # at k/d = 1.2 parafac with the larger budget recovers the exact tensor
    assert res["recovered"]["parafac, 300 sweeps"] == [1.0]


def test_the_data_file_has_the_chapters_layout():
    data = json.loads((ROOT / "chapters" / "data" / "overcomplete_budget.json").read_text())
    assert data["sweeps"] == [100, 300] and (data["d"], data["k"]) == (24, 48)
    assert {m: len(v) for m, v in data["recovered"].items()} == {m: 3 for m in budget.METHODS}


chapter = load_script("experiments", "overcomplete_chapter")


def test_variants_return_what_the_chapter_reads():
    res = chapter.variants(d=8, k=10)
    assert [(r["init"], r["refine"]) for r in res["rows"]] == [
        ("svd", False), ("svd", True), ("random", False), ("random", True)]
    for r in res["rows"]:
        assert len(r["errors"]) == 10 and 0 < r["n_power_components"] <= 10
    # ALS from the power method's result moves closer to the components than the power method
    assert np.median(res["rows"][1]["errors"]) < np.median(res["rows"][0]["errors"])


def test_incoherence_agrees_with_a_direct_computation():
    res = chapter.incoherence(dims=(9, 16), seed=3)
    rng = np.random.default_rng(3)
    for law, k_of in chapter.LAWS.items():
        for i, d in enumerate((9, 16)):
            As = [mvlib.overcomplete.random_unit_columns(d, k_of(d), rng) for _ in range(2)]
            gram = [np.abs(A.T @ A - np.diag(np.diag(A.T @ A))).max() for A in As]
            assert np.isclose(res["laws"][law]["max_overlap"][i], np.mean(gram))
            assert np.isclose(res["laws"][law]["mu_norm2"][i],
                              np.mean([g * np.linalg.norm(A, 2) ** 2 for g, A in zip(gram, As)]))
    assert res["laws"]["k = d^(3/2)"]["k"] == [27, 64]


def test_the_chapters_small_data_files_have_its_layout():
    var = json.loads((ROOT / "chapters" / "data" / "overcomplete_variants.json").read_text())
    assert (var["d"], var["k"], var["seed"]) == (20, 30, 4) and len(var["rows"]) == 4
    inc = json.loads((ROOT / "chapters" / "data" / "overcomplete_incoherence.json").read_text())
    assert inc["dims"] == [16, 36, 64, 121, 196] and set(inc["laws"]) == set(chapter.LAWS)


def test_coherence_scaling_agrees_with_a_direct_computation():
    res = chapter.coherence_scaling(dims=(9, 16), seed=2, draws=2)
    rng = np.random.default_rng(2)
    for i, d in enumerate((9, 16)):
        As = [mvlib.overcomplete.random_unit_columns(d, 2 * d, rng) for _ in range(2)]
        gram = [np.abs(A.T @ A - np.diag(np.diag(A.T @ A))).max() for A in As]
        assert np.isclose(res["max_overlap"][i], np.mean(gram))


def test_semi_supervised_returns_what_the_chapter_reads():
    res = chapter.semi_supervised(d=10, k=12, n=2000)
    assert set(res["median_error"]) == {"labels", "power", "als"}
    assert all(0 <= e <= 2 for e in res["median_error"].values())
    assert len(res["power_weights"]) == len(res["weights"]) == 12
    # the ALS refinement of the same fit ends closer to the components than the labelled starts
    assert res["median_error"]["als"] < res["median_error"]["labels"]


def test_the_new_data_files_have_the_chapters_layout():
    coh = json.loads((ROOT / "chapters" / "data" / "overcomplete_coherence.json").read_text())
    assert coh["dims"] == [25, 50, 100, 200, 400] and len(coh["max_overlap"]) == 5 and coh["draws"] == 3
    semi = json.loads((ROOT / "chapters" / "data" / "overcomplete_semi_supervised.json").read_text())
    assert (semi["d"], semi["k"], semi["n"]) == (50, 75, 20_000) and len(semi["weights"]) == 75
