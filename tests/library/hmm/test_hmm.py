"""Tests of mvlib.hmm and mvlib.SpectralHMM (chapter 6)."""
import warnings

import numpy as np
import pytest

import mvlib
from mvlib import hmm
from mvlib.hmm._algorithm import _window_law_and_grad
from mvlib.hmm import hmm_from_moments

TRANSMAT = np.array([[0.8, 0.1, 0.1], [0.15, 0.7, 0.15], [0.05, 0.15, 0.8]])


def params(seed=0, k=3, d=8):
    rng = np.random.default_rng(seed)
    O = rng.dirichlet(np.full(d, 0.4), size=k).T
    T = TRANSMAT.T if k == 3 else rng.dirichlet(np.ones(k), size=k).T * 0.5 + 0.5 * np.eye(k)
    pi = rng.dirichlet(np.ones(k))
    return pi, T, O


def matched_errors(O, T, est):
    perm, _ = mvlib.match_columns(O, est.emissionprob_.T)
    return (np.abs(est.emissionprob_[perm] - O.T).max(),
            np.abs(est.transmat_[np.ix_(perm, perm)] - T.T).max(), perm)


@pytest.fixture(scope="module")
def large_sample():
    pi, T, O = params(1)
    X, lengths, H = hmm.sample_hmm(pi, T, O, 20000, 20, random_state=3)
    return pi, T, O, X, lengths, H


# ------------------------------------------------------------------ population identities
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_proposition_4_2_matches_chain_sum(k):
    pi, T, O = params(k, k=k, d=k + 3)
    w, (M1, M2, M3) = hmm.hmm_three_view(pi, T, O)
    P12, P13, P23, P123 = hmm.hmm_window_moments(pi, T, O)
    assert np.allclose(np.einsum("j,aj,bj,cj->abc", w, M1, M2, M3), P123, atol=1e-14)
    assert np.allclose(M1.sum(0), 1) and np.allclose(M3.sum(0), 1)
    assert np.allclose(P12, M1 @ np.diag(w) @ M2.T)
    assert np.isclose(P123.sum(), 1.0)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_recovery_from_population_moments(k):
    pi, T, O = params(10 + k, k=k, d=k + 4)
    Oe, Te = hmm_from_moments(*hmm.hmm_window_moments(pi, T, O), k, random_state=0)
    perm, _ = mvlib.match_columns(O, Oe)
    assert np.abs(Oe[:, perm] - O).max() < 1e-9
    assert np.abs(Te[np.ix_(perm, perm)] - T).max() < 1e-9


def test_project_simplex():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(6, 40))
    P = hmm.project_simplex(V)
    assert np.all(P >= 0) and np.allclose(P.sum(0), 1)
    # optimality: no random simplex point is closer
    for j in range(5):
        Q = rng.dirichlet(np.ones(6), size=200).T
        assert np.linalg.norm(V[:, [j]] - Q, axis=0).min() >= np.linalg.norm(V[:, j] - P[:, j]) - 1e-12
    q = rng.dirichlet(np.ones(6))
    assert np.allclose(hmm.project_simplex(q), q)
    assert np.allclose(hmm.project_simplex(V.T, axis=1), P.T)


def test_stationary_distribution():
    _, T, _ = params(0)
    s = hmm.stationary_distribution(T)
    assert np.allclose(T @ s, s) and np.isclose(s.sum(), 1)


# ------------------------------------------------------------------ windows
def test_window_counts_respect_boundaries():
    X = np.array([0, 1, 2, 0, 1, 2, 1])[:, None]
    C = hmm.window_counts(X, [3, 4], n_symbols=3)
    assert C.sum() == 1 + 2
    assert C[0, 1, 2] == 2 and C[1, 2, 1] == 1 and C[1, 2, 0] == 0 and C[2, 0, 1] == 0 and C[0, 1, 1] == 0
    # against a loop over windows
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 9, size=50)
    X = rng.integers(0, 4, size=(lengths.sum(), 1))
    C = hmm.window_counts(X, lengths)
    ref = np.zeros((4, 4, 4), int)
    s = 0
    for L in lengths:
        for t in range(s, s + L - 2):
            ref[X[t, 0], X[t + 1, 0], X[t + 2, 0]] += 1
        s += L
    assert np.array_equal(C, ref)


def test_empirical_window_law_converges(large_sample):
    pi, T, O, X, lengths, _ = large_sample
    C = hmm.window_counts(X, lengths)
    # pooled windows: the first state follows the average law over window starts
    L = int(lengths[0])
    pi_bar = np.mean([np.linalg.matrix_power(T, t) @ pi for t in range(L - 2)], axis=0)
    P123 = hmm.hmm_window_moments(pi_bar, T, O)[3]
    assert np.abs(C / C.sum() - P123).max() < 0.003


# ------------------------------------------------------------------ estimator
def test_spectral_hmm_large_sample(large_sample):
    pi, T, O, X, lengths, H = large_sample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = mvlib.SpectralHMM(3, random_state=0).fit(X, lengths)
    e_O, e_T, perm = matched_errors(O, T, est)
    assert e_O < 0.03 and e_T < 0.05
    assert est.emissionprob_.shape == (3, 8) and est.transmat_.shape == (3, 3)
    assert np.allclose(est.transmat_.sum(1), 1) and np.allclose(est.emissionprob_.sum(1), 1)
    assert np.all(est.emissionprob_ >= 0) and np.all(est.transmat_ >= 0)
    assert np.abs(est.startprob_[perm] - pi).max() < 0.05
    # forward algorithm and Viterbi agree with hmmlearn at the same parameters
    sub, Ls = X[:2000], lengths[:100]
    ref = est.to_hmmlearn(smoothing=0.0)
    assert np.isclose(est.score(sub, Ls), ref.score(sub, Ls), rtol=1e-10)
    assert np.array_equal(est.predict(sub, Ls), ref.predict(sub, Ls))
    assert np.mean(est.predict(sub, Ls) == perm[H[:2000]]) > 0.6


def test_forward_matches_brute_force():
    pi, T, O = params(2, k=2, d=3)
    X = np.array([[0], [2], [1], [1], [0], [2], [2]])
    ll = hmm.forward_log_likelihood(X, [4, 3], pi, T, O)
    import itertools
    for (s, L), val in zip([(0, 4), (4, 3)], ll):
        tot = 0.0
        for path in itertools.product(range(2), repeat=L):
            p = pi[path[0]] * O[X[s, 0], path[0]]
            for t in range(1, L):
                p *= T[path[t], path[t - 1]] * O[X[s + t, 0], path[t]]
            tot += p
        assert np.isclose(val, np.log(tot))


def test_reproducible(large_sample):
    *_, X, lengths, _ = large_sample
    X, lengths = X[:100000], lengths[:5000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = mvlib.SpectralHMM(3, random_state=7).fit(X, lengths)
        b = mvlib.SpectralHMM(3, random_state=7).fit(X, lengths)
        c = mvlib.SpectralHMM(3, random_state=np.random.default_rng(7)).fit(X, lengths)
    for attr in ("emissionprob_", "transmat_", "startprob_"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr))
        assert np.array_equal(getattr(a, attr), getattr(c, attr))


def test_simplex_projection_warns():
    pi, T, O = params(4)
    X, lengths, _ = hmm.sample_hmm(pi, T, O, 300, 20, random_state=0)
    with pytest.warns(RuntimeWarning, match="projected back; the largest change|constrained to the simplex"):
        est = mvlib.SpectralHMM(3, random_state=0).fit(X, lengths)
    assert max(est.projection_.values()) > 0


def test_to_hmmlearn_polishes():
    pi, T, O = params(5)
    X, lengths, _ = hmm.sample_hmm(pi, T, O, 400, 30, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        est = mvlib.SpectralHMM(3, random_state=0).fit(X, lengths)
    m = est.to_hmmlearn(n_iter=5)
    assert m.init_params == ""
    before = m.score(X, lengths)
    m.fit(X, lengths)
    assert m.score(X, lengths) >= before


# ------------------------------------------------------------------ bad input
def test_sequences_shorter_than_three():
    X = np.zeros((7, 1), int)
    X[::2] = 1
    with pytest.raises(ValueError, match="sequence 1 has length 2; windows of three"):
        mvlib.SpectralHMM(2).fit(X, [5, 2])


def test_symbols_outside_declared_range():
    X = np.array([[0], [1], [5], [2]])
    with pytest.raises(ValueError, match="outside the declared range 0..3"):
        mvlib.SpectralHMM(2, n_symbols=4).fit(X)
    with pytest.raises(ValueError, match="non-negative"):
        mvlib.SpectralHMM(2).fit(np.array([[0], [-1], [1], [2]]))
    with pytest.raises(ValueError, match="integer symbols"):
        mvlib.SpectralHMM(2).fit(np.array([[0.5], [1], [1], [2]]))


def test_lengths_must_sum_to_n_samples():
    X = np.arange(10)[:, None] % 3
    with pytest.raises(ValueError, match="lengths sum to 9 but X has 10 rows"):
        mvlib.SpectralHMM(2).fit(X, [4, 5])
    with pytest.raises(ValueError, match="positive"):
        mvlib.SpectralHMM(2).fit(X, [11, -1])


@pytest.mark.parametrize("X, exc", [(None, TypeError), (["a", "b", "c"], TypeError),
                                    (np.zeros(5), ValueError), (np.zeros((5, 2)), ValueError),
                                    (np.array([[0.0], [np.nan], [1.0]]), ValueError)])
def test_bad_X(X, exc):
    with pytest.raises(exc):
        mvlib.SpectralHMM(2).fit(X)


def test_bad_hyper_parameters():
    X = np.arange(30)[:, None] % 4
    with pytest.raises(ValueError, match="n_components"):
        mvlib.SpectralHMM(0).fit(X)
    with pytest.raises(TypeError, match="n_components"):
        mvlib.SpectralHMM(2.0).fit(X)
    with pytest.raises(ValueError, match="exceeds n_symbols"):
        mvlib.SpectralHMM(5).fit(X)
    with pytest.raises(TypeError, match="random_state"):
        mvlib.SpectralHMM(2, random_state="x").fit(X)
    with pytest.raises(ValueError, match="start must be"):
        mvlib.SpectralHMM(2, start="x").fit(X)
    with pytest.raises(ValueError, match="not fitted"):
        mvlib.SpectralHMM(2).score(X)


def test_rank_deficient_refused():
    # a symbol sequence with only 2 distinct symbols cannot identify 3 states
    X = (np.arange(300) % 2)[:, None]
    with pytest.raises(ValueError, match="Condition 3.1"):
        mvlib.SpectralHMM(3, n_symbols=4).fit(X)


def test_input_not_modified(large_sample):
    *_, X, lengths, _ = large_sample
    Xs, Ls = X[:3000].copy(), lengths[:150].copy()
    X0, L0 = Xs.copy(), Ls.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mvlib.SpectralHMM(3, random_state=0).fit(Xs, Ls)
    assert np.array_equal(Xs, X0) and np.array_equal(Ls, L0)


def test_tensor_route_falls_back_when_noisy():
    # 250 short sequences of a hard model: the power method finds a non-positive eigenvalue
    pi, T, O = params(0)
    O = np.random.default_rng(0).dirichlet(np.full(8, 0.4), 3).T
    fell_back = 0
    for seed in range(6):
        X, lengths, _ = hmm.sample_hmm(np.full(3, 1 / 3), TRANSMAT.T, O, 250, 50, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = mvlib.SpectralHMM(3, random_state=0, method="tensor").fit(X, lengths)
        if est.method_used_ == "observable":
            fell_back += 1
            assert any("fell back to Algorithm B" in str(w.message) for w in caught)
        assert np.allclose(est.transmat_.sum(1), 1)
    assert fell_back >= 1


def test_methods_agree_on_large_sample(large_sample):
    pi, T, O, X, lengths, _ = large_sample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = mvlib.SpectralHMM(3, random_state=0, method="tensor").fit(X, lengths)
    e_O, e_T, _ = matched_errors(O, T, a)
    assert e_O < 0.03 and e_T < 0.06 and a.method_used_ == "tensor"
    with pytest.raises(ValueError, match="method"):
        mvlib.SpectralHMM(3, method="em").fit(X, lengths)


# ------------------------------------------------------------------ window-likelihood refinement
def test_refinement_gradient_and_value():
    from scipy.optimize import check_grad
    from scipy.special import softmax

    rng = np.random.default_rng(20)
    k, d = 3, 5
    C = rng.integers(0, 40, (d, d, d)).astype(float)
    z = rng.standard_normal(k * d + k * k + k)
    f = lambda z: _window_law_and_grad(z, C, k, d, C.sum())[0]  # noqa: E731
    g = lambda z: _window_law_and_grad(z, C, k, d, C.sum())[1]  # noqa: E731
    assert check_grad(f, g, z) < 1e-5 * np.linalg.norm(g(z))
    O = softmax(z[:k * d].reshape(k, d), axis=1).T
    T = softmax(z[k * d:k * d + k * k].reshape(k, k), axis=1).T
    pi = softmax(z[-k:])
    P = hmm.hmm_window_moments(pi, T, O)[3]                   # the chain sum
    assert abs(f(z) + np.sum(C * np.log(P)) / C.sum()) < 1e-12


def test_refinement_fixed_point_at_the_truth():
    # with the exact window law as "counts", the truth maximises the composite likelihood
    pi, T, O = params(2)
    P = hmm.hmm_window_moments(pi, T, O)[3]
    pi_r, T_r, O_r, info = hmm.refine_window_likelihood(1e6 * P, pi, T, O, floor=1e-9)
    assert info["objective"] <= info["objective_start"] + 1e-12
    assert np.abs(T_r - T).max() < 1e-4 and np.abs(O_r - O).max() < 1e-4


def test_refinement_improves_the_hard_case():
    # emission columns close to each other (sigma_k(O) = 0.125): T from the moments alone
    # inherits O's error amplified; the refinement brings it down
    rng = np.random.default_rng(0)
    O = rng.dirichlet(np.full(8, 0.4), 3).T
    T = TRANSMAT.T
    X, lengths, _ = hmm.sample_hmm(np.full(3, 1 / 3), T, O, 20000, 50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        plain = mvlib.SpectralHMM(3, random_state=0).fit(X, lengths)
        refined = mvlib.SpectralHMM(3, random_state=0, refine=True).fit(X, lengths)
    eO0, eT0, _ = matched_errors(O, T, plain)
    eO1, eT1, _ = matched_errors(O, T, refined)
    assert eT1 < 0.5 * eT0 and eT1 < 0.03 and eO1 < 0.02
    info = refined.refinement_
    assert info["converged"] and info["objective"] < info["objective_start"]
    assert plain.refinement_ is None
    np.testing.assert_allclose(refined.transmat_.sum(axis=1), 1.0)
    np.testing.assert_allclose(refined.emissionprob_.sum(axis=1), 1.0)


def test_refinement_bad_input():
    X = (np.arange(600) % 101)[:, None]
    with pytest.raises(ValueError, match="n_symbols=101 exceeds 100"):
        mvlib.SpectralHMM(2, refine=True).fit(X)
    with pytest.raises(TypeError, match="refine must be a bool"):
        mvlib.SpectralHMM(2, refine="yes").fit(X[:, :] % 4)
    pi, T, O = params(3)
    with pytest.raises(ValueError, match="floor"):
        hmm.refine_window_likelihood(np.ones((8, 8, 8)), pi, T, O, floor=0.5)
    with pytest.raises(ValueError, match="rows but C has"):
        hmm.refine_window_likelihood(np.ones((7, 7, 7)), pi, T, O)
    with pytest.raises(ValueError, match="non-negative"):
        hmm.refine_window_likelihood(-np.ones((8, 8, 8)), pi, T, O)


def test_refinement_warns_when_it_stops_early():
    pi, T, O = params(4)
    X, lengths, _ = hmm.sample_hmm(pi, T, O, 300, 20, random_state=5)
    C = hmm.window_counts(X, lengths, 8)
    with pytest.warns(RuntimeWarning, match="stopped without converging after 2 iterations"):
        *_, info = hmm.refine_window_likelihood(C, np.full(3, 1 / 3), np.full((3, 3), 1 / 3) + 0.1 * np.eye(3) - 0.1 / 3,
                                                O, max_iter=2)
    assert not info["converged"] and info["n_iter"] == 2


# ------------------------------------------------------------------ transitions on the simplex
def _brute_simplex_ls(A, b):
    """Best feasible point over every support (equality-constrained LS on each face)."""
    import itertools
    k = A.shape[1]
    best, arg = np.inf, None
    for r in range(1, k + 1):
        for S in itertools.combinations(range(k), r):
            S = list(S)
            K = np.zeros((r + 1, r + 1))
            K[:-1, :-1], K[:-1, -1], K[-1, :-1] = A[:, S].T @ A[:, S], 1.0, 1.0
            sol = np.linalg.solve(K, np.append(A[:, S].T @ b, 1.0))
            if sol[:-1].min() >= -1e-12:
                z = np.zeros(k)
                z[S] = sol[:-1]
                f = np.sum((A @ z - b) ** 2)
                if f < best:
                    best, arg = f, z
    return best, arg


def test_simplex_least_squares_is_the_constrained_minimum():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(2, 8))
        k = int(rng.integers(1, m + 1))
        A = rng.normal(size=(m, k)) * 10.0 ** rng.uniform(-3, 3)
        b = rng.normal(size=m) * 3 * A.std()
        x = hmm.simplex_least_squares(A, b)
        assert x.min() >= 0 and abs(x.sum() - 1) < 1e-12
        best, arg = _brute_simplex_ls(A, b)
        assert np.sum((A @ x - b) ** 2) <= best * (1 + 1e-10) + 1e-300
        np.testing.assert_allclose(x, arg, atol=1e-7, rtol=0)


def test_simplex_least_squares_exact_on_consistent_systems():
    rng = np.random.default_rng(1)
    A = rng.random((7, 4))
    T = rng.dirichlet(np.ones(4), 4).T
    np.testing.assert_allclose(hmm.simplex_least_squares(A, A @ T), T, atol=1e-12, rtol=0)
    with pytest.raises(ValueError, match="full column rank"):
        hmm.simplex_least_squares(np.ones((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match="B has 3 rows but A has 4"):
        hmm.simplex_least_squares(np.eye(4), np.ones(3))


def test_transitions_bounded_where_column_sums_vanish():
    """M3 = O t with Σt ≈ 0: dividing the unconstrained solution by its column sum explodes."""
    from mvlib.hmm._estimator import _transitions
    rng = np.random.default_rng(2)
    O = rng.dirichlet(np.ones(6), 3).T
    t = np.array([0.5, -0.5 + 1e-4, 0.02])
    M3 = np.column_stack([O @ t, O @ np.array([0.2, 0.3, 0.5])])
    old = np.linalg.lstsq(O, M3, rcond=None)[0]
    old = old / old.sum(axis=0)
    assert np.abs(old[:, 0]).sum() > 20                 # the old route's column blows up
    T, moved = _transitions(O, M3)
    assert np.all(T >= 0) and np.allclose(T.sum(axis=0), 1.0)
    np.testing.assert_allclose(T[:, 1], [0.2, 0.3, 0.5], atol=1e-12)
    assert moved > 0


def test_window_start_condition_counterexample():
    """All sequences of length 3 start in state 0: Tπ̄ > 0 but π̄ is not, M1 has rank one."""
    pi0, T, O = np.array([1.0, 0.0, 0.0]), np.array([[.8, .1, .1], [.15, .7, .15], [.05, .2, .75]]).T, \
        np.random.default_rng(0).dirichlet(np.ones(8), 3).T
    assert np.all(T @ pi0 > 0)
    P12 = hmm.hmm_window_moments(pi0, T, O)[0]
    assert np.linalg.matrix_rank(P12, tol=1e-12) == 1
    X, lengths, _ = hmm.sample_hmm(pi0, T, O, 20000, 3, random_state=0)
    with pytest.warns(RuntimeWarning, match=r"π̄ > 0"):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="(?!σ_)")
            mvlib.SpectralHMM(3, random_state=0).fit(X, lengths)


@pytest.mark.parametrize("cls", [mvlib.SpectralHMM, mvlib.ObservableOperatorHMM])
def test_former_parameter_names_still_work_with_a_future_warning(cls):
    """n_states (and SpectralHMM's startprob) were renamed n_components and start (issue 26)."""
    X, lengths, _ = hmm.sample_hmm(np.array([0.5, 0.5]), np.array([[0.85, 0.2], [0.15, 0.8]]),
                               np.array([[0.6, 0.05], [0.3, 0.15], [0.05, 0.3], [0.05, 0.5]]),
                               60, 25, random_state=0)
    new = cls(2, random_state=0).fit(X, lengths)
    with pytest.warns(FutureWarning, match="n_states was renamed n_components"):
        old = cls(n_states=2, random_state=0).fit(X, lengths)
    assert np.array_equal(new.score_samples_per_sequence(X, lengths), old.score_samples_per_sequence(X, lengths))
    with pytest.raises(ValueError, match="were both given"), pytest.warns(FutureWarning):
        cls(2, n_states=3).fit(X, lengths)
    if cls is mvlib.SpectralHMM:
        with pytest.warns(FutureWarning, match="startprob was renamed start"):
            old = cls(2, random_state=0, startprob="stationary").fit(X, lengths)
        assert np.array_equal(old.startprob_, cls(2, random_state=0, start="stationary").fit(X, lengths).startprob_)


def test_lengths_whose_int64_sum_wraps_around_are_refused():
    """Four lengths near 2**62 sum, modulo 2**64, to the 8 rows of X: the check must see the true
    sum (the interpreter used to die in np.repeat), for the fit and for window_starts alike."""
    X = np.zeros((8, 1), dtype=int)
    wrap = [2 ** 62, 2 ** 62, 2 ** 62, 2 ** 62 + 8]
    assert int(np.asarray(wrap, dtype=np.int64).sum()) == 8          # the wrap-around itself
    with pytest.raises(ValueError, match="lengths sum to 18446744073709551624 but X has 8 rows"):
        hmm.check_symbol_sequences(X, wrap)
    for est in (mvlib.SpectralHMM(2), mvlib.ObservableOperatorHMM(2)):
        with pytest.raises(ValueError, match="lengths sum to 18446744073709551624"):
            est.fit(X, wrap)
    with pytest.raises(ValueError, match="more than an index can hold"):
        hmm.window_starts(wrap)
    with pytest.raises(ValueError, match="positive"):
        hmm.window_starts([3, 0, 4])
    with pytest.raises(TypeError, match="ints"):
        hmm.window_starts([3.0, 4.0])
    assert hmm.window_starts([4, 3]).tolist() == [0, 1, 4]
