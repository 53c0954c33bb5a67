"""mvlib.book: the helpers the chapters and scripts share, and the spherical GMM sampler they use."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mvlib.book import data_path, load_data, loglog_slope, mean_sd, rounded, timed, write_json
from mvlib.gmm import SphericalGMMModel


def test_rounded_makes_json_ready_numbers():
    obj = {"a": np.float32(1.23456789), "b": [np.int64(4), np.inf, (0.5, np.bool_(True))],
           "c": np.arange(3.0)}
    out = rounded(obj, 3)
    assert out == {"a": 1.235, "b": [4, None, [0.5, True]], "c": [0.0, 1.0, 2.0]}
    json.dumps(out)  # no NumPy type left


def test_write_json_and_load_data_round_trip(tmp_path):
    path = write_json({"x": np.float64(1 / 3)}, tmp_path / "data" / "f.json", digits=4)
    assert load_data("f.json", directory=tmp_path / "data") == {"x": 0.3333}
    assert path.read_text().endswith("\n")
    with pytest.raises(FileNotFoundError, match="experiments/"):
        load_data("missing.json", directory=tmp_path)


def test_data_path_finds_the_chapters_folder_from_a_script_folder(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "experiments").mkdir()
    assert data_path("a.json", root=tmp_path / "experiments") == tmp_path / "chapters" / "data" / "a.json"
    assert data_path("a.json", root=tmp_path) == tmp_path / "chapters" / "data" / "a.json"


def test_small_statistics():
    n = np.array([1e2, 1e3, 1e4])
    assert loglog_slope(n, 3 * n**-0.5) == pytest.approx(-0.5, abs=1e-12)
    assert mean_sd(np.array([1.0, 3.0]), ".1f") == "2.0 ± 1.0"
    out, seconds = timed(sum, [1, 2, 3])
    assert out == 6 and seconds >= 0


def test_spherical_gmm_sampler_matches_its_population_moments():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((5, 3))
    model = SphericalGMMModel([0.2, 0.3, 0.5], M, [0.5, 1.0, 1.5])
    X, h = model.sample(200_000, random_state=1)
    assert X.shape == (200_000, 5) and np.bincount(h).sum() == 200_000
    assert np.abs(X.mean(axis=0) - model.mean()).max() < 0.02
    cov = np.cov(X.T, bias=True)
    mu = model.mean()
    # E[x x^T] = M2 + sigma2_bar I
    assert np.abs(cov + np.outer(mu, mu) - model.second_moment() - model.sigma2_bar * np.eye(5)).max() < 0.05
    # same generator state, same draws (the chapters pass a Generator)
    a, _ = model.sample(10, np.random.default_rng(7))
    b, _ = model.sample(10, np.random.default_rng(7))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("kwargs, match", [
    (dict(weights=[0.5, 0.6], means=np.zeros((2, 2)), sigmas=[1, 1]), "sum to 1"),
    (dict(weights=[0.5, 0.5], means=np.zeros((2, 3)), sigmas=[1, 1]), "means"),
    (dict(weights=[0.5, 0.5], means=np.zeros((2, 2)), sigmas=[1, 1, 1]), "one entry per component"),
    (dict(weights=[0.5, 0.5], means=np.zeros((2, 2)), sigmas=[1, 0]), "positive"),
])
def test_spherical_gmm_model_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SphericalGMMModel(**kwargs)


@pytest.mark.parametrize("module", ["mvlib.book._runs", "mvlib.book._display", "mvlib.gmm._model"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_rounded_with_digits_none_keeps_every_float():
    values = [1 / 3, 1.234e-300, 2.5e-8, np.float64(123456.789)]
    assert rounded(values, None) == [float(v) for v in values]
    assert json.loads(json.dumps(rounded(values, None))) == [float(v) for v in values]
