"""MultiViewMixtureModel with a conditional law per view (Gaussian, Poisson, Bernoulli)."""
import numpy as np
import pytest

from mvlib.multiview import MultiViewMixtureModel


def _mixed_means(rng, k=3):
    return [3 * rng.standard_normal((8, k)), rng.gamma(2.0, 1.5, size=(10, k)),
            rng.uniform(0.1, 0.9, size=(12, k))]


def test_mixed_sample_is_the_hand_written_draw():
    # labels, then a standard normal matrix, one Poisson call, one uniform matrix, in view order
    means, w = _mixed_means(np.random.default_rng(2024)), np.array([0.5, 0.3, 0.2])
    model = MultiViewMixtureModel(w, means, kind=("gaussian", "poisson", "bernoulli"))
    (X1, X2, X3), h = model.sample(500, random_state=np.random.default_rng(5))
    rng = np.random.default_rng(5)
    h_ref = rng.choice(3, size=500, p=w)
    X1_ref = means[0][:, h_ref].T + rng.standard_normal((500, 8))
    X2_ref = rng.poisson(means[1][:, h_ref].T).astype(float)
    X3_ref = (rng.random((500, 12)) < means[2][:, h_ref].T).astype(float)
    assert np.array_equal(h, h_ref)
    for X, ref in ((X1, X1_ref), (X2, X2_ref), (X3, X3_ref)):
        assert np.array_equal(X, ref)
    assert model.kinds == ("gaussian", "poisson", "bernoulli")


def test_mixed_sample_moments_approach_the_model():
    means, w = _mixed_means(np.random.default_rng(1)), np.array([0.5, 0.3, 0.2])
    model = MultiViewMixtureModel(w, means, kind=("gaussian", "poisson", "bernoulli"))
    (X1, X2, X3), _ = model.sample(200_000, random_state=0)
    assert set(np.unique(X3)) <= {0.0, 1.0} and np.all(X2 == np.round(X2)) and X2.min() >= 0
    for X, M in ((X1, means[0]), (X2, means[1]), (X3, means[2])):
        assert np.abs(X.mean(axis=0) - M @ w).max() < 0.1
    P23 = X2.T @ X3 / len(X2)
    assert np.abs(P23 - model.pairs(2, 3)).max() < 0.1


def test_one_kind_for_all_views_unchanged():
    model = MultiViewMixtureModel([0.4, 0.6], [np.eye(2)] * 3)
    assert model.kind == "categorical" and model.kinds == ("categorical",) * 3


@pytest.mark.parametrize("kind, means, match", [
    (("gaussian", "poisson", "bernoulli"), [np.ones((2, 2)), -np.ones((2, 2)), np.full((2, 2), 0.5)], "rates"),
    (("gaussian", "poisson", "bernoulli"), [np.ones((2, 2)), np.ones((2, 2)), np.full((2, 2), 1.5)], r"\[0, 1\]"),
    (("gaussian", "poisson"), [np.ones((2, 2))] * 3, "tuple of three"),
    ("student", [np.ones((2, 2))] * 3, "kind must be"),
])
def test_invalid_laws_and_parameters_are_refused(kind, means, match):
    with pytest.raises(ValueError, match=match):
        MultiViewMixtureModel([0.5, 0.5], means, kind=kind)


def test_covariances_sample_is_the_hand_written_draw():
    # labels, then per view one standard normal matrix; view 3 through its Cholesky factors
    rng = np.random.default_rng(21)
    w = np.array([0.5, 0.3, 0.2])
    M1, M2, M3 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((3, 3))
    A = rng.standard_normal((3, 3, 3))
    S3 = A @ np.swapaxes(A, 1, 2) / 3 + 0.2 * np.eye(3)
    model = MultiViewMixtureModel(w, [M1, M2, M3], kind="gaussian", covariances=[None, None, S3])
    (X1, X2, X3), h = model.sample(2000, random_state=np.random.default_rng(7))
    ref = np.random.default_rng(7)
    h_ref = ref.choice(3, size=2000, p=w)
    X1_ref = M1[:, h_ref].T + ref.standard_normal((2000, 4))
    X2_ref = M2[:, h_ref].T + ref.standard_normal((2000, 5))
    X3_ref = M3[:, h_ref].T + np.einsum("nij,nj->ni", np.linalg.cholesky(S3)[h_ref],
                                        ref.standard_normal((2000, 3)))
    assert np.array_equal(h, h_ref)
    for X, R in ((X1, X1_ref), (X2, X2_ref), (X3, X3_ref)):
        assert np.array_equal(X, R)
    # within a component, view 3 has that component's covariance
    (_, _, Y3), g = model.sample(200_000, random_state=1)
    assert np.abs(np.cov(Y3[g == 2].T) - S3[2]).max() < 0.05


def test_covariances_are_checked():
    w, M = np.array([0.5, 0.5]), [np.eye(2)] * 3
    S = np.array([np.eye(2), 2 * np.eye(2)])
    with pytest.raises(ValueError, match="not Gaussian"):
        MultiViewMixtureModel(w, M, kind=("gaussian", "gaussian", "poisson"), covariances=[None, None, S])
    with pytest.raises(ValueError, match="positive definite"):
        MultiViewMixtureModel(w, M, kind="gaussian", covariances=[-S, None, None])
    with pytest.raises(ValueError, match="symmetric"):
        MultiViewMixtureModel(w, M, kind="gaussian", covariances=[S[:1], None, None])
    with pytest.raises(TypeError):
        MultiViewMixtureModel(w, M, kind="gaussian", covariances=S)
