import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mvlib
from mvlib.core.tensors import cp_tensor, cp_to_dense


def test_multilinear_matches_einsum(rng):
    T = rng.standard_normal((4, 5, 6))
    V1, V2, V3 = rng.standard_normal((4, 2)), rng.standard_normal((5, 3)), rng.standard_normal((6, 1))
    np.testing.assert_allclose(mvlib.multilinear(T, V1, V2, V3),
                               np.einsum("ijl,ia,jb,lc->abc", T, V1, V2, V3), atol=1e-12)
    u = rng.standard_normal(5)
    w = rng.standard_normal(6)
    np.testing.assert_allclose(mvlib.multilinear(T, np.eye(4), u, w), np.einsum("ijl,j,l->i", T, u, w), atol=1e-12)


def test_symmetrize3_definition_and_cyclic_symmetry(rng):
    a, b, c = rng.standard_normal((3, 4))
    S = mvlib.symmetrize3(a, b, c)
    want = np.einsum("i,j,l->ijl", a, b, c) + np.einsum("i,j,l->ijl", c, a, b) + np.einsum("i,j,l->ijl", b, c, a)
    np.testing.assert_allclose(S, want, atol=1e-14)
    np.testing.assert_allclose(S.transpose(1, 2, 0), S, atol=1e-14)  # invariant under cyclic shifts
    np.testing.assert_allclose(mvlib.symmetrize3(a, a, a), 3 * mvlib.symmetric_outer(a), atol=1e-14)


def test_symmetrize3_batched_is_sample_average(rng):
    A, B, C = rng.standard_normal((3, 50, 4))
    got = mvlib.symmetrize3(A, B, C)
    want = np.mean([mvlib.symmetrize3(a, b, c) for a, b, c in zip(A, B, C)], axis=0)
    np.testing.assert_allclose(got, want, atol=1e-13)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2 ** 31 - 1))
def test_odeco_round_trip_property(k, seed):
    """Any orthogonally decomposable tensor with distinct positive weights is recovered."""
    rng = np.random.default_rng(seed)
    V, _ = np.linalg.qr(rng.standard_normal((k, k)))
    lam = rng.uniform(0.5, 5.0, k)
    T = cp_to_dense(cp_tensor(lam, [V, V, V]))
    cp = mvlib.tensor_power_method(T, k, random_state=seed)
    assert np.linalg.norm(cp_to_dense(cp) - T) <= 1e-8 * np.linalg.norm(T)


def test_symmetrize_and_random_tensors():
    from mvlib.core.tensors import random_odeco_tensor, random_symmetric_tensor, symmetrize

    E = random_symmetric_tensor(5, random_state=0)
    for p in [(0, 2, 1), (1, 0, 2), (2, 1, 0), (1, 2, 0)]:
        np.testing.assert_allclose(E.transpose(p), E, atol=1e-15)
    np.testing.assert_allclose(symmetrize(E), E, atol=1e-15)
    T, lam, V = random_odeco_tensor(6, random_state=1)
    np.testing.assert_allclose(V.T @ V, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(mvlib.multilinear(T, np.eye(6), V[:, 2], V[:, 2]), lam[2] * V[:, 2], atol=1e-12)
    assert np.isclose(np.sum(lam ** -2.0), 1.0)  # lam = 1/sqrt(w) with w on the simplex
