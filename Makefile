# Build and test pipeline of the book.
#   make book   environment + pinned installs + execute every chapter + HTML in _build/html
#   make test   make book (each chapter executed once, two at a time) beside the library tests, then
#               the browser check, the comparison of the executed notebooks with the recorded
#               outputs by nbval's rules and the book tests; two stages at a time, each timed
#   make clean  remove build outputs and caches (keeps .venv); make distclean also removes .venv
#   make record NB=chapters/NN_name.ipynb   re-record a chapter's outputs (NB=all: every chapter)
#   make page NB=chapters/NN_name.ipynb     -W build of the book executing only that chapter
#   make test-long  the property tests with the "long" hypothesis profile (hundreds of examples) and
#               the checks marked `long` (the install cell in a bare environment)
#   make nbval  re-execute every chapter under nbval itself (a second opinion; not in make test)
#   make lab    JupyterLab from .venv (its kernel has mvlib), opened at chapters/ (LAB_ARGS: extra options)
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
# nbval compares recorded outputs digit by digit, so every x86-64 machine must round alike:
# OpenBLAS picks its kernels by CPU (Haswell/AVX2 vs SkylakeX/AVX-512 vs Zen) and NumPy
# dispatches AVX-512 loops (sorts, reductions) where it can; both change the last bits of
# results and the order of ties. Pin OpenBLAS to its AVX2 kernels and switch NumPy's AVX-512
# loops off (the names are those NumPy 2.4 dispatches). Kernels started by Jupyter inherit these.
ifeq ($(shell uname -m),x86_64)
export OPENBLAS_CORETYPE := Haswell
export NPY_DISABLE_CPU_FEATURES := X86_V4 AVX512_ICL AVX512_SPR
endif
# Two notebooks (and later pytest beside the browser check) run at once, one per core: one BLAS /
# OpenMP thread per process avoids oversubscribing the 2 cores (measured on a 2-core machine that
# other work shared: 322 s instead of 406 s for the 11 chapters), and every recorded digit stays the same
# (tests/book/test_recorded_outputs.py passes either way). Override from the environment if needed.
OPENBLAS_NUM_THREADS ?= 1
OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS OMP_NUM_THREADS

# Each stage collects only the folder of its tests (tests/library, tests/book, tests/site: conftest gives
# every test the marker of its folder) and selects with -m, so no stage spends seconds collecting the
# thousands of parametrised library cases it would deselect (about 9 s per stage on this machine).
# pytest over tests/ only: the chapters are executed once, by the book build, and
# tests/book/test_recorded_outputs.py compares those executed notebooks with the recorded ones
# by nbval's rules (`make nbval` re-executes them under nbval itself, for a second opinion).
PYTEST_BASE := -p no:cacheprovider \
	-o "norecursedirs=.* _build $(VENV) bench experiments mvlib *.egg-info __pycache__"
NBVAL_ARGS := chapters --nbval --nbval-current-env \
	--nbval-sanitize-with tests/book/nbval_sanitize.cfg --nbval-cell-timeout=300

# $(call stage,NAME,COMMAND): run COMMAND, print and log how long it took.
STAGES := .stage-times.txt
define stage
	start=$$(date +%s%N); $(2); ms=$$(( ($$(date +%s%N) - start) / 1000000 )); \
	  line=$$(printf "%-38s %5d.%d s" "$(1)" $$((ms / 1000)) $$((ms % 1000 / 100))); \
	  echo "==> stage $$line"; echo "$$line" >> $(STAGES)
endef

.PHONY: book test test-execution test-library test-book test-recorded test-browser test-long clean distclean lock env browser record page nbval lab

env: $(STAMP)

# (Re)install whenever the pins or the package metadata change. pip installs uv at the version the
# lock pins, and uv installs the lock: the same pinned packages, in about 35 s instead of pip's 110 s
# here (uv unpacks and compiles in parallel). Bytecode is compiled at install time: where
# PYTHONDONTWRITEBYTECODE is set, as on CI machines, every kernel would otherwise compile what it imports.
$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q "$$(grep -i '^uv==' requirements.lock)"
	$(BIN)/uv pip install --python $(BIN)/python --compile-bytecode -r requirements.lock
	$(BIN)/uv pip install --python $(BIN)/python --no-deps -e .
	touch $@

# Always a clean build: an incremental build re-executes nothing and can hide a failing cell.
# tools/execute_chapters.py executes every chapter once, EXEC_WORKERS at a time (one kernel per
# core), into the fresh _build/.jupyter_cache, and stops the build if a cell raises; the -W build
# (_config.yml: execute_notebooks: cache) renders from that cache. It must execute nothing itself:
# a cache miss would run a chapter a second time, so the log is checked for one.
EXEC_WORKERS ?= 2
book: $(STAMP)
	rm -rf _build
	{ $(BIN)/python tools/execute_chapters.py --workers $(EXEC_WORKERS) && \
	  $(BIN)/jupyter-book build . -W --keep-going; } 2>&1 | tee .book-build.log
	@if grep "Executing notebook using" .book-build.log; then \
	  echo "ERROR: the book build executed the notebooks above itself (not found in the cache)"; exit 1; fi
	@echo "HTML: $(CURDIR)/_build/html/index.html"

# Debian's Chromium for tests/site/test_browser.py (CI runs as root on a fresh machine).
# If it cannot be installed the browser test is reported as skipped, with the reason.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "WARNING: could not install chromium; the browser test will be skipped"; \
	  else echo "WARNING: chromium missing and not root; the browser test will be skipped"; fi; }

# Each stage is timed; every chapter executes once (in the book build, two at a time). The stages run
# two at a time, one per core (make -j2; each prints its output when it ends), in this order: the
# book build beside the library tests, which read no build output (while the chapters execute they
# share the cores; while Sphinx writes the HTML on one core they take the other); then what reads
# the build, each taking a core as one frees: the browser check (the longest) as soon as the build
# ends, then the comparison of the executed notebooks with the recorded ones and the book tests.
# STAGED=1 makes the stages that read the build wait for it; alone, `make test-browser` (etc.)
# tests the _build that exists.
test:
	@rm -f $(STAGES)
	@$(call stage,install (.venv from the lock),$(MAKE) --no-print-directory env)
	@$(call stage,build and tests (two at a time),$(MAKE) --no-print-directory -j2 --output-sync=target STAGED=1 \
	  browser test-execution test-library test-browser test-recorded test-book)
	@echo "Stage times:"; sed 's/^/  /' $(STAGES)

ifdef STAGED
test-browser test-recorded test-book: test-execution
endif

test-execution:
	@$(call stage,  execution (clean -W book build),$(MAKE) --no-print-directory book)
	@echo "Execution time of each chapter in this build:"; $(BIN)/python tests/book/recorded_outputs.py

# (without the -j2 jobserver flags: tests/book/test_lab.py runs `make lab` itself)
test-library:
	@$(call stage,  library tests (unit/property),env -u MAKEFLAGS -u MFLAGS $(BIN)/python -m pytest $(PYTEST_BASE) tests/library -m "library and not long")

test-book:
	@$(call stage,  book tests (chapters/scripts/lab),env -u MAKEFLAGS -u MFLAGS $(BIN)/python -m pytest $(PYTEST_BASE) tests/book -m "book and not recorded and not long")

test-recorded:
	@$(call stage,  comparison with recorded outputs,$(BIN)/python -m pytest $(PYTEST_BASE) tests/book -m recorded -q)

test-browser:
	@$(call stage,  browser (Chromium on the HTML),$(MAKE) --no-print-directory browser && $(BIN)/python -m pytest $(PYTEST_BASE) tests/site -m browser -rs)

# The property tests at full strength (hypothesis "long" profile: hundreds of random models per
# estimator; `make test` runs the same tests with the few examples of the "ci" profile), and the
# checks marked `long` (the install cell in a bare environment).
test-long: $(STAMP)
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest $(PYTEST_BASE) tests -m "library or long"

# Re-execute every chapter under nbval itself (slower: a second execution; not part of make test).
nbval: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_BASE) $(NBVAL_ARGS)

# JupyterLab (pinned in the lock) run from .venv, so its "Python 3" kernel is the environment that
# has mvlib; the file browser opens at chapters/ (as root, e.g. in a container, with --allow-root).
# Extra options through LAB_ARGS, e.g.
#   make lab LAB_ARGS="--no-browser --port=8890"
LAB_ARGS ?=
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)/chapters" $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# Re-record a chapter's outputs with a clean top-to-bottom run in the pinned environment:
#   make record NB=chapters/06_hidden_markov.ipynb   (NB=all: every chapter)
record: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make record NB=chapters/NN_name.ipynb (or NB=all)"; exit 2; }
	$(BIN)/jupyter execute --inplace --timeout=600 $(if $(filter all,$(NB)),chapters/*.ipynb,$(NB))

# Build the whole book but execute only one chapter (the others keep their recorded outputs):
#   make page NB=chapters/03_topic_models.ipynb   -> _build/page-03_topic_models/_build/html
# A quick -W check of one chapter's rendering while writing it; `make book` remains the real build.
page: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make page NB=chapters/NN_name.ipynb"; exit 2; }
	$(eval PAGE := $(basename $(notdir $(NB))))
	mkdir -p _build/page-$(PAGE)
	$(BIN)/python -c "import sys, yaml; c = yaml.safe_load(open('_config.yml')); \
	others = [p for p in __import__('glob').glob('chapters/*.ipynb') if p != '$(NB)']; \
	c['execute']['exclude_patterns'] = others; c['execute']['execute_notebooks'] = 'force'; c['exclude_patterns'] = c.get('exclude_patterns', []) + ['_build']; \
	sx = c['sphinx']; sx['local_extensions'] = {k: '$(CURDIR)/' + v for k, v in sx['local_extensions'].items()}; \
	sx['config']['templates_path'] = ['$(CURDIR)/' + t for t in sx['config']['templates_path']]; \
	yaml.safe_dump(c, open('_build/page-$(PAGE)/_config.yml', 'w'), sort_keys=False)"
	$(BIN)/jupyter-book build . -W --keep-going --config _build/page-$(PAGE)/_config.yml --path-output _build/page-$(PAGE)
	@echo "HTML: $(CURDIR)/_build/page-$(PAGE)/_build/html/$(basename $(NB)).html"

lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^mvlib[= @]' > requirements.lock

clean:
	rm -rf _build .pytest_cache .hypothesis $(STAGES) .book-build.log
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
