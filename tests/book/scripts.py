"""The scripts of ``experiments/`` and ``bench/`` as modules, for the quick tests of tests/book.

The scripts are run as files, not installed: ``load_script("experiments", "ch2_experiments")``
imports ``experiments/ch2_experiments.py`` under its own name (no ``sys.path`` edit), once.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_script(folder: str, name: str):
    """The module of ``FOLDER/NAME.py`` (registered as ``NAME`` in ``sys.modules``)."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(ROOT / folder / f"{name}.py"):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
