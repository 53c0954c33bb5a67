"""Computed numbers reach a chapter's prose only through glue (see tests/book/claims.py).

Every chapter listed in _toc.yml is scanned, except those still on ``claims.PENDING``.
A fixture notebook with typed-in numbers must be caught (a test of the test).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from claims import PENDING, ROOT, check_chapter, load_allowlists, number_tokens

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    entries.append(node[key])
            for value in node.values():
                if isinstance(value, (dict, list)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    files = []
    for entry in entries:
        for suffix in (".ipynb", ".md"):
            if (ROOT / entry).with_suffix(suffix).exists():
                files.append((ROOT / entry).with_suffix(suffix))
    return files


CHAPTERS = _toc_files()


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_numbers_in_prose_are_glued(path: Path):
    findings, unused = check_chapter(path)
    if path.stem in PENDING:
        pytest.skip(f"{path.stem} is pending the claims discipline ({len(findings)} typed numbers)")
    assert not findings, (
        f"{len(findings)} number(s) typed into the prose of {path.name}; glue them from the cell "
        "that computes them, or name their source under "
        f"{path.stem} in tests/book/claims_allowlist.yml:\n" + "\n".join(f"  {f}" for f in findings)
    )
    assert not unused, f"unused allowlist entries for {path.stem}: {[e['text'] for e in unused]}"


_GLUE_REF = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)(?::[^`]*)?`")


@pytest.mark.parametrize(
    "path", [p for p in CHAPTERS if p.suffix == ".ipynb"],
    ids=[p.stem for p in CHAPTERS if p.suffix == ".ipynb"],
)
def test_glue_references_exist_in_recorded_outputs(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    glued = {
        out.get("metadata", {}).get("scrapbook", {}).get("name")
        for cell in nb["cells"] if cell["cell_type"] == "code"
        for out in cell.get("outputs", [])
    }
    refs = {
        name for cell in nb["cells"] if cell["cell_type"] == "markdown"
        for name in _GLUE_REF.findall("".join(cell["source"]))
        if "::" not in name  # glue from another page: checked by the -W build
    }
    missing = sorted(refs - glued)
    assert not missing, f"{path.name} pastes glue keys that no recorded cell glued: {missing}"


def test_pending_chapters_exist_and_new_chapters_are_not_pending():
    stems = {p.stem for p in CHAPTERS}
    assert PENDING <= stems, f"pending chapters not in the book: {sorted(PENDING - stems)}"
    # The list only shrinks: chapters after 09 start under the discipline.
    assert all(s[:2].isdigit() and int(s[:2]) <= 9 for s in PENDING)


def test_allowlists_name_their_sources_and_chapters():
    stems = {p.stem for p in CHAPTERS}
    for stem, entries in load_allowlists().items():
        assert stem in stems, f"claims_allowlist.yml names {stem!r}, which is no chapter of the book"
        for entry in entries:
            assert len(entry["source"].strip()) >= 10, f"{stem}: vague source {entry!r}"


# --- the test of the test --------------------------------------------------------------


def test_fixture_with_typed_numbers_fails():
    fixture = FIXTURES / "claims_typed_number.ipynb"
    findings, _ = check_chapter(fixture, allowlist=[])
    flagged = {(f.cell, f.token) for f in findings}
    expected = {
        (0, "0.031"), (0, "3.2 s"), (0, "12%"), (0, "3 of 5"), (0, "4.5×"), (0, "15.8 GiB"),
        (0, "1e-10"), (0, "10⁴"), (0, "$-0.49$"),
    }
    assert expected <= flagged, f"typed numbers not caught: {sorted(expected - flagged)}"
    clean_cells = {f.cell for f in findings} - {0}
    assert not clean_cells, f"false positives in the fixture's clean cells: {findings}"


def test_fixture_allowlist_entry_with_source_exempts_a_number():
    fixture = FIXTURES / "claims_typed_number.ipynb"
    allow = [{"text": "error was 0.031", "source": "fixture: a quoted constant"}]
    findings, unused = check_chapter(fixture, allowlist=allow)
    assert "0.031" not in {f.token for f in findings} and not unused
    _, unused = check_chapter(fixture, allowlist=[{"text": "never there", "source": "x" * 12}])
    assert unused


@pytest.mark.parametrize(
    "text",
    [
        "By Lemma 3.2 and Theorem 5.1 of the paper, see §4.1 and Appendix B.4 (Proposition G.1).",
        "The error is $\\varepsilon = 0.05$ and $$\\lambda = 1.5$$ with `tol=1e-10` in code.",
        "It took {glue:text}`ch1_time` s, a ratio of {glue:text}`ch1_ratio`×.",
        "Published in 2014 {cite}`song2014nonparametric`, run with scikit-learn 1.9 and Python 3.11.",
        "```python\nx = 0.5  # code is not prose\n```",
        "```{prf:theorem} Title\n:label: ch1-thm\n\nHolds for every $k \\ge 2$.\n```",
    ],
)
def test_exempt_forms_are_not_flagged(text):
    assert number_tokens(text) == []


def test_numbers_inside_prose_directives_are_flagged():
    text = "```{prf:remark} Measured\n:label: ch1-rem\n\nThe bound was loose by 0.27 here.\n```"
    assert [t for t, _ in number_tokens(text)] == ["0.27"]


_PRF_FENCE = re.compile(r"^\s*(`{3,}|:{3,})\{prf:\w+\}(.*)$")


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_numbered_blocks_with_a_citation_in_the_title_use_colon_fences(path: Path):
    # A backtick fence cannot carry backticks in its info string (CommonMark): a
    # ```{prf:theorem} Title {cite}`key` block silently renders as code, with no label.
    from claims import markdown_cells

    bad = [
        line.strip()[:80]
        for source in markdown_cells(path)
        for line in source.splitlines()
        if (m := _PRF_FENCE.match(line)) and m.group(1).startswith("`") and "`" in m.group(2)
    ]
    assert not bad, f"{path.name}: write these numbered blocks with ':::' fences: {bad}"
