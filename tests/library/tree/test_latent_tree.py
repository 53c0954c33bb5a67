"""Decomposition of a joint table along the edges of a general latent tree (mvlib.tree)."""
import itertools

import numpy as np
import pytest
import tensorly as tl
from threadpoolctl import threadpool_limits

from mvlib.tree import (LatentTree, LatentTreeModel, binary_tree, chain_ranks, edge_errors,
                        random_tree, edge_ranks, random_latent_tree_model, tree_decomposition)
from mvlib import IllConditionedWarning, LatentTreeEmbedding
from mvlib.tree import reshaping_errors


@pytest.fixture(autouse=True)
def one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _random_tree(rng, n_leaves, max_states=3):
    return random_tree(n_leaves, max_states, random_state=rng)


def _caterpillar(d, k=2):
    """Hidden h_1 over leaves 0, 1; h_j over h_{j-1} and leaf j: the chain of prefixes."""
    parent = [-1] * d
    parent[0] = parent[1] = d
    parent.append(-1)
    for j in range(2, d):
        parent.append(-1)
        parent[j] = parent[len(parent) - 2] = len(parent) - 1
    return LatentTree(parent, k)


# ------------------------------------------------------------------------ exactness
def test_binary_tree_structure():
    t = binary_tree(8)
    assert t.leaves == tuple(range(8)) and t.hidden == tuple(range(8, 15)) and t.root == 14
    assert t.children[14] == (12, 13) and t.children[12] == (8, 9)
    assert len(t.edges) == 14
    assert binary_tree(5).n_leaves == 5


@pytest.mark.parametrize("seed", range(5))
def test_eight_leaf_binary_tree_exact_at_true_ranks(seed):
    model = random_latent_tree_model(binary_tree(8), 3, random_state=seed)
    P = model.joint_table()                       # brute force over the 2**7 hidden configurations
    assert abs(P.sum() - 1) < 1e-12 and P.min() >= 0
    net, delta = tree_decomposition(P, model.tree, return_errors=True)
    assert net.ranks == [2] * 14
    assert np.max(np.abs(net.contract() - P)) < 1e-10
    assert np.all(delta < 1e-12)
    # far fewer numbers than the table
    assert net.n_parameters < P.size / 10
    # one rank too few at every edge is not exact
    low = tree_decomposition(P, model.tree, 1).contract()
    assert np.max(np.abs(low - P)) > 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_random_branching_trees_exact_at_true_ranks(seed):
    rng = np.random.default_rng(100 + seed)
    tree = _random_tree(rng, int(rng.integers(3, 7)))
    n_symbols = [int(m) for m in rng.integers(2, 4, size=tree.n_leaves)]
    model = random_latent_tree_model(tree, n_symbols, random_state=rng)
    P = model.joint_table()
    net = tree_decomposition(P, tree)             # ranks = hidden states at each edge
    assert np.max(np.abs(net.contract() - P)) < 1e-10
    assert all(r <= b for r, b in zip(edge_ranks(P, tree), tree.edge_states()))
    assert np.all(edge_errors(P, tree) < 1e-12)


def test_chain_ranks_double_where_tree_ranks_do_not():
    model = random_latent_tree_model(binary_tree(8), 3, random_state=7)
    P = model.joint_table()
    assert chain_ranks(P) == [2, 2, 4, 2, 4, 2, 2]
    assert edge_ranks(P, model.tree) == [2] * 14
    # the tensor train needs rank 4 at the prefixes {1,2,3} and {1,..,5}: rank 2 there is not exact
    assert np.all(reshaping_errors(P, [2, 2, 4, 2, 4, 2, 2]) < 1e-12)
    eps = reshaping_errors(P, 2)
    assert eps[2] > 1e-8 and eps[4] > 1e-8


def test_star_tree_and_mixed_states_exact():
    tree = LatentTree([4, 4, 4, 4, -1], 3)       # one hidden node: a Tucker format
    model = random_latent_tree_model(tree, [4, 3, 5, 4], random_state=3)
    P = model.joint_table()
    net = tree_decomposition(P, tree)
    assert net.cores[4].shape == (3, 3, 3, 3) and net.cores[0].shape == (4, 3)
    np.testing.assert_allclose(net.contract(), P, atol=1e-12)
    tree = LatentTree([5, 5, 6, 6, 6, 7, 7, -1], [2, 3, 4])   # hidden 5 (2), 6 (3), root 7 (4)
    model = random_latent_tree_model(tree, 3, random_state=4)
    P = model.joint_table()
    assert tree.edge_states() == [2, 2, 3, 3, 3, 2, 3]
    np.testing.assert_allclose(tree_decomposition(P, tree).contract(), P, atol=1e-12)


def test_caterpillar_tree_edges_hold_the_chain_reshapings():
    rng = np.random.default_rng(5)
    C = rng.standard_normal((2, 3, 2, 3, 2))
    tree = _caterpillar(5)
    prefix_edges = [tree.edges.index((0, 5))] + [tree.edges.index((h, h + 1)) for h in (5, 6, 7)]
    assert [tree.edge_splits()[e] for e in prefix_edges] == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3]]
    eps = edge_errors(C, tree, 2)
    np.testing.assert_allclose(eps[prefix_edges], reshaping_errors(C, 2), rtol=1e-10)


# ------------------------------------------------------------------------ Theorem 1
def test_theorem1_along_edges_in_random_cases():
    rng = np.random.default_rng(2026)
    nontrivial = 0
    for case in range(60):
        tree = _random_tree(rng, int(rng.integers(3, 7)))
        shape = tuple(int(m) for m in rng.integers(2, 4, size=tree.n_leaves))
        if case % 2:   # a latent tree table plus noise
            model = random_latent_tree_model(tree, list(shape), random_state=rng)
            C = model.joint_table() + 1e-3 * rng.standard_normal(shape) / np.sqrt(np.prod(shape))
            ranks = None
        else:          # an arbitrary table, random ranks
            C = rng.standard_normal(shape)
            ranks = [int(r) for r in rng.integers(1, 4, size=len(tree.edges))]
        net, delta = tree_decomposition(C, tree, ranks, return_errors=True)
        err = np.linalg.norm(C - net.contract())
        eps = edge_errors(C, tree, ranks)
        nontrivial += eps.max() > 1e-8
        tiny = 1e-13 * np.linalg.norm(C)   # rounding when no edge truncates anything
        assert err <= np.sqrt(len(tree.edges)) * eps.max() * (1 + 1e-10) + tiny, case
        # the sharper facts behind it: squared step errors add up, each below ε_e
        assert np.isclose(err ** 2, np.sum(delta ** 2), rtol=1e-9, atol=tiny ** 2), case
        assert np.all(delta <= eps * (1 + 1e-9) + tiny), case
        assert err <= np.sqrt(np.sum(eps ** 2)) * (1 + 1e-9) + tiny, case
    assert nontrivial >= 40   # most cases truncate something


def test_cores_are_orthonormal():
    rng = np.random.default_rng(8)
    tree = _random_tree(rng, 6)
    C = rng.standard_normal((2, 3, 2, 3, 2, 2))
    net = tree_decomposition(C, tree, 2)
    for v in range(tree.n_nodes):
        if v != tree.root:
            G = net.cores[v].reshape(-1, net.cores[v].shape[-1])
            np.testing.assert_allclose(G.T @ G, np.eye(G.shape[1]), atol=1e-12)


def test_extreme_scale_is_exact_up_to_scale():
    model = random_latent_tree_model(binary_tree(4), 2, random_state=9)
    P = model.joint_table()
    for s in (2.0 ** -900, 2.0 ** 900):
        net, delta = tree_decomposition(P * s, model.tree, 1, return_errors=True)
        ref, dref = tree_decomposition(P, model.tree, 1, return_errors=True)
        np.testing.assert_allclose(net.contract() / s, ref.contract(), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(delta / s, dref, rtol=1e-12)


# ---------------------------------------------------------------------------- model
def test_sampling_matches_the_joint_table():
    tree = LatentTree([3, 3, 4, 4, -1], 2)
    model = random_latent_tree_model(tree, 2, random_state=11)
    X = model.sample(200_000, random_state=12)
    assert X.shape == (200_000, 3) and X.dtype.kind == "i"
    emp = np.zeros(model.n_symbols)
    np.add.at(emp, tuple(X.T), 1.0)
    assert np.max(np.abs(emp / X.shape[0] - model.joint_table())) < 0.006


def test_joint_table_of_given_tables():
    # root r (2 states) over leaves 0, 1: P(x0, x1) = sum_h pi_h A[h, x0] B[h, x1]
    pi = np.array([0.3, 0.7])
    A = np.array([[0.9, 0.1], [0.2, 0.8]])
    B = np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])
    P = LatentTreeModel(LatentTree([2, 2, -1], 2), pi, [A, B]).joint_table()
    assert P[0, 2] == pytest.approx(0.3 * 0.9 * 0.25 + 0.7 * 0.2 * 0.8)
    assert P.shape == (2, 3)


# ------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("parent, n_states, exc, match", [
    ("abc", 2, TypeError, "parent"),
    ([2, 2], 2, ValueError, "at least 3"),
    ([2, 2, 4, -1], 2, ValueError, "parent\\[2\\]=4"),
    ([2, 2, 2], 2, ValueError, "parent\\[2\\]=2"),
    ([2, 2, -1, -1], 2, ValueError, "exactly one root"),
    ([1, 0, -1, 2], 2, ValueError, "cycle through node 0"),
    ([2, 2, 1.0], 2, TypeError, "parent\\[2\\]"),
    ([2, 2, -1], [2, 2], ValueError, "one number per hidden node"),
    ([2, 2, -1], 0, ValueError, "n_states\\[0\\]"),
    ([2, 2, -1], 2.5, TypeError, "n_states"),
    ([1, 2, -1], 2, ValueError, "at least 2 leaves"),
])
def test_bad_trees(parent, n_states, exc, match):
    with pytest.raises(exc, match=match):
        LatentTree(parent, n_states)


def test_bad_decomposition_input():
    tree = binary_tree(4)
    P = random_latent_tree_model(tree, 2, random_state=0).joint_table()
    with pytest.raises(ValueError, match="C has 3 modes but the tree has 4 leaves"):
        tree_decomposition(P.sum(axis=0), tree)
    with pytest.raises(ValueError, match="one rank per edge of the tree \\(6\\)"):
        tree_decomposition(P, tree, [2, 2, 2])
    with pytest.raises(ValueError, match="ranks\\[1\\]=0"):
        tree_decomposition(P, tree, [2, 0, 2, 2, 2, 2])
    with pytest.raises(TypeError, match="ranks\\[0\\]"):
        tree_decomposition(P, tree, [2.0] * 6)
    with pytest.raises(TypeError, match="ranks must be"):
        tree_decomposition(P, tree, "2")
    with pytest.raises(TypeError, match="tree must be a LatentTree"):
        tree_decomposition(P, [4, 4, 5, 5, 6, 6, -1])
    bad = P.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="C"):
        tree_decomposition(bad, tree)
    with pytest.raises(ValueError, match="C has 4 modes but the tree has 8 leaves"):
        edge_ranks(P, binary_tree(8))
    with pytest.raises(ValueError, match="tol"):
        edge_ranks(P, tree, tol=-1.0)
    with pytest.raises(ValueError, match="at least 2 modes"):
        chain_ranks(np.ones(3))


def test_bad_models():
    tree = LatentTree([2, 2, -1], 2)
    A = np.array([[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(ValueError, match="root_prior has 3 entries"):
        LatentTreeModel(tree, [0.2, 0.3, 0.5], [A, A])
    with pytest.raises(ValueError, match="rows of conditionals\\[1\\] must sum to 1"):
        LatentTreeModel(tree, [0.5, 0.5], [A, A * 0.5])
    with pytest.raises(ValueError, match="conditionals\\[0\\] has negative"):
        LatentTreeModel(tree, [0.5, 0.5], [np.array([[1.5, -0.5], [0.5, 0.5]]), A])
    with pytest.raises(ValueError, match="one table per edge \\(2\\)"):
        LatentTreeModel(tree, [0.5, 0.5], [A])
    with pytest.raises(ValueError, match="conditionals\\[0\\] has 3 rows"):
        LatentTreeModel(tree, [0.5, 0.5], [np.full((3, 2), 0.5), A])
    deep = LatentTree([3, 3, 4, 4, -1], 2)
    with pytest.raises(ValueError, match="hidden node 3 has 2 states"):
        LatentTreeModel(deep, [0.5, 0.5], [A, A, A, np.full((2, 3), 1 / 3)])
    with pytest.raises(ValueError, match="one alphabet size per leaf \\(3\\)"):
        random_latent_tree_model(deep, [2, 2])
    with pytest.raises(ValueError, match="concentration"):
        random_latent_tree_model(deep, 2, concentration=0.0)
    with pytest.raises(TypeError, match="random_state"):
        random_latent_tree_model(deep, 2, random_state="x")
    with pytest.raises(ValueError, match="n_samples=0"):
        random_latent_tree_model(deep, 2, random_state=0).sample(0)


def test_random_tree_shapes_and_bad_input():
    t = random_tree(6, 3, random_state=0)
    assert t.n_leaves == 6 and all(1 <= k <= 3 for k in t.states.values())
    assert all(2 <= len(t.children[h]) <= 3 for h in t.hidden)
    assert random_tree(6, 3, random_state=0).parent == t.parent
    with pytest.raises(ValueError, match="n_leaves"):
        random_tree(1)


# ------------------------------------------------- Algorithm 3 along a tree (the estimator)
def _population(tree, n_symbols, seed):
    """Every cell of the generating model's joint table as a row, its probability as weight."""
    model = random_latent_tree_model(tree, n_symbols, random_state=seed)
    P = model.joint_table()
    X = np.array(list(itertools.product(*[range(m) for m in P.shape])), dtype=float)
    return P, X, P[tuple(X.astype(int).T)]


def test_kernel_tree_decomposes_a_branching_tree_exactly_from_its_population():
    # 8-leaf binary tree, 2-state hidden nodes: the edge ranks are 2, some prefix ranks 4
    tree = binary_tree(8, 2)
    P, X, w = _population(tree, 2, 0)
    assert max(chain_ranks(P)) == 4
    est = LatentTreeEmbedding(None, kernel="delta", tree=tree).fit(X, sample_weight=w)
    assert est.ranks_ == [2] * len(tree.edges)
    # against the brute-force population table (no factorisation involved)
    assert np.max(np.abs(est.to_network([np.arange(2)] * 8).contract() - P)) <= 1e-8
    assert np.max(np.abs(est.density(X) - w)) <= 1e-8
    lo, hi = np.full((1, 8), -np.inf), np.full((1, 8), np.inf)
    assert abs(est.box_probability(lo, hi)[0] - 1.0) <= 1e-8
    # the chain at the same rank 2 cannot represent it
    chain = LatentTreeEmbedding(2, kernel="delta").fit(X, sample_weight=w)
    assert np.max(np.abs(tl.tt_to_tensor(chain.to_tt([np.arange(2)] * 8)) - P)) > 1e-5


@pytest.mark.parametrize("ranks", [None, 2, [1, 2, 3, 2, 3, 1, 2, 3, 2]])
def test_kernel_tree_equals_explicit_tree_decomposition_on_a_sample(ranks):
    tree = LatentTree([6, 6, 7, 7, 8, 8, 9, 9, 9, -1], [3, 3, 3, 2])
    X = random_latent_tree_model(tree, 3, random_state=1).sample(500, random_state=2)
    P = np.zeros((3,) * 6)
    np.add.at(P, tuple(X.T), 1.0 / 500)
    est = LatentTreeEmbedding(ranks, kernel="delta", tree=tree).fit(X.astype(float))
    explicit = tree_decomposition(P, tree, ranks).contract()
    assert np.max(np.abs(est.to_network([np.arange(3)] * 6).contract() - explicit)) < 1e-8


def test_kernel_tree_rbf_full_rank_is_the_product_kde():
    tree = LatentTree([4, 4, 5, 5, 6, 6, -1], 2)      # 4 leaves, hidden 4, 5 under root 6
    rng = np.random.default_rng(6)
    n, s = 30, 0.5
    X = rng.standard_normal((n, 4))
    with pytest.warns(IllConditionedWarning, match="numerical rank"):
        est = LatentTreeEmbedding(n, bandwidth=s, tree=tree).fit(X)
    Xq = rng.standard_normal((5, 4))
    diff = Xq[:, None, :] - X[None]
    kde = np.mean(np.prod(np.exp(-diff ** 2 / (2 * s * s)) / (np.sqrt(2 * np.pi) * s), -1), 1)
    np.testing.assert_allclose(est.density(Xq), kde, rtol=1e-6)
    lo, hi = np.full((1, 4), -np.inf), np.full((1, 4), np.inf)
    assert abs(est.box_probability(lo, hi)[0] - 1.0) < 1e-6


def test_kernel_tree_rbf_low_rank_on_gaussian_leaves():
    # a branching tree with Gaussian leaves: at the true edge ranks the RBF tree embedding
    # integrates to about 1, and its density on a grid equals to_network's contraction
    tree = binary_tree(4, 2)
    model = random_latent_tree_model(tree, 2, concentration=0.5, random_state=3)
    rng = np.random.default_rng(4)
    X = 3.0 * model.sample(400, random_state=5) + 0.4 * rng.standard_normal((400, 4))
    est = LatentTreeEmbedding(None, bandwidth=0.4, tree=tree).fit(X)
    lo, hi = np.full((1, 4), -np.inf), np.full((1, 4), np.inf)
    assert abs(est.box_probability(lo, hi)[0] - 1.0) < 0.05
    grid = [np.linspace(-1, 4, 6)] * 4
    pts = np.stack(np.meshgrid(*grid, indexing="ij"), -1).reshape(-1, 4)
    np.testing.assert_allclose(est.to_network(grid).contract().ravel(), est.density(pts),
                               rtol=1e-10, atol=1e-14)


def test_sample_weights_equal_repeated_rows_and_are_checked():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 3, size=(40, 4)).astype(float)
    rep = np.repeat(X, 2, axis=0)
    w = np.ones(80)
    a = LatentTreeEmbedding(2, kernel="delta").fit(rep)
    b = LatentTreeEmbedding(2, kernel="delta").fit(X, sample_weight=np.full(40, 2.0))
    np.testing.assert_allclose(a.density(X), b.density(X), atol=1e-10)
    with pytest.raises(ValueError, match="sample_weight has 3 entries"):
        LatentTreeEmbedding(2, kernel="delta").fit(X, sample_weight=w[:3])
    with pytest.raises(ValueError, match="non-negative"):
        LatentTreeEmbedding(2, kernel="delta").fit(X, sample_weight=-w[:40])
    with pytest.raises(ValueError, match="tree has 8 leaves but X holds 4 variables"):
        LatentTreeEmbedding(None, kernel="delta", tree=binary_tree(8)).fit(X)
    with pytest.raises(TypeError, match="tree must be"):
        LatentTreeEmbedding(2, kernel="delta", tree=[3, 3, -1]).fit(X)
    with pytest.raises(ValueError, match="ranks=None needs a tree"):
        LatentTreeEmbedding(None, kernel="delta").fit(X)
    chain = LatentTreeEmbedding(2, kernel="delta").fit(X)
    with pytest.raises(ValueError, match="use to_tt"):
        chain.to_network([np.arange(3)] * 4)
    tree = LatentTreeEmbedding(2, kernel="delta", tree=binary_tree(4)).fit(X)
    with pytest.raises(ValueError, match="use to_network"):
        tree.to_tt([np.arange(3)] * 4)
