"""Tests of mvlib.hmm and ObservableOperatorHMM (Hsu, Kakade & Zhang 2012)."""
import itertools
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from mvlib import hmm
from mvlib.hmm import ObservableOperatorHMM


def random_hmm(seed, k=3, d=5, concentration=1.0):
    """(π, T, O) in the paper's convention, T diagonal-dominant, full rank."""
    rng = np.random.default_rng(seed)
    O = rng.dirichlet(np.full(d, concentration), size=k).T
    T = 0.6 * np.eye(k) + 0.4 * rng.dirichlet(np.ones(k), size=k).T
    pi = rng.dirichlet(np.ones(k))
    return pi, T, O


# ------------------------------------------------------------------ brute force (no mvlib)
def brute_window_moments(pi, T, O):
    """P1, P21, P3x1[x, i, j] = Pr[x3=i, x2=x, x1=j] by enumerating hidden paths and symbols."""
    d, k = O.shape
    P3x1 = np.zeros((d, d, d))
    for h1, h2, h3 in itertools.product(range(k), repeat=3):
        ph = pi[h1] * T[h2, h1] * T[h3, h2]
        for a, b, c in itertools.product(range(d), repeat=3):
            P3x1[b, c, a] += ph * O[a, h1] * O[b, h2] * O[c, h3]
    P21 = np.array([[P3x1[i, :, j].sum() for j in range(d)] for i in range(d)])
    P1 = np.array([P3x1[:, :, j].sum() for j in range(d)])
    return P1, P21, P3x1


def brute_probability(pi, T, O, seq):
    """Pr[x_1..x_L] summed over all k^L hidden paths."""
    total = 0.0
    for hs in itertools.product(range(len(pi)), repeat=len(seq)):
        p = pi[hs[0]] * O[seq[0], hs[0]]
        for t in range(1, len(seq)):
            p *= T[hs[t], hs[t - 1]] * O[seq[t], hs[t]]
        total += p
    return total


def all_sequences(d, L):
    seqs = list(itertools.product(range(d), repeat=L))
    return seqs, np.array(seqs).reshape(-1, 1), np.full(len(seqs), L)


# ------------------------------------------------------------------ exactness on population moments
@pytest.mark.parametrize("seed,k,d", [(0, 3, 5), (1, 2, 4), (2, 4, 4), (3, 3, 6)])
def test_exact_on_population_moments(seed, k, d):
    pi, T, O = random_hmm(seed, k, d)
    b1, binf, B, U = hmm.oo_operators(*brute_window_moments(pi, T, O), k)
    # Lemma 3: b1 = (U^T O) π, binf^T = 1^T (U^T O)^{-1}, B_x = (U^T O) A_x (U^T O)^{-1}
    UO = U.T @ O
    assert np.allclose(b1, UO @ pi, atol=1e-12)
    assert np.allclose(binf @ UO, np.ones(k), atol=1e-10)
    assert np.allclose(B[1], UO @ T @ np.diag(O[1]) @ np.linalg.inv(UO), atol=1e-10)
    for L in range(1, 5):
        seqs, X, lengths = all_sequences(d, L)
        truth = np.array([brute_probability(pi, T, O, s) for s in seqs])
        raw = hmm.oo_joint_probability(b1, binf, B, X, lengths)
        assert np.max(np.abs(raw - truth)) < 1e-10 * truth.max()
        assert np.max(np.abs(raw / truth - 1)) < 1e-10
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ll, n_floor, n_obs, n_values = hmm.oo_log_likelihood(b1, binf, B, X, lengths)
        assert n_floor == n_obs == 0 and n_values == len(seqs) * L * d
        assert np.max(np.abs(np.exp(ll) / truth - 1)) < 1e-10
        # the brute force agrees with the library's forward algorithm as well
        fw = hmm.forward_log_likelihood(X, lengths, pi, T, O)
        assert np.max(np.abs(fw - np.log(truth))) < 1e-10


def test_exact_through_the_estimator_on_population_moments():
    """The estimator is the dense route on its own windows, and near the truth when the windows
    hold each triple in proportion to its probability (rounded to multiples of 2^-16)."""
    pi, T, O = random_hmm(5, 2, 3)
    _, _, P3x1 = brute_window_moments(pi, T, O)
    scale = 2 ** 16
    counts = np.round(P3x1 * scale).astype(int)               # [x2, x3, x1]
    seqs = [[a, b, c] for b, c, a in itertools.product(range(3), repeat=3)
            for _ in range(counts[b, c, a])]
    X, lengths = np.array(seqs).reshape(-1, 1), np.full(len(seqs), 3)
    est = ObservableOperatorHMM(2, start="windows").fit(X, lengths)
    exact = hmm.oo_operators(*hmm.oo_window_moments(X, lengths), 2)
    seqs4, X4, L4 = all_sequences(3, 4)
    truth = np.array([brute_probability(pi, T, O, s) for s in seqs4])
    ll = est.score_samples_per_sequence(X4, L4)
    assert np.max(np.abs(np.exp(ll) / truth - 1)) < 5e-3       # counts rounded at 2^-16
    assert np.allclose(ll, hmm.oo_log_likelihood(*exact[:3], X4, L4)[0], atol=1e-12)


def test_streamed_operators_equal_dense_route():
    """oo_operators_from_sequences (no d^3 array) equals oo_operators on the dense empirical moments,
    whose counts are checked here against a loop over windows."""
    pi, T, O = random_hmm(7, 3, 6)
    X, _, _ = hmm.sample_hmm(pi, T, O, 300, 12, random_state=1)
    lengths = np.array([3, 4, 5, 6, 18, 19, 20, 7, 8, 10] + [12] * 291 + [8])   # unequal lengths
    assert lengths.sum() == X.shape[0]
    P1, P21, P3x1 = hmm.oo_window_moments(X, lengths)
    loop = np.zeros((6, 6, 6))
    s = 0
    for L in lengths:
        seq = X[s:s + L, 0]
        for t in range(L - 2):
            loop[seq[t + 1], seq[t + 2], seq[t]] += 1
        s += L
    assert np.allclose(P3x1, loop / loop.sum(), atol=1e-15)
    dense = hmm.oo_operators(P1, P21, P3x1, 3)
    stream = hmm.oo_operators_from_sequences(X, lengths, 3)
    for a, b in zip(dense[:3], stream[:3]):
        assert np.allclose(a, b, atol=1e-12)


def test_start_state_from_first_symbol_law():
    """U^T f with f = O π0 is the b1 of the HMM started at π0 (Lemma 3)."""
    pi, T, O = random_hmm(4, 3, 5)
    b1, binf, B, U = hmm.oo_operators(*brute_window_moments(pi, T, O), 3)
    pi0 = np.array([0.7, 0.2, 0.1])
    start = hmm.oo_start_state(U, O @ pi0)
    seqs, X, lengths = all_sequences(5, 3)
    truth = np.array([brute_probability(pi0, T, O, s) for s in seqs])
    ll = hmm.oo_log_likelihood(start, binf, B, X, lengths)[0]
    assert np.max(np.abs(np.exp(ll) / truth - 1)) < 1e-10


def test_long_sequence_no_underflow():
    pi, T, O = random_hmm(8, 3, 5)
    b1, binf, B, U = hmm.oo_operators(*brute_window_moments(pi, T, O), 3)
    X, lengths, _ = hmm.sample_hmm(pi, T, O, 2, 5000, random_state=0)
    ll = hmm.oo_log_likelihood(b1, binf, B, X, lengths)[0]
    assert np.all(np.isfinite(ll)) and ll.max() < -1000        # e^-1000 underflows in a raw product
    assert np.allclose(ll, hmm.forward_log_likelihood(X, lengths, pi, T, O), rtol=1e-10)


# ------------------------------------------------------------------ sampled data
def heldout_gaps(n_train, seeds=range(5)):
    """True minus estimated held-out log-likelihood per symbol, one per seed."""
    gaps = []
    for seed in seeds:
        pi, T, O = random_hmm(seed, 3, 6, concentration=0.5)
        Xtr, Ltr, _ = hmm.sample_hmm(pi, T, O, n_train, 30, random_state=100 + seed)
        Xte, Lte, _ = hmm.sample_hmm(pi, T, O, 500, 30, random_state=200 + seed)
        true = hmm.forward_log_likelihood(Xte, Lte, pi, T, O).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            est = ObservableOperatorHMM(3, random_state=seed).fit(Xtr, Ltr).score(Xte, Lte)
        assert np.isfinite(est)
        gaps.append((true - est) / Xte.shape[0])
    return np.array(gaps)


def test_heldout_score_approaches_true_model():
    small, large = heldout_gaps(1000), heldout_gaps(20000)
    # measured: mean 0.014 nats/symbol at 1,000 sequences, 0.0003 at 20,000 (sd 0.0002)
    assert large.mean() < 0.002 and large.max() < 0.005
    assert large.mean() < small.mean()
    assert np.all(large > -0.005)                             # not better than the truth beyond noise


# ------------------------------------------------------------------ flooring
def test_flooring_rule_by_hand():
    """k = 1: q_t(x) = B_x b_t; the negative value is floored at floor × the smallest positive."""
    B = np.array([0.5, 0.6, -0.1]).reshape(3, 1, 1)
    b1, binf = np.ones(1), np.ones(1)
    X, lengths = np.array([[0], [2], [1]]), np.array([1, 2])
    ll, n_floor, n_obs, n_values = hmm.oo_log_likelihood(b1, binf, B, X, lengths, floor=1e-3)
    q = np.array([0.5, 0.6, 0.5e-3])
    # sequence 0: x = 0. sequence 1: x = 2 (floored), then b2 = B_2 b1 / (-0.1) = 1, x = 1
    assert np.allclose(ll, [np.log(q[0] / q.sum()), np.log(q[2] / q.sum()) + np.log(q[1] / q.sum())],
                       atol=1e-14)
    assert (n_floor, n_obs, n_values) == (3, 1, 9)


def test_estimator_warns_once_with_the_count_and_never_nan():
    pi, T, O = random_hmm(0, 3, 6, concentration=0.5)
    Xtr, Ltr, _ = hmm.sample_hmm(pi, T, O, 200, 30, random_state=100)
    Xte, Lte, _ = hmm.sample_hmm(pi, T, O, 500, 30, random_state=200)
    est = ObservableOperatorHMM(3, random_state=0).fit(Xtr, Ltr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ll = est.score_samples_per_sequence(Xte, Lte)
    floored = [w for w in caught if "floored" in str(w.message)]
    assert len(floored) == 1 and issubclass(floored[0].category, RuntimeWarning)
    n_floor = hmm.oo_log_likelihood(est.b1_, est.binf_, est.operators_, Xte, Lte)[1]
    assert n_floor > 0 and str(n_floor) in str(floored[0].message)
    assert np.all(np.isfinite(ll))
    with pytest.warns(RuntimeWarning, match="floored"):
        total = est.score(Xte, Lte)
    assert np.isclose(total, ll.sum())


def test_no_positive_value_gives_uniform_step():
    B = -np.ones((4, 1, 1))
    ll, n_floor, n_obs, _ = hmm.oo_log_likelihood(np.ones(1), np.ones(1), B, np.array([[1], [3]]))
    assert np.allclose(ll, [2 * np.log(0.25)]) and n_floor == 8 and n_obs == 2


# ------------------------------------------------------------------ input, protocol
@pytest.fixture(scope="module")
def data():
    pi, T, O = random_hmm(3, 3, 6)
    X, lengths, _ = hmm.sample_hmm(pi, T, O, 400, 20, random_state=0)
    return X, lengths


def test_short_sequences_skipped_with_count(data):
    X, lengths = data
    Xs = np.vstack([[[1], [2]], X, [[0]]])
    Ls = np.concatenate([[2], lengths, [1]])
    with pytest.warns(RuntimeWarning, match="2 of 402 sequences are shorter than 3"):
        est = ObservableOperatorHMM(3, random_state=0).fit(Xs, Ls)
    ref = ObservableOperatorHMM(3, random_state=0).fit(X, lengths)
    assert est.n_skipped_ == 2 and est.n_windows_ == ref.n_windows_
    assert np.allclose(est.operators_, ref.operators_, atol=1e-14)
    with pytest.raises(ValueError, match="shorter than 3"):
        ObservableOperatorHMM(2).fit(np.array([[0], [1], [1], [0]]), [2, 2])
    # scoring accepts sequences of any positive length
    assert np.isfinite(ref.score(np.array([[0], [1], [2]]), [1, 2]))


def test_bad_input(data):
    X, lengths = data
    est = ObservableOperatorHMM(3, random_state=0).fit(X, lengths)
    with pytest.raises(ValueError, match="outside the declared range"):
        est.score(np.array([[0], [6], [1]]))
    with pytest.raises(ValueError, match="outside the declared range"):
        ObservableOperatorHMM(3, n_symbols=4).fit(X, lengths)
    with pytest.raises(ValueError, match="non-negative"):
        ObservableOperatorHMM(3).fit(-X, lengths)
    with pytest.raises(ValueError, match="lengths sum to"):
        ObservableOperatorHMM(3).fit(X, lengths[:-1])
    with pytest.raises(ValueError, match="lengths sum to"):
        est.score(X, lengths[:-1])
    with pytest.raises(ValueError, match="integer symbols"):
        ObservableOperatorHMM(3).fit(X + 0.5, lengths)
    with pytest.raises(ValueError, match="NaN"):
        ObservableOperatorHMM(3).fit(np.where(X == 0, np.nan, X), lengths)
    with pytest.raises(ValueError, match="shape"):
        ObservableOperatorHMM(3).fit(np.hstack([X, X]), lengths)
    with pytest.raises(ValueError, match="n_components=7 exceeds n_symbols=6"):
        ObservableOperatorHMM(7).fit(X, lengths)
    with pytest.raises(ValueError, match="exceeds the rank"):
        ObservableOperatorHMM(3).fit(np.tile([[0], [1], [0], [2]], (50, 1)), None)   # rank(P21) = 2
    with pytest.raises(TypeError, match="n_components"):
        ObservableOperatorHMM(2.5).fit(X, lengths)
    with pytest.raises(ValueError, match="start"):
        ObservableOperatorHMM(3, start="middle").fit(X, lengths)
    with pytest.raises(ValueError, match="floor"):
        ObservableOperatorHMM(3, floor=0.0).fit(X, lengths)
    with pytest.raises(TypeError, match="random_state"):
        ObservableOperatorHMM(3, random_state="seed").fit(X, lengths)
    with pytest.raises(ValueError, match="floor"):
        hmm.oo_log_likelihood(est.b1_, est.binf_, est.operators_, X, lengths, floor=1.5)
    with pytest.raises(ValueError, match="shape"):
        hmm.oo_log_likelihood(est.b1_[:2], est.binf_, est.operators_, X, lengths)


def test_start_modes(data):
    X, lengths = data
    auto = ObservableOperatorHMM(3).fit(X, lengths)
    assert auto.start_used_ == "first"
    few = ObservableOperatorHMM(3).fit(X[:20 * 10], lengths[:10])
    assert few.start_used_ == "windows" and np.array_equal(few.b1_, few.b1_windows_)
    win = ObservableOperatorHMM(3, start="windows").fit(X, lengths)
    assert np.array_equal(win.operators_, auto.operators_) and not np.allclose(win.b1_, auto.b1_)


@pytest.mark.filterwarnings("ignore:.*floored:RuntimeWarning")
def test_not_fitted_reproducible_pickle_clone(data):
    X, lengths = data
    with pytest.raises(NotFittedError):
        ObservableOperatorHMM(3).score(X, lengths)
    with pytest.raises(NotFittedError):
        ObservableOperatorHMM(3).score_samples_per_sequence(X, lengths)
    a = ObservableOperatorHMM(3, random_state=4).fit(X, lengths)
    b = ObservableOperatorHMM(3, random_state=4).fit(X, lengths)
    c = ObservableOperatorHMM(3, random_state=np.random.default_rng(9)).fit(X, lengths)
    assert np.array_equal(a.operators_, b.operators_) and a.score(X, lengths) == b.score(X, lengths)
    assert np.array_equal(a.operators_, c.operators_)                # deterministic estimate
    r = pickle.loads(pickle.dumps(a))
    assert r.score(X, lengths) == a.score(X, lengths)
    assert clone(a).get_params() == a.get_params()
    X0 = X.copy()
    a.fit(X, lengths)
    assert np.array_equal(X, X0)
    assert a.fit(X, lengths) is a and a.n_features_in_ == 1 and a.n_symbols_ == 6
