"""Every exercise of every chapter has a solution, and one per chapter is code the build runs.

Exercises are ``{exercise}`` blocks of sphinx-exercise with a label ``chNN-ex-...``; each is
followed by a ``{solution}`` (or a gated ``{solution-start}`` … ``{solution-end}``) naming it,
collapsed (``:class: dropdown``). At least one solution per chapter is gated and holds a code
cell with an ``assert``, which the book build executes. The rendered pages show each exercise
numbered by chapter and each solution as a collapsed block.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("[01][0-9]_*.ipynb"))
EXERCISE = re.compile(r"^:{3,}\{exercise\}.*\n:label: (?P<label>\S+)", re.M)
SOLUTION = re.compile(r"^:{3,}\{solution(?P<gated>-start)?\} (?P<label>\S+)\n(?P<opts>(?::[\w-]+:.*\n)*)", re.M)


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_exercise_has_a_collapsed_solution(path: Path):
    number = path.name[:2]
    markdown = "\n".join("".join(c["source"]) for c in _cells(path) if c["cell_type"] == "markdown")
    exercises = [m.group("label") for m in EXERCISE.finditer(markdown)]
    solutions = [m for m in SOLUTION.finditer(markdown)]
    assert len(exercises) >= 3, f"{path.name}: only {len(exercises)} exercises"
    assert all(label.startswith(f"ch{number}-ex-") for label in exercises), exercises
    assert len(set(exercises)) == len(exercises), "duplicate exercise labels"
    assert sorted(m.group("label") for m in solutions) == sorted(exercises), "exercises without exactly one solution"
    for m in solutions:
        assert ":class: dropdown" in m.group("opts"), f"{path.name}: solution to {m.group('label')} is not collapsed"
    head = markdown[markdown.index("## Exercises"):] if "## Exercises" in markdown else ""
    assert not re.search(r"^\d+\. ", head, re.M), f"{path.name}: exercises left as a plain numbered list"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_one_solution_per_chapter_is_executed_code_that_asserts(path: Path):
    inside, executed = False, []
    for cell in _cells(path):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            if re.search(r"^:{3,}\{solution-start\}", source, re.M):
                inside = True
            end = re.search(r"^(:{3,})\{solution-end\}\n\1[ \t]*$", source, re.M)
            if end:
                inside = False
                # the solution's last words belong inside it, not under the closed dropdown
                after = source[end.end():].lstrip()
                assert not after or re.match(r"(:{3,}\{exercise\}|#)", after), \
                    f"{path.name}: prose after a {{solution-end}}: {after[:60]!r}"
        elif inside and "assert" in source:
            assert cell.get("execution_count"), f"{path.name}: a solution cell was not executed when recorded"
            assert not any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            executed.append(source)
    assert not inside, f"{path.name}: a {{solution-start}} is never closed"
    assert executed, f"{path.name}: no solution is code that asserts"


def test_rendered_exercises_are_numbered_and_solutions_collapsed():
    pages = sorted((ROOT / "_build" / "html" / "chapters").glob("[01][0-9]_*.html"))
    if not pages:
        pytest.skip("no built book: run `make book` first")
    for page in pages:
        html = page.read_text(encoding="utf-8")
        number = int(page.name[:2])
        labels = set(re.findall(r'class="exercise[^"]*" id="(ch\d\d-ex-[\w-]+)"', html))
        shown = set(re.findall(rf"Exercise {number}\.(\d+)", html))
        assert labels and len(shown) >= len(labels), f"{page.name}: exercises not numbered by chapter"
        assert html.count('class="solution dropdown') == len(labels), f"{page.name}: solutions not all collapsed"
