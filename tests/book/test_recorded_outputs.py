"""Every chapter's outputs, as executed by the book build, equal the recorded ones (nbval rules).

The comparison itself (``tests/book/recorded_outputs.py``) calls nbval's own code; the tests at the
bottom check that it still fails on a changed number and passes what nbval lets pass.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
import yaml
from recorded_outputs import EXECUTED, ROOT, compare_notebooks, sanitize_patterns


def _toc_notebooks() -> list[Path]:
    text = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    files = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str) and (ROOT / node[key]).with_suffix(".ipynb").exists():
                    files.append((ROOT / node[key]).with_suffix(".ipynb"))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(text))
    return files


NOTEBOOKS = _toc_notebooks()


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_executed_outputs_equal_recorded(notebook: Path):
    executed = EXECUTED / notebook.relative_to(ROOT)
    assert executed.exists(), (
        f"{executed.relative_to(ROOT)} is missing: the book build executes the chapters; "
        "run `make book` (or `make test`, which does) first"
    )
    assert executed.stat().st_mtime >= notebook.stat().st_mtime, (
        f"{executed.relative_to(ROOT)} is older than {notebook.name}: rebuild with `make book`"
    )
    problems = compare_notebooks(notebook, executed)
    assert not problems, f"{notebook.name}:\n" + "\n".join(problems)


# --- the comparison must still catch what nbval catches ------------------------------------


def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _cell(source, *outputs, count=1):
    cell = nbformat.v4.new_code_cell(source)
    cell.execution_count = count
    cell.outputs = list(outputs)
    return cell


def _stream(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def test_a_changed_number_fails():
    ref = _nb(_cell("print(err)", _stream("error 0.0312\n")))
    run = _nb(_cell("print(err)", _stream("error 0.0313\n")))
    problems = compare_notebooks(ref, run, patterns=[])
    assert problems and "0.0312" in problems[0] and "0.0313" in problems[0]


def test_a_changed_execute_result_or_glue_fails():
    glue = nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "'0.031'"},
        metadata={"scrapbook": {"name": "ch1_err"}})
    glue_changed = nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "'0.032'"},
        metadata={"scrapbook": {"name": "ch1_err"}})
    assert compare_notebooks(_nb(_cell("glue()", glue)), _nb(_cell("glue()", glue_changed)), [])
    res = nbformat.v4.new_output("execute_result", data={"text/plain": "3"}, execution_count=1)
    res2 = nbformat.v4.new_output("execute_result", data={"text/plain": "4"}, execution_count=1)
    assert compare_notebooks(_nb(_cell("x", res)), _nb(_cell("x", res2)), [])


def test_missing_output_and_error_fail():
    ref = _nb(_cell("print(1)", _stream("1\n")))
    assert compare_notebooks(ref, _nb(_cell("print(1)")), [])
    err = nbformat.v4.new_output("error", ename="AssertionError", evalue="", traceback=[])
    assert compare_notebooks(ref, _nb(_cell("print(1)", err)), [])


def test_ignored_cells_images_and_sanitised_text_pass():
    ref = _nb(
        _cell("# NBVAL_IGNORE_OUTPUT\nprint(t)", _stream("0.53 s\n")),
        _cell("plot()", nbformat.v4.new_output("display_data", data={"image/png": "AAAA", "text/plain": "<Figure>"})),
        _cell("obj", _stream("<Foo at 0x7f00aa>\n")),
    )
    run = _nb(
        _cell("# NBVAL_IGNORE_OUTPUT\nprint(t)", _stream("0.61 s\n")),
        _cell("plot()", nbformat.v4.new_output("display_data", data={"image/png": "BBBB", "text/plain": "<Figure>"})),
        _cell("obj", _stream("<Foo at 0x7fffbb>\n")),
    )
    assert compare_notebooks(ref, run, patterns=sanitize_patterns()) == []


def test_split_streams_are_coalesced_as_nbval_does():
    ref = _nb(_cell("print(1); print(2)", _stream("1\n2\n")))
    run = _nb(_cell("print(1); print(2)", _stream("1\n"), _stream("2\n")))
    assert compare_notebooks(ref, run, patterns=[]) == []


def test_a_stale_build_is_reported():
    ref = _nb(_cell("print(1)", _stream("1\n")))
    run = _nb(_cell("print(2)", _stream("1\n")))
    assert "stale" in compare_notebooks(ref, run, patterns=[])[0]


def test_glue_moved_out_by_the_build_is_compared_by_key():
    # The book build moves hidden glue outputs out of the executed notebook into X.glue.json
    # (MIME prefix stripped); the comparison must still see a changed glued value.
    glue = nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": "'0.031'"},
        metadata={"scrapbook": {"name": "ch1_err", "mime_prefix": "application/papermill.record/"}})
    ref = _nb(_cell("glue()", _stream("done\n"), glue))
    run = _nb(_cell("glue()", _stream("done\n")))
    same = {"ch1_err": {"text/plain": "'0.031'"}}
    changed = {"ch1_err": {"text/plain": "'0.032'"}}
    assert compare_notebooks(ref, run, patterns=[], executed_glue=same) == []
    problems = compare_notebooks(ref, run, patterns=[], executed_glue=changed)
    assert problems and "0.032" in problems[0]
    assert compare_notebooks(ref, run, patterns=[], executed_glue={})  # a glue key went missing
