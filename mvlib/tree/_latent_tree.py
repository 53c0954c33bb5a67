r"""Low-rank decomposition of a joint table along the edges of a general latent tree.

A latent tree model has observed variables at its leaves and hidden discrete variables
at its internal nodes. Removing an edge (v, parent(v)) splits the leaves into those under
v, :math:`\mathcal J_1`, and the others, :math:`\mathcal J_2`; both sides are independent
given the hidden variable(s) at that edge, so the reshaping
:math:`\mathcal C_{\mathcal J_1;\mathcal J_2}` of the joint table has rank at most the
number of hidden states there (Song & Dai 2013, Section 3 and Theorem 1, which are stated
for the edges of the tree). A chain of prefix reshapings
:math:`\mathcal C_{X_{1:k};X_{k+1:d}}` (the tensor train of :mod:`mvlib.tree`) does not
follow the edges of a branching tree: on the 8-leaf binary tree with 2-state hidden nodes
the prefix {X_1, X_2, X_3} is separated from the rest only by two hidden nodes, and its
reshaping has rank 4.

This module holds

* :class:`LatentTree` — the structure (a parent array) and the number of states of each
  hidden node; it does not depend on the data (leaf alphabets come from the data);
* :class:`LatentTreeModel` — a discrete latent tree model (root prior, one conditional
  probability table per edge), its population joint table by brute-force summation over
  all hidden configurations (:meth:`LatentTreeModel.joint_table`) and ancestral sampling;
* :func:`tree_decomposition` — Algorithm 1 of Song & Dai (2013) run on the edges of the
  tree, leaves to root: the result is a tree tensor network
  (:class:`TreeTensorNetwork`; a hierarchical Tucker format when the tree is binary, a
  Tucker format when it is a star, a tensor train only for a caterpillar tree);
* :func:`edge_errors`, :func:`edge_ranks`, :func:`chain_ranks` — the ε of Theorem 1 along
  the edges and the numerical ranks of edge and prefix reshapings.
"""
from __future__ import annotations

import itertools
import numbers
from functools import reduce

import numpy as np

from ..core.validation import check_array, check_positive_int, check_random_state, scale_exponent, scaled, unscale
from ._tensor_train import _check_tensor, _truncate

__all__ = ["LatentTree", "LatentTreeModel", "TreeTensorNetwork", "binary_tree", "random_tree",
           "random_latent_tree_model", "sample_hidden_chain", "symmetric_tree_model", "tree_decomposition",
           "edge_errors", "edge_ranks", "chain_ranks"]


# ---------------------------------------------------------------------------- structure
class LatentTree:
    r"""A rooted latent tree: leaves are the observed variables, internal nodes are hidden.

    Parameters
    ----------
    parent : sequence of N ints
        ``parent[v]`` is the parent of node v, ``-1`` for the root (exactly one). Nodes
        without children are the leaves; mode j of a joint table is ``leaves[j]``, the
        leaves taken in increasing node number.
    n_states : int or sequence of ints ≥ 1
        Number of states of each hidden node: one int for all, or one per hidden node in
        the order of ``hidden`` (increasing node number).

    Attributes
    ----------
    n_nodes, root : int
    children : tuple of N tuples (increasing node number)
    leaves, hidden : tuples of node numbers
    edges : tuple of (child, parent) pairs, one per non-root node in increasing child
        number; ranks and errors of this module are listed in this order
    states : dict hidden node -> number of states
    """

    def __init__(self, parent, n_states=2):
        if isinstance(parent, (str, bytes)) or not hasattr(parent, "__len__"):
            raise TypeError(f"parent must be a sequence of ints, got {type(parent).__name__}")
        parent = list(parent)
        n = len(parent)
        if n < 3:
            raise ValueError(f"parent must describe at least 3 nodes (a hidden root and 2 leaves), got {n}")
        for v, p in enumerate(parent):
            if isinstance(p, bool) or not isinstance(p, (numbers.Integral, np.integer)):
                raise TypeError(f"parent[{v}] must be an int, got {type(p).__name__}")
            if not -1 <= p < n or p == v:
                raise ValueError(f"parent[{v}]={p} must be -1 (the root) or another node in 0..{n - 1}")
        parent = [int(p) for p in parent]
        roots = [v for v, p in enumerate(parent) if p == -1]
        if len(roots) != 1:
            raise ValueError(f"parent must mark exactly one root with -1, got {len(roots)}")
        for v in range(n):          # every node must reach the root: no cycle
            u, steps = v, 0
            while u != roots[0]:
                u, steps = parent[u], steps + 1
                if steps > n:
                    raise ValueError(f"parent has a cycle through node {v}: the nodes do not form a tree")
        self.parent = tuple(parent)
        self.n_nodes = n
        self.root = roots[0]
        self.children = tuple(tuple(c for c in range(n) if parent[c] == v) for v in range(n))
        self.leaves = tuple(v for v in range(n) if not self.children[v])
        self.hidden = tuple(v for v in range(n) if self.children[v])
        if len(self.leaves) < 2:
            raise ValueError(f"the tree must have at least 2 leaves, got {len(self.leaves)}")
        if isinstance(n_states, (numbers.Integral, np.integer)) and not isinstance(n_states, bool):
            n_states = [n_states] * len(self.hidden)
        if isinstance(n_states, (str, bytes)) or not hasattr(n_states, "__len__"):
            raise TypeError(f"n_states must be an int or a sequence of ints, got {type(n_states).__name__}")
        if len(n_states) != len(self.hidden):
            raise ValueError(f"n_states must hold one number per hidden node ({len(self.hidden)}), "
                             f"got {len(n_states)}")
        self.states = {h: check_positive_int(k, f"n_states[{i}]")
                       for i, (h, k) in enumerate(zip(self.hidden, n_states))}
        self.edges = tuple((v, parent[v]) for v in range(n) if v != self.root)
        self._mode = {v: j for j, v in enumerate(self.leaves)}

    @property
    def n_leaves(self) -> int:
        return len(self.leaves)

    def __repr__(self):
        return (f"LatentTree(parent={list(self.parent)}, "
                f"n_states={[self.states[h] for h in self.hidden]})")

    def postorder(self):
        """Non-root nodes, every node after all of its descendants (children in increasing order)."""
        out = []

        def visit(v):
            for c in self.children[v]:
                visit(c)
            if v != self.root:
                out.append(v)
        visit(self.root)
        return out

    def subtree_leaves(self, v):
        """Table modes (positions in ``leaves``) of the leaves under node v, increasing."""
        if not self.children[v]:
            return [self._mode[v]]
        return sorted(j for c in self.children[v] for j in self.subtree_leaves(c))

    def edge_splits(self):
        """For every edge, the table modes of the leaves under its child (the side 𝒥₁)."""
        return [self.subtree_leaves(v) for v, _ in self.edges]

    def edge_states(self):
        """For every edge, the fewest states among its hidden end points: the bound on the
        rank of its reshaping (both sides are independent given either end point)."""
        return [min(self.states[u] for u in (v, p) if u in self.states) for v, p in self.edges]


def random_tree(n_leaves: int, max_states: int = 3, random_state=None) -> LatentTree:
    """A latent tree of random shape: random groups of 2–3 current roots are merged under a
    new hidden node until one root is left; each hidden node gets 1..max_states states.

    See :doc:`/chapters/08_latent_trees` (Theorem 1 along the edges of random trees). Leaves
    are nodes 0..n_leaves−1. Cost O(n_leaves²).
    """
    n_leaves = check_positive_int(n_leaves, "n_leaves")
    max_states = check_positive_int(max_states, "max_states")
    if n_leaves < 2:
        raise ValueError(f"n_leaves must be at least 2, got {n_leaves}")
    rng = check_random_state(random_state)
    parent = [-1] * n_leaves
    tops = list(range(n_leaves))
    while len(tops) > 1:
        m = min(len(tops), int(rng.integers(2, 4)))
        pick = sorted(rng.choice(len(tops), size=m, replace=False).tolist(), reverse=True)
        parent.append(-1)
        new = len(parent) - 1
        for i in pick:
            parent[tops.pop(i)] = new
        tops.append(new)
    n_hidden = len(parent) - n_leaves
    return LatentTree(parent, [int(k) for k in rng.integers(1, max_states + 1, size=n_hidden)])


def binary_tree(n_leaves: int, n_states=2) -> LatentTree:
    """A balanced binary latent tree: leaves 0..n_leaves-1, hidden nodes numbered upwards.

    Consecutive nodes of a level are paired under a new hidden node (an odd one out moves
    up unchanged) until one root remains. ``binary_tree(8)`` has leaves 0..7, their
    parents 8..11, then 12, 13 and the root 14.
    """
    n_leaves = check_positive_int(n_leaves, "n_leaves", minimum=2)
    parent = [-1] * n_leaves
    level = list(range(n_leaves))
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            parent.append(-1)
            new = len(parent) - 1
            parent[level[i]] = parent[level[i + 1]] = new
            nxt.append(new)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return LatentTree(parent, n_states)


# ------------------------------------------------------------------------------- model
class LatentTreeModel:
    r"""A discrete latent tree model: a root prior and a conditional table per edge.

    .. math:: p(x_1,\dots,x_d)=\sum_{h}\pi(h_{\rm root})\prod_{(v,u)\in E}P_v(z_v\mid h_u),

    with :math:`z_v` the state of v (hidden or observed) and :math:`h_u` that of its parent.

    Parameters
    ----------
    tree : LatentTree
    root_prior : array (k_root,), non-negative, sums to 1
    conditionals : sequence of arrays, one per edge of ``tree.edges``
        ``conditionals[e][a, b] = P(child = b | parent = a)``, shape (k_parent, k_child)
        with k_child the states of a hidden child or the alphabet size of a leaf; rows sum
        to 1.

    Attributes
    ----------
    n_symbols : tuple of ints, the alphabet size of each leaf (table mode)
    """

    def __init__(self, tree, root_prior, conditionals):
        if not isinstance(tree, LatentTree):
            raise TypeError(f"tree must be a LatentTree, got {type(tree).__name__}")
        prior = check_array(root_prior, "root_prior", ndim=1)
        if prior.shape[0] != tree.states[tree.root]:
            raise ValueError(f"root_prior has {prior.shape[0]} entries but the root has "
                             f"{tree.states[tree.root]} states")
        _check_distribution(prior[None], "root_prior")
        if isinstance(conditionals, (str, bytes)) or not hasattr(conditionals, "__len__"):
            raise TypeError(f"conditionals must be a sequence of arrays, got {type(conditionals).__name__}")
        if len(conditionals) != len(tree.edges):
            raise ValueError(f"conditionals must hold one table per edge ({len(tree.edges)}), "
                             f"got {len(conditionals)}")
        tables = {}
        for e, ((v, p), P) in enumerate(zip(tree.edges, conditionals)):
            name = f"conditionals[{e}]"
            P = check_array(P, name, ndim=2)
            if P.shape[0] != tree.states[p]:
                raise ValueError(f"{name} has {P.shape[0]} rows but its parent node {p} has "
                                 f"{tree.states[p]} states")
            if v in tree.states and P.shape[1] != tree.states[v]:
                raise ValueError(f"{name} has {P.shape[1]} columns but its hidden node {v} has "
                                 f"{tree.states[v]} states")
            _check_distribution(P, name)
            tables[v] = P
        self.tree = tree
        self.root_prior = prior
        self.conditionals = tables
        self.n_symbols = tuple(tables[v].shape[1] for v in tree.leaves)

    def joint_table(self):
        r"""The population joint probability table of the leaves, shape ``n_symbols``.

        Brute force: for every configuration of the hidden nodes (all
        :math:`\prod_h k_h` of them) the weight
        :math:`\pi(h_{\rm root})\prod_{\text{hidden } v\neq\text{root}}P_v(h_v\mid h_{{\rm pa}(v)})`
        times the outer product of the leaf rows :math:`P_\ell(\cdot\mid h_{{\rm pa}(\ell)})`
        is added up. Cost O(∏ k_h · ∏ n_ℓ); independent of any factorisation.
        """
        t = self.tree
        out = np.zeros(self.n_symbols)
        hidden = list(t.hidden)
        for config in itertools.product(*[range(t.states[h]) for h in hidden]):
            z = dict(zip(hidden, config))
            w = self.root_prior[z[t.root]]
            for h in hidden:
                if h != t.root:
                    w *= self.conditionals[h][z[t.parent[h]], z[h]]
            if w == 0:
                continue
            rows = [self.conditionals[v][z[t.parent[v]]] for v in t.leaves]
            out += w * reduce(np.multiply.outer, rows)
        return out

    def sample(self, n_samples: int, random_state=None):
        """Ancestral sampling: an int array (n_samples, d) of leaf symbols (columns in table
        mode order). Cost O(n_samples · N)."""
        n = check_positive_int(n_samples, "n_samples")
        rng = check_random_state(random_state)
        t = self.tree
        z = np.empty((n, t.n_nodes), dtype=np.int64)
        z[:, t.root] = _draw(rng, np.broadcast_to(self.root_prior, (n, self.root_prior.size)))
        order = list(reversed(t.postorder()))    # every node after its parent
        for v in order:
            z[:, v] = _draw(rng, self.conditionals[v][z[:, t.parent[v]]])
        return z[:, list(t.leaves)]


def _draw(rng, P):
    """One categorical draw per row of the row-stochastic matrix P."""
    c = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * c[:, -1]
    return np.minimum((u[:, None] >= c).sum(axis=1), P.shape[1] - 1)


def _check_distribution(P, name):
    if np.any(P < 0):
        raise ValueError(f"{name} has negative entries: probabilities must be >= 0")
    s = P.sum(axis=1)
    if not np.allclose(s, 1.0, rtol=0, atol=1e-8):
        raise ValueError(f"the rows of {name} must sum to 1, got sums in [{s.min():.6g}, {s.max():.6g}]")


def sample_hidden_chain(pi, T, O, n_samples: int, n_steps: int, random_state=None):
    r"""Sample ``n_samples`` sequences of ``n_steps`` symbols from a hidden Markov chain (rows convention).

    See :doc:`/chapters/08_latent_trees`, where this chain (a caterpillar latent tree) is the
    running example. With :math:`k` hidden states and :math:`m` symbols, ``pi`` (k,) is the law
    of :math:`h_1`, ``T`` (k, k) is row-stochastic and ``O`` (k, m) row-stochastic:

    .. math::
       h_1\sim\pi,\qquad \Pr[h_{j+1}=b\mid h_j=a]=T_{ab},\qquad \Pr[X_j=x\mid h_j=a]=O_{ax}.

    Vectorised over sequences, a loop over the steps; at step j one uniform vector draws the
    symbols :math:`X_j` by inverse CDF, then one more draws :math:`h_{j+1}` (the first state by
    ``Generator.choice``). Returns an int array (n_samples, n_steps). With ``O`` the identity the
    symbols are the hidden states themselves. Cost O(n_samples · n_steps · (k + m)).
    ``random_state``: None, an int or a ``numpy.random.Generator`` (advanced by the draws).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.tree import sample_hidden_chain
    >>> T = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> O = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
    >>> X = sample_hidden_chain([0.5, 0.5], T, O, 4, 6, random_state=0)
    >>> X.shape, X.dtype.kind, bool(X.min() >= 0 and X.max() <= 2)
    ((4, 6), 'i', True)
    """
    pi = check_array(pi, "pi", ndim=1)
    T = check_array(T, "T", ndim=2)
    O = check_array(O, "O", ndim=2)
    k = pi.shape[0]
    if T.shape != (k, k) or O.shape[0] != k:
        raise ValueError(f"T must be (k, k) and O (k, m) with k = len(pi) = {k}, got {T.shape} and {O.shape}")
    _check_distribution(pi[None, :], "pi")
    _check_distribution(T, "T")
    _check_distribution(O, "O")
    n = check_positive_int(n_samples, "n_samples")
    d = check_positive_int(n_steps, "n_steps")
    rng = check_random_state(random_state)
    cT, cO = np.cumsum(T, axis=1), np.cumsum(O, axis=1)
    h = rng.choice(k, size=n, p=pi)
    X = np.empty((n, d), dtype=np.int64)
    for j in range(d):
        X[:, j] = np.minimum((rng.random(n)[:, None] > cO[h]).sum(axis=1), O.shape[1] - 1)
        h = np.minimum((rng.random(n)[:, None] > cT[h]).sum(axis=1), k - 1)
    return X


def random_latent_tree_model(tree, n_symbols, *, concentration: float = 1.0, random_state=None):
    """A :class:`LatentTreeModel` with Dirichlet(concentration) rows.

    ``n_symbols``: the alphabet size of every leaf (int) or one per leaf (table mode order).
    """
    if not isinstance(tree, LatentTree):
        raise TypeError(f"tree must be a LatentTree, got {type(tree).__name__}")
    if isinstance(n_symbols, (numbers.Integral, np.integer)) and not isinstance(n_symbols, bool):
        n_symbols = [n_symbols] * tree.n_leaves
    if isinstance(n_symbols, (str, bytes)) or not hasattr(n_symbols, "__len__"):
        raise TypeError(f"n_symbols must be an int or a sequence of ints, got {type(n_symbols).__name__}")
    if len(n_symbols) != tree.n_leaves:
        raise ValueError(f"n_symbols must hold one alphabet size per leaf ({tree.n_leaves}), got {len(n_symbols)}")
    sizes = {v: check_positive_int(m, f"n_symbols[{j}]") for j, (v, m) in enumerate(zip(tree.leaves, n_symbols))}
    sizes.update(tree.states)
    if isinstance(concentration, bool) or not isinstance(concentration, numbers.Real) \
            or not np.isfinite(concentration) or concentration <= 0:
        raise ValueError(f"concentration must be a finite number > 0, got {concentration!r}")
    rng = check_random_state(random_state)
    prior = rng.dirichlet(np.full(tree.states[tree.root], float(concentration)))
    conds = [rng.dirichlet(np.full(sizes[v], float(concentration)), size=sizes[p]) for v, p in tree.edges]
    return LatentTreeModel(tree, prior, conds)


def symmetric_tree_model(tree, keep: float) -> LatentTreeModel:
    """A :class:`LatentTreeModel` in which every hidden edge keeps the parent's state with
    probability ``keep`` (the other states share the rest equally), the root is uniform and
    every leaf copies its parent's state (alphabet = the parent's states).

    Adding noise to the leaf symbols (e.g. ``3 * model.sample(n) + 0.5 * z``) gives a latent
    tree with Gaussian leaves, as in :doc:`/chapters/08_latent_trees`. All hidden nodes must
    have the same number of states k ≥ 2; ``keep`` in (0, 1].
    """
    if not isinstance(tree, LatentTree):
        raise TypeError(f"tree must be a LatentTree, got {type(tree).__name__}")
    ks = set(tree.states.values())
    if len(ks) != 1 or min(ks) < 2:
        raise ValueError(f"every hidden node must have the same number of states >= 2, got {sorted(ks)}")
    k = ks.pop()
    if isinstance(keep, bool) or not isinstance(keep, numbers.Real) or not 0 < keep <= 1:
        raise ValueError(f"keep must be a probability in (0, 1], got {keep!r}")
    flip = np.full((k, k), (1.0 - keep) / (k - 1))
    np.fill_diagonal(flip, keep)
    conds = [np.eye(k) if v in tree.leaves else flip for v, _ in tree.edges]
    return LatentTreeModel(tree, np.full(k, 1.0 / k), conds)


# ---------------------------------------------------------------------- decomposition
class TreeTensorNetwork:
    r"""A tensor network with the shape of a latent tree (the output of :func:`tree_decomposition`).

    ``cores[v]`` for every node v (children of v in increasing order):

    * a leaf: matrix (n_v, r_v) with orthonormal columns (the basis :math:`\mathcal U` of
      its edge; not orthonormal when the network comes from
      :meth:`mvlib.LatentTreeEmbedding.to_network`, whose leaf cores are the reduced
      coordinates at grid points);
    * a hidden non-root node: (r_{c_1}, ..., r_{c_m}, r_v), orthonormal as a
      (∏ r_c) × r_v matrix (the transfer tensor of a hierarchical Tucker format);
    * the root: (r_{c_1}, ..., r_{c_m}).

    With r_v the rank of edge (v, parent(v)). :meth:`contract` gives the full table.
    """

    def __init__(self, tree, cores):
        self.tree = tree
        self.cores = tuple(cores)

    @property
    def ranks(self):
        """The rank kept at every edge (``tree.edges`` order)."""
        return [self.cores[v].shape[-1] for v, _ in self.tree.edges]

    @property
    def n_parameters(self) -> int:
        return int(sum(c.size for c in self.cores))

    def __repr__(self):
        return f"TreeTensorNetwork(shape={self.shape}, ranks={self.ranks})"

    @property
    def shape(self):
        return tuple(self.cores[v].shape[0] for v in self.tree.leaves)

    def contract(self):
        """The full table (n_1, ..., n_d), modes in ``tree.leaves`` order. Cost O(∏ n_j · max r)
        per node."""
        t = self.tree

        def sub(v):
            # returns (tensor, labels): labels are leaf nodes, then ("edge", v) unless v is the root
            if not t.children[v]:
                return self.cores[v], [v, ("edge", v)]
            T = self.cores[v]
            labels = [("edge", c) for c in t.children[v]] + ([("edge", v)] if v != t.root else [])
            for c in t.children[v]:
                S, sl = sub(c)
                i = labels.index(("edge", c))
                T = np.tensordot(S, T, axes=([S.ndim - 1], [i]))
                labels = sl[:-1] + labels[:i] + labels[i + 1:]
            return T, labels

        T, labels = sub(t.root)
        return np.transpose(T, [labels.index(v) for v in t.leaves])


def _edge_ranks_arg(ranks, tree, name="ranks"):
    """None (the hidden states at each edge), an int, or one int ≥ 1 per edge -> list."""
    n_edges = len(tree.edges)
    if ranks is None:
        return tree.edge_states()
    if isinstance(ranks, (numbers.Integral, np.integer)) and not isinstance(ranks, bool):
        ranks = [ranks] * n_edges
    if isinstance(ranks, (str, bytes)) or not hasattr(ranks, "__len__"):
        raise TypeError(f"{name} must be None, an int or a sequence of ints, got {type(ranks).__name__}")
    ranks = list(ranks)
    if len(ranks) != n_edges:
        raise ValueError(f"{name} must hold one rank per edge of the tree ({n_edges}), got {len(ranks)}")
    return [check_positive_int(r, f"{name}[{e}]") for e, r in enumerate(ranks)]


def _check_table_and_tree(C, tree):
    if not isinstance(tree, LatentTree):
        raise TypeError(f"tree must be a LatentTree, got {type(tree).__name__}")
    C = _check_tensor(C)
    if C.ndim != tree.n_leaves:
        raise ValueError(f"C has {C.ndim} modes but the tree has {tree.n_leaves} leaves "
                         "(one mode per observed variable)")
    return C


def _unfold(C, rows):
    """The reshaping C_{rows; rest} as a matrix (modes of each side in increasing order)."""
    rest = [j for j in range(C.ndim) if j not in rows]
    A = np.transpose(C, list(rows) + rest)
    return A.reshape(int(np.prod([C.shape[j] for j in rows])), -1)


def tree_decomposition(C, tree, ranks=None, *, return_errors: bool = False):
    r"""Decompose a d-way table along the edges of a latent tree (Algorithm 1 on a tree).

    The edges are taken leaves to root (``tree.postorder()``). At edge (v, parent(v)) the
    current remainder :math:`\mathcal B` — the table with every finished subtree replaced
    by its reduced coordinates — is reshaped into :math:`\mathcal A_v`, rows the modes of
    v (its own alphabet for a leaf, the reduced coordinates of its children for a hidden
    node), columns all other modes. Its leading ``r_v`` left singular vectors
    :math:`\mathcal U_r` become the core of v and the remainder becomes
    :math:`\mathcal S_r\mathcal V_r^\top=\mathcal U_r^\top\mathcal A_v`, with a single mode
    for the whole subtree of v (steps 1–9 of Algorithm 1 of Song & Dai 2013, whose
    chain of prefixes is the special case of a caterpillar tree). What remains at the
    root is the root core.

    **Error (Theorem 1 of Song & Dai 2013 along the edges).** Let
    :math:`\delta_v=\|\mathcal A_v-\mathcal U_r\mathcal U_r^\top\mathcal A_v\|_F` be the
    error of step v and :math:`\epsilon_v` the best rank-r_v error of the reshaping
    :math:`\mathcal C_{\mathcal J_1;\mathcal J_2}` of the original table along that edge
    (:func:`edge_errors`). Then

    .. math:: \|\mathcal C-\tilde{\mathcal C}\|_F^2=\sum_{e\in E}\delta_e^2
              \le\sum_{e\in E}\epsilon_e^2\le|E|\max_e\epsilon_e^2 .

    Proof. In the full space step v is the orthogonal projection :math:`\Pi_v` onto the
    span of the subtree's basis (acting on the modes under v), so
    :math:`\tilde{\mathcal C}=\Pi_{v_m}\cdots\Pi_{v_1}\mathcal C` in postorder and
    :math:`\mathcal C-\tilde{\mathcal C}=\sum_i(I-\Pi_{v_i})X_{i-1}` with
    :math:`X_i=\Pi_{v_i}X_{i-1}`. A later node is an ancestor of :math:`v_i` (then
    :math:`\Pi_u\Pi_{v_i}=\Pi_{v_i}\Pi_u=\Pi_u`, nested bases) or acts on disjoint modes
    (they commute), so every later term lies in the range of :math:`\Pi_{v_i}` and is
    orthogonal to :math:`(I-\Pi_{v_i})X_{i-1}`: the squares add up. :math:`\mathcal A_v`
    is the reshaping of :math:`\mathcal C` multiplied on both sides by matrices with
    orthonormal rows (the bases of the finished subtrees), which cannot raise a singular
    value, so :math:`\delta_v\le\epsilon_v`. With |E| = N − 1 edges this gives the bound
    :math:`\sqrt{|E|}\max_e\epsilon_e` of eq. (22) (|E| = d − 1 for a chain).
    When every edge reshaping has rank ≤ r_e (a latent tree model with r_e hidden states at
    the edge) all ε_e vanish and the decomposition is exact.

    Parameters
    ----------
    C : array (n_1, ..., n_d), d = ``tree.n_leaves``; mode j is leaf ``tree.leaves[j]``
    tree : LatentTree
    ranks : None, int, or sequence of ints ≥ 1, one per edge (``tree.edges`` order)
        None: ``tree.edge_states()``. A rank above the size of a reshaping is lowered to it.
    return_errors : bool
        Also return the step errors δ_e (``tree.edges`` order).

    Returns
    -------
    network : TreeTensorNetwork
    errors : array (|E|,), only with ``return_errors``

    Cost: one SVD per edge; the first leaf's is n_1 × ∏_{j>1} n_j, later ones shrink as
    subtrees are reduced.
    """
    C = _check_table_and_tree(C, tree)
    r = dict(zip([v for v, _ in tree.edges], _edge_ranks_arg(ranks, tree)))
    e = scale_exponent(C)    # extreme scale: decompose C / 2**e (exact); root core and errors scale back
    T = scaled(C, e)
    labels = list(tree.leaves)
    cores = [None] * tree.n_nodes
    delta = {}
    for v in tree.postorder():
        group = [v] if not tree.children[v] else list(tree.children[v])
        idx = [labels.index(g) for g in group]
        rest = [i for i in range(T.ndim) if i not in idx]
        A = np.transpose(T, idx + rest)
        gshape, rshape = A.shape[:len(idx)], A.shape[len(idx):]
        U, s, Vt, err = _truncate(A.reshape(int(np.prod(gshape)), -1), r[v])
        cores[v] = U.reshape(tuple(gshape) + (U.shape[1],))
        delta[v] = err
        T = (s[:, None] * Vt).reshape((U.shape[1],) + tuple(rshape))
        labels = [v] + [labels[i] for i in rest]
    root_core = np.transpose(T, [labels.index(c) for c in tree.children[tree.root]])
    cores[tree.root] = unscale(root_core, e, "C", "the root core")
    net = TreeTensorNetwork(tree, cores)
    if return_errors:
        return net, unscale(np.array([delta[v] for v, _ in tree.edges]), e, "C", "the errors")
    return net


def edge_errors(C, tree, ranks=None):
    r"""Best rank-r_e error of every edge reshaping, the ε_e of Theorem 1 along the tree.

    :math:`\epsilon_e=\min_{\mathrm{rank}\,M\le r_e}\|\mathcal C_{\mathcal J_1;\mathcal J_2}-M\|_F`
    (Eckart–Young: root sum of squares of the discarded singular values), with
    :math:`\mathcal J_1` the leaves under the edge's child. ``ranks`` as in
    :func:`tree_decomposition`. Returns an array (|E|,) in ``tree.edges`` order. Cost: one
    SVD of an unfolding of C per edge.
    """
    C = _check_table_and_tree(C, tree)
    rk = _edge_ranks_arg(ranks, tree)
    e = scale_exponent(C)
    C = scaled(C, e)
    eps = [_truncate(_unfold(C, rows), r)[3] for rows, r in zip(tree.edge_splits(), rk)]
    return unscale(np.array(eps), e, "C", "the errors")


def _numerical_rank(A, tol):
    s = np.linalg.svd(A, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return 0
    t = s[0] * max(A.shape) * np.finfo(float).eps if tol is None else tol * s[0]
    return int(np.sum(s > t))


def _check_relative_tol(tol):
    if tol is None:
        return None
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not np.isfinite(tol) or not 0 <= tol < 1:
        raise ValueError(f"tol must be None or a number in [0, 1), got {tol!r}")
    return float(tol)


def edge_ranks(C, tree, tol=None):
    """Numerical rank of every edge reshaping C_{𝒥₁;𝒥₂} (``tree.edges`` order).

    Singular values above ``tol`` times the largest count (default ``tol=None``: the
    largest times max(shape)·machine epsilon, as ``numpy.linalg.matrix_rank``). Cost: one
    SVD per edge.
    """
    C = _check_table_and_tree(C, tree)
    tol = _check_relative_tol(tol)
    C = scaled(C, scale_exponent(C))
    return [_numerical_rank(_unfold(C, rows), tol) for rows in tree.edge_splits()]


def chain_ranks(C, tol=None):
    """Numerical rank of every prefix reshaping C_{X_{1:k}; X_{k+1:d}}, k = 1..d-1: the
    reshapings a tensor train (:func:`mvlib.tree.tt_embedding`) truncates. ``tol`` as in
    :func:`edge_ranks`."""
    C = _check_tensor(C)
    tol = _check_relative_tol(tol)
    C = scaled(C, scale_exponent(C))
    rows = np.cumprod(C.shape)[:-1]
    return [_numerical_rank(C.reshape(int(m), -1), tol) for m in rows]
