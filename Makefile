PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast install lint docs screenshots clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	@# every-eval-ever ships the schemas and validator the export tests check records with; it declares
	@# Python 3.12+ (for its own code), but its schemas and validator run on 3.11 as well.
	$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' || \
	  $(BIN)/pip install -q --no-deps --ignore-requires-python 'every-eval-ever>=0.3'

# The demo: a gullible and a wary scripted agent, each with no defense and with tool_filter, on the
# banking suite (offline, no key). tests/test_demo.py runs this line and every command it prints next.
DEMO_RUN := run --suite banking -m scripted/gullible -m scripted/wary -d none -d tool_filter

demo: $(BIN)/python
	$(BIN)/pip install -q -e .
	@echo "(randori is in $(BIN); '. $(BIN)/activate' puts it on PATH as plain 'randori')"
	$(BIN)/randori $(DEMO_RUN)

test: install
	$(BIN)/ruff check src tests benchmarks environments
	$(BIN)/python -m pytest -q

test-fast: install  # the inner loop: tests marked slow (real runs, sandboxes, browsers) are skipped
	$(BIN)/ruff check src tests benchmarks environments
	$(BIN)/python -m pytest -q -m "not slow"

lint: install
	$(BIN)/ruff check src tests benchmarks environments
	$(BIN)/mypy src

# The documentation site (mkdocs.yml, docs/) into site/, failing on any broken link or anchor.
# tests/test_docs.py builds it too, so CI (make test) does.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The pictures in docs/img/ from a fresh scripted run, in Debian's headless Chromium
# (apt-get install chromium chromium-driver).
screenshots: install
	$(BIN)/python docs/img/screenshots.py

clean:
	rm -rf $(VENV) results site .pytest_cache .ruff_cache
