"""Helpers of the experiment and bench scripts: where data goes, JSON-ready numbers, time, memory."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

__all__ = ["data_path", "experiment_main", "loglog_slope", "mean_sd", "peak_rss_gib", "reset_peak_rss", "rounded",
           "timed", "write_json"]


def data_path(name: str, root=None) -> Path:
    """``chapters/data/NAME`` of the repository the calling script lives in.

    ``root`` is the repository (default: the current directory, or its parent when the script runs
    from ``experiments/`` or ``bench/``).
    """
    base = Path.cwd() if root is None else Path(root)
    if not (base / "chapters").is_dir() and (base.parent / "chapters").is_dir():
        base = base.parent
    return base / "chapters" / "data" / name


def rounded(obj, digits: int | None = 7):
    """``obj`` with every float rounded to ``digits`` decimals (non-finite floats become ``None``),
    NumPy scalars and arrays turned into Python numbers and lists: ready for ``json.dump``.
    ``digits=None`` keeps every float exactly (JSON writes the shortest repr that reads back
    the same float): for values whose printed digits must not move, however small they are.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.book import rounded
    >>> rounded({"err": np.float64(0.123456789), "n": np.int64(3), "x": np.array([1.0, np.nan])}, 3)
    {'err': 0.123, 'n': 3, 'x': [1.0, None]}
    >>> rounded([np.float64(1.234e-12)], None)
    [1.234e-12]
    """
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        if not math.isfinite(obj):
            return None
        return float(obj) if digits is None else round(float(obj), digits)
    if isinstance(obj, np.ndarray):
        return rounded(obj.tolist(), digits)
    if isinstance(obj, dict):
        return {k: rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v, digits) for v in obj]
    return obj


def write_json(obj, path, digits: int | None = 7) -> Path:
    """Write :func:`rounded` ``obj`` as indented JSON to ``path`` (folders created); returns the path.
    ``digits=None`` writes every float exactly."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rounded(obj, digits), indent=1) + "\n", encoding="utf-8")
    return path


def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), seconds)``: one call, wall-clock time by ``time.perf_counter``."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def _status(key: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 2**20   # kB -> GiB
    raise KeyError(key)


def peak_rss_gib() -> float:
    """Peak resident memory of this process in GiB (``VmHWM`` of ``/proc/self/status``, Linux)."""
    return _status("VmHWM")


def reset_peak_rss() -> None:
    """Reset the peak resident memory that :func:`peak_rss_gib` reports to the current one (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def loglog_slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (a rate: −1/2 for a Monte-Carlo error).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlib.book import loglog_slope
    >>> round(loglog_slope([1e2, 1e3, 1e4], [1e-1, 1e-1 / 10**0.5, 1e-2]), 6)
    -0.5
    """
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def mean_sd(x, fmt: str = ".2e") -> str:
    """``"mean ± sd"`` of ``x`` (population standard deviation), each formatted with ``fmt``."""
    x = np.asarray(x, float)
    return f"{x.mean():{fmt}} ± {x.std():{fmt}}"


def experiment_main(parts: dict, quick: dict, *, prefix: str, script: str, description: str = "",
              digits: int | None = 7, argv=None) -> dict:
    """The command line of an experiment script made of named parts.

    ``python SCRIPT [PART ...] [--quick]`` runs the chosen parts (default: all, in the order of
    ``parts``). Each part is a function returning a dict; it runs with one BLAS thread and its
    default arguments, or with the keyword arguments ``quick[name]`` under ``--quick``, which
    writes nothing. The result, with the script's path, ``OMP_NUM_THREADS`` and the part's wall
    time (``wall_seconds``), is written to ``chapters/data/{prefix}{name}.json`` by
    :func:`write_json` with ``digits``. Returns name -> result of the parts that ran.

    Examples
    --------
    >>> from mvlib.book import experiment_main
    >>> out = experiment_main({"square": lambda n=3: {"n2": n * n}}, {"square": {"n": 2}}, prefix="demo_",
    ...                 script="experiments/demo.py", argv=["--quick"])   # doctest: +ELLIPSIS
    square: ... s (quick, nothing written)
    >>> out["square"]["n2"]
    4
    """
    import argparse
    import os

    from threadpoolctl import threadpool_limits

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("parts", nargs="*", metavar="PART", help=f"parts to run (default: all): {', '.join(parts)}")
    parser.add_argument("--quick", action="store_true", help="small sizes, write nothing")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.parts) - set(parts))
    if unknown:
        parser.error(f"unknown parts {unknown}; choose from {', '.join(parts)}")
    info = dict(script=script, omp_num_threads=os.environ.get("OMP_NUM_THREADS"))
    results = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for name in args.parts or list(parts):
            t0 = time.perf_counter()
            res = parts[name](**(quick[name] if args.quick else {}))
            res.update(info, wall_seconds=time.perf_counter() - t0)
            results[name] = res
            if args.quick:
                print(f"{name}: {res['wall_seconds']:.1f} s (quick, nothing written)", flush=True)
                continue
            path = write_json(res, data_path(f"{prefix}{name}.json"), digits=digits)
            print("wrote", path, f"({res['wall_seconds']:.1f} s)", flush=True)
    return results
