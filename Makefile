# doctordesk: two commands, `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

# Python may keep compiled modules (a machine's PYTHONDONTWRITEBYTECODE would have every process of the suite, each
# worker, server and command it starts, compile the project and the tests' rewritten asserts again from source).
unexport PYTHONDONTWRITEBYTECODE

# A run under libfaketime (`faketime -f '@…' make test`) keeps one timeline for every process it starts, instead of
# each starting its clock at that moment anew (docs/development.md#the-moment-a-test-runs-at).
export FAKETIME_DONT_RESET := 1

.PHONY: run test test-fast lint typecheck bench browser wrk clean

# Packages are installed with uv (from PyPI, into the venv): the same versions pip resolves, in seconds rather than
# a minute; its download cache is shared by every checkout of the machine.
UV := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(BIN)/uv: $(BIN)/python
	$(BIN)/pip install -q uv

$(STAMP): $(BIN)/uv pyproject.toml
	$(UV) -e .
	touch $@

$(TEST_STAMP): $(BIN)/uv pyproject.toml
	$(UV) -e '.[test]'
	touch $(STAMP) $@

run: $(STAMP)
	$(BIN)/doctordesk migrate
	$(BIN)/doctordesk seed-demo --if-empty
	$(BIN)/doctordesk serve

# Browser tests need Debian's chromium (and drive its headless shell when installed), the benchmarks Debian's wrk: installed when missing and the machine allows it.
browser:
	@sh .ci/ensure-debian-package chromium chromium "browser tests will skip"
	@sh .ci/ensure-debian-package chromium-headless-shell chromium-headless-shell "browser tests drive the full chromium (slower)"

wrk:
	@sh .ci/ensure-debian-package wrk wrk "benchmarks fall back to a Python load generator (client-bound)"

# The suite runs on parallel workers (pytest-xdist), each with databases and ports of its own (docs/development.md);
# a module whose tests share one server or browser stays on one worker (loadgroup). Two workers per core, at most
# eight: a worker spends much of its time waiting for PostgreSQL, a browser, a server or a command it started, and
# with one per core the cores idled meanwhile (measured: docs/development.md, "Where the time goes").
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); n=$$((n * 2)); [ $$n -gt 8 ] && n=8; echo $$n)
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadgroup

# mypy runs beside the suite (its report follows the suite's); either failing fails `make test`. Its cache is kept
# per user, not per checkout (a fresh clone checks only what differs from the last run; mypy compares each file's
# contents, so a stale cache can't hide an error).
MYPY := $(BIN)/mypy --cache-dir $${XDG_CACHE_HOME:-$$HOME/.cache}/doctordesk/mypy

test: $(TEST_STAMP) browser
	$(BIN)/ruff check src tests bench
	$(MYPY) > $(VENV)/mypy-report.txt 2>&1 & typing=$$!; \
	$(BIN)/pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS); tests=$$?; \
	wait $$typing; typed=$$?; echo "mypy:"; cat $(VENV)/mypy-report.txt; \
	test $$tests -eq 0 && test $$typed -eq 0

# The edit loop: SQLite only, no browser, no end-to-end servers (CI still runs everything).
test-fast: $(TEST_STAMP)
	$(BIN)/pytest $(PYTEST_PARALLEL) -m "not postgres and not browser" tests/unit tests/integration $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(TEST_STAMP)
	$(MYPY)

bench: $(TEST_STAMP) wrk
	$(BIN)/python -m bench $(BENCH)

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
