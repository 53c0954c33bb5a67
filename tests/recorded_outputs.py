"""Compare a notebook executed by the book build with its recorded outputs, by nbval's rules.

`make test` executes every chapter once, in the clean ``-W`` book build, which writes the
executed notebooks to ``_build/jupyter_execute/``. Instead of executing each chapter a second
time under nbval, the tests compare those executed notebooks with the outputs recorded in
``chapters/``, using nbval's own comparison (:meth:`nbval.plugin.IPyNbCell.compare_outputs`),
markers (``# NBVAL_IGNORE_OUTPUT``, ``# NBVAL_SKIP``, ``# NBVAL_RAISES_EXCEPTION`` and their
tags), stream coalescing and sanitisation (``tests/nbval_sanitize.cfg``). The HTML's figures
and the compared outputs therefore come from the same run.
"""
from __future__ import annotations

from collections import OrderedDict, defaultdict
from pathlib import Path
from types import SimpleNamespace

import nbformat
from nbval.plugin import (
    IPyNbCell,
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
    nocolors,
)

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
EXECUTED = ROOT / "_build" / "jupyter_execute"
SANITIZE = TESTS / "nbval_sanitize.cfg"

# nbval's IPyNbFile.skip_compare (set in its __init__), with images skipped (no --nbdime).
SKIP_COMPARE = (
    "metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
    "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg",
)


class _Cell:
    """Just enough of an nbval cell item to run nbval's comparison outside its kernel loop."""

    compare_outputs = IPyNbCell.compare_outputs
    format_output_compare = IPyNbCell.format_output_compare
    sanitize = IPyNbCell.sanitize

    def __init__(self, patterns):
        self.parent = SimpleNamespace(skip_compare=SKIP_COMPARE, sanitize_patterns=OrderedDict(patterns))
        self.colors = nocolors
        # pytest's assertion-repr hook is not available here: nbval falls back to its own diff
        self.ihook = SimpleNamespace(pytest_assertrepr_compare=lambda **_: [])
        self.config = None
        self.comparison_traceback: list[str] = []


def sanitize_patterns(path: Path = SANITIZE):
    return get_sanitize_patterns(path.read_text(encoding="utf-8")) if path.exists() else []


def cell_options(cell) -> dict:
    """nbval's per-cell options: metadata tags, then comment markers (which win)."""
    options = defaultdict(bool, find_metadata_tags(cell.metadata))
    options.update(dict(find_comment_markers(cell.source)))
    options.setdefault("check", True)
    return options


def compare_notebooks(recorded, executed, patterns=None) -> list[str]:
    """Differences between two notebooks' code-cell outputs, as nbval would report them.

    ``recorded`` and ``executed`` are nbformat notebooks (or paths). Returns one message per
    failing cell (empty when they agree): a changed source, a changed output, an error.
    """
    if not isinstance(recorded, nbformat.NotebookNode):
        recorded = nbformat.read(str(recorded), as_version=4)
    if not isinstance(executed, nbformat.NotebookNode):
        executed = nbformat.read(str(executed), as_version=4)
    patterns = sanitize_patterns() if patterns is None else patterns
    ref_cells = [c for c in recorded.cells if c.cell_type == "code"]
    run_cells = [c for c in executed.cells if c.cell_type == "code"]
    if [c.source for c in ref_cells] != [c.source for c in run_cells]:
        return ["the executed notebook's code differs from the recorded one (a stale build?)"]
    problems = []
    for number, (ref, run) in enumerate(zip(ref_cells, run_cells)):
        options = cell_options(ref)
        if options["skip"]:
            continue
        errors = [o for o in run.outputs if o.output_type == "error"]
        if errors and not options["check_exception"]:
            problems.append(f"cell {number}: raised {errors[0].ename}: {errors[0].evalue}")
            continue
        if ref.get("execution_count") is None:
            if ref.outputs:
                problems.append(f"cell {number}: unrun reference cell has outputs")
            continue
        if not options["check"]:
            continue
        cell = _Cell(patterns)
        ok = cell.compare_outputs(
            coalesce_streams(_copy(run.outputs)), coalesce_streams(_copy(ref.outputs))
        )
        if not ok:
            problems.append(f"cell {number}: outputs differ\n" + "\n".join(cell.comparison_traceback))
    return problems


def _copy(outputs):
    return [nbformat.from_dict(dict(o)) for o in outputs]


def execution_seconds(executed) -> float | None:
    """Wall time of one notebook's execution, from the timestamps nbclient records per cell."""
    from datetime import datetime

    if not isinstance(executed, nbformat.NotebookNode):
        executed = nbformat.read(str(executed), as_version=4)
    stamps = []
    for cell in executed.cells:
        ex = cell.get("metadata", {}).get("execution", {})
        for key in ("iopub.execute_input", "shell.execute_reply"):
            if key in ex:
                stamps.append(datetime.fromisoformat(ex[key].replace("Z", "+00:00")))
    return (max(stamps) - min(stamps)).total_seconds() if stamps else None


BUDGET_SECONDS = 30  # each chapter's execution budget (on 2 cores)

if __name__ == "__main__":  # the per-notebook execution times of the last book build
    total = 0.0
    for path in sorted(EXECUTED.rglob("*.ipynb")):
        seconds = execution_seconds(path)
        name = path.relative_to(EXECUTED).as_posix()
        if seconds is None:
            print(f"  {name:45s} not executed")
            continue
        total += seconds
        over = f"  (over the {BUDGET_SECONDS} s budget)" if seconds > BUDGET_SECONDS else ""
        print(f"  {name:45s} {seconds:6.1f} s{over}")
    print(f"  {'all chapters':45s} {total:6.1f} s")
