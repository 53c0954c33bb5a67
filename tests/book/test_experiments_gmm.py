"""Quick checks of ``experiments/gmm_chapter.py`` (the data of chapter 5 except the separation grid).

Small sizes only (a few seconds): the functions return the keys the chapter reads, the tables
agree with the runs they summarise, and the problems are drawn as the chapter used to draw
them. No timing is asserted, and nothing is written to ``chapters/data``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


gmm_chapter = load_script("experiments", "gmm_chapter")


def _old_sample_gmm(n, M, w, sigmas, rng):
    # the sampler the chapter defined before it used mvlib.gmm.SphericalGMMModel
    h = rng.choice(len(w), size=n, p=w)
    noise = rng.standard_normal((n, M.shape[0]))
    return M[:, h].T + np.asarray(sigmas)[h, None] * noise, h


def test_random_problem_draws_as_the_chapter_did():
    X, M = gmm_chapter.random_problem(300, 6, 3, seed=11)
    rng = np.random.default_rng(11)
    M_old = rng.standard_normal((6, 3))
    w_old = rng.dirichlet(np.full(3, 5.0))
    X_old, _ = _old_sample_gmm(300, M_old, w_old, np.full(3, 0.5), rng)
    assert np.array_equal(M, M_old) and np.array_equal(X, X_old)


def test_plugin_bias_small():
    out = gmm_chapter.plugin_bias(n=2000, samples=3)
    assert out["r_noise"] == 10 - 4 + 1 and np.isclose(out["sig2_bar"], 0.17)
    for key in ("bias_one", "sd_one", "se_one", "bias_avg", "sd_avg", "se_avg", "edge", "mt_one", "mt_avg"):
        assert np.isfinite(out[key])
    assert np.isclose(out["se_one"], out["sd_one"] / np.sqrt(3))
    assert out["edge"] < 0 and out["bias_one"] < 0      # the smallest eigenvalue sits low


def test_rate_small_shapes():
    out = gmm_chapter.rate(ns=[1000, 2000], reps=2)
    assert set(out["errors"]) == {"means", "weights", "variances"}
    assert all(e.shape == (2, 2) and np.all(e > 0) for e in out["errors"].values())


def test_compare_small_tables_agree_with_runs():
    out = gmm_chapter.compare(n_grid=[1000], k_grid=[2, 8], seeds_n=1, seeds_k=1)
    runs = out["runs_n"] + out["runs_k"]
    assert len(runs) == 3 and out["methods"] == gmm_chapter.METHODS
    for m in out["methods"]:
        assert out["fails"][m] == sum(r["methods"][m]["error"] > 0.5 for r in runs)
        for r, g in zip(out["runs_k"], ("2", "8")):
            entry = out["table_k"][g][m]
            e = r["methods"][m]["error"]
            assert entry["fail"] == int(e > 0.5)
            assert entry["median_ok"] == (None if e > 0.5 else e)
    assert len(out["closest"]) == 3 and len(out["ratio"]) == 3
    assert set(out["iters"]) == set(gmm_chapter.METHODS[1:])


def test_wine_small_keys():
    out = gmm_chapter.wine(seeds=range(1), ps=range(3, 5))
    assert set(out["refusals"]) == set(out["noise_ratio"]) == set(out["ari_em"]) == {"3", "4"}
    assert out["noise_ratio"]["3"] == 1.0
    assert set(out["ari_full"]) == set(out["bic"]) == {"spherical", "diag"}


def test_separation_summary_counts_every_run():
    payload = json.loads((ROOT / "chapters" / "data" / "gmm_separation.json").read_text(encoding="utf-8"))
    out = gmm_chapter.separation(payload)
    n_seeds = len(payload["seeds"])
    for n in out["ns"]:
        for s in out["separations"]:
            for m in out["methods"]:
                cell = out["table"][str(n)][str(s)][m]
                assert cell["runs"] == n_seeds == cell["refused"] + len(cell["e"])
                assert cell["refused"] <= cell["fail"] <= n_seeds
    acc = out["accepted"]
    assert acc["n"] == sum("error" in r["methods"]["spectral"] for r in payload["runs"])
    assert 0 <= acc["km_lost"] <= acc["n"]
