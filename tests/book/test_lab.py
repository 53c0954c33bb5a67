"""`make lab` serves the chapters from the project's environment (README, "Run the notebooks yourself").

The test runs the Makefile target itself, headless on 127.0.0.1 with a token, asks the server's
REST API what it serves and which kernels it offers, and stops it.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read().decode())


@pytest.fixture(scope="module")
def lab():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    if not (ROOT / ".venv" / "bin" / "jupyter-lab").exists():
        pytest.skip("no .venv with JupyterLab: run `make book` first")
    port, token = _free_port(), secrets.token_hex(16)
    args = f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} --IdentityProvider.token={token}"
    proc = subprocess.Popen(["make", "-s", "lab", f"LAB_ARGS={args}"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "JUPYTER_NO_CONFIG": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):              # up to 60 s for the server to answer
            if proc.poll() is not None:
                pytest.fail(f"make lab exited early:\n{proc.stdout.read().decode()[-2000:]}")
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
        yield base, token
    finally:
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, None)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:      # already gone
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue


def test_lab_serves_the_chapters(lab):
    base, token = lab
    listing = _get(f"{base}/api/contents?token={token}")
    names = {item["name"] for item in listing["content"]}
    chapters = {p.name for p in (ROOT / "chapters").glob("*.ipynb")}
    assert chapters and chapters <= names, f"the server's root does not list the chapters: {sorted(names)[:10]}"
    nb = _get(f"{base}/api/contents/{sorted(chapters)[0]}?token={token}&content=1")
    assert nb["type"] == "notebook" and nb["content"]["cells"]


def test_lab_kernel_is_the_environment_with_mvlib(lab):
    base, token = lab
    specs = _get(f"{base}/api/kernelspecs?token={token}")
    spec = specs["kernelspecs"][specs["default"]]["spec"]
    python = spec["argv"][0]
    if python in ("python", "python3"):          # ipykernel's native spec: the server's own python
        python = str(ROOT / ".venv" / "bin" / "python")
    out = subprocess.run([python, "-c", "import mvlib, sys; print(mvlib.__file__); print(sys.prefix)"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    mvlib_file, prefix = out.stdout.split()
    assert Path(mvlib_file).resolve().is_relative_to(ROOT), mvlib_file
    assert Path(prefix).resolve() == (ROOT / ".venv").resolve(), (prefix, sys.prefix)
