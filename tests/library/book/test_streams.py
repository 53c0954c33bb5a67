"""Tests of mvlib.book's stream and cluster plumbing (``mvlib/book/_streams.py``)."""
from __future__ import annotations

import numpy as np
import pytest

from mvlib.book import CountedChunks, local_client
from mvlib.core.scale import row_chunks


def test_counted_chunks_counts_what_was_drawn():
    X = np.arange(21.0).reshape(7, 3)
    reader = CountedChunks(row_chunks(X, 3))
    assert (reader.n_chunks, reader.n_rows) == (0, 0)
    first = next(iter(reader))
    assert np.array_equal(first, X[:3]) and (reader.n_chunks, reader.n_rows) == (1, 3)


def test_counted_chunks_reads_a_stream_once_in_full():
    X = np.arange(21.0).reshape(7, 3)
    reader = CountedChunks(iter(np.split(X, [2, 5])))
    assert np.array_equal(np.vstack(list(reader)), X)
    assert (reader.n_chunks, reader.n_rows) == (3, 7)
    assert list(reader) == [] and reader.n_chunks == 3          # a stream is read once


def test_local_client_runs_tasks_on_its_workers():
    pytest.importorskip("distributed")
    client = local_client(2)
    try:
        workers = client.scheduler_info()["workers"]
        assert len(workers) == 2 and all(w["nthreads"] == 1 for w in workers.values())
        assert client.submit(sum, [1, 2, 3]).result() == 6
    finally:
        client.close()
        client.cluster.close()
