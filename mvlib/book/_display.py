"""Display helpers for the chapters: typeset math, glue, the chapters' data files."""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["glue_text", "load_data", "show"]

# The chapters run with chapters/ as working directory (the book build, nbval, `make lab`, Colab
# after the install cell copies the data beside the notebook).
DATA_DIR = Path("data")


def show(lhs: str, expr) -> None:
    r"""Display ``lhs = expr`` as typeset math (display only, no computation).

    ``expr`` is a sympy expression (typeset with ``sympy.latex``) or a LaTeX string.

    Examples
    --------
    >>> import sympy as sp
    >>> from mvlib.book import show
    >>> show("M_2", sp.Matrix([[1, 0], [0, 2]]))   # doctest: +SKIP
    """
    import sympy as sp
    from IPython.display import Math, display

    rhs = expr if isinstance(expr, str) else sp.latex(expr)
    display(Math(f"{lhs} = {rhs}"))


def glue_text(name: str, value, fmt: str = "") -> str:
    """Glue ``format(value, fmt)`` under ``name`` for the prose (``{glue:text}`name```); returns the text.

    Nothing is displayed in the cell. Examples: ``glue_text("ch2_slope", slope, ".2f")``,
    ``glue_text("ch6_runs", f"{ok} of {n}")``.
    """
    from myst_nb import glue

    text = format(value, fmt)
    glue(name, text, display=False)
    return text


def load_data(name: str, directory=DATA_DIR):
    """The JSON data file ``name`` of the chapters (``chapters/data/NAME``), as Python objects.

    The files are written by the scripts in ``experiments/`` and ``bench/`` (their docstrings say
    how to re-run them); a chapter loads them, asserts on them and glues from them.
    """
    path = Path(directory) / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the chapters run from chapters/, where data/ holds "
                                "the files written by experiments/ and bench/")
    return json.loads(path.read_text(encoding="utf-8"))
