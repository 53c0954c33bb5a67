"""Low-rank embeddings along a latent tree (mvlib.tree, chapter 8)."""
import numpy as np
import pytest
import tensorly as tl
from tensorly.decomposition import tensor_train
from threadpoolctl import threadpool_limits

import mvlib
from mvlib import LatentTreeEmbedding
from mvlib.tree import reshaping_errors, tt_embedding


@pytest.fixture(autouse=True)
def one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _random_case(rng):
    d = int(rng.integers(3, 7))
    shape = tuple(int(s) for s in rng.integers(2, 5, size=d))
    C = rng.standard_normal(shape)
    # a rank below the size of every reshaping, so every step truncates
    rows = np.cumprod(shape)[:-1]
    cols = np.prod(shape) // rows
    ranks = [int(rng.integers(1, min(r, c))) for r, c in zip(rows, cols)]
    return C, ranks


def test_theorem1_bound_in_100_random_cases():
    rng = np.random.default_rng(2024)
    for case in range(100):
        C, ranks = _random_case(rng)
        d = C.ndim
        tt, step = tt_embedding(C, ranks, return_errors=True)
        err = np.linalg.norm(C - tl.tt_to_tensor(tt))
        eps = reshaping_errors(C, ranks)
        assert eps.max() > 0
        assert err <= np.sqrt(d - 1) * eps.max() * (1 + 1e-12), case
        # the sharper facts behind it: squared step errors add up, each below ε_k
        assert np.isclose(err ** 2, np.sum(step ** 2), rtol=1e-9, atol=1e-12)
        assert np.all(step <= eps * (1 + 1e-9) + 1e-12)


def test_tt_embedding_matches_tensorly_tensor_train():
    rng = np.random.default_rng(1)
    C = rng.standard_normal((3, 4, 2, 3))
    ranks = [2, 3, 2]
    ours = tl.tt_to_tensor(tt_embedding(C, ranks))
    ref = tl.tt_to_tensor(tensor_train(C, [1] + ranks + [1]))
    np.testing.assert_allclose(ours, ref, atol=1e-10)
    tt = tt_embedding(C, ranks)
    assert [f.shape for f in tt.factors] == [(1, 3, 2), (2, 4, 3), (3, 2, 2), (2, 3, 1)]


def test_full_rank_chain_is_exact():
    C = np.random.default_rng(3).standard_normal((2, 3, 2))
    tt, step = tt_embedding(C, 10, return_errors=True)
    np.testing.assert_allclose(tl.tt_to_tensor(tt), C, atol=1e-12)
    assert np.all(step < 1e-12)


def test_latent_chain_has_low_rank_reshapings():
    # a hidden Markov chain with 2 states: every reshaping has rank 2
    rng = np.random.default_rng(4)
    k, m, d = 2, 3, 4
    pi = rng.dirichlet(np.ones(k))
    T = rng.dirichlet(np.ones(k), size=k)           # T[h, h'] = P(h' | h)
    O = rng.dirichlet(np.ones(m), size=k)           # O[h, x]
    P = np.einsum("a,ax->ax", pi, O)[..., None] * 0
    P = np.einsum("a,ab,bc,cd,aw,bx,cy,dz->wxyz", pi, T, T, T, O, O, O, O)
    np.testing.assert_allclose(P.sum(), 1.0)
    assert np.all(reshaping_errors(P, k) < 1e-12)
    assert np.all(reshaping_errors(P, k - 1) > 1e-6)


def _discrete_chain_sample(n, rng, m=3, d=4):
    h = np.zeros((n, d), int)
    h[:, 0] = rng.integers(0, 2, n)
    for j in range(1, d):
        flip = rng.random(n) < 0.2
        h[:, j] = np.where(flip, 1 - h[:, j - 1], h[:, j - 1])
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])[:, :m]
    probs = probs / probs.sum(1, keepdims=True)
    u = rng.random((n, d))[..., None]
    X = (u > np.cumsum(probs[h], axis=-1)).sum(-1)
    return X.astype(float)


@pytest.mark.parametrize("ranks", [[2, 2, 2], [1, 2, 3], [3, 2, 1]])
def test_delta_kernel_equals_explicit_decomposition(ranks):
    rng = np.random.default_rng(5)
    m, d, n = 3, 4, 300
    X = _discrete_chain_sample(n, rng, m, d)
    P = np.zeros((m,) * d)
    np.add.at(P, tuple(X.astype(int).T), 1.0 / n)
    model = LatentTreeEmbedding(ranks, kernel="delta").fit(X)
    explicit = tl.tt_to_tensor(tt_embedding(P, ranks))
    kernel = tl.tt_to_tensor(model.to_tt([np.arange(m)] * d))
    assert np.max(np.abs(kernel - explicit)) < 1e-8
    grid = np.stack(np.meshgrid(*[np.arange(m)] * d, indexing="ij"), -1).reshape(-1, d)
    assert np.max(np.abs(model.density(grid) - explicit.ravel())) < 1e-8
    # integral query: the whole table sums to what the low-rank table sums to
    lo, hi = np.full((1, d), -np.inf), np.full((1, d), np.inf)
    assert abs(model.box_probability(lo, hi)[0] - explicit.sum()) < 1e-8


def test_rbf_full_rank_is_the_product_kde_and_integrates():
    rng = np.random.default_rng(6)
    n, d, s = 60, 3, 0.5
    X = rng.standard_normal((n, d))
    with pytest.warns(mvlib.IllConditionedWarning, match="numerical rank"):
        model = LatentTreeEmbedding(n, bandwidth=s).fit(X)
    Xq = rng.standard_normal((5, d))
    diff = Xq[:, None, :] - X[None]
    kde = np.mean(np.prod(np.exp(-diff ** 2 / (2 * s * s)) / (np.sqrt(2 * np.pi) * s), -1), 1)
    np.testing.assert_allclose(model.density(Xq), kde, rtol=1e-6)
    # integral query over all of R^d: the total mass of the full-rank embedding is 1
    lo, hi = np.full((1, d), -np.inf), np.full((1, d), np.inf)
    assert abs(model.box_probability(lo, hi)[0] - 1.0) < 1e-6


def test_rank_one_rbf_density_is_product_of_marginals_scale():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((80, 3))
    model = LatentTreeEmbedding(1, bandwidth=0.6).fit(X)
    assert model.ranks_ == [1, 1]
    assert all(g.shape == (1, 80) for g in model.gammas_)
    assert np.isfinite(model.score(X))
    assert model.density(X).shape == (80,)


def test_views_list_and_random_state_free_determinism():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 3))
    a = LatentTreeEmbedding([2, 2], bandwidth=[0.5, 0.6, 0.7]).fit(X).density(X[:4])
    b = LatentTreeEmbedding([2, 2], bandwidth=[0.5, 0.6, 0.7]).fit(
        [X[:, [0]], X[:, [1]], X[:, [2]]]).density([X[:4, [0]], X[:4, [1]], X[:4, [2]]])
    np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("ranks, match", [
    (0, "ranks"), ([2, 0], r"ranks\[1\]"), ([2, 2, 2], "ranks must hold one rank"),
    (1.5, "ranks"), ("2", "ranks"), (200, "exceeds the number of samples"),
])
def test_bad_ranks(ranks, match):
    X = np.random.default_rng(9).standard_normal((30, 3))
    with pytest.raises((ValueError, TypeError), match=match):
        LatentTreeEmbedding(ranks).fit(X)


def test_bad_input():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((30, 3))
    with pytest.raises(ValueError, match="X\\[0\\] has 30 rows but X\\[1\\] has 29"):
        LatentTreeEmbedding(2).fit([X[:, [0]], X[:29, [1]], X[:, [2]]])
    with pytest.raises(ValueError, match="at least 2 variables"):
        LatentTreeEmbedding(1).fit(X[:, :1])
    with pytest.raises(ValueError, match="NaN"):
        LatentTreeEmbedding(2).fit(np.where(X > 1, np.nan, X))
    with pytest.raises(TypeError, match="X"):
        LatentTreeEmbedding(2).fit(None)
    with pytest.raises(ValueError, match="kernel"):
        LatentTreeEmbedding(2, kernel="laplace").fit(X)
    with pytest.raises(ValueError, match="bandwidth"):
        LatentTreeEmbedding(2, bandwidth=-1.0).fit(X)
    with pytest.raises(ValueError, match="bandwidth must hold one value per variable"):
        LatentTreeEmbedding(2, bandwidth=[1.0, 1.0]).fit(X)
    with pytest.raises(ValueError, match="jitter"):
        LatentTreeEmbedding(2, jitter=-1.0).fit(X)
    with pytest.raises(ValueError, match="not fitted"):
        LatentTreeEmbedding(2).density(X)
    model = LatentTreeEmbedding(2).fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but LatentTreeEmbedding is expecting 3"):
        model.density(X[:, :2])
    with pytest.raises(ValueError, match="lower must not exceed upper"):
        model.box_probability(np.ones((1, 3)), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="ranks"):
        tt_embedding(np.ones((2, 2, 2)), [1, 0])
    with pytest.raises(TypeError, match="C must be an array"):
        tt_embedding(None, 1)
    with pytest.raises(ValueError, match="at least 2 modes"):
        tt_embedding(np.ones(3), 1)
    with pytest.raises(ValueError, match="NaN"):
        reshaping_errors(np.full((2, 2), np.nan), 1)


def test_rank_above_the_alphabet_warns_but_stays_exact():
    rng = np.random.default_rng(12)
    X = _discrete_chain_sample(200, rng, 3, 3)
    P = np.zeros((3, 3, 3))
    np.add.at(P, tuple(X.astype(int).T), 1 / 200)
    with pytest.warns(mvlib.IllConditionedWarning, match=r"ranks\[0\]=5"):
        model = LatentTreeEmbedding([5, 2], kernel="delta").fit(X)
    table = tl.tt_to_tensor(model.to_tt([np.arange(3)] * 3))
    ref = tl.tt_to_tensor(tt_embedding(P, [3, 2]))
    assert np.max(np.abs(table - ref)) < 1e-6


def test_cholesky_failure_is_reported():
    # an indefinite "Gram matrix" cannot come from a kernel, but a zero jitter on an
    # exactly singular delta-kernel Gram matrix makes the factorisation fail
    X = np.zeros((20, 3))
    X[10:, :] = 1.0
    with pytest.raises(ValueError, match="Cholesky factorisation of the Gram matrix of step 1"):
        LatentTreeEmbedding(1, kernel="delta", jitter=0.0).fit(X)


def test_input_not_modified_and_exports():
    X = np.random.default_rng(11).standard_normal((25, 3))
    X0 = X.copy()
    LatentTreeEmbedding(2, bandwidth="silverman").fit(X).density(X)
    np.testing.assert_array_equal(X, X0)
    for name in ("LatentTreeEmbedding", "tt_embedding", "reshaping_errors"):
        assert name in mvlib.__all__


def test_sklearn_style_params():
    model = LatentTreeEmbedding([2, 3], kernel="delta")
    assert model.get_params()["ranks"] == [2, 3]
    assert repr(model).startswith("LatentTreeEmbedding(") and "ranks=[2, 3]" in repr(model)
    assert model.set_params(jitter=1e-8).jitter == 1e-8


@pytest.mark.parametrize("s", [1e-100, 2.0 ** -150, 1e-50, 1e50, 2.0 ** 170, 1e100])
def test_latent_tree_embedding_is_scale_free(s):
    """Data and bandwidth multiplied by s: densities scale by s**-D, scores shift by -D log s,
    box probabilities and TT tables (times s**D) are unchanged; the floor does not bite."""
    rng = np.random.default_rng(3)
    h = rng.integers(0, 2, size=300)
    X = np.column_stack([h + 0.3 * rng.standard_normal(300) for _ in range(3)])
    ref = LatentTreeEmbedding([2, 2], bandwidth=0.4).fit(X)
    got = LatentTreeEmbedding([2, 2], bandwidth=0.4 * s).fit(X * s)
    D = X.shape[1]
    np.testing.assert_allclose(got.density(X[:20] * s) * s ** D, ref.density(X[:20]), rtol=1e-9)
    np.testing.assert_allclose(got.score_samples(X[:20] * s) + D * np.log(s), ref.score_samples(X[:20]),
                               rtol=1e-9)
    lo, hi = np.full((1, D), -np.inf), np.column_stack([[0.5], [np.inf], [np.inf]])
    np.testing.assert_allclose(got.box_probability(lo * s, hi * s), ref.box_probability(lo, hi), rtol=1e-9)
    np.testing.assert_allclose(got.bandwidths_, ref.bandwidths_ * s, rtol=1e-15)
    grid = [np.linspace(-1, 2, 4)] * D
    import tensorly as tl
    np.testing.assert_allclose(tl.tt_to_tensor(got.to_tt([g * s for g in grid])) * s ** D,
                               tl.tt_to_tensor(ref.to_tt(grid)), rtol=1e-9, atol=1e-12)


def test_latent_tree_embedding_ordinary_scale_untouched():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 3))
    model = LatentTreeEmbedding([2, 2], bandwidth=0.5).fit(X)
    assert model._exponents == [0, 0, 0] and model._density_exponent == 0


def test_latent_tree_embedding_density_out_of_range_is_named():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 3))
    model = LatentTreeEmbedding([2, 2], bandwidth=0.5 * 1e150).fit(X * 1e150)   # density ~ 1e-450
    with pytest.raises(ValueError, match="scale of X is so extreme"):
        model.density(X[:3] * 1e150)
    assert np.all(np.isfinite(model.score_samples(X[:3] * 1e150)))               # log density is fine
