"""Quick checks of ``experiments/kernel_experiments.py`` (chapter 7): small sizes only, nothing
written to ``chapters/data``; the summaries the chapter reads are checked against hand-made data
whose answers are known, and the Theorem 2 measurement against its own bound."""
from __future__ import annotations

import numpy as np
from scripts import load_script

kx = load_script("experiments", "kernel_experiments")


def test_bench_kernel_names_still_there():
    # bench/bench_kernel.py imports these from the script
    dists, w = kx.running_example_components()
    grid_list = kx.grids(dists)
    views, h = kx.sample(dists, w, 50, 0)
    true = kx.true_densities(dists, grid_list)
    assert len(views) == 3 and views[0].shape == (50, 1) and true[0].shape == (kx.N_GRID, 3)
    assert kx.weighted_error(true, true, w) == 0.0 and callable(kx.gmm_marginals)


def test_theorem2_bound_small():
    out = kx.part_theorem2_bound([300], 1)
    assert {"rho", "sigma_k", "pi_min", "delta", "rows"} <= set(out)
    (row,) = out["rows"]
    assert set(row) >= {"m", "eps_T", "bound", "eps_over_bound", "lambda_ratio", "embedding_ratio",
                        "embedding_ratio_printed"}
    assert 0 < row["eps_T"] < row["bound"]
    assert np.isclose(row["eps_over_bound"], row["eps_T"] / row["bound"])
    assert abs(out["pi_min"] - 1 / 6) < 1e-12 and out["sigma_k"] > 0


def test_bandwidth_summary_finds_the_vertex():
    # an error exactly quadratic in log s, minimal at s = 0.3: the parabola's vertex is exact
    s_grid = list(np.geomspace(0.05, 2.0, 9))
    rows = [{"m": m, "rep": 0, "bandwidth": s, "error": float(np.exp((np.log(s / 0.3)) ** 2 + m / 1000))}
            for m in (100, 1000) for s in s_grid]
    rows.append({"m": 100, "rep": 1, "bandwidth": s_grid[0], "error": "failed: ValueError"})
    out = kx.bandwidth_summary({"s_grid": s_grid, "m_list": [100, 1000], "rows": rows}, "error")
    assert set(out["error"]) == {"100", "1000"}
    for m in ("100", "1000"):
        assert abs(out["best_vertex"][m] - 0.3) < 1e-9
        assert out["best_grid"][m] == s_grid[int(np.argmin(out["error"][m]))]


def test_synthetic_summary_matches_direct_means():
    rng = np.random.default_rng(0)
    m_grid, rows = [200, 1000, 5000], []
    for setting in ("gauss", "gamma"):
        for m in m_grid:
            for rep in range(4):
                err = {meth: float(rng.uniform(1, 2) * m ** -0.4 * f) for meth, f in
                       (("kernel", 1.0), ("em_gmm", 3.0), ("em_gmm_diag", 3.0), ("npem", 2.0), ("histogram", 5.0))}
                rows.append({"setting": setting, "k": 2, "m": m, "rep": rep, "errors": err, "errors_l2": err,
                             "seconds": {meth: 1.0 for meth in err}, "kernel_route": "tensor"})
    syn = {"m_grid": m_grid, "k_grid": [2], "methods": ["kernel", "em_gmm", "em_gmm_diag", "npem", "histogram"],
           "rows": rows}
    out = kx.synthetic_summary(syn)
    kern = [np.mean([r["errors_l2"]["kernel"] for r in rows if (r["setting"], r["m"]) == ("gamma", m)])
            for m in m_grid]
    assert np.allclose(out["curves"]["gamma"]["2"]["kernel"]["mean"], kern)
    gamma = [c for c in out["claims"] if c["setting"] == "gamma"][0]
    assert np.isclose(gamma["slope"], np.polyfit(np.log(m_grid), np.log(kern), 1)[0])
    assert gamma["margin_kernel_below_em"] > 0 and gamma["margin_em_below_kernel"] < 0
    assert out["routes"] == {"tensor": len(rows), "observable": 0, "total": len(rows)}
    assert out["refused"] == [] and out["median_seconds"]["kernel"] == 1.0
