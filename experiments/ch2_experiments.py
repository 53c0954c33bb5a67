r"""Experiments behind the chapter "Whitening and the tensor power method" (02_whitening_power).

Run ``OMP_NUM_THREADS=1 .venv/bin/python experiments/ch2_experiments.py`` (about a minute on
one core; name parts, e.g. ``compare``, to run only those). It writes small JSON files
that the chapter loads (it never re-runs them):

* ``chapters/data/ch2_compare.json`` — orthogonally decomposable tensors
  ``random_odeco_tensor(k)`` plus ``sigma * random_symmetric_tensor(k)``, k = 10 and 20,
  sigma = 0, 1e-3, 1e-2, 5e-2, five seeds (a new tensor and new noise for each). Methods:
  ``mvlib.tensor_power_method`` with its defaults (L = 10 restarts, N ≤ 100 iterations,
  early stop at tol = 1e-10) and with exactly tensorly's budget (N = 10, tol = 0);
  ``mvlib.jennrich``; tensorly's ``CPPower(k, n_repeat=10, n_iteration=10)`` (its
  defaults); ``parafac`` with ``init="svd"`` and ``init="random"`` (``n_iter_max=300,
  tol=1e-12``). Per run: the sign-invariant matched eigenvector error and the wall time
  (``time.perf_counter``, one BLAS thread).
* ``chapters/data/ch2_failure.json`` — k = 10, ten seeds (tensor and noise), noise sigma
  on a grid that takes the spectral norm of E from below lambda_min/k to several times
  lambda_min. Per run: the spectral-norm estimate ``symmetric_spectral_norm(E)``, the
  Frobenius norm, lambda (sorted increasingly) and the per-component eigenvector errors in
  the same order.
* ``chapters/data/ch2_whitening.json`` — the chapter's exchangeable Gaussian model
  (k = 4, d = 10, unit noise) with its second mean turned towards the first by an angle
  theta, so that sigma_k(M2) shrinks like theta^2 while every mean keeps its norm;
  n = 20,000 samples, five seeds per theta. Per run: sigma_k(M2), the whitened-tensor error
  ||T_hat - T||_F against the tensor whitened by the aligned exact whitening matrix
  (Song et al. 2014, Lemma 4), the whitening error eps_W, and the relative error of the
  recovered means.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import cp_normalize
from tensorly.decomposition import CPPower, parafac
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.multiview import MultiViewMixtureModel
from mvlib.core.tensors import random_odeco_tensor, random_symmetric_tensor

OUT = Path(__file__).resolve().parents[1] / "chapters" / "data"
SEEDS = range(5)
METHODS = ["mvlib TPM", "mvlib TPM N=10", "mvlib jennrich", "TL CPPower",
           "TL parafac svd", "TL parafac random"]


def run_method(name, T, k, seed):
    """The (k, k) first factor of a method's decomposition of T."""
    if name == "mvlib TPM":
        return mvlib.tensor_power_method(T, k, random_state=seed).factors[0]
    if name == "mvlib TPM N=10":
        return mvlib.tensor_power_method(T, k, n_restarts=10, n_iterations=10, tol=0.0,
                                         random_state=seed).factors[0]
    if name == "mvlib jennrich":
        return mvlib.jennrich(T, k, random_state=seed).factors[0]
    if name == "TL CPPower":
        np.random.seed(seed)  # CPPower draws its starts from the global state
        return CPPower(k, n_repeat=10, n_iteration=10).fit_transform(tl.tensor(T))[1][0]
    init = "svd" if name == "TL parafac svd" else "random"
    cp = parafac(tl.tensor(T), k, init=init, random_state=seed, n_iter_max=300, tol=1e-12)
    return cp_normalize(cp).factors[0]


def compare():
    runs = []
    T0, _, _ = random_odeco_tensor(10, np.random.default_rng(0))
    mvlib.tensor_power_method(T0, 10, random_state=0)  # warm-up
    cases = [(k, s) for k in (10, 20) for s in (0.0, 1e-3, 1e-2, 5e-2)]
    for k, sigma in mvlib.progress(cases, desc="compare"):
        for seed in SEEDS:
            T, lam, V = random_odeco_tensor(k, np.random.default_rng(1000 * k + seed))
            G = random_symmetric_tensor(k, np.random.default_rng(2000 * k + seed))
            for name in METHODS:
                t0 = time.perf_counter()
                F = tl.to_numpy(run_method(name, T + sigma * G, k, seed))
                secs = time.perf_counter() - t0
                err = mvlib.matched_error(V, F, sign_invariant=True)
                runs.append(dict(k=k, sigma=sigma, seed=seed, method=name,
                                 error=err, seconds=secs))
    return dict(methods=METHODS, runs=runs)


def failure():
    k = 10
    sigmas = [0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0]
    runs = []
    for seed in mvlib.progress(range(10), desc="failure"):
        T, lam, V = random_odeco_tensor(k, np.random.default_rng(500 + seed))
        order = np.argsort(lam)
        for a, sigma in enumerate(sigmas):
            E = sigma * random_symmetric_tensor(k, np.random.default_rng(600 + 10 * seed + a))
            eps_S = mvlib.symmetric_spectral_norm(E, n_restarts=50, n_iterations=100,
                                                  random_state=seed)
            est = mvlib.tensor_power_method(T + E, k, random_state=seed)
            col = mvlib.column_errors(V, tl.to_numpy(est.factors[0]))
            runs.append(dict(seed=seed, sigma=sigma, eps_S=eps_S,
                             eps_F=float(np.linalg.norm(E)),
                             lam=lam[order].tolist(), errors=col[order].tolist()))
    return dict(k=k, sigmas=sigmas, runs=runs)


def aligned_whitening(W_hat, M2):
    """W = W_hat A D^{-1/2} A^T with W_hat^T M2 W_hat = A D A^T (Song et al. 2014, Lemma 4)."""
    D, A = np.linalg.eigh(W_hat.T @ M2 @ W_hat)
    return W_hat @ A @ np.diag(D ** -0.5) @ A.T


def whitening():
    rng = np.random.default_rng(2)
    k, d, n = 4, 10, 20_000
    M_base = 3.0 * rng.standard_normal((d, k))
    w = rng.dirichlet(np.full(k, 3.0))
    u1 = M_base[:, 0] / np.linalg.norm(M_base[:, 0])
    u = M_base[:, 1] - (M_base[:, 1] @ u1) * u1
    u /= np.linalg.norm(u)
    thetas = [0.8, 0.4, 0.2, 0.1, 0.05]
    runs = []
    for a, theta in enumerate(mvlib.progress(thetas, desc="whitening")):
        M = M_base.copy()
        M[:, 1] = np.linalg.norm(M_base[:, 1]) * (np.cos(theta) * u1 + np.sin(theta) * u)
        model = MultiViewMixtureModel(w, [M] * 3, kind="gaussian", noise=1.0)
        M2 = model.pairs(1, 2)
        sigma_k = float(np.linalg.svd(M2, compute_uv=False)[k - 1])
        for seed in SEEDS:
            (X1, X2, X3), _ = model.sample(n, random_state=100 * a + seed)
            P = mvlib.pairs(X1, X2)
            W_hat = mvlib.whitening_matrix(P, k)
            W = aligned_whitening(W_hat, M2)
            T_hat = mvlib.whitened_triples(X1, X2, X3, W_hat, W_hat, W_hat)
            T = model.whitened_triples(W, W, W)
            eps_W = float(np.linalg.norm(np.diag(np.sqrt(w)) @ M.T @ (W_hat - W), 2))
            est = mvlib.tensor_power_method(T_hat, k, random_state=0)
            lam = tl.to_numpy(est.weights)
            M_e = mvlib.dewhiten(W_hat, tl.to_numpy(est.factors[0]), lam)
            runs.append(dict(theta=theta, seed=seed, sigma_k=sigma_k,
                             eps_pairs=float(np.linalg.norm(P - M2, 2)),
                             eps_T=float(np.linalg.norm(T_hat - T)), eps_W=eps_W,
                             error_means=mvlib.matched_error(M, M_e, relative=True)))
    return dict(k=k, d=d, n=n, w=w.tolist(), thetas=thetas, runs=runs)


PARTS = {"compare": compare, "failure": failure, "whitening": whitening}


def main():
    names = sys.argv[1:] or list(PARTS)
    info = dict(script="experiments/ch2_experiments.py",
                omp_num_threads=os.environ.get("OMP_NUM_THREADS"))
    OUT.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=1, user_api="blas"):
        for name in names:
            t0 = time.perf_counter()
            res = PARTS[name]()
            res.update(info, wall_seconds=time.perf_counter() - t0)
            (OUT / f"ch2_{name}.json").write_text(json.dumps(res, indent=1))
            print("wrote", f"chapters/data/ch2_{name}.json",
                  f"({res['wall_seconds']:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
