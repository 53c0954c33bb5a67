# Build and test pipeline of the book.
#   make book   environment + pinned installs + execute every chapter + HTML in _build/html
#   make test   make book, then pytest (tests/) and nbval strict over chapters/*.ipynb
#   make clean  remove build outputs and caches (keeps .venv); make distclean also removes .venv
#   make lock   rewrite requirements.lock from the current .venv (after adding a dependency)

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := book

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# Tools from the venv come first, so kernels started by Jupyter run the venv's python.
export PATH := $(CURDIR)/$(BIN):$(PATH)
export VIRTUAL_ENV := $(CURDIR)/$(VENV)
export JUPYTER_PLATFORM_DIRS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Kernels must pick matplotlib's inline backend, or figures vanish from the book.
unexport MPLBACKEND

PYTEST_ARGS := tests chapters \
	--nbval --nbval-current-env \
	--nbval-sanitize-with tests/nbval_sanitize.cfg \
	--nbval-cell-timeout=300 \
	-p no:cacheprovider \
	-o "norecursedirs=.* _build $(VENV) bench mvlib *.egg-info __pycache__"

.PHONY: book test clean distclean lock env browser

env: $(STAMP)

# (Re)install whenever the pins or the package metadata change.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -r requirements.lock
	$(BIN)/python -m pip install --no-deps -e .
	touch $@

# Always a clean build: an incremental build re-executes nothing and can hide a failing cell.
book: $(STAMP)
	rm -rf _build
	$(BIN)/jupyter-book build . -W --keep-going
	@echo "HTML: $(CURDIR)/_build/html/index.html"

# Debian's Chromium for tests/test_browser.py (CI runs as root on a fresh machine).
# If it cannot be installed the browser test is reported as skipped, with the reason.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "WARNING: could not install chromium; the browser test will be skipped"; \
	  else echo "WARNING: chromium missing and not root; the browser test will be skipped"; fi; }

test: book browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^mvlib[= @]' > requirements.lock

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
