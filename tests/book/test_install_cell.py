"""The launch buttons work: each chapter's first code cell installs mvlib where it is missing.

Colab opens a chapter's notebook with nothing of this project installed, so the first code cell
of every chapter installs mvlib from the repository when ``import mvlib`` would fail (only the
package's own dependency ranges: Colab keeps its numpy) and copies the chapters' data files
(``chapters/data``, which some chapters read) beside the notebook; it is hidden in the book
(``remove-cell``). Here that cell runs in a fresh virtual environment without mvlib, with the
install source pointed at a copy of this checkout through ``MVLIB_SOURCE``: ``import mvlib``
must then work and ``data/`` hold the chapters' data; and the built pages must not show it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "chapters").glob("[01][0-9]_*.ipynb"))


def _first_code_cell(path: Path) -> dict:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next(c for c in cells if c["cell_type"] == "code")


def test_every_chapter_starts_with_the_same_hidden_install_cell():
    sources = set()
    for path in CHAPTERS:
        cell = _first_code_cell(path)
        assert "remove-cell" in cell["metadata"].get("tags", []), f"{path.name}: install cell not hidden"
        source = "".join(cell["source"])
        assert 'find_spec("mvlib") is None' in source and "MVLIB_SOURCE" in source, path.name
        assert cell.get("outputs") == [], f"{path.name}: the install cell printed something where mvlib is installed"
        sources.add(source)
    assert len(sources) == 1, "the chapters' install cells differ"
    import yaml

    repo = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    assert f'"{repo}.git"' in sources.pop(), "the install cell's default source is not the book's repository"


def test_install_cell_absent_from_the_rendered_pages():
    pages = sorted((ROOT / "_build" / "html" / "chapters").glob("[01][0-9]_*.html"))
    if not pages:
        pytest.skip("no built book: run `make book` first")
    for page in pages:
        assert "MVLIB_SOURCE" not in page.read_text(encoding="utf-8"), f"{page.name} shows the install cell"


def _run_install_cell(tmp_path, *, stack_installed):
    """Run the install cell in a fresh environment without mvlib; assert it makes mvlib importable
    from that environment and copies the data files, and does nothing when run again.

    ``stack_installed``: the environment sees the packages of this one (numpy, scipy, pip, …; a
    path entry, so mvlib's own editable hook is not run), as Colab keeps its scientific stack and
    pip then installs mvlib alone; otherwise it is bare and pip resolves every dependency range.
    """
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=not stack_installed).create(env_dir)
    python = str(env_dir / "bin" / "python")
    if stack_installed:
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        Path(site, "stack.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_COMPILE"] = "1"   # no bytecode ahead of use: what is tested is the install, not pip's compileall
    before = subprocess.run([python, "-c", "import mvlib"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert before.returncode != 0, "the fresh environment already has mvlib"
    if stack_installed:
        check = subprocess.run([python, "-c", "import numpy, scipy, sklearn, sympy, tensorly, pip"],
                               capture_output=True, text=True, env=env, cwd=tmp_path)
        assert check.returncode == 0, check.stderr[-1000:]
    cell = "".join(_first_code_cell(CHAPTERS[0])["source"])
    # the package's files copied out of the checkout (pip would build inside it otherwise)
    source = tmp_path / "mvlib-src"
    shutil.copytree(ROOT / "mvlib", source / "mvlib", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "chapters" / "data", source / "chapters" / "data")
    run = subprocess.run([python, "-c", cell], capture_output=True, text=True, timeout=900, cwd=tmp_path,
                         env={**env, "MVLIB_SOURCE": str(source)})
    if run.returncode != 0 and "No matching distribution" in run.stderr + run.stdout:
        pytest.skip(f"the package registry is unreachable: {run.stderr[-300:]}")
    assert run.returncode == 0, run.stderr[-2000:]
    after = subprocess.run([python, "-c", "import mvlib, sys; print(mvlib.__file__); print(sys.prefix)"],
                           capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert after.returncode == 0, after.stderr[-2000:]
    where, prefix = after.stdout.split()
    assert Path(prefix).resolve() == env_dir.resolve() and Path(where).resolve().is_relative_to(env_dir.resolve())
    data = sorted(p.name for p in (tmp_path / "data").glob("*.json"))
    assert data == sorted(p.name for p in (ROOT / "chapters" / "data").glob("*.json")) and data, data
    again = subprocess.run([python, "-c", cell], capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "", "the cell must do nothing once mvlib is installed"


def test_install_cell_makes_mvlib_importable_beside_an_installed_scientific_stack(tmp_path):
    """As on Colab: numpy, scipy, scikit-learn, sympy and tensorly are there, mvlib is not."""
    _run_install_cell(tmp_path, stack_installed=True)


@pytest.mark.long
def test_install_cell_makes_mvlib_importable_in_a_bare_environment(tmp_path):
    """Nothing installed: pip resolves and installs every dependency (about 45 s; `make test-long`)."""
    _run_install_cell(tmp_path, stack_installed=False)
