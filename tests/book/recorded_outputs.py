"""Compare a notebook executed by the book build with its recorded outputs, by nbval's rules.

`make test` executes every chapter once, in the clean ``-W`` book build, which writes the
executed notebooks to ``_build/jupyter_execute/``. Instead of executing each chapter a second
time under nbval, the tests compare those executed notebooks with the outputs recorded in
``chapters/``, using nbval's own comparison (:meth:`nbval.plugin.IPyNbCell.compare_outputs`),
markers (``# NBVAL_IGNORE_OUTPUT``, ``# NBVAL_SKIP``, ``# NBVAL_RAISES_EXCEPTION`` and their
tags), stream coalescing and sanitisation (``tests/book/nbval_sanitize.cfg``). The HTML's figures
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
ROOT = TESTS.parents[1]
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


def _hidden_glue(output) -> str | None:
    """The key of a glue output stored without display (``glue(..., display=False)``)."""
    meta = output.get("metadata", {}).get("scrapbook")
    return meta["name"] if meta and meta.get("mime_prefix") else None


def split_glue(notebook) -> dict:
    """Remove the hidden glue outputs from a notebook's cells; return them by key.

    The book build does the same before it writes ``_build/jupyter_execute/X.ipynb``: it moves
    those outputs to ``X.glue.json``, with the ``application/papermill.record/`` prefix of
    their MIME types stripped. Both sides are brought to that form before comparing.
    """
    glue = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            key = _hidden_glue(output)
            if key is None:
                kept.append(output)
                continue
            prefix = output["metadata"]["scrapbook"]["mime_prefix"]
            glue[key] = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in output["data"].items()}
        cell.outputs = kept
    return glue


def read_executed_glue(executed_path: Path) -> dict:
    """The glue values the book build extracted from an executed notebook (``X.glue.json``)."""
    import json

    path = executed_path.with_suffix(".glue.json")
    if not path.exists():
        return {}
    return {k: v.get("data", {}) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def compare_glue(recorded_glue: dict, executed_glue: dict, patterns) -> list[str]:
    """Glued values compare like outputs: same keys, same text after sanitisation."""
    cell = _Cell(patterns)
    problems = []
    missing, extra = sorted(set(recorded_glue) - set(executed_glue)), sorted(set(executed_glue) - set(recorded_glue))
    if missing:
        problems.append(f"glue keys recorded but not produced by the run: {missing}")
    if extra:
        problems.append(f"glue keys produced by the run but not recorded: {extra}")
    for key in sorted(set(recorded_glue) & set(executed_glue)):
        ref = {m: cell.sanitize(v) for m, v in recorded_glue[key].items() if m not in SKIP_COMPARE}
        run = {m: cell.sanitize(v) for m, v in executed_glue[key].items() if m not in SKIP_COMPARE}
        if ref != run:
            problems.append(f"glue {key!r}: recorded {ref} but the run glued {run}")
    return problems


def compare_notebooks(recorded, executed, patterns=None, executed_glue=None) -> list[str]:
    """Differences between two notebooks' code-cell outputs, as nbval would report them.

    ``recorded`` and ``executed`` are nbformat notebooks (or paths). Hidden glue outputs are
    compared by key (``executed_glue``: the build's ``X.glue.json``, read automatically when
    ``executed`` is a path; otherwise taken from ``executed``'s own outputs). Returns one
    message per failing cell or glue key (empty when they agree): a changed source, a changed
    output, a changed glued value, an error.
    """
    if executed_glue is None and not isinstance(executed, nbformat.NotebookNode):
        executed_glue = read_executed_glue(Path(executed))
    if not isinstance(recorded, nbformat.NotebookNode):
        recorded = nbformat.read(str(recorded), as_version=4)
    if not isinstance(executed, nbformat.NotebookNode):
        executed = nbformat.read(str(executed), as_version=4)
    recorded, executed = nbformat.from_dict(recorded), nbformat.from_dict(executed)  # copies
    patterns = sanitize_patterns() if patterns is None else patterns
    recorded_glue = split_glue(recorded)
    run_glue = split_glue(executed)
    if executed_glue is None:
        executed_glue = run_glue
    else:
        executed_glue = {**run_glue, **executed_glue}
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
    return problems + compare_glue(recorded_glue, executed_glue, patterns)


def _copy(outputs):
    return [nbformat.from_dict(dict(o)) for o in outputs]


BUDGET_SECONDS = 30  # each chapter's execution budget (on 2 cores, another chapter running alongside)
BOOK_LOG = ROOT / ".book-build.log"  # written by `make book`


def _log_text(log: Path) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(encoding="utf-8", errors="replace")) if log.exists() else ""


def execution_times(log: Path = BOOK_LOG) -> dict[str, float]:
    """Seconds each notebook took to execute in the last book build, from the log lines of
    tools/execute_chapters.py (the same as myst-nb's: "<path>.ipynb: Executed notebook in 12.34 seconds")."""
    import re

    found = re.findall(r"(\S+\.ipynb): Executed notebook in ([0-9.]+) seconds", _log_text(log))
    return {Path(path).name: float(seconds) for path, seconds in found}


def execution_wall_time(log: Path = BOOK_LOG) -> str | None:
    """tools/execute_chapters.py's summary: "Executed N notebooks on W workers in S s"."""
    import re

    found = re.findall(r"^(Executed \d+ notebooks on \d+ workers in [0-9.]+ s)", _log_text(log), re.M)
    return found[-1] if found else None


if __name__ == "__main__":  # the per-notebook execution times of the last book build
    times = execution_times()
    if not times:
        print(f"  no execution times found in {BOOK_LOG.name}")
    for name, seconds in sorted(times.items()):
        over = f"  (over the {BUDGET_SECONDS} s budget)" if seconds > BUDGET_SECONDS else ""
        print(f"  {name:40s} {seconds:6.1f} s{over}")
    if times:
        print(f"  {'all chapters (sum)':40s} {sum(times.values()):6.1f} s")
    if execution_wall_time():
        print(f"  {execution_wall_time()}")
