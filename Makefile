# Every target builds and uses a local virtual environment, so a fresh machine needs only
# Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help run demo test bench bench-suite bench-fresh lint format clean snap-update oracle

help:  ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

# uv installs the project and its dependencies: it fetches, unpacks and compiles in parallel,
# about 10 s on a fresh machine where pip took about 23 s. pip only brings uv itself. The
# bytecode up front spares every test worker compiling the libraries it imports.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	@# Bytecode up front: start-up stays fast even where PYTHONDONTWRITEBYTECODE is set.
	$(BIN)/python -m compileall -q workbench
	touch $(STAMP)

venv: $(STAMP)  ## create the virtual environment

run: $(STAMP)  ## open the app on a temporary copy of the demo project
	@$(BIN)/python -m compileall -q workbench
	$(BIN)/workbench demo

# The suite runs on pytest-xdist workers, a test module or class to a worker, so the fixtures
# a module shares are built once. Two workers a core: a worker waits on servers, subprocesses
# and the app's idle checks for about half its time, which one worker a core leaves idle.
# `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= $(shell python3 -c "import os; print(2 * len(os.sched_getaffinity(0)))" 2>/dev/null || echo auto)
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadscope

# The import contracts and mypy run inside the suite (tests/test_static_checks.py), on one
# worker while the others run tests; ruff runs first, as it fails fast.
test: $(STAMP)  ## lint, then the test suite (import contracts and type check included)
	$(BIN)/ruff check workbench tests benchmarks
	@# Bytecode on, whatever the environment says: every worker otherwise rewrites and
	@# compiles the test modules' assertions again (10 s of CPU a worker, 3 s from the cache).
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q $(PYTEST_PARALLEL)

# The suite's own figure comes last: it takes minutes, and loads the machine the others time.
bench: $(STAMP)  ## run the benchmarks (one line per figure; the suite's time last)
	@# Bytecode of the code as it is now: the start-up figures are not compile times.
	@$(BIN)/python -m compileall -q workbench
	@for f in $(filter-out benchmarks/bench_suite.py benchmarks/bench_fresh_clone.py,$(wildcard benchmarks/bench_*.py)); do \
		$(BIN)/python $$f || exit 1; done
	$(BIN)/python benchmarks/bench_suite.py -n $(PYTEST_WORKERS)

bench-suite: $(STAMP)  ## time only the whole test suite (minutes)
	$(BIN)/python benchmarks/bench_suite.py -n $(PYTEST_WORKERS)

bench-fresh: $(STAMP)  ## time `make test` on a fresh clone, from nothing (many minutes)
	$(BIN)/python benchmarks/bench_fresh_clone.py $(if $(AGAINST),--against $(AGAINST))

oracle: $(STAMP)  ## real Claude Code releases from npm vs the workbench (minutes; writes docs/compatibility.md)
	$(BIN)/python -m oracle all

lint: $(STAMP)  ## ruff lint and format check
	$(BIN)/ruff check workbench tests benchmarks oracle
	$(BIN)/ruff format --check workbench tests benchmarks oracle

format: $(STAMP)  ## apply ruff formatting and import sorting
	$(BIN)/ruff check --fix workbench tests benchmarks
	$(BIN)/ruff format workbench tests benchmarks

# In one process: under xdist the snapshot plugin never removes a snapshot no test uses.
snap-update: $(STAMP)  ## re-record UI snapshots (review snapshot_report.html first)
	$(BIN)/python -m pytest -q -n0 tests/ui --snapshot-update

clean:  ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache snapshot_report.html
