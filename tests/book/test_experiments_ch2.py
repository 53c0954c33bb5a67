"""Quick checks of ``experiments/ch2_experiments.py`` (the data of chapter 02, whitening and the power method).

Small sizes only (a few seconds): the parts return the keys the chapter reads, and where two
computations should agree (the iterates and their closed form, the simulated and the exact
margin law, the per-component and the maximal eigenvector errors) they do. Nothing is written
to ``chapters/data``, and no timing is asserted.
"""
from __future__ import annotations

import numpy as np
import pytest
from scripts import load_script

pytest.importorskip("tensorly")


ch2 = load_script("experiments", "ch2_experiments")


def test_power_part_follows_the_closed_form_and_the_basins():
    out = ch2.power(quick=True)
    assert set(out) == {"lam", "quadratic", "basins", "deflation", "restarts"}
    q = out["quadratic"]
    assert max(q["dev"]) < 1e-12 and q["tan"][-1] < 1e-13
    tan = np.array(q["tan"])
    above = tan[:-1] > 1e-7
    assert np.all(tan[1:][above] <= q["ratio_bound"] * tan[:-1][above] ** 2 * (1 + 1e-9) + 1e-14)
    b = out["basins"]
    assert np.array_equal(b["landed"], b["winner"]) and b["tan_last_max"] <= b["tau"]
    assert b["tan_traced"].shape == (26, 8) and len(b["r0"]) == len(b["needed"]) == 200
    assert np.all((0 <= b["r0"]) & (b["r0"] <= 1))
    d = out["deflation"]
    assert d["top"] == np.argmax(out["lam"]) and d["share"][d["top"]] == 0
    assert abs(d["share"].sum() - 1) < 1e-12
    assert {(r["N"], r["L"]) for r in out["restarts"]["runs"]} == {(3, 1), (3, 10), (10, 1), (10, 10)}


def test_convergence_tensor_is_orthogonally_decomposable():
    T, lam, V, theta0, starts = ch2.convergence_tensor(n_starts=5)
    assert np.allclose(V.T @ V, np.eye(10)) and np.all(lam > 0)
    assert np.allclose(np.linalg.norm(starts, axis=1), 1) and abs(np.linalg.norm(theta0) - 1) < 1e-12
    assert np.allclose(np.einsum("ijl,j,l->i", T, V[:, 0], V[:, 0]), lam[0] * V[:, 0])


def test_noise_part_per_component_ratio_bounds_the_maximum():
    out = ch2.noise(**ch2.QUICK["noise"])
    for key in ("eps_S", "eps_F", "vec_err", "val_err", "R_S", "R_F", "first_order", "ratio_comp"):
        assert out[key].shape == (2, 1)
    assert np.all(out["eps_F"] >= out["eps_S"])          # Frobenius >= spectral norm
    # max_h err_h / (8 eps / lam_h) >= max_h err_h / (8 eps / lam_min)
    assert np.all(out["ratio_comp"] >= out["vec_err"] / (8 * out["eps_S"] / out["lam"].min()) - 1e-12)
    assert np.allclose(out["vec_err"] / out["first_order"], 1, atol=0.05)   # small noise: first order


def test_samples_eigengap_and_margin_parts():
    smp = ch2.samples(**ch2.QUICK["samples"])
    assert smp["errors_means"].shape == smp["errors_weights"].shape == (2, 2)
    assert smp["errors_means"][1].mean() < smp["errors_means"][0].mean()   # 10x the samples
    gap = ch2.eigengap(**ch2.QUICK["eigengap"])
    assert gap["power"].shape == gap["svd"].shape == (2, 2)
    assert gap["svd"][-1].mean() > gap["power"][-1].mean()
    mg = ch2.margin(**ch2.QUICK["margin"])
    q_exact = mg["q_exact_k2"]
    assert abs(mg["q"][0] - q_exact) < 4 * np.sqrt(q_exact * (1 - q_exact) / mg["n_draw"])
    assert mg["restarts"][1] > mg["restarts"][0] and mg["median_margin"][1] < mg["median_margin"][0]


def test_main_quick_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ch2.main(["margin", "eigengap", "--quick"])
    assert "nothing written" in capsys.readouterr().out
    assert not any(tmp_path.rglob("*.json"))
    with pytest.raises(SystemExit):
        ch2.main(["no-such-part"])
