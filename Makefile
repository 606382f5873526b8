# Two commands for a newcomer: `make demo` and `make test`. Each makes .venv when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo test test-fast lint bench-eval clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/handaudit evaluate fixtures/worked_hands.jsonl --limit 2

lint: $(STAMP)
	$(BIN)/ruff check pipeline tests scripts
	$(BIN)/ruff format --check pipeline tests scripts
	$(BIN)/mypy pipeline scripts tests

# Everything, the exhaustive tests included (about a few minutes on 2 cores).
test: lint
	$(BIN)/pytest

# The quick loop while coding: no exhaustive runs.
test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow"

bench-eval: $(STAMP)
	$(BIN)/python scripts/bench_evaluator.py --rows 1000000

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache audit
