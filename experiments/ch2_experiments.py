r"""Experiments behind the chapter "Whitening and the tensor power method" (02_whitening_power).

Run ``OMP_NUM_THREADS=1 python experiments/ch2_experiments.py`` (about a minute and a half on
one core; name parts, e.g. ``compare``, to run only those; ``--quick`` runs every part at small
sizes and writes nothing). It writes small JSON files ``chapters/data/ch2_<part>.json`` that
the chapter loads, asserts on and glues from (it never re-runs them):

* ``ch2_power.json`` — the k = 10 tensor ``random_odeco_tensor(10, default_rng(3))`` of the
  convergence section, with the chapter's single start and its 4000 uniform starts drawn next
  from the same generator. ``quadratic``: tan(phi_t) of the single start along
  ``power_iteration`` with t = 0, 1, ... iterations and the distance of each iterate to the
  closed form of eq-ch2-closed-form. ``basins``: for every start the eigenvector with the
  largest lambda_h |c_h| (``winner``), where 100 iterations land, the iterations needed to
  reach tan(phi) <= 1e-10, the margin r0 (second largest lambda_h |c_h| over the largest)
  and tan(phi_t) of the first eight starts. ``deflation``: where the same starts land once the
  top component is deflated. ``restarts``: failures (max eigenvector error > 0.1) of
  ``tensor_power_method`` on 20 noisy copies (sigma = 1e-2) for N = 3, 10 iterations and
  L = 1, 10 restarts.
* ``ch2_samples.json`` — the chapter's exchangeable Gaussian model (k = 4, d = 10, unit
  noise) sampled at five n from 1e3 to 1e5, six seeds each: the relative error of the means
  and the error of the weights recovered by whitening, the power method and dewhitening.
* ``ch2_noise.json`` — a k = 10 tensor (``default_rng(5)``) plus sigma G, sigma on a log
  grid 1e-6 .. 1, three draws of G per level: spectral-norm estimate and Frobenius norm of
  E, matched eigenvector and eigenvalue errors, the first-order prediction
  max_h |(I - v_h v_h^T) E(I, v_h, v_h)| / lambda_h, the per-component ratio to
  8 eps_S / lambda_h, and the reconstruction error (spectral estimate and Frobenius norm);
  plus the spectral-norm search with 50 restarts against one with 400.
* ``ch2_eigengap.json`` — k = 10 tensors with lambda_1 = 6, lambda_2 = 6 - gap, noise
  1e-3, five seeds: the larger error of v_1, v_2 for the power method and for the left
  singular vectors of the mode-1 unfolding.
* ``ch2_margin.json`` — exercise "The margin": 100,000 Gaussian starts per k, the median
  margin 1 - r0, the share converging within N = 5 iterations and the restarts L needed
  for probability 0.99.
* ``ch2_compare.json`` — orthogonally decomposable tensors
  ``random_odeco_tensor(k)`` plus ``sigma * random_symmetric_tensor(k)``, k = 10 and 20,
  sigma = 0, 1e-3, 1e-2, 5e-2, five seeds (a new tensor and new noise for each). Methods:
  ``mvlib.tensor_power_method`` with its defaults (L = 10 restarts, N ≤ 100 iterations,
  early stop at tol = 1e-10) and with exactly tensorly's budget (N = 10, tol = 0);
  ``mvlib.jennrich``; tensorly's ``CPPower(k, n_repeat=10, n_iteration=10)`` (its
  defaults); ``parafac`` with ``init="svd"`` and ``init="random"`` (``n_iter_max=300,
  tol=1e-12``). Per run: the sign-invariant matched eigenvector error and the wall time
  (``time.perf_counter``, one BLAS thread).
* ``ch2_failure.json`` — k = 10, ten seeds (tensor and noise), noise sigma
  on a grid that takes the spectral norm of E from below lambda_min/k to several times
  lambda_min. Per run: the spectral-norm estimate ``symmetric_spectral_norm(E)``, the
  Frobenius norm, lambda (sorted increasingly) and the per-component eigenvector errors in
  the same order.
* ``ch2_whitening.json`` — the chapter's exchangeable Gaussian model
  (k = 4, d = 10, unit noise) with its second mean turned towards the first by an angle
  theta, so that sigma_k(M2) shrinks like theta^2 while every mean keeps its norm;
  n = 20,000 samples, five seeds per theta. Per run: sigma_k(M2), the whitened-tensor error
  ||T_hat - T||_F against the tensor whitened by the aligned exact whitening matrix
  (Song et al. 2014, Lemma 4), the whitening error eps_W, and the relative error of the
  recovered means.

Every part uses the seeds and the order of random draws of the chapter's former cells, so the
chapter prints the same numbers. Floats are stored unrounded (the chapter formats them).
"""
from __future__ import annotations

import time

import numpy as np
import tensorly as tl
from tensorly.cp_tensor import cp_normalize
from tensorly.decomposition import CPPower, parafac

import mvlib
from mvlib.book import experiment_main
from mvlib.core.tensors import cp_tensor, cp_to_dense, random_odeco_tensor, random_symmetric_tensor
from mvlib.multiview import MultiViewMixtureModel

EXACT = None   # write_json digits: every float exactly (printed digits of tiny values must not move)
SEEDS = range(5)
METHODS = ["mvlib TPM", "mvlib TPM N=10", "mvlib jennrich", "TL CPPower",
           "TL parafac svd", "TL parafac random"]


# ---------------------------------------------------------------- the power method (ch2_power)

def tangents(Theta, V, winner):
    """tan of the angle between each row of Theta (n, k) and the column V[:, winner] (n,)."""
    C = np.atleast_2d(Theta) @ V
    rows = np.arange(C.shape[0])
    ci = C[rows, winner].copy()
    C[rows, winner] = 0.0
    return np.linalg.norm(C, axis=1) / np.abs(ci)


def convergence_tensor(k=10, n_starts=4000):
    """The chapter's T10: (T, lam, V), one unit start theta0 (k,), then n_starts unit starts
    (n_starts, k), all drawn in this order from ``default_rng(3)``."""
    rng = np.random.default_rng(3)
    T, lam, V = random_odeco_tensor(k, rng)
    theta0 = rng.standard_normal(k)
    theta0 /= np.linalg.norm(theta0)
    starts = rng.standard_normal((n_starts, k))
    starts /= np.linalg.norm(starts, axis=1, keepdims=True)
    return T, lam, V, theta0, starts


def quadratic(T, lam, V, theta0, t_max=13):
    """tan(phi_t) of ``power_iteration(T, theta0, n_iterations=t, tol=0)`` for t = 0, 1, ...
    (until it falls below 1e-13) and the distance of each iterate to eq-ch2-closed-form."""
    c0 = V.T @ theta0
    i = int(np.argmax(lam * np.abs(c0)))
    u0 = lam * c0 / np.max(lam * np.abs(c0))      # lambda_h c_h scaled, |u_i| = 1
    tans, devs = [], []
    for t in range(t_max):
        theta_t = mvlib.power_iteration(T, theta0, n_iterations=t, tol=0.0)
        g = u0 ** (2 ** t) / lam                  # eq-ch2-closed-form
        devs.append(np.linalg.norm(theta_t - V @ (g / np.linalg.norm(g))))
        tans.append(tangents(theta_t, V, i)[0])
        if tans[-1] < 1e-13:
            break
    return dict(winner=i, ratio_bound=np.max(np.delete(lam, i)) / lam[i], tan=tans, dev=devs)


def basins(T, lam, V, starts, tau=1e-10, n_steps=25, n_traced=8):
    """Where each start lands, and how many single iterations it needs to reach tan <= tau."""
    score0 = lam * np.abs(starts @ V)
    winner = np.argmax(score0, axis=1)
    overlap = np.abs(mvlib.power_iteration(T, starts, n_iterations=100) @ V)
    landed = np.argmax(overlap, axis=1)
    Theta, tan_hist = starts.copy(), [tangents(starts, V, winner)]
    for _ in range(n_steps):
        Theta = mvlib.power_iteration(T, Theta, n_iterations=1, tol=0.0)
        tan_hist.append(tangents(Theta, V, winner))
    tan_hist = np.array(tan_hist)                 # (n_steps + 1, n_starts)
    srt = np.sort(score0, axis=1)
    r0 = srt[:, -2] / srt[:, -1]                  # the margin of each start
    return dict(tau=tau, winner=winner, landed=landed,
                overlap_min=overlap[np.arange(len(starts)), landed].min(),
                tan_last_max=tan_hist[-1].max(), needed=np.argmax(tan_hist <= tau, axis=0),
                r0=r0, tan_traced=tan_hist[:, :n_traced])


def deflation(T, lam, V, starts):
    """Deflate the top component of T and run the starts again: where do they land?"""
    top = int(np.argmax(lam))
    after = mvlib.power_iteration(T - lam[top] * mvlib.symmetric_outer(V[:, top]), starts,
                                  n_iterations=100)
    landed = np.argmax(np.abs(after @ V), axis=1)
    return dict(top=top, overlap_top_max=np.abs(after @ V[:, top]).max(),
                share=np.bincount(landed, minlength=len(lam)) / len(starts))


def restarts(T, V, n_trials=20, sigma=1e-2):
    """Failures (max eigenvector error > 0.1) on n_trials noisy copies of T, per (N, L)."""
    k = len(T)
    runs = []
    for N in (3, 10):
        for L in (1, 10):
            errs = []
            for s in range(n_trials):
                E = random_symmetric_tensor(k, np.random.default_rng(100 + s))
                est = mvlib.tensor_power_method(T + sigma * E, k, n_restarts=L,
                                                n_iterations=N, random_state=s)
                errs.append(mvlib.matched_error(V, est.factors[0]))
            runs.append(dict(N=N, L=L, fails=int(np.sum(np.array(errs) > 0.1))))
    return dict(n_trials=n_trials, sigma=sigma, runs=runs)


def power(quick=False):
    T, lam, V, theta0, starts = convergence_tensor(n_starts=200 if quick else 4000)
    return dict(lam=lam, quadratic=quadratic(T, lam, V, theta0), basins=basins(T, lam, V, starts),
                deflation=deflation(T, lam, V, starts),
                restarts=restarts(T, V, n_trials=3 if quick else 20))


# ------------------------------------------------------------- the pipeline on samples

def running_model():
    """The chapter's exchangeable Gaussian model: k = 4, d = 10, unit noise, ``default_rng(2)``."""
    rng = np.random.default_rng(2)
    k, d = 4, 10
    M = 3.0 * rng.standard_normal((d, k))
    w = rng.dirichlet(np.full(k, 3.0))
    return MultiViewMixtureModel(w, [M] * 3, kind="gaussian", noise=1.0), M, w


def samples(ns=None, n_seeds=6):
    """Errors of the means (relative) and weights recovered from n samples, (len(ns), n_seeds);
    by default five n evenly spaced in log n over two decades, 1e3 .. 1e5."""
    if ns is None:
        ns = np.round(np.logspace(3, 5, 5)).astype(int)
    model, M, w = running_model()
    k = len(w)
    errs_M, errs_w = np.zeros((len(ns), n_seeds)), np.zeros((len(ns), n_seeds))
    for a, n in enumerate(mvlib.progress(ns, desc="sample sizes")):
        for s in range(n_seeds):
            (X1, X2, X3), _ = model.sample(int(n), random_state=1000 * a + s)
            W_e = mvlib.whitening_matrix(mvlib.pairs(X1, X2), k)
            T_e = mvlib.whitened_triples(X1, X2, X3, W_e, W_e, W_e)
            est = mvlib.tensor_power_method(T_e, k, random_state=0)
            lam_e = tl.to_numpy(est.weights)
            M_e = mvlib.dewhiten(W_e, tl.to_numpy(est.factors[0]), lam_e)
            perm, _ = mvlib.match_columns(M, M_e)
            errs_M[a, s] = mvlib.matched_error(M, M_e, relative=True)
            errs_w[a, s] = np.abs(w - lam_e[perm] ** -2.0).max()
    return dict(ns=list(ns), errors_means=errs_M, errors_weights=errs_w)


# ---------------------------------------------------- noisy orthogonal tensors (ch2_noise)

def noise(sigmas=None, n_rep=3, k=10, n_restarts=50):
    """The perturbation experiment: per (sigma, draw) the quantities of Theorem 5.1, each an
    array (len(sigmas), n_rep); sigma from 1e-6 to 1 (13 levels) by default."""
    sigmas = np.logspace(-6, 0, 13) if sigmas is None else np.asarray(sigmas)
    T, lam, V = random_odeco_tensor(k, np.random.default_rng(5))
    shape = (len(sigmas), n_rep)
    out = {key: np.zeros(shape) for key in ("eps_S", "eps_F", "vec_err", "val_err", "R_S", "R_F",
                                            "first_order", "ratio_comp")}
    for a, sigma in enumerate(mvlib.progress(sigmas, desc="noise levels")):
        for r in range(n_rep):
            E = sigma * random_symmetric_tensor(k, np.random.default_rng(10_000 + 10 * a + r))
            eps_S = mvlib.symmetric_spectral_norm(E, n_restarts=n_restarts, n_iterations=100,
                                                  random_state=r)
            est = mvlib.tensor_power_method(T + E, k, random_state=r)
            V_e, lam_e = tl.to_numpy(est.factors[0]), tl.to_numpy(est.weights)
            col = mvlib.column_errors(V, V_e)
            perm, _ = mvlib.match_columns(V, V_e)
            Ev = [mvlib.multilinear(E, np.eye(k), v, v) for v in V.T]
            resid = T - cp_to_dense(est)                 # T - sum lam_hat v_hat^3
            row = dict(eps_S=eps_S, eps_F=np.linalg.norm(E), vec_err=col.max(),
                       val_err=np.abs(lam - lam_e[perm]).max(),
                       ratio_comp=np.max(col / (8 * eps_S / lam)),
                       first_order=max(np.linalg.norm(e - (v @ e) * v) / l
                                       for e, v, l in zip(Ev, V.T, lam)),
                       R_S=mvlib.symmetric_spectral_norm(resid, n_restarts=n_restarts,
                                                         n_iterations=100, random_state=r),
                       R_F=np.linalg.norm(resid))
            for key, value in row.items():
                out[key][a, r] = value
    # is the spectral-norm search with 50 restarts good enough? compare with 400
    G0 = random_symmetric_tensor(k, np.random.default_rng(10_000))
    gap_S = abs(mvlib.symmetric_spectral_norm(G0, n_restarts=50, n_iterations=100, random_state=0)
                - mvlib.symmetric_spectral_norm(G0, n_restarts=400, n_iterations=200,
                                                random_state=1))
    return dict(k=k, lam=lam, sigmas=sigmas, gap_S=gap_S, **out)


def eigengap(deltas=(1.0, 1e-1, 1e-2, 1e-3, 1e-4), seeds=range(5), k=10, sigma=1e-3):
    """Larger error of v_1, v_2 (power method, SVD of the unfolding), (len(deltas), seeds)."""
    err = {m: np.zeros((len(deltas), len(seeds))) for m in ("power", "svd")}
    for s in seeds:
        _, _, V = random_odeco_tensor(k, np.random.default_rng(40 + s))
        E = sigma * random_symmetric_tensor(k, np.random.default_rng(50 + s))
        for a, delta in enumerate(deltas):
            lam = np.concatenate([[6.0, 6.0 - delta], np.linspace(1.5, 3.25, k - 2)])
            T = cp_to_dense(cp_tensor(lam, [V] * 3)) + E
            est = mvlib.tensor_power_method(T, k, random_state=s)
            U = np.linalg.svd(T.reshape(k, -1), full_matrices=False)[0]
            for m, F in (("power", tl.to_numpy(est.factors[0])), ("svd", U)):
                err[m][a, s] = mvlib.column_errors(V, F, sign_invariant=True)[:2].max()
    return dict(k=k, sigma=sigma, deltas=list(deltas), **err)


def margin(ks=(2, 3, 5, 10, 20, 50), n_draw=100_000, n_iterations=5, tau=1e-10, p_want=0.99):
    """Exercise "The margin": per k, median margin 1 - r0 of Gaussian starts, the share with
    r0 <= rho = tau^(2^-N) and the restarts L giving one such start with probability p_want."""
    rng = np.random.default_rng(44)
    rho = tau ** (2.0 ** -n_iterations)     # r_0 <= rho: converged within N iterations
    med_margin, q_k, L_k = [], [], []
    for k in ks:
        g_abs = np.sort(np.abs(rng.standard_normal((n_draw, k))), axis=1)
        r0 = g_abs[:, -2] / g_abs[:, -1]
        med_margin.append(np.median(1 - r0))
        q_k.append(np.mean(r0 <= rho))
        L_k.append(int(np.ceil(np.log(1 - p_want) / np.log(1 - q_k[-1]))))
    return dict(ks=list(ks), n_draw=n_draw, n_iterations=n_iterations, tau=tau, p_want=p_want,
                rho=rho, q_exact_k2=4 / np.pi * np.arctan(rho), median_margin=med_margin,
                q=q_k, restarts=L_k)


# ------------------------------------------------ comparison, failure, whitening


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


def compare(ks=(10, 20), sigmas=(0.0, 1e-3, 1e-2, 5e-2), seeds=SEEDS, methods=METHODS):
    runs = []
    T0, _, _ = random_odeco_tensor(10, np.random.default_rng(0))
    mvlib.tensor_power_method(T0, 10, random_state=0)  # warm-up
    cases = [(k, s) for k in ks for s in sigmas]
    for k, sigma in mvlib.progress(cases, desc="compare"):
        for seed in seeds:
            T, lam, V = random_odeco_tensor(k, np.random.default_rng(1000 * k + seed))
            G = random_symmetric_tensor(k, np.random.default_rng(2000 * k + seed))
            for name in methods:
                t0 = time.perf_counter()
                F = tl.to_numpy(run_method(name, T + sigma * G, k, seed))
                secs = time.perf_counter() - t0
                err = mvlib.matched_error(V, F, sign_invariant=True)
                runs.append(dict(k=k, sigma=sigma, seed=seed, method=name,
                                 error=err, seconds=secs))
    return dict(methods=list(methods), runs=runs)


def failure(seeds=range(10), sigmas=(0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)):
    k = 10
    runs = []
    for seed in mvlib.progress(seeds, desc="failure"):
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
    return dict(k=k, sigmas=list(sigmas), runs=runs)


def aligned_whitening(W_hat, M2):
    """W = W_hat A D^{-1/2} A^T with W_hat^T M2 W_hat = A D A^T (Song et al. 2014, Lemma 4)."""
    D, A = np.linalg.eigh(W_hat.T @ M2 @ W_hat)
    return W_hat @ A @ np.diag(D ** -0.5) @ A.T


def whitening(thetas=(0.8, 0.4, 0.2, 0.1, 0.05), seeds=SEEDS, n=20_000):
    rng = np.random.default_rng(2)
    k, d = 4, 10
    M_base = 3.0 * rng.standard_normal((d, k))
    w = rng.dirichlet(np.full(k, 3.0))
    u1 = M_base[:, 0] / np.linalg.norm(M_base[:, 0])
    u = M_base[:, 1] - (M_base[:, 1] @ u1) * u1
    u /= np.linalg.norm(u)
    runs = []
    for a, theta in enumerate(mvlib.progress(thetas, desc="whitening")):
        M = M_base.copy()
        M[:, 1] = np.linalg.norm(M_base[:, 1]) * (np.cos(theta) * u1 + np.sin(theta) * u)
        model = MultiViewMixtureModel(w, [M] * 3, kind="gaussian", noise=1.0)
        M2 = model.pairs(1, 2)
        sigma_k = float(np.linalg.svd(M2, compute_uv=False)[k - 1])
        for seed in seeds:
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
    return dict(k=k, d=d, n=n, w=w.tolist(), thetas=list(thetas), runs=runs)


PARTS = {"power": power, "samples": samples, "noise": noise, "eigengap": eigengap,
         "margin": margin, "compare": compare, "failure": failure, "whitening": whitening}
QUICK = {   # small sizes for --quick (nothing is written)
    "power": dict(quick=True),
    "samples": dict(ns=[300, 3000], n_seeds=2),
    "noise": dict(sigmas=[1e-4, 1e-2], n_rep=1, n_restarts=5),
    "eigengap": dict(deltas=[1.0, 1e-3], seeds=range(2)),
    "margin": dict(ks=(2, 10), n_draw=2000),
    "compare": dict(ks=(5,), sigmas=(1e-3,), seeds=range(1)),
    "failure": dict(seeds=range(2), sigmas=(0.1, 1.0)),
    "whitening": dict(thetas=(0.8, 0.1), seeds=range(1), n=2000),
}


def main(argv=None):
    experiment_main(PARTS, QUICK, prefix="ch2_", script="experiments/ch2_experiments.py",
                    description=__doc__.splitlines()[0], digits=EXACT, argv=argv)


if __name__ == "__main__":
    main()
