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

# Audit the bundled sample into ./audit/audit.duckdb (exit 1 means findings: expected here).
demo: $(STAMP)
	@$(BIN)/handaudit verify fixtures/sample_hands.jsonl --out audit || test $$? -eq 1
	@echo
	@echo "One hand, step by step (handaudit explain T203000-000023):"
	@$(BIN)/handaudit explain T203000-000023 --db audit/audit.duckdb

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
