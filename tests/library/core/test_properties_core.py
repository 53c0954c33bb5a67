"""Property tests of the core: power method, Jennrich, whitening, whitened triples, accumulators.

Each property draws random models from the family stated in its docstring (hypothesis chooses
the sizes and a seed; the entries come from ``numpy.random.default_rng(seed)``) and checks an
exact identity on population (exact) input. The number of models is the hypothesis profile's
(tests/conftest.py: "ci" by default, "long" under ``HYPOTHESIS_PROFILE=long``).
"""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.core.tensors import multilinear

SEEDS = st.integers(0, 2**32 - 1)
#: exponents e of the scale 10^e applied to a model (third moments stay far inside float64)
SCALES = st.integers(-30, 30)


@pytest.fixture(scope="module", autouse=True)
def _one_blas_thread():
    """Small problems: one BLAS thread (a second one only contends for a shared CPU)."""
    with threadpool_limits(1, user_api="blas"):
        yield


# --------------------------------------------------------------------------- families
def orthogonal(rng, k):
    """A Haar-distributed orthogonal k×k matrix."""
    Q, R = np.linalg.qr(rng.standard_normal((k, k)))
    return Q * np.sign(np.diag(R))


def conditioned(rng, d, k, low, high):
    """A (d, k) matrix U diag(s) Vᵀ with Haar U, V and singular values s uniform in [low, high]."""
    U = orthogonal(rng, d)[:, :k]
    return U @ np.diag(rng.uniform(low, high, k)) @ orthogonal(rng, k).T


def odeco(rng, k):
    """T = Σ_h λ_h v_h^⊗3 with Haar-orthogonal V and λ_h uniform in [1, 10]."""
    V = orthogonal(rng, k)
    lam = rng.uniform(1.0, 10.0, k)
    return np.einsum("h,ih,jh,lh->ijl", lam, V, V, V), lam, V


def weights_from_counts(rng, k):
    """Weights c / Σc with integer c in 1..6: the smallest weight is at least 1/(1 + 6(k-1))."""
    c = rng.integers(1, 7, size=k)
    return c / c.sum()


def matched(truth, estimate):
    """Columns of ``estimate`` put in the order of the columns of ``truth``."""
    perm, _ = mvlib.match_columns(truth, estimate)
    return perm


# --------------------------------------------------------------------------- power method
@given(k=st.integers(1, 8), e=SCALES, seed=SEEDS)
def test_tensor_power_method_recovers_odeco_tensors(k, e, seed):
    """Family: T = 10^e Σ_h λ_h v_h^⊗3, k in 1..8, V Haar-orthogonal, λ_h uniform in [1, 10]
    (λ_max/λ_min ≤ 10), e in -30..30. The eigenpairs come back to 1e-8 (eigenvalues relative to
    10^e) and the extraction reproduces T."""
    rng = np.random.default_rng(seed)
    T, lam, V = odeco(rng, k)
    c = 10.0 ** e
    cp = mvlib.tensor_power_method(T * c, k, random_state=seed)
    w, F = np.asarray(cp.weights) / c, np.asarray(cp.factors[0])
    perm = matched(V, F)
    np.testing.assert_allclose(F[:, perm], V, atol=1e-8, rtol=0)
    np.testing.assert_allclose(w[perm], lam, rtol=1e-8)
    np.testing.assert_allclose(np.einsum("h,ih,jh,lh->ijl", w, F, F, F), T, atol=1e-8, rtol=0)


@given(k=st.integers(1, 8), n_starts=st.integers(1, 8), n_iterations=st.integers(0, 40), seed=SEEDS)
def test_power_iteration_batched_equals_one_start_at_a_time(k, n_starts, n_iterations, seed):
    """Family: the odeco tensors above; starts i.i.d. N(0, I). Iterating R starts together gives
    each row's result alone (each row stops on its own; matrix products of different shapes
    may round differently, hence 1e-9 rather than bit equality)."""
    rng = np.random.default_rng(seed)
    T, _, _ = odeco(rng, k)
    starts = rng.standard_normal((n_starts, k))
    batched = mvlib.power_iteration(T, starts, n_iterations=n_iterations)
    alone = np.stack([mvlib.power_iteration(T, s, n_iterations=n_iterations) for s in starts])
    assert batched.shape == (n_starts, k)
    np.testing.assert_allclose(batched, alone, atol=1e-9, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-12, rtol=0)


@given(k=st.integers(1, 6), seed=SEEDS, state=st.integers(0, 2**32 - 1))
def test_tensor_power_method_same_random_state_bit_identical(k, seed, state):
    """Family: odeco tensors plus N(0, 0.05²) symmetric noise (the iterations then depend on the
    starts). An int random_state, or a fresh Generator from it, gives bit-identical results."""
    rng = np.random.default_rng(seed)
    T, _, _ = odeco(rng, k)
    E = 0.05 * rng.standard_normal(T.shape)
    T = T + sum(np.transpose(E, p) for p in itertools.permutations(range(3))) / 6
    a = mvlib.tensor_power_method(T, k, random_state=state)
    b = mvlib.tensor_power_method(T, k, random_state=state)
    c = mvlib.tensor_power_method(T, k, random_state=np.random.default_rng(state))
    for other in (b, c):
        np.testing.assert_array_equal(np.asarray(a.weights), np.asarray(other.weights))
        for Fa, Fo in zip(a.factors, other.factors):
            np.testing.assert_array_equal(np.asarray(Fa), np.asarray(Fo))


# --------------------------------------------------------------------------- Jennrich
@given(k=st.integers(1, 7), extra=st.integers(0, 3), e=SCALES, seed=SEEDS)
def test_jennrich_recovers_linearly_independent_components(k, extra, e, seed):
    """Family: T = 10^e Σ_h λ_h a_h^⊗3 in dimension d = k + extra (extra in 0..3), A = U diag(s) Vᵀ
    with s uniform in [0.3, 1] then unit columns, kept when σ_k(A) ≥ 0.2; λ_h uniform in
    [1, 10]; e in -30..30. Exact input gives the components and weights (relative to 10^e) to 1e-8."""
    rng = np.random.default_rng(seed)
    d = k + extra
    A = conditioned(rng, d, k, 0.3, 1.0)
    A /= np.linalg.norm(A, axis=0)
    assume(np.linalg.svd(A, compute_uv=False)[-1] >= 0.2)
    lam = rng.uniform(1.0, 10.0, k)
    T = np.einsum("h,ih,jh,lh->ijl", lam, A, A, A)
    cp = mvlib.jennrich(T * 10.0 ** e, k, random_state=seed)
    w, F = np.asarray(cp.weights) / 10.0 ** e, np.asarray(cp.factors[0])
    perm = matched(A, F)
    np.testing.assert_allclose(F[:, perm], A, atol=1e-8, rtol=0)
    np.testing.assert_allclose(w[perm], lam, rtol=1e-8)
    assert np.all(np.diff(w) <= 0)  # sorted in decreasing order


# --------------------------------------------------------------------------- whitening
@given(k=st.integers(1, 6), extra=st.integers(0, 4), e=SCALES, seed=SEEDS)
def test_whitening_and_dewhitening_round_trip(k, extra, e, seed):
    """Family: M2 = M diag(w) Mᵀ, M = 10^e M0 (d, k) with d = k + extra, σ(M0) in [0.1, 1] and
    e in -30..30, weights c/Σc with c in 1..6 (smallest ≥ 0.05). Then WᵀM2W = I, v_h = √w_h Wᵀμ_h
    are orthonormal and dewhiten(W, V, 1/√w) = M, all to 1e-8 (relative to 10^e for M)."""
    rng = np.random.default_rng(seed)
    d = k + extra
    c = 10.0 ** e
    M = conditioned(rng, d, k, 0.1, 1.0) * c
    w = weights_from_counts(rng, k)
    M2 = (M * w) @ M.T
    W = mvlib.whitening_matrix(M2, k)
    assert W.shape == (d, k)
    np.testing.assert_allclose(W.T @ M2 @ W, np.eye(k), atol=1e-8, rtol=0)
    V = np.sqrt(w) * (W.T @ M)
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-8, rtol=0)
    np.testing.assert_allclose(mvlib.dewhiten(W, V, 1 / np.sqrt(w)), M, atol=1e-8 * c, rtol=0)
    np.testing.assert_allclose(mvlib.dewhiten(W, V) * (1 / np.sqrt(w)), M, atol=1e-8 * c, rtol=0)


@given(k=st.integers(1, 6), extra=st.integers(0, 4), seed=SEEDS)
def test_whiten_decompose_dewhiten_recovers_the_mixture(k, extra, seed):
    """Family as above (d = k + extra, σ(M) in [0.1, 1], weights ≥ 0.05). From the population
    moments M2 = Σ w_h μ_hμ_hᵀ and M3 = Σ w_h μ_h^⊗3: whitening, the tensor power method and
    un-whitening give μ_h and w_h = λ_h⁻² to 1e-8 (Anandkumar et al. 2014 §4.3)."""
    rng = np.random.default_rng(seed)
    d = k + extra
    M = conditioned(rng, d, k, 0.1, 1.0)
    w = weights_from_counts(rng, k)
    M2 = (M * w) @ M.T
    M3 = np.einsum("h,ih,jh,lh->ijl", w, M, M, M)
    W = mvlib.whitening_matrix(M2, k)
    cp = mvlib.tensor_power_method(multilinear(M3, W, W, W), k, random_state=seed)
    lam, V = np.asarray(cp.weights), np.asarray(cp.factors[0])
    Mhat = mvlib.dewhiten(W, V, lam)
    perm = matched(M, Mhat)
    np.testing.assert_allclose(Mhat[:, perm], M, atol=1e-8, rtol=0)
    np.testing.assert_allclose(lam[perm] ** -2.0, w, atol=1e-8, rtol=0)


# --------------------------------------------------------------------------- whitened triples
def _views(rng, n, dims, sparse):
    Xs = [rng.standard_normal((n, d)) for d in dims]
    if sparse:
        Xs = [sp.csr_matrix(X * (rng.random(X.shape) < 0.5)) for X in Xs]
    return Xs


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


@given(n=st.integers(1, 40), dims=st.tuples(*[st.integers(1, 5)] * 3),
       ks=st.tuples(*[st.integers(1, 4)] * 3), sparse=st.booleans(), seed=SEEDS)
def test_whitened_triples_equal_the_projected_dense_triples(n, dims, ks, sparse, seed):
    """Family: any three views X_v (n, d_v) with i.i.d. N(0, 1) entries (half of them zeroed and
    stored as CSR when ``sparse``), any W_v (d_v, k_v) with N(0, 1) entries. The streamed
    whitened triples equal P123(W1, W2, W3) of the dense d1×d2×d3 moment."""
    rng = np.random.default_rng(seed)
    Xs = _views(rng, n, dims, sparse)
    Ws = [rng.standard_normal((d, k)) for d, k in zip(dims, ks)]
    got = mvlib.whitened_triples(*Xs, *Ws)
    dense = mvlib.triples(*[_dense(X) for X in Xs])
    want = multilinear(dense, *Ws)
    assert got.shape == tuple(ks)
    scale = max(1.0, np.abs(want).max())
    np.testing.assert_allclose(got, want, atol=1e-12 * scale, rtol=0)


@st.composite
def _batches(draw):
    """Row counts of 1..5 batches (each ≥ 1) and an order in which to merge the accumulators."""
    sizes = draw(st.lists(st.integers(1, 30), min_size=1, max_size=5))
    order = draw(st.permutations(range(len(sizes))))
    return sizes, order


@given(batches=_batches(), dims=st.tuples(*[st.integers(1, 5)] * 3), k=st.integers(1, 3),
       sparse=st.booleans(), seed=SEEDS)
def test_moment_accumulator_merged_streamed_and_one_shot_agree(batches, dims, k, sparse, seed):
    """Family: as for the whitened triples (dense or CSR views, any whiteners), split into 1..5
    batches of 1..30 rows. One accumulator fed batch by batch, accumulators merged in any
    order (with an empty one in the middle), and the one-shot ``pairs``/``whitened_triples``
    on all rows agree to rounding."""
    sizes, order = batches
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    Xs = _views(rng, n, dims, sparse)
    Ws = [rng.standard_normal((d, k)) for d in dims]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    parts = [[X[a:b] for X in Xs] for a, b in zip(bounds[:-1], bounds[1:])]

    streamed = mvlib.MomentAccumulator(Ws)
    for part in parts:
        streamed.update(*part)
    singles = [mvlib.MomentAccumulator(Ws).update(*part) for part in parts]
    merged = mvlib.MomentAccumulator(Ws)
    for i in order:
        merged = merged.merge(singles[i])
        if i == order[0]:
            merged = merged + mvlib.MomentAccumulator(Ws)  # an empty accumulator changes nothing

    D = [_dense(X) for X in Xs]
    T_all = mvlib.whitened_triples(*Xs, *Ws)
    for acc in (streamed, merged):
        assert acc.n_samples_ == n
        for v in (1, 2, 3):
            np.testing.assert_allclose(acc.mean(v), D[v - 1].mean(axis=0), atol=1e-12, rtol=0)
        for a, b in ((1, 2), (1, 3), (2, 3), (2, 1), (3, 1), (3, 2)):
            np.testing.assert_allclose(acc.pairs(a, b), mvlib.pairs(D[a - 1], D[b - 1]), atol=1e-12, rtol=0)
        np.testing.assert_allclose(acc.whitened_triples(), T_all,
                                   atol=1e-12 * max(1.0, np.abs(T_all).max()), rtol=0)
    # merging leaves its operands alone
    for single, part in zip(singles, parts):
        assert single.n_samples_ == part[0].shape[0]


@given(sizes=st.lists(st.integers(1, 20), min_size=2, max_size=4), seed=SEEDS)
def test_moment_accumulator_is_pickled_and_resumed(sizes, seed):
    """Family: dense N(0, 1) views of dimensions (3, 2, 4), whiteners with N(0, 1) entries,
    2..4 batches. A pickled accumulator resumes where it stopped: same moments, bit for bit."""
    import pickle

    rng = np.random.default_rng(seed)
    Ws = [rng.standard_normal((d, 2)) for d in (3, 2, 4)]
    parts = [[rng.standard_normal((m, d)) for d in (3, 2, 4)] for m in sizes]
    a = mvlib.MomentAccumulator(Ws)
    a.update(*parts[0])
    b = pickle.loads(pickle.dumps(a))
    for part in parts[1:]:
        a.update(*part)
        b.update(*part)
    assert a.n_samples_ == b.n_samples_ == sum(sizes)
    np.testing.assert_array_equal(a.whitened_triples(), b.whitened_triples())
    np.testing.assert_array_equal(a.pairs(1, 3), b.pairs(1, 3))


# --------------------------------------------------------------------------- count moments
def _positions(c):
    """The word positions of a document of counts c (any order)."""
    return np.repeat(np.arange(c.size), c)


@given(n_docs=st.integers(1, 8), d=st.integers(1, 5), k=st.integers(1, 3), sparse=st.booleans(),
       seed=SEEDS)
def test_count_moments_average_over_distinct_positions(n_docs, d, k, sparse, seed):
    """Family: any n_docs documents over d words with counts in 0..3 per word and at least three
    words (lengths 3..3d), dense or CSR; any W (d, k) and η with N(0, 1) entries. The unbiased
    count moments equal, document by document, the average over ordered pairs / triples of
    distinct word positions (brute force over the positions), averaged over documents."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n_docs, d))
    for row in X:  # at least three words per document
        while row.sum() < 3:
            row[rng.integers(d)] += 1
    W, eta = rng.standard_normal((d, k)), rng.standard_normal(d)
    E = np.eye(d)
    pairs = np.zeros((d, d))
    slices = np.zeros((d, d))
    trip = np.zeros((k, k, k))
    for c in X:
        pos = _positions(c)
        ell = pos.size
        pp = [(a, b) for a in range(ell) for b in range(ell) if a != b]
        tt = [(a, b, g) for a, b, g in itertools.permutations(range(ell), 3)]
        pairs += sum(np.outer(E[pos[a]], E[pos[b]]) for a, b in pp) / len(pp)
        slices += sum(eta[pos[g]] * np.outer(E[pos[a]], E[pos[b]]) for a, b, g in tt) / len(tt)
        Y = W[pos]
        trip += np.einsum("ti,tj,tl->ijl", Y[[t[0] for t in tt]], Y[[t[1] for t in tt]],
                          Y[[t[2] for t in tt]]) / len(tt)
    Xin = sp.csr_matrix(X) if sparse else X
    np.testing.assert_allclose(mvlib.count_pairs(Xin), pairs / n_docs, atol=1e-12, rtol=0)
    np.testing.assert_allclose(mvlib.count_triples_slice(Xin, eta), slices / n_docs, atol=1e-12, rtol=0)
    np.testing.assert_allclose(mvlib.count_whitened_triples(Xin, W), trip / n_docs, atol=1e-11, rtol=0)


# --------------------------------------------------------------------------- spectral norm
@given(k=st.integers(1, 6), e=SCALES, seed=SEEDS)
def test_symmetric_spectral_norm_of_odeco_tensors(k, e, seed):
    """Family: the odeco tensors 10^e Σ_h λ_h v_h^⊗3 above (λ_h in [1, 10], e in -30..30), each
    λ_h given a random sign. The spectral norm max_|u|=1 |T(u, u, u)| is max_h |λ_h| (relative
    1e-8)."""
    rng = np.random.default_rng(seed)
    V = orthogonal(rng, k)
    lam = rng.uniform(1.0, 10.0, k) * rng.choice([-1.0, 1.0], k)
    T = np.einsum("h,ih,jh,lh->ijl", lam, V, V, V) * 10.0 ** e
    got = mvlib.symmetric_spectral_norm(T, n_restarts=50, random_state=seed)
    np.testing.assert_allclose(got, np.abs(lam).max() * 10.0 ** e, rtol=1e-8)


@given(n=st.sampled_from([8191, 8192, 8193, 16385]), seed=SEEDS)
def test_whitened_triples_across_chunk_boundaries(n, seed):
    """Family: dense N(0, 1) views of dimensions (2, 3, 2) with n rows around multiples of the
    8192-row chunk, whiteners with N(0, 1) entries. The streamed whitened triples and an
    accumulator fed in two uneven batches equal the dense projected triples."""
    rng = np.random.default_rng(seed)
    Xs = [rng.standard_normal((n, d)) for d in (2, 3, 2)]
    Ws = [rng.standard_normal((d, 2)) for d in (2, 3, 2)]
    want = multilinear(mvlib.triples(*Xs), *Ws)
    tol = 1e-12 * np.abs(want).max()
    np.testing.assert_allclose(mvlib.whitened_triples(*Xs, *Ws), want, atol=tol, rtol=0)
    cut = int(rng.integers(1, n))
    acc = mvlib.MomentAccumulator(Ws).update(*[X[:cut] for X in Xs]).update(*[X[cut:] for X in Xs])
    np.testing.assert_allclose(acc.whitened_triples(), want, atol=tol, rtol=0)
