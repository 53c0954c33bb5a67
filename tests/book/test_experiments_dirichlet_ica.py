"""Quick checks of ``experiments/dirichlet_ica_experiments.py`` (chapter 10): small sizes only,
nothing written to ``chapters/data``. The parts return the keys the chapter reads, and the rate
part's errors agree with a fit made here from the seeds its docstring documents."""
from __future__ import annotations

import warnings

import numpy as np
from scripts import load_script

import mvlib
from mvlib.core.metrics import match_columns, matched_error
from mvlib.lda import LDAModel

dx = load_script("experiments", "dirichlet_ica_experiments")


def test_rate_matches_a_direct_fit():
    out = dx.part_rate((300, 600), 2)
    err, alpha_err = np.asarray(out["topic_error"]), np.asarray(out["alpha_error"])
    assert err.shape == alpha_err.shape == (2, 2) and list(out["ns"]) == [300, 600]
    assert np.all((err > 0) & (err <= 2))             # l1 distance of two distributions
    # seed 1, second size, refitted from the documented seeds
    mu = np.random.default_rng(101).dirichlet(np.full(30, 0.2), size=3)
    X, _ = LDAModel(dx.ALPHA_TRUE, mu).sample(600, (3, 30), random_state=np.random.default_rng([1, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = mvlib.SpectralLDA(3, 1.0, random_state=1).fit(X)
    perm = match_columns(mu.T, fit.topic_word_.T)[0]
    assert err[1, 1] == np.abs(mu - fit.topic_word_[perm]).sum(axis=1).max()    # same seeds, same draws
    # bounds that do not depend on the matching: the matched Euclidean error, the nearest topic
    assert matched_error(mu.T, fit.topic_word_.T) <= err[1, 1] + 1e-12
    assert np.abs(mu[:, None] - fit.topic_word_[None]).sum(-1).min(1).max() <= err[1, 1] + 1e-12

def test_kernel_groups_keys():
    out = dx.part_kernel_groups(300, 1)
    assert set(out["error"]) == {"none", "1.0"} and len(out["alpha_sum"]) == 1
    assert all(e > 0 for e in out["error"]["none"] + out["error"]["1.0"])


def test_ica_parts_keys():
    fa = dx.part_fastica(1, 2000)
    assert list(fa["amari"]) == ["TensorICA", "FastICA logcosh", "FastICA cube"]
    assert all(0 <= a[0] <= 1 for a in fa["amari"].values())
    ga = dx.part_gaussian(1, 2000)
    assert set(ga["cases"]) == {"1", "2"}
    for case in ga["cases"].values():
        assert set(case) == {"leakage", "warned", "amari"} and isinstance(case["warned"][0], bool)
