"""Plumbing for chapters that stream their data or fit it on a local Dask cluster."""
from __future__ import annotations

__all__ = ["CountedChunks", "local_client"]


class CountedChunks:
    """An iterable over ``chunks`` (arrays of rows) that counts the chunks and rows it has yielded.

    Wrap a stream before handing it to an estimator to check afterwards that it was read once,
    in full: ``n_chunks`` and ``n_rows`` (the sum of ``chunk.shape[0]``) grow as the chunks are
    drawn. The underlying iterator is consumed once, like any stream.

    Parameters
    ----------
    chunks : iterable of arrays (n_i, ...)

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.book import CountedChunks
    >>> reader = CountedChunks(np.split(np.zeros((10, 3)), [4, 8]))
    >>> [len(chunk) for chunk in reader]
    [4, 4, 2]
    >>> reader.n_chunks, reader.n_rows
    (3, 10)
    """

    def __init__(self, chunks):
        self.chunks, self.n_chunks, self.n_rows = chunks, 0, 0

    def __iter__(self):
        for chunk in self.chunks:
            self.n_chunks += 1
            self.n_rows += chunk.shape[0]
            yield chunk


def local_client(n_workers: int = 2):
    """A ``distributed.Client`` of a new local cluster of ``n_workers`` one-thread worker processes.

    No dashboard and only error logs, so that a chapter's output stays the same from run to run
    (the warning that the default HTTP port is in use is filtered). Close both when done:
    ``client.close(); client.cluster.close()``.

    Parameters
    ----------
    n_workers : int, default 2

    Returns
    -------
    distributed.Client, with the cluster as ``client.cluster``.

    Examples
    --------
    >>> from mvlib.book import local_client
    >>> client = local_client(1)
    >>> len(client.scheduler_info()["workers"])
    1
    >>> client.close()
    >>> client.cluster.close()
    """
    import logging
    import warnings

    from distributed import Client, LocalCluster

    warnings.filterwarnings("ignore", message="Port .* is already in use")   # the HTTP port, not the workers'
    cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster)
