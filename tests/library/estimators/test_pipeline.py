"""Checks of the book's pipeline: the table of contents and the recorded notebook outputs.

The recorded outputs of a chapter are evidence (nbval re-executes the notebook and compares),
so they must come from one clean top-to-bottom run: every code cell executed in order 1..N,
no error output, and nothing that only exists on the machine that recorded them.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CHAPTERS = ROOT / "chapters"
SOURCE_SUFFIXES = (".ipynb", ".md")

# Absolute paths of a particular machine must not leak into recorded outputs.
MACHINE_PATH = re.compile(r"(/work/|/root/|/tmp/|/home/|/Users/|[A-Za-z]:\\Users\\)")


def _toc_entries(node) -> list[str]:
    """Every `file:` (and the root) of a jb-book _toc.yml, in order."""
    found: list[str] = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if isinstance(node.get(key), str):
                found.append(node[key])
        for value in node.values():
            if isinstance(value, (list, dict)):
                found.extend(_toc_entries(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_entries(item))
    return found


def _resolve(entry: str) -> Path:
    """The source file of a toc entry (written without its suffix)."""
    base = ROOT / entry
    if base.suffix in SOURCE_SUFFIXES:
        return base
    matches = [base.with_suffix(s) for s in SOURCE_SUFFIXES if base.with_suffix(s).exists()]
    assert len(matches) == 1, f"_toc.yml entry {entry!r} matches {len(matches)} files: {matches}"
    return matches[0]


def _toc_files() -> list[Path]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert toc.get("format") == "jb-book", "_toc.yml must have format: jb-book"
    return [_resolve(entry) for entry in _toc_entries(toc)]


TOC_FILES = _toc_files()
TOC_NOTEBOOKS = [p for p in TOC_FILES if p.suffix == ".ipynb"]


def test_toc_lists_every_chapter_file():
    on_disk = {p for s in SOURCE_SUFFIXES for p in CHAPTERS.glob(f"*{s}")}
    listed = set(TOC_FILES)
    missing = sorted(p.relative_to(ROOT).as_posix() for p in on_disk - listed)
    assert not missing, f"chapter files not listed in _toc.yml: {missing}"
    assert len(TOC_FILES) == len(listed), "_toc.yml lists a file twice"
    for path in TOC_FILES:
        assert path.exists(), f"_toc.yml lists {path.relative_to(ROOT)}, which does not exist"


def test_toc_has_notebooks():
    assert TOC_NOTEBOOKS, "_toc.yml lists no notebook"


@pytest.mark.parametrize(
    "notebook", TOC_NOTEBOOKS, ids=[p.relative_to(ROOT).as_posix() for p in TOC_NOTEBOOKS]
)
def test_notebook_kernel_is_python3(notebook: Path):
    # The book build starts the kernel named in the notebook; only `python3` (the .venv's
    # ipykernel) exists on a fresh machine. nbval ignores the name (--nbval-current-env).
    kernel = nbformat.read(notebook, as_version=4).metadata.get("kernelspec", {}).get("name")
    assert kernel == "python3", (
        f"{notebook.name}: kernelspec name is {kernel!r}; set it to 'python3' "
        "(Kernel > Change kernel > Python 3 (ipykernel), or edit the notebook metadata)"
    )


def _text_of_output(output) -> str:
    """All human-readable text of one output (binary payloads such as PNG are skipped)."""
    parts: list[str] = []
    if output.get("output_type") == "stream":
        parts.append(output.get("text", ""))
    if output.get("output_type") == "error":
        parts.extend(output.get("traceback", []))
        parts.append(output.get("evalue", ""))
    for mime, value in output.get("data", {}).items():
        if mime.startswith("text/") or mime.endswith("+xml") or mime.endswith("json"):
            parts.append(value if isinstance(value, str) else str(value))
    return "\n".join(parts)


@pytest.mark.parametrize(
    "notebook", TOC_NOTEBOOKS, ids=[p.relative_to(ROOT).as_posix() for p in TOC_NOTEBOOKS]
)
def test_notebook_outputs_are_a_clean_recorded_run(notebook: Path):
    nb = nbformat.read(notebook, as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert code_cells, f"{notebook.name} has no code cell"

    counts = [c.get("execution_count") for c in code_cells]
    expected = list(range(1, len(code_cells) + 1))
    assert counts == expected, (
        f"{notebook.name}: execution counts {counts}, expected {expected}; record the outputs "
        f"with `.venv/bin/jupyter execute --inplace chapters/{notebook.name}`"
    )

    for index, cell in enumerate(code_cells, start=1):
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", (
                f"{notebook.name}, code cell {index}: recorded an error "
                f"({output.get('ename')}: {output.get('evalue')})"
            )
            leaked = MACHINE_PATH.search(_text_of_output(output))
            assert leaked is None, (
                f"{notebook.name}, code cell {index}: output contains the machine path "
                f"{leaked.group(0)!r}"
            )
