"""Helpers of the bench scripts (``bench/bench_*.py``): one fit in a child process, memory and time of
a call, the machine header, fixed-width rows, parts timed one after the other.

Every function here measures or prints; none asserts on time.
"""
from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._runs import _status, peak_rss_gib, reset_peak_rss, timed

__all__ = ["ChildError", "Measurement", "Timing", "child_reply", "environment", "format_row",
           "machine_line", "max_rss_gib", "measure_call", "median_timed", "merged_sections", "run_child",
           "run_parts", "thread_env", "thread_limit", "versions_line"]

#: the environment variables that size the BLAS/OpenMP thread pools of a new process
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS")


# --------------------------------------------------------------------------- threads
def thread_env(threads: int) -> dict:
    """The thread-count variables of a new process, every one set to ``threads``.

    They take effect in a process that has not loaded its BLAS yet (a child process, or before
    NumPy is imported).

    Parameters
    ----------
    threads : int
        Threads of each BLAS/OpenMP pool.

    Returns
    -------
    dict
        ``{variable: str(threads)}`` for ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
        ``MKL_NUM_THREADS``, ``NUMEXPR_NUM_THREADS`` and ``VECLIB_MAXIMUM_THREADS``.

    Examples
    --------
    >>> from mvlib.book import thread_env
    >>> env = thread_env(2)
    >>> env["OMP_NUM_THREADS"], env["OPENBLAS_NUM_THREADS"]
    ('2', '2')
    """
    return {var: str(threads) for var in THREAD_VARIABLES}


def thread_limit(threads, user_api=None):
    """A context that limits the BLAS/OpenMP pools of this process to ``threads`` threads.

    Parameters
    ----------
    threads : int or None
        Threads per pool inside the block; ``None`` or ``0`` (or less) keeps the libraries' defaults.
    user_api : {None, "blas", "openmp"}
        The pools limited (``threadpoolctl``'s ``user_api``; ``None``: all of them).

    Returns
    -------
    context manager
        ``threadpoolctl.threadpool_limits``, or a no-op where ``threads`` asks for no limit or
        ``threadpoolctl`` is not installed.

    Examples
    --------
    >>> from mvlib.book import thread_limit
    >>> with thread_limit(1, "blas"):
    ...     pass          # BLAS calls here run on one thread
    >>> with thread_limit(0):
    ...     pass          # no limit
    """
    if threads is None or threads <= 0:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api=user_api)


# --------------------------------------------------------------------------- child processes
class ChildError(RuntimeError):
    """A child run of :func:`run_child` that failed: it exited with an error, printed nothing on
    its standard output, or ran out of time.

    Attributes
    ----------
    returncode : int or None
        The child's exit code (``None`` when it timed out).
    stderr : str
        What the child wrote on its standard error.
    timed_out : bool
        Whether the child was stopped at the timeout.
    """

    def __init__(self, returncode, stderr, timed_out=False):
        self.returncode, self.stderr, self.timed_out = returncode, stderr or "", timed_out
        super().__init__(self.last_line)

    @property
    def last_line(self) -> str:
        """The last line of standard error, or ``"exit code N"`` where the child wrote none."""
        return (self.stderr.strip().splitlines() or [f"exit code {self.returncode}"])[-1]


def run_child(script, *args, threads=None, env=None, timeout=None) -> dict:
    """Run ``python SCRIPT --child ARGS...`` in a fresh interpreter and return the JSON object that
    the child printed as the last line of its standard output (see :func:`child_reply`).

    A bench runs each measurement in its own process so that the peak memory is the
    measurement's own and the thread pools are sized before the libraries load.

    Parameters
    ----------
    script : str or Path
        The script to run, usually the calling bench's ``__file__``; it answers ``--child``.
    *args : str
        The words after ``--child`` (e.g. one JSON spec).
    threads : int, optional
        Set every variable of :func:`thread_env` to this in the child's environment.
    env : dict, optional
        More variables for the child's environment (they win over ``os.environ`` and ``threads``).
    timeout : float, optional
        Seconds after which the child is stopped.

    Returns
    -------
    dict
        The child's answer.

    Raises
    ------
    ChildError
        The child failed (non-zero exit, no output, or timed out).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from mvlib.book import ChildError, run_child
    >>> script = pathlib.Path(tempfile.mkdtemp()) / "child.py"
    >>> _ = script.write_text("import json, os, sys\\n"
    ...                       "print('any output first')\\n"
    ...                       "print(json.dumps({'args': sys.argv[1:], 'threads': os.environ['OMP_NUM_THREADS']}))\\n")
    >>> run_child(script, '{"n": 3}', threads=2)
    {'args': ['--child', '{"n": 3}'], 'threads': '2'}
    >>> _ = script.write_text("import sys; sys.exit('no data')")
    >>> try:
    ...     run_child(script)
    ... except ChildError as e:
    ...     print(e.returncode, e.last_line)
    1 no data
    """
    child_env = dict(os.environ)
    if threads is not None:
        child_env.update(thread_env(threads))
    child_env.update(env or {})
    cmd = [sys.executable, str(Path(script).resolve()), "--child", *map(str, args)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, env=child_env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
        raise ChildError(None, stderr, timed_out=True) from None
    lines = res.stdout.strip().splitlines()
    if res.returncode != 0 or not lines:
        raise ChildError(res.returncode, res.stderr)
    return json.loads(lines[-1])


def child_reply(obj) -> None:
    """Print ``obj`` as one JSON line: the answer of a ``--child`` run to :func:`run_child`.

    Examples
    --------
    >>> from mvlib.book import child_reply
    >>> child_reply({"method": "spectral", "seconds": 1.5})
    {"method": "spectral", "seconds": 1.5}
    """
    print(json.dumps(obj))


# --------------------------------------------------------------------------- memory and time
def max_rss_gib() -> float:
    """Peak resident memory of this process in GiB as ``resource.getrusage`` reports it
    (``ru_maxrss``; Linux).

    Unlike :func:`~mvlib.book.peak_rss_gib` (``VmHWM``), it also counts the peak of the memory
    image this process replaced when it started: in a child that ``subprocess`` started (by
    ``vfork``), the peak its parent had reached by then.

    Examples
    --------
    >>> from mvlib.book import max_rss_gib
    >>> max_rss_gib() > 0
    True
    """
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # KiB on Linux


class Measurement(NamedTuple):
    """One call measured by :func:`measure_call`."""

    result: Any
    #: wall time of the call (``time.perf_counter``)
    seconds: float
    #: resident memory just before the call
    rss_before_gib: float
    #: peak resident memory during the call
    rss_peak_gib: float
    #: ``"Category: message"`` (at most 160 characters of the message) of each warning, sorted
    warnings: list
    #: whether the peak counter could be reset; if not, ``rss_peak_gib`` is :func:`max_rss_gib`
    peak_reset: bool

    @property
    def fit_gib(self) -> float:
        """The memory the call added at its peak: ``rss_peak_gib - rss_before_gib``."""
        return self.rss_peak_gib - self.rss_before_gib

    def memory(self) -> dict:
        """``{"rss_before_gib", "rss_peak_gib", "fit_gib"}``, for a bench's JSON."""
        return {"rss_before_gib": self.rss_before_gib, "rss_peak_gib": self.rss_peak_gib,
                "fit_gib": self.fit_gib}


def measure_call(fn, *args, **kwargs) -> Measurement:
    """Call ``fn(*args, **kwargs)`` once and measure its time, its memory and its warnings (Linux).

    Garbage is collected first; the resident memory then is ``rss_before_gib``. The kernel's peak
    counter is reset (:func:`~mvlib.book.reset_peak_rss`) and read after the call
    (:func:`~mvlib.book.peak_rss_gib`): ``rss_peak_gib`` is the peak during the call, of the whole
    process. Where the reset is not allowed, the lifetime peak :func:`max_rss_gib` stands in
    (``peak_reset`` is then False). Every warning is recorded, none shown.

    Returns
    -------
    Measurement
        ``(result, seconds, rss_before_gib, rss_peak_gib, warnings, peak_reset)``, with
        ``fit_gib`` and ``memory()``.

    Examples
    --------
    >>> import warnings
    >>> from mvlib.book import measure_call
    >>> def fit(n):
    ...     warnings.warn("slow start")
    ...     return sum(range(n))
    >>> m = measure_call(fit, 10)
    >>> m.result, m.warnings, sorted(m.memory())
    (45, ['UserWarning: slow start'], ['fit_gib', 'rss_before_gib', 'rss_peak_gib'])
    """
    gc.collect()
    before = _status("VmRSS")
    try:
        reset_peak_rss()
        reset = True
    except OSError:
        reset = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, seconds = timed(fn, *args, **kwargs)
    peak = peak_rss_gib() if reset else max_rss_gib()
    msgs = sorted({f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught})
    return Measurement(result, seconds, before, peak, msgs, reset)


class Timing(NamedTuple):
    """Repeated calls timed by :func:`median_timed`."""

    #: median wall time of the calls
    seconds: float
    #: every call's wall time, in order
    times: list
    #: what the last call returned
    result: Any

    @property
    def runs(self) -> int:
        """How many calls were timed."""
        return len(self.times)


def median_timed(fn, *args, repeats: int = 3, budget: float = math.inf, **kwargs) -> Timing:
    """Median wall time of up to ``repeats`` calls ``fn(*args, **kwargs)``; the calls stop early once
    they have taken ``budget`` seconds together (there is always at least one).

    Examples
    --------
    >>> from mvlib.book import median_timed
    >>> t = median_timed(sum, range(1000), repeats=3)
    >>> t.result, t.runs, t.seconds == sorted(t.times)[1]
    (499500, 3, True)
    >>> median_timed(sum, [1, 2], repeats=5, budget=0.0).runs   # the budget is spent after one call
    1
    """
    times = []
    while True:
        result, seconds = timed(fn, *args, **kwargs)
        times.append(seconds)
        if len(times) >= repeats or sum(times) >= budget:
            return Timing(statistics.median(times), times, result)


# --------------------------------------------------------------------------- what ran where
def environment(**versions) -> dict:
    """What a bench records of its run: the Python and NumPy versions, ``versions``, the machine.

    Parameters
    ----------
    **versions
        More ``name=version`` entries, in the order given, after ``python`` and ``numpy``.

    Returns
    -------
    dict
        ``{"python", "numpy", **versions, "machine", "nproc"}``.

    Examples
    --------
    >>> from mvlib.book import environment
    >>> env = environment(mvlib="0.1")
    >>> list(env), env["mvlib"]
    (['python', 'numpy', 'mvlib', 'machine', 'nproc'], '0.1')
    """
    return {"python": platform.python_version(), "numpy": np.__version__, **versions,
            "machine": platform.machine(), "nproc": os.cpu_count()}


def versions_line(**versions) -> str:
    """``"python X, numpy Y, name version, ..."``: the versions line of a bench's header.

    Examples
    --------
    >>> from mvlib.book import versions_line
    >>> versions_line(**{"scikit-learn": "1.5.2", "mvlib": "0.1"})  # doctest: +ELLIPSIS
    'python 3..., numpy ..., scikit-learn 1.5.2, mvlib 0.1'
    """
    env = environment(**versions)
    del env["machine"], env["nproc"]
    return ", ".join(f"{name} {version}" for name, version in env.items())


def machine_line(load=None) -> str:
    """``"MACHINE, nproc N, load average L"``: the machine line of a bench's header.

    Parameters
    ----------
    load : float, optional
        The load average to print (default: the 1-minute load average now).

    Examples
    --------
    >>> from mvlib.book import machine_line
    >>> machine_line(load=0.5)  # doctest: +ELLIPSIS
    '..., nproc ..., load average 0.50'
    """
    load = os.getloadavg()[0] if load is None else load
    return f"{platform.machine()}, nproc {os.cpu_count()}, load average {load:.2f}"


# --------------------------------------------------------------------------- tables and parts
def format_row(cells, widths, indent: str = "  ", sep: str = " ") -> str:
    """One row of a fixed-width table: the first cell (the row's label) left-aligned, the others
    right-aligned, each in its width (a longer cell is not cut).

    Parameters
    ----------
    cells : sequence of str
        Formatted cells.
    widths : sequence of int
        The width of each column.
    indent, sep : str
        Put before the row, and between two cells.

    Examples
    --------
    >>> from mvlib.book import format_row
    >>> widths = (8, 9, 11)
    >>> print(format_row(["method", "time (s)", "/ spectral"], widths))
      method    time (s)  / spectral
    >>> print(format_row(["EM", f"{2.5:.2f}", f"{2.5 / 0.5:.1f}x"], widths))
      EM            2.50        5.0x
    """
    return indent + sep.join(str(c).ljust(w) if j == 0 else str(c).rjust(w)
                             for j, (c, w) in enumerate(zip(cells, widths)))


def run_parts(parts, run) -> dict:
    """Run the parts of a bench one after the other; time each and print ``[PART: N s, load L]``.

    Parameters
    ----------
    parts : iterable of str
        The parts' names, in order.
    run : callable
        ``run(part, done)`` returns the part's result, a dict; ``done`` holds the results of
        the parts already run (a part may reuse them).

    Returns
    -------
    dict
        ``{part: result}``, each result with ``"part_seconds"`` added.

    Examples
    --------
    >>> from mvlib.book import run_parts
    >>> res = run_parts(["a", "b"], lambda part, done: {"after": sorted(done)})  # doctest: +ELLIPSIS
    [a: 0 s, load ...]
    [b: 0 s, load ...]
    >>> res["b"]["after"], sorted(res["a"])
    (['a'], ['after', 'part_seconds'])
    """
    done = {}
    for part in parts:
        done[part], seconds = timed(run, part, done)
        done[part]["part_seconds"] = seconds
        print(f"[{part}: {seconds:.0f} s, load {os.getloadavg()[0]:.2f}]", flush=True)
    return done


def merged_sections(path, sections: dict, keep_others: bool) -> dict:
    """The JSON object of ``path`` with ``sections`` put in, for a bench that may run one part.

    Parameters
    ----------
    path : str or Path
        The bench's JSON file.
    sections : dict
        The sections this run measured.
    keep_others : bool
        Keep the file's other sections (a run of some parts); when False, or where the file does
        not exist, the result holds ``sections`` alone.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from mvlib.book import merged_sections
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bench.json"
    >>> _ = path.write_text(json.dumps({"scale": 1, "dense": 2}))
    >>> merged_sections(path, {"dense": 3}, keep_others=True)
    {'scale': 1, 'dense': 3}
    >>> merged_sections(path, {"dense": 3}, keep_others=False)
    {'dense': 3}
    """
    path = Path(path)
    data = json.loads(path.read_text()) if keep_others and path.exists() else {}
    data.update(sections)
    return data
