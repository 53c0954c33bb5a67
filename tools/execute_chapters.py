"""Execute the book's notebooks in parallel, once each, into the cache the book build reads.

`make book` runs this script, then ``jupyter-book build``::

    python tools/execute_chapters.py [--workers N]    # default: 2 worker processes

Every notebook of ``_toc.yml`` is executed exactly once, N at a time (one kernel per worker
process, started with this process's environment), by jupyter-cache's own execution worker
with the ``execute:`` settings of ``_config.yml`` (timeout, allow_errors, run_in_temp), and
stored in ``_build/.jupyter_cache``. The build (``execute_notebooks: cache``) then takes every
notebook's outputs from that cache: it executes nothing itself, and writes
``_build/jupyter_execute/*.ipynb`` and ``*.glue.json`` from the cached run as usual.

Prints "<path>: Executed notebook in S seconds" for each notebook (the line
``tests/book/recorded_outputs.py`` reads from ``.book-build.log``); exits 1, after printing the
traceback, if any notebook raised or timed out.
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import yaml
from jupyter_cache import get_cache
from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ExecutionWorkerTempMProc, ProcessData

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "_build" / ".jupyter_cache"  # myst-nb's default cache path for `jupyter-book build .`


def toc_notebooks() -> list[Path]:
    """The notebooks the table of contents lists, in its order."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                path = (ROOT / str(node.get(key, ""))).with_suffix(".ipynb")
                if key in node and path.exists():
                    found.append(path)
            node = list(node.values())
        if isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    return found


def _execute(job):
    """Run in a worker process: execute one notebook and cache it (0 ok, 1 raised, 2 failed)."""
    pk, uri, timeout, allow_errors, in_temp = job
    worker = ExecutionWorkerTempMProc() if in_temp else ExecutionWorkerLocalMProc()
    code, _ = worker(ProcessData(pk, uri, get_cache(str(CACHE)), timeout, allow_errors))
    return uri, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="notebooks executed at once (default 2)")
    args = parser.parse_args()

    execute = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")).get("execute", {})
    cache = get_cache(str(CACHE))
    jobs = []
    for path in toc_notebooks():
        record = cache.add_nb_to_project(str(path))
        jobs.append((record.pk, record.uri, execute.get("timeout", 30),
                     bool(execute.get("allow_errors", False)), bool(execute.get("run_in_temp", False))))

    start, failed = time.perf_counter(), []
    # spawn: the workers start clean (no inherited database connection); the kernels they
    # start inherit this process's environment (the Makefile's OPENBLAS_CORETYPE etc.).
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for uri, code in pool.imap_unordered(_execute, jobs, chunksize=1):
            if code == 0:
                seconds = cache.get_cached_project_nb(uri).data["execution_seconds"]
                print(f"{uri}: Executed notebook in {seconds:.2f} seconds", flush=True)
            else:
                failed.append(uri)
                print(f"{uri}: EXECUTION FAILED\n{cache.get_project_record(uri).traceback or ''}", flush=True)
    print(f"Executed {len(jobs)} notebooks on {args.workers} workers in {time.perf_counter() - start:.1f} s"
          + (f"; {len(failed)} failed: {', '.join(Path(u).name for u in failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
