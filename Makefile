# doctordesk: two commands, `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint typecheck bench browser clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(TEST_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP) $@

run: $(STAMP)
	$(BIN)/doctordesk migrate
	$(BIN)/doctordesk seed-demo --if-empty
	$(BIN)/doctordesk serve

# Browser tests need Debian's chromium; it is installed when missing and the machine allows it.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get install -y -q chromium >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null)) \
	      || echo "chromium could not be installed: browser tests will skip"; \
	  else echo "chromium missing and cannot be installed here: browser tests will skip"; fi; }

test: $(TEST_STAMP) browser
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

bench: $(TEST_STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache
