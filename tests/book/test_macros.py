"""The notation macros are defined once, in _config.yml, and used by every chapter.

The rendered book gets them from MathJax's configuration. A notebook opened in
Jupyter does not read _config.yml, so each chapter carries one markdown cell with
the same definitions as ``\\newcommand``s (invisible when rendered); this test keeps
that cell an exact copy of the configuration and checks that chapters use the
macros rather than spelling the symbols out.
"""
import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
SPELLED_OUT = {r"\mathbb{E}": r"\E", r"\mathbb E": r"\E", r"\mathbb{R}": r"\R", r"\mathbb R": r"\R",
               r"\operatorname{diag}": r"\diag"}


def config_macros():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    return cfg["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]


def newcommand_line(macros) -> str:
    """The ``$\\newcommand...$`` paragraph a chapter carries for local Jupyter."""
    parts = []
    for name, body in macros.items():
        if isinstance(body, list):
            parts.append(rf"\newcommand{{\{name}}}[{body[1]}]{{{body[0]}}}")
        else:
            parts.append(rf"\newcommand{{\{name}}}{{{body}}}")
    return "$" + "".join(parts) + "$"


def test_config_defines_the_notation_macros():
    assert {"E", "R", "diag", "inner", "norm", "one"} <= set(config_macros())


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_carries_the_macros_and_uses_them(nb_path):
    nb = json.loads(nb_path.read_text())
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert newcommand_line(config_macros()) in [m.strip() for m in markdown], \
        f"{nb_path.name} lacks the macro cell copied from _config.yml (run tests/book/test_macros.py's newcommand_line)"
    for text in markdown:
        if text.strip() == newcommand_line(config_macros()):
            continue
        for long, short in SPELLED_OUT.items():
            assert long not in text, f"{nb_path.name} spells out {long}; write {short}"
