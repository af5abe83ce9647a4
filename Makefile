PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'

demo: $(BIN)/python
	$(BIN)/pip install -q -e .
	$(BIN)/randori run --results results/demo
	@echo "randori is installed in $(BIN): run the commands above as shown, or put it on PATH with"
	@echo "  . $(BIN)/activate"
	@echo "then: randori report -r results/demo   (the table again; randori --help lists every command)"

test: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src

clean:
	rm -rf $(VENV) results .pytest_cache .ruff_cache
