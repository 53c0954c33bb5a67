"""Moments at scale (:mod:`mvlib.core.scale`): one-pass sketched moments, streams and Dask.

* the accumulators against the exact moments, and merging (``+``) against one pass;
* with K = d the one-pass fit equals the two-pass fit (up to rounding);
* with K = 2k + 10 < d the one-pass error still shrinks like n^(-1/2);
* a stream (generator) gives the in-memory one-pass fit, is read once, in bounded memory;
* a ``dask.array`` on a ``distributed`` cluster gives the in-memory fit, the tasks run on the
  workers, and the client's memory does not grow with the data;
* bad input raises named errors.
"""
import gc
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import mvlib
from mvlib.core import scale
from mvlib.lda import LDAModel
from mvlib.multiview import MultiViewMixtureModel
from mvlib.topic import random_topic_model

K3 = 3  # components of every model below

@pytest.fixture(scope="module", autouse=True)
def _one_blas_thread():
    """Small products in the client: one BLAS thread (a second one only contends for a shared CPU).
    The Dask workers are separate processes, which distributed starts with one BLAS thread."""
    with threadpool_limits(1, user_api="blas"):
        yield


# =============================================================================== data
def gmm_model(d=10, k=K3, seed=1):
    rng = np.random.default_rng(seed)
    M = 3.0 * rng.standard_normal((d, k))
    w = np.linspace(1.0, 2.0, k)
    return M, w / w.sum(), np.linspace(0.6, 1.0, k)


def gmm_sample(n, d=10, k=K3, seed=0, model_seed=1):
    M, w, sig = gmm_model(d, k, model_seed)
    rng = np.random.default_rng(seed)
    h = rng.choice(k, size=n, p=w)
    return M[:, h].T + sig[h][:, None] * rng.standard_normal((n, d)), M


def topic_sample(n, d=12, seed=0, doc_length=10):
    model = random_topic_model(K3, d, concentration=0.3, weight_concentration=5.0, random_state=0)
    X, _ = model.sample(n, doc_length, random_state=seed)
    return X, model


def lda_sample(n, d=12, seed=0, doc_length=(3, 30)):
    mu = np.random.default_rng(2).dirichlet(np.full(d, 0.3), size=K3)
    model = LDAModel(np.array([0.3, 0.3, 0.4]), mu)
    X, _ = model.sample(n, doc_length, random_state=seed)
    return X, model


def mv_sample(n, d=8, seed=0):
    rng = np.random.default_rng(5)
    model = MultiViewMixtureModel([0.2, 0.3, 0.5], [3.0 * rng.standard_normal((d, K3)) for _ in range(3)],
                                  kind="gaussian", noise=1.0)
    views, _ = model.sample(n, random_state=seed)
    return views, model


def make(name, **kw):
    """The estimator ``name`` with k = 3 and keyword arguments ``kw`` (moments, sketch_dim, ...)."""
    if name == "gmm":
        return mvlib.SpectralGMM(K3, **kw)
    if name == "topic":
        return mvlib.SpectralTopicModel(K3, method=kw.pop("method", "tensor"), **kw)
    if name == "lda":
        return mvlib.SpectralLDA(K3, alpha0=1.0, **kw)
    if name == "multiview":
        return mvlib.MultiViewMixture(K3, method=kw.pop("method", "tensor"), **kw)
    raise AssertionError(name)


def small_data(name, n=None):
    """In-memory data for ``name``: an array, a CSR count matrix or a list of three views."""
    if name == "gmm":
        return gmm_sample(n or 6000)[0]
    if name == "topic":
        return topic_sample(n or 4000)[0]
    if name == "lda":
        return lda_sample(n or 4000)[0]
    return mv_sample(n or 6000)[0]


def n_cols(name, data):
    return data[0].shape[1] if name == "multiview" else data.shape[1]


def row_slices(name, data, chunk):
    """The row chunks of ``data`` (tuples of view chunks for the multiview model)."""
    n = data[0].shape[0] if name == "multiview" else data.shape[0]
    for s in range(0, n, chunk):
        yield tuple(X[s:s + chunk] for X in data) if name == "multiview" else data[s:s + chunk]


def counting(chunks, counter):
    """A generator over ``chunks`` that counts its yields in ``counter["yields"]``."""
    for c in chunks:
        counter["yields"] += 1
        yield c


def components(est):
    """The fitted components as rows (k, ·): means, topics, or the three views' means side by side."""
    if isinstance(est, mvlib.SpectralGMM):
        return est.means_
    if isinstance(est, mvlib.MultiViewMixture):
        return np.hstack(est.means_)
    return est.topic_word_


def assert_same_fit(a, b, tol):
    """``b`` equals ``a`` to ``tol`` after matching the components (Hungarian matching of mvlib.core.metrics)."""
    A, B = components(a), components(b)
    assert A.shape == B.shape
    perm, _ = mvlib.match_columns(A.T, B.T)

    def close(x, y, what):
        x, y = np.asarray(x, float), np.asarray(y, float)
        np.testing.assert_allclose(y, x, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(x)))), err_msg=what)

    close(A, B[perm], "components")
    for attr in ("weights_", "covariances_", "alpha_"):
        if hasattr(a, attr):
            close(getattr(a, attr), getattr(b, attr)[perm], attr)
    if hasattr(a, "n_skipped_"):
        assert a.n_skipped_ == b.n_skipped_


def fit_quiet(est, X):
    """Fit, ignoring the UserWarning of skipped short documents (its count is checked via n_skipped_)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*fewer than 3 words", category=UserWarning)
        return est.fit(X)


# =============================================================================== 1. accumulators
def test_sketch_matrix_has_orthonormal_columns_and_refuses_K_above_d():
    for d, K, seed in ((30, 7, 0), (10, 10, 1), (5, 1, 2)):
        O = scale.sketch_matrix(d, K, seed)
        assert O.shape == (d, K)
        np.testing.assert_allclose(O.T @ O, np.eye(K), atol=1e-12)
    np.testing.assert_array_equal(scale.sketch_matrix(20, 5, 3), scale.sketch_matrix(20, 5, 3))
    assert not np.allclose(scale.sketch_matrix(20, 5, 3), scale.sketch_matrix(20, 5, 4))
    with pytest.raises(ValueError, match="sketch_dim"):
        scale.sketch_matrix(6, 7, 0)
    assert scale.default_sketch_dim(3, 100) == 16
    assert scale.default_sketch_dim(3, 12) == 12


def test_row_signs_do_not_depend_on_the_chunking_and_are_balanced():
    whole = scale.row_signs(0, 100_000)
    np.testing.assert_array_equal(np.concatenate([scale.row_signs(0, 37), scale.row_signs(37, 99_963)]), whole)
    np.testing.assert_array_equal(scale.row_signs(5000, 10), whole[5000:5010])
    assert set(np.unique(whole)) == {-1.0, 1.0}
    assert abs(whole.mean()) < 0.02                       # balanced (the sd of the mean is 0.003)
    assert abs(np.mean(whole[1:] * whole[:-1])) < 0.02    # and not a pattern such as alternating signs


def test_row_chunks_reads_a_memmap_in_order(tmp_path):
    X = np.random.default_rng(0).standard_normal((1003, 4))
    path = tmp_path / "x.dat"
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    del mm
    src = np.memmap(path, dtype=np.float64, mode="r", shape=X.shape)
    chunks = scale.row_chunks(src, 100)
    assert scale.is_stream(chunks)
    blocks = list(chunks)
    assert [b.shape[0] for b in blocks] == [100] * 10 + [3]
    assert all(isinstance(b, np.ndarray) for b in blocks)
    np.testing.assert_array_equal(np.vstack(blocks), X)


def test_reduce_rows_passes_global_offsets_of_a_stream():
    seen = []

    def partial(X, offset):
        seen.append((offset, X.shape[0]))
        return scale.Sums(X.shape[0], s=X.sum(axis=0))

    X = np.arange(30.0).reshape(15, 2)
    total = scale.reduce_rows(iter([X[:4], X[4:11], X[11:]]), partial)
    assert seen == [(0, 4), (4, 7), (11, 4)]
    assert total.n == 15
    np.testing.assert_array_equal(total["s"], X.sum(axis=0))


def test_sketched_moments_merge_equals_one_pass_and_the_dense_moments():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 7)) + rng.standard_normal(7)
    O = scale.sketch_matrix(7, 4, 1)
    parts = scale.SketchedMoments(O).update(X[:100]) + scale.SketchedMoments(O).update(X[100:250])
    merged = parts + scale.SketchedMoments(O).update(X[250:])
    whole = scale.SketchedMoments(O).update(X)
    assert merged.n == whole.n == 300
    for f in ("mean", "cross", "second", "third"):
        np.testing.assert_allclose(getattr(merged, f)(), getattr(whole, f)(), rtol=1e-12, atol=1e-12, err_msg=f)
    # independently: y = Ω^T x, the dense moments by einsum
    Y = X @ O
    np.testing.assert_allclose(whole.mean(), X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(whole.cross(), np.einsum("ni,nj->ij", X, Y) / 300, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(whole.second(), np.einsum("ni,nj->ij", Y, Y) / 300, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(whole.third(), np.einsum("ni,nj,nl->ijl", Y, Y, Y) / 300, rtol=1e-12, atol=1e-13)


def _docs(n, d, seed, lo=3, hi=12):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(lo, hi + 1, size=n)
    rows = np.repeat(np.arange(n), lengths)
    X = sp.csr_matrix((np.ones(rows.size), (rows, rng.integers(0, d, size=rows.size))), shape=(n, d))
    X.sum_duplicates()
    return X


def test_sketched_count_moments_equal_the_exact_count_moments_and_merge():
    d, K = 9, 5
    X = _docs(200, d, 0)
    O = scale.sketch_matrix(d, K, 2)
    whole = scale.SketchedCountMoments(O).update(X, 0)
    merged = (scale.SketchedCountMoments(O).update(X[:70], 0) + scale.SketchedCountMoments(O).update(X[70:151], 70)
              + scale.SketchedCountMoments(O).update(X[151:], 151))
    P = np.asarray(mvlib.count_pairs(X))
    exact = {"pairs_cross": P @ O, "pairs_sketch": O.T @ P @ O,
             "triples_sketch": mvlib.count_whitened_triples(X, O), "mean": mvlib.core.moments.count_mean(X)}
    for f, want in exact.items():
        scl = float(np.max(np.abs(want)))
        np.testing.assert_allclose(getattr(whole, f)(), want, rtol=1e-12, atol=1e-12 * scl, err_msg=f)
        np.testing.assert_allclose(getattr(merged, f)(), getattr(whole, f)(), rtol=1e-12, atol=1e-12 * scl, err_msg=f)
    # the sign-weighted noise moment uses the global row index: chunking does not change it
    eps = scale.row_signs(0, 200)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    Xd = X.toarray()
    noise = sum(eps[i] * (np.outer(Xd[i], Xd[i]) - np.diag(Xd[i])) / (lengths[i] * (lengths[i] - 1))
                for i in range(200)) / 200
    np.testing.assert_allclose(whole.noise_sketch(), O.T @ noise @ O, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(merged.noise_sketch(), whole.noise_sketch(), rtol=1e-12, atol=1e-14)
    # a dense count array gives the same sums as CSR
    dense = scale.SketchedCountMoments(O).update(Xd, 0)
    np.testing.assert_allclose(dense.triples_sketch(), whole.triples_sketch(), rtol=1e-12, atol=1e-14)


def test_sketched_count_moments_skip_short_documents_or_refuse_them():
    d = 8
    X = _docs(120, d, 1, lo=0, hi=8)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    short = int(np.sum(lengths < 3))
    assert 0 < short < 60
    O = scale.sketch_matrix(d, d, 0)
    acc = scale.SketchedCountMoments(O, skip_short=True).update(X[:50], 0) \
        + scale.SketchedCountMoments(O, skip_short=True).update(X[50:], 50)
    assert acc.n_skipped == short and acc.n == 120 - short
    Xk = X[lengths >= 3]
    np.testing.assert_allclose(acc.triples_sketch(), mvlib.count_whitened_triples(Xk, O), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(acc.pairs_cross(), np.asarray(mvlib.count_pairs(Xk)) @ O, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="at least 3 words"):
        scale.SketchedCountMoments(O).update(X, 0)


# =============================================================================== 2. K = d: one pass = two passes
# With K = d, Ω is a rotation of R^d, so the sketch loses nothing and every step of the one-pass
# fit is the two-pass step in rotated coordinates.
KD_CASES = [
    pytest.param("gmm", id="gmm"),
    pytest.param("topic", id="topic-tensor"),
    # SpectralLDA's two-pass whitening is a randomized range finder with k + 10 columns: with a
    # vocabulary d <= k + 10 (here 12 <= 13) those columns span all of R^d, so it is exact and the
    # comparison with the one-pass (exact, in the sketch) whitening is up to rounding only.
    pytest.param("lda", id="lda"),
    pytest.param("multiview", id="multiview-tensor"),
]


@pytest.mark.parametrize("name", KD_CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_one_pass_with_K_equal_d_equals_two_pass(name, seed):
    data = small_data(name)
    d = n_cols(name, data)
    two = fit_quiet(make(name, random_state=seed), data)
    one = fit_quiet(make(name, random_state=seed, moments="one-pass", sketch_dim=d), data)
    assert_same_fit(two, one, 1e-10)


def test_one_pass_with_K_below_d_is_not_the_two_pass_fit():
    """The K = d comparison above can fail: a narrower sketch gives a different (still good) fit."""
    X, M = gmm_sample(6000, d=30)
    two = make("gmm", random_state=0).fit(X)
    one = make("gmm", random_state=0, moments="one-pass", sketch_dim=8).fit(X)
    with pytest.raises(AssertionError):
        assert_same_fit(two, one, 1e-10)
    assert mvlib.matched_error(M, one.means_.T) < 0.5


# =============================================================================== 3. K < d: the n^(-1/2) rate
def _slope(ns, errors):
    return float(np.polyfit(np.log(ns), np.log(errors), 1)[0])


def test_one_pass_gmm_error_shrinks_like_inverse_root_n():
    d = 40                                    # K = 2k + 10 = 16 < d
    ns, seeds = [2000, 8000, 32000], range(4)
    mean_err = []
    for n in ns:
        errs = []
        for s in seeds:
            X, M = gmm_sample(n, d=d, seed=1000 * s + n)
            est = make("gmm", random_state=s, moments="one-pass").fit(X)
            errs.append(mvlib.matched_error(M, est.means_.T))
        mean_err.append(np.mean(errs))
    slope = _slope(ns, mean_err)
    assert -0.75 <= slope <= -0.3, (mean_err, slope)
    assert mean_err[-1] < 0.15, mean_err


def test_one_pass_topic_model_error_shrinks_like_inverse_root_n():
    d = 60                                    # K = 2k + 10 = 16 < d
    ns, seeds = [2000, 8000, 32000, 128000], range(3)
    mean_err = []
    for n in ns:
        errs = []
        for s in seeds:
            X, model = topic_sample(n, d=d, seed=1000 * s + n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # clipping at the smallest n
                est = make("topic", random_state=s, moments="one-pass").fit(X)
            errs.append(mvlib.matched_error(model.topic_word.T, est.topic_word_.T))
        mean_err.append(np.mean(errs))
    slope = _slope(ns, mean_err)
    assert -0.75 <= slope <= -0.3, (mean_err, slope)


# =============================================================================== 4. streams
STREAM_CASES = [
    pytest.param("gmm", id="gmm"),
    pytest.param("topic", id="topic-tensor"),
    pytest.param("lda", id="lda"),
    pytest.param("multiview", id="multiview-tensor"),
]


@pytest.mark.parametrize("name", STREAM_CASES)
def test_stream_fit_equals_in_memory_one_pass_and_reads_each_chunk_once(name):
    data = small_data(name)
    if name == "lda":       # include short documents: the stream must skip and count them too
        data, _ = lda_sample(4000, doc_length=(1, 20))
    chunks = list(row_slices(name, data, 700))
    counter = {"yields": 0}
    gen = counting(chunks, counter)
    streamed = fit_quiet(make(name, random_state=3, moments="one-pass"), gen)
    in_memory = fit_quiet(make(name, random_state=3, moments="one-pass"), data)
    assert counter["yields"] == len(chunks) >= 6
    with pytest.raises(StopIteration):
        next(gen)
    assert_same_fit(in_memory, streamed, 1e-10)
    if name == "lda":
        assert streamed.n_skipped_ > 0


def test_stream_from_a_memmap_file(tmp_path):
    X, M = gmm_sample(6000)
    path = tmp_path / "x.npy"
    np.save(path, X)
    src = np.load(path, mmap_mode="r")
    streamed = make("gmm", random_state=0, moments="one-pass").fit(scale.row_chunks(src, 1000))
    assert_same_fit(make("gmm", random_state=0, moments="one-pass").fit(X), streamed, 1e-10)


@pytest.mark.parametrize("name", STREAM_CASES)
def test_two_pass_on_a_stream_is_refused(name):
    data = small_data(name, 1000)
    with pytest.raises(ValueError, match="one-pass"):
        make(name, random_state=0).fit(row_slices(name, data, 500))


def test_stream_memory_does_not_grow_with_n():
    """200 chunks of 5000 x 50 (400 MB in all), generated one at a time: the fit holds a few chunks."""
    d, k, n_chunks, rows = 50, 2, 200, 5000
    rng = np.random.default_rng(0)
    M = 3.0 * rng.standard_normal((d, k))
    counter = {"yields": 0}

    def stream():
        r = np.random.default_rng(1)
        for _ in range(n_chunks):
            counter["yields"] += 1
            h = r.integers(0, k, size=rows)
            yield M[:, h].T + r.standard_normal((rows, d))

    total_bytes = n_chunks * rows * d * 8
    gc.collect()
    tracemalloc.start()
    try:
        # a narrow sketch keeps the K^3 work per row small; memory is O(d K + K^3) whatever K
        est = mvlib.SpectralGMM(k, random_state=0, moments="one-pass", sketch_dim=6).fit(stream())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counter["yields"] == n_chunks
    assert peak < total_bytes / 20, (peak, total_bytes)
    assert mvlib.matched_error(M, est.means_.T) < 0.1     # and all the chunks were used well


# =============================================================================== 5. Dask on a cluster
@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    with warnings.catch_warnings():   # the scheduler's HTTP server moves off a busy port 8787 with a warning
        warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
    with cluster:
        with distributed.Client(cluster) as client:
            client.wait_for_workers(2)
            yield client


def to_dask(name, data, rows):
    import dask.array as da

    if name == "multiview":
        return [da.from_array(X, chunks=(rows, X.shape[1])) for X in data]
    if sp.issparse(data):      # count blocks stay scipy.sparse CSR
        return da.from_array(sp.csr_matrix(data), chunks=(rows, data.shape[1]), asarray=False)
    return da.from_array(data, chunks=(rows, data.shape[1]))


DASK_CASES = [
    pytest.param("gmm", {}, "two-pass", id="gmm-two-pass"),
    pytest.param("gmm", {}, "one-pass", id="gmm-one-pass"),
    pytest.param("topic", {"method": "observable"}, "two-pass", id="topic-observable-two-pass"),
    pytest.param("topic", {"method": "tensor"}, "two-pass", id="topic-tensor-two-pass"),
    pytest.param("topic", {"method": "tensor"}, "one-pass", id="topic-tensor-one-pass"),
    pytest.param("lda", {}, "two-pass", id="lda-two-pass"),
    pytest.param("lda", {}, "one-pass", id="lda-one-pass"),
    pytest.param("multiview", {"method": "observable"}, "two-pass", id="multiview-observable-two-pass"),
    pytest.param("multiview", {"method": "tensor"}, "two-pass", id="multiview-tensor-two-pass"),
    pytest.param("multiview", {"method": "tensor"}, "one-pass", id="multiview-tensor-one-pass"),
]


@pytest.mark.parametrize("name, kw, moments", DASK_CASES)
def test_dask_fit_equals_in_memory_fit_and_runs_on_the_workers(dask_client, name, kw, moments):
    import distributed
    from dask.utils import key_split

    if name == "lda":       # some documents shorter than 3 words: skipped, and counted alike
        data, _ = lda_sample(4000, doc_length=(1, 20))
    else:
        data = small_data(name)
    rows = 500
    n_blocks = -(-(data[0] if name == "multiview" else data).shape[0] // rows)
    Xd = to_dask(name, data, rows)
    local = fit_quiet(make(name, random_state=4, moments=moments, **kw), data)
    with distributed.get_task_stream(dask_client) as ts:
        remote = fit_quiet(make(name, random_state=4, moments=moments, **kw), Xd)
    assert_same_fit(local, remote, 1e-8)
    if name == "lda":
        assert remote.n_skipped_ == local.n_skipped_ > 0
    workers = set(dask_client.scheduler_info()["workers"])
    ran_on = [t["worker"] for t in ts.data]
    assert ran_on, "no task ran on the cluster"
    assert set(ran_on) <= workers
    # the moments of every block were computed on the cluster, not the blocks fetched and reduced
    # on the client: besides the tasks loading the blocks, some task ran once per block
    inputs = {key_split(A.name) for A in (Xd if name == "multiview" else [Xd])}
    per_task = {}
    for t in ts.data:
        if key_split(t["key"]) not in inputs:
            per_task[key_split(t["key"])] = per_task.get(key_split(t["key"]), 0) + 1
    assert per_task and max(per_task.values()) >= n_blocks, per_task


def test_reduce_rows_on_dask_equals_in_memory_with_global_row_offsets(dask_client):
    """The per-row signs of the noise moments follow the global row index on the workers too."""
    X = _docs(3000, 9, 3)
    O = scale.sketch_matrix(9, 5, 0)
    remote = scale.reduce_rows(to_dask("topic", X, 400), scale.SketchedCountMoments.partial, O)
    local = scale.SketchedCountMoments(O).update(X, 0)
    assert remote.n == local.n == 3000
    for f in ("pairs_cross", "pairs_sketch", "triples_sketch", "mean", "noise_sketch"):
        np.testing.assert_allclose(getattr(remote, f)(), getattr(local, f)(), rtol=1e-10, atol=1e-14, err_msg=f)
    views, _ = mv_sample(3000)
    Os = [scale.sketch_matrix(8, 5, v) for v in range(3)]
    remote = scale.reduce_rows(to_dask("multiview", views, 400), scale.SketchedViewMoments.partial, *Os)
    local = scale.SketchedViewMoments(Os).update(*views, 0)
    for f in scale.SketchedViewMoments._FIELDS:
        np.testing.assert_allclose(getattr(remote, f), getattr(local, f), rtol=1e-10, atol=1e-10, err_msg=f)


def test_dask_tasks_use_both_workers(dask_client):
    import distributed

    X, _ = gmm_sample(40_000)
    Xd = to_dask("gmm", X, 1000)
    with distributed.get_task_stream(dask_client) as ts:
        make("gmm", random_state=0, moments="one-pass").fit(Xd)
    assert set(t["worker"] for t in ts.data) == set(dask_client.scheduler_info()["workers"])


def _gmm_on_workers(n, d, k, n_blocks, seed):
    """A GMM data set whose blocks are drawn on the workers (the client never holds them)."""
    import dask.array as da

    M = 3.0 * np.random.default_rng(99).standard_normal((d, k))
    rs = da.random.default_rng(seed)
    chunk = n // n_blocks
    h = rs.integers(0, k, size=n, chunks=chunk)
    Z = rs.standard_normal((n, d), chunks=(chunk, d))
    return (h[:, None] == np.arange(k)).astype(float) @ M.T + 0.8 * Z, M


def test_dask_client_memory_does_not_grow_with_the_data(dask_client):
    d, k = 50, 2
    # The same number of blocks at both sizes: the graph (one task per block) is then the same,
    # and only the data grow, 4x.
    mvlib.SpectralGMM(k, random_state=0, moments="one-pass").fit(_gmm_on_workers(20_000, d, k, 8, 1)[0])  # warm-up
    peaks, errors = [], []
    for n in (200_000, 800_000):
        X, M = _gmm_on_workers(n, d, k, 8, 0)
        gc.collect()
        tracemalloc.start()
        try:
            est = mvlib.SpectralGMM(k, random_state=0, moments="one-pass").fit(X)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        peaks.append(peak)
        errors.append(mvlib.matched_error(M, est.means_.T))
        assert peak < n * d * 8 / 50, (peak, n * d * 8)
    assert peaks[1] <= 1.5 * peaks[0], peaks
    assert errors[1] < errors[0] < 0.1, errors      # the fits did use the data


# =============================================================================== 6. bad input
ALL = [pytest.param("gmm", id="gmm"), pytest.param("topic", id="topic"), pytest.param("lda", id="lda"),
       pytest.param("multiview", id="multiview")]


@pytest.mark.parametrize("name", ALL)
def test_unknown_moments_is_refused(name):
    with pytest.raises(ValueError, match="moments"):
        make(name, moments="three-pass").fit(small_data(name, 1000))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", ["below_k", "above_d"])
def test_sketch_dim_outside_k_to_d_is_refused(name, bad):
    data = small_data(name, 1000)
    K = K3 - 1 if bad == "below_k" else n_cols(name, data) + 1
    with pytest.raises(ValueError, match="sketch_dim"):
        make(name, moments="one-pass", sketch_dim=K).fit(data)


def test_observable_topic_model_refuses_one_pass():
    with pytest.raises(ValueError, match="tensor"):
        mvlib.SpectralTopicModel(K3, method="observable", moments="one-pass").fit(small_data("topic", 1000))


def test_observable_multiview_refuses_one_pass():
    with pytest.raises(ValueError, match="tensor"):
        mvlib.MultiViewMixture(K3, method="observable", moments="one-pass").fit(small_data("multiview", 1000))


def test_multiview_stream_chunks_with_different_rows_are_refused():
    X1, X2, X3 = small_data("multiview", 1000)
    with pytest.raises(ValueError, match="rows"):
        mvlib.MultiViewMixture(K3, method="tensor", moments="one-pass").fit(iter([(X1, X2[:-1], X3)]))


@pytest.mark.parametrize("name", ALL)
def test_empty_stream_is_refused(name):
    with pytest.raises(ValueError, match="no chunks"):
        make(name, moments="one-pass").fit(iter([]))


@pytest.mark.parametrize("name", ALL)
def test_chunks_with_different_columns_are_refused(name):
    data = small_data(name, 1000)
    first, second = list(row_slices(name, data, 500))
    if name == "multiview":
        second = (second[0], second[1][:, :-1], second[2])
    else:
        second = second[:, :-1]
    with pytest.raises(ValueError, match="columns"):
        make(name, moments="one-pass").fit(iter([first, second]))


# =============================================================================== the source layer
def test_open_source_checks_memory_data_and_rescales_extreme_ones():
    X = np.ldexp(np.random.default_rng(0).standard_normal((20, 3)), 600)
    src = scale.open_source(X, check=lambda A: np.asarray(A, dtype=float), rescale=True)
    assert (src.kind, src.n_features, src.n_rows) == ("memory", 3, 20)
    assert src.exponent != 0 and np.array_equal(np.ldexp(src.data, src.exponent), X)   # exact
    assert scale.open_source(X).exponent == 0                                            # only if asked
    views = scale.open_source([X, X[:, :2] * 1e-3, X[:, :1] * 0 + 1.0], rescale=True, what="views")
    assert views.n_features == [3, 2, 1] and len(views.exponent) == 3 and views.exponent[2] == 0
    with pytest.raises(ValueError, match="X has"):
        scale.open_source(X, check=lambda A: mvlib.core.validation.check_array(A[:1], "X", min_rows=2))


def test_open_source_on_streams_and_dask_and_the_choice_of_passes():
    chunks = [np.ones((4, 3)), np.ones((2, 3))]
    src = scale.open_source(iter(chunks), moments="one-pass")
    assert (src.kind, src.n_features, src.n_rows, src.exponent) == ("stream", 3, None, 0)
    assert src.reduce(lambda X, offset: X.shape[0]) == 6       # the peeked chunk is read too
    with pytest.raises(ValueError, match="moments='one-pass'"):
        scale.open_source(iter(chunks))
    da = pytest.importorskip("dask.array")
    src = scale.open_source(da.from_array(np.ones((6, 3)), chunks=(4, 3)))
    assert (src.kind, src.n_features, src.n_rows) == ("dask", 3, 6)
    picked = [scale.open_source(data).passes(lambda s: "exact", lambda s: "chunked")
              for data in (np.ones((6, 3)), da.from_array(np.ones((6, 3)), chunks=(4, 3)))]
    assert picked == ["exact", "chunked"]


def test_accumulators_with_other_sketches_or_of_another_kind_are_not_added():
    """Issue 27: sums taken with different sketch matrices are in different coordinates; adding them
    used to return meaningless moments. Other operands gave numpy or attribute errors."""
    X = np.random.default_rng(0).standard_normal((20, 6))
    om1, om2 = scale.sketch_matrix(6, 3, random_state=0), scale.sketch_matrix(6, 3, random_state=1)
    a = scale.SketchedMoments(om1).update(X)
    with pytest.raises(ValueError, match="different sketch matrices"):
        a + scale.SketchedMoments(om2).update(X)
    with pytest.raises(ValueError, match="different sketch matrices"):
        a + scale.SketchedMoments(scale.sketch_matrix(6, 4, random_state=0)).update(X)
    for other in (0, scale.SketchedCountMoments(om1)):
        with pytest.raises(TypeError, match="only a SketchedMoments can be added"):
            a + other
    counts = sp.csr_matrix(np.random.default_rng(1).integers(0, 3, size=(10, 6)) + 1)
    with pytest.raises(ValueError, match="different sketch matrices"):
        scale.SketchedCountMoments(om1).update(counts) + scale.SketchedCountMoments(om2).update(counts)
    views = [scale.SketchedViewMoments([om1, om1, om1]), scale.SketchedViewMoments([om1, om1, om2])]
    with pytest.raises(ValueError, match="SketchedViewMoments accumulators were built with different"):
        views[0].update(X, X, X) + views[1].update(X, X, X)
    same = a + scale.SketchedMoments(om1.copy()).update(X)          # equal sketches add
    assert same.n == 40 and np.allclose(same.third(), a.third())
