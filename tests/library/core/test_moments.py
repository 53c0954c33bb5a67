import numpy as np
import pytest
import scipy.sparse as sp

import mvlib
from mvlib.multiview import random_multiview_model


@pytest.fixture
def views(rng):
    n = 3000
    return [rng.standard_normal((n, d)) for d in (6, 5, 4)]


def test_pairs_and_triples_match_definitions(views):
    X1, X2, X3 = views
    n = X1.shape[0]
    np.testing.assert_allclose(mvlib.pairs(X1, X2), X1.T @ X2 / n, rtol=1e-12)
    dense = np.einsum("ni,nj,nl->ijl", X1, X2, X3) / n
    np.testing.assert_allclose(mvlib.triples(X1, X2, X3), dense, atol=1e-13)
    eta = np.arange(1.0, 5.0)
    np.testing.assert_allclose(mvlib.triples_slice(X1, X2, X3, eta), np.einsum("ijl,l->ij", dense, eta), atol=1e-12)


def test_whitened_triples_equals_dense_moment(views, rng):
    X1, X2, X3 = views
    Ws = [rng.standard_normal((X.shape[1], k)) for X, k in zip(views, (3, 2, 4))]
    got = mvlib.whitened_triples(X1, X2, X3, *Ws)
    assert got.shape == (3, 2, 4)
    want = mvlib.multilinear(mvlib.triples(X1, X2, X3), *Ws)
    np.testing.assert_allclose(got, want, atol=1e-10, rtol=0)
    assert np.max(np.abs(got - want)) < 1e-10


def test_whitened_triples_streams_in_chunks(rng, monkeypatch):
    # more rows than one chunk: same answer as with a huge chunk
    X = [rng.standard_normal((20000, 5)) for _ in range(3)]
    W = [rng.standard_normal((5, 3)) for _ in range(3)]
    got = mvlib.whitened_triples(*X, *W)
    monkeypatch.setattr(mvlib.core.moments, "_CHUNK", 10 ** 9)
    np.testing.assert_allclose(got, mvlib.whitened_triples(*X, *W), atol=1e-12)


def test_sparse_input_gives_same_moments(rng):
    dense = [(rng.random((500, 8)) < 0.2).astype(float) * rng.integers(1, 4, (500, 8)) for _ in range(3)]
    sparse = [sp.csr_matrix(X) for X in dense]
    W = [rng.standard_normal((8, 3)) for _ in range(3)]
    np.testing.assert_allclose(mvlib.pairs(*sparse[:2]), mvlib.pairs(*dense[:2]), atol=1e-13)
    np.testing.assert_allclose(mvlib.whitened_triples(*sparse, *W), mvlib.whitened_triples(*dense, *W), atol=1e-12)
    np.testing.assert_allclose(mvlib.triples_slice(*sparse, np.ones(8)), mvlib.triples_slice(*dense, np.ones(8)), atol=1e-13)


def test_inputs_not_modified(views, rng):
    copies = [X.copy() for X in views]
    W = [rng.standard_normal((X.shape[1], 2)) for X in views]
    mvlib.whitened_triples(*views, *W)
    mvlib.pairs(views[0], views[1])
    for X, C in zip(views, copies):
        np.testing.assert_array_equal(X, C)


@pytest.mark.parametrize("n_batches", [1, 2, 7])
def test_merged_accumulators_equal_one_shot(views, rng, n_batches):
    X1, X2, X3 = views
    Ws = tuple(rng.standard_normal((X.shape[1], 3)) for X in views)
    bounds = np.linspace(0, X1.shape[0], n_batches + 1).astype(int)
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        parts.append(mvlib.MomentAccumulator(Ws).update(X1[a:b], X2[a:b], X3[a:b]))
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    assert merged.n_samples_ == X1.shape[0]
    np.testing.assert_allclose(merged.whitened_triples(), mvlib.whitened_triples(X1, X2, X3, *Ws), atol=1e-12)
    np.testing.assert_allclose(merged.pairs(1, 2), mvlib.pairs(X1, X2), atol=1e-12)
    np.testing.assert_allclose(merged.pairs(3, 1), mvlib.pairs(X3, X1), atol=1e-12)
    np.testing.assert_allclose(merged.mean(2), X2.mean(axis=0), atol=1e-13)
    # sequential updates of one accumulator agree as well
    seq = mvlib.MomentAccumulator(Ws)
    for a, b in zip(bounds[:-1], bounds[1:]):
        seq.update(X1[a:b], X2[a:b], X3[a:b])
    np.testing.assert_allclose(seq.whitened_triples(), merged.whitened_triples(), atol=1e-12)
    # merging does not change its operands
    before = parts[0].whitened_triples().copy()
    parts[0] + parts[-1]
    np.testing.assert_array_equal(parts[0].whitened_triples(), before)


def test_accumulator_errors(views, rng):
    acc = mvlib.MomentAccumulator()
    with pytest.raises(ValueError, match="no samples"):
        acc.pairs(1, 2)
    acc.update(*views)
    with pytest.raises(ValueError, match="whiteners"):
        acc.whitened_triples()
    with pytest.raises(ValueError, match="earlier batches"):
        acc.update(views[0][:, :3], views[1], views[2])
    with pytest.raises(ValueError, match="different views"):
        acc.pairs(2, 2)
    other = mvlib.MomentAccumulator(tuple(rng.standard_normal((X.shape[1], 2)) for X in views))
    with pytest.raises(ValueError, match="different whiteners"):
        acc.merge(other)
    with pytest.raises(TypeError, match="MomentAccumulator"):
        acc.merge(3)


def test_empirical_moments_converge_to_population():
    model = random_multiview_model(3, (5, 6, 7), kind="categorical", random_state=0)
    errs = []
    for n in (1000, 100000):
        (X1, X2, X3), _ = model.sample(n, random_state=1)
        errs.append(np.abs(mvlib.triples(X1, X2, X3) - model.triples()).max())
    assert errs[1] < errs[0] / 4  # 1/sqrt(n): a factor 10 expected, 4 is safe
    (X1, X2, X3), _ = model.sample(200000, random_state=2)
    np.testing.assert_allclose(mvlib.pairs(X1, X3), model.pairs(1, 3), atol=5e-3)


@pytest.mark.parametrize(
    "args,exc,match",
    [
        (lambda X: (X[0], X[1][:-1], X[2]), ValueError, "X1 has 3000 rows but X2 has 2999"),
        (lambda X: (X[0][:, 0], X[1], X[2]), ValueError, "X1 must be 2-dimensional"),
        (lambda X: (None, X[1], X[2]), TypeError, "X1 must be an array of numbers, got None"),
        (lambda X: ([["a", "b"]], X[1], X[2]), TypeError, "X1 must hold real numbers"),
        (lambda X: (np.where(X[0] > 2, np.nan, X[0]), X[1], X[2]), ValueError, "X1 contains NaN"),
        (lambda X: (X[0], np.where(X[1] > 2, np.inf, X[1]), X[2]), ValueError, "X2 contains NaN or infinity"),
        (lambda X: (X[0][:0], X[1][:0], X[2][:0]), ValueError, "X1 has 0 rows"),
    ],
)
def test_bad_views(views, rng, args, exc, match):
    W = [rng.standard_normal((X.shape[1], 2)) for X in views]
    with pytest.raises(exc, match=match):
        mvlib.whitened_triples(*args(views), *W)


def test_bad_whiteners(views, rng):
    W = [rng.standard_normal((X.shape[1], 2)) for X in views]
    with pytest.raises(ValueError, match="W2 has 4 rows but X2 has 5 columns"):
        mvlib.whitened_triples(*views, W[0], W[1][:4], W[2])
    with pytest.raises(ValueError, match="W3 contains NaN"):
        mvlib.whitened_triples(*views, W[0], W[1], W[2] * np.nan)


def test_dense_triples_refuse_huge_dimensions(rng):
    X = np.zeros((2, 600))
    with pytest.raises(ValueError, match="whitened_triples"):
        mvlib.triples(X, X, X)
