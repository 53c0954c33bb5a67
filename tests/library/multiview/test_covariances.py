import numpy as np
import pytest

import mvlib
from mvlib.multiview import f123_operator, view_covariances


def _exact_design(rng, k=3, d1=5, d2=4, d3=3, shared_mean=False):
    """Rows whose empirical moments equal the population moments of a three-view mixture:
    views 1 and 2 sit at their means, view 3 takes the 2*d3 points mu ± sqrt(d3) L e_i."""
    M1, M2 = rng.standard_normal((d1, k)), rng.standard_normal((d2, k))
    M3 = np.ones((d3, k)) if shared_mean else rng.standard_normal((d3, k))
    counts = np.array([2, 3, 5])[:k]
    S = []
    rows = [[], [], []]
    for t in range(k):
        A = rng.standard_normal((d3, d3))
        S.append(A @ A.T / d3 + 0.1 * np.eye(d3))
        L = np.linalg.cholesky(S[-1])
        pts = np.concatenate([M3[:, t] + np.sqrt(d3) * L.T, M3[:, t] - np.sqrt(d3) * L.T])  # (2 d3, d3)
        for _ in range(counts[t]):
            rows[0].append(np.tile(M1[:, t], (2 * d3, 1)))
            rows[1].append(np.tile(M2[:, t], (2 * d3, 1)))
            rows[2].append(pts)
    X = [np.concatenate(r) for r in rows]
    return X, M1, M3, np.array(S)


@pytest.mark.parametrize("shared_mean", [False, True])
def test_exact_on_exact_moments(rng, shared_mean):
    X, M1, M3, S = _exact_design(rng, shared_mean=shared_mean)
    if shared_mean:
        out = view_covariances(X, 3, random_state=0)
        D = out["directions1"] / np.linalg.norm(out["directions1"], axis=0)
        perm, _ = mvlib.match_columns(M1 / np.linalg.norm(M1, axis=0), D, sign_invariant=True)
    else:
        out = view_covariances(X, 3, means1=M1, means3=M3)
        perm = np.arange(3)
    np.testing.assert_allclose(out["covariances"][perm], S, atol=1e-8)
    G = out["second_moments"][perm]
    np.testing.assert_allclose(G, S + np.einsum("it,jt->tij", M3, M3), atol=1e-8)


def test_sampled_covariances_with_multiview_mixture(rng):
    n, k, d3 = 60_000, 3, 3
    h = rng.choice(k, size=n, p=[0.3, 0.3, 0.4])
    M1, M2, M3 = 2 * rng.standard_normal((6, k)), 2 * rng.standard_normal((6, k)), 2 * rng.standard_normal((d3, k))
    S = np.array([np.diag([1.0, 0.5, 0.7]) + 0.2 * (np.ones((3, 3)) - np.eye(3)),
                  np.diag([0.4, 0.8, 0.5]), 0.6 * np.eye(3)])
    L = np.linalg.cholesky(S)
    X = [M1[:, h].T + rng.standard_normal((n, 6)), M2[:, h].T + rng.standard_normal((n, 6)),
         M3[:, h].T + np.einsum("nij,nj->ni", L[h], rng.standard_normal((n, d3)))]
    mv = mvlib.MultiViewMixture(k, random_state=0).fit(X)
    out = view_covariances(X, k, means1=mv.means_[0].T, means3=mv.means_[2].T)
    perm, _ = mvlib.match_columns(M1, mv.means_[0].T)
    assert np.max(np.abs(out["covariances"][perm] - S)) < 0.1


def test_bad_input(rng):
    X = [rng.standard_normal((100, 3)) for _ in range(3)]
    with pytest.raises(ValueError, match="X1 has 100 rows but X2 has 99"):
        view_covariances([X[0], X[1][:99], X[2]], 2)
    with pytest.raises(ValueError, match="exceeds the dimensions"):
        view_covariances(X, 4)
    with pytest.raises(ValueError, match="means1 has 2 rows but 3"):
        view_covariances(X, 2, means1=np.ones((2, 2)))
    rank1 = [np.outer(rng.standard_normal(100), np.ones(3)) for _ in range(3)]
    with pytest.raises(ValueError, match="numerical rank of the pairs matrix P12"):
        view_covariances(rank1, 2)


def test_shared_mean_samples_survive_an_unlucky_random_combination():
    """Without means the eigenvectors come from random combinations of F123; on these data a single
    draw (random_state=2) gives complex eigenvalues, which used to make the call fail."""
    k, n = 3, 80_000
    w = np.array([0.5, 0.3, 0.2])
    gen = np.random.default_rng(21)
    M1, M2 = 3 * gen.standard_normal((8, k)), 3 * gen.standard_normal((8, k))
    mu3 = 2 * gen.standard_normal((3, k))[:, 0]
    S = []
    for _ in range(k):
        A = gen.standard_normal((3, 3))
        S.append(A @ A.T / 3 + 0.2 * np.eye(3))
    S = np.array(S)
    L = np.linalg.cholesky(S)
    rows = np.random.default_rng(402)
    h = rows.choice(k, size=n, p=w)
    X = [M1[:, h].T + rows.standard_normal((n, 8)), M2[:, h].T + rows.standard_normal((n, 8)),
         mu3 + np.einsum("nij,nj->ni", L[h], rows.standard_normal((n, 3)))]
    out = view_covariances(X, k, random_state=2)
    D = out["directions1"] / np.linalg.norm(out["directions1"], axis=0)
    perm, _ = mvlib.match_columns(M1 / np.linalg.norm(M1, axis=0), D, sign_invariant=True)
    rel = [np.linalg.norm(out["covariances"][perm][t] - S[t]) / np.linalg.norm(S[t]) for t in range(k)]
    assert max(rel) < 0.1, rel


def test_f123_operator_is_diagonalised_by_the_view1_means(rng):
    # on exact moments F123(phi, psi) = R diag(g) R^{-1}, R = U1^T M1, g_h = phi^T G_h psi
    X, M1, M3, S = _exact_design(rng)
    n = X[0].shape[0]
    U, _, Vt = np.linalg.svd(X[0].T @ X[1] / n)
    U1, U2 = U[:, :3], Vt[:3].T
    phi, psi = rng.standard_normal(3), rng.standard_normal(3)
    G = S + np.einsum("it,jt->tij", M3, M3)
    R = U1.T @ M1
    expected = R @ np.diag([phi @ G[h] @ psi for h in range(3)]) @ np.linalg.inv(R)
    np.testing.assert_allclose(f123_operator(X, U1, U2, phi, psi), expected, atol=1e-8)
