# Two commands for a newcomer: `make demo` and `make test`. Each makes .venv when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo test test-slow test-fast test-lowest lint bench bench-eval bench-compare profile \
	sample clean spark-cluster-demo

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,spark]'
	@touch $(STAMP)

install: $(STAMP)

# Audit the bundled sample, as two days of exports, into the standing ledger
# ./audit/audit.duckdb (exit 1 means findings: expected here).
HOUSE = fixtures/examples/house-rules/house.toml

demo: $(STAMP)
	@rm -f audit/audit.duckdb
	@$(BIN)/python scripts/demo_days.py audit/days
	@echo
	@echo "Day 1 (handaudit verify audit/days/day-1.jsonl.gz --append --rules $(HOUSE) --out audit):"
	@$(BIN)/handaudit verify audit/days/day-1.jsonl.gz --append --rules $(HOUSE) --out audit \
		|| test $$? -eq 1
	@echo
	@echo "Day 2, appended under the rules the audit holds (handaudit verify audit/days/day-2.jsonl.gz --append --out audit):"
	@$(BIN)/handaudit verify audit/days/day-2.jsonl.gz --append --out audit || test $$? -eq 1
	@echo
	@echo "Day 2 again: a file already audited is skipped, the audit unchanged:"
	@$(BIN)/handaudit verify audit/days/day-2.jsonl.gz --append --out audit | grep appended \
		|| true
	@echo
	@echo "Top divergences:"
	@$(BIN)/python -c "import duckdb; from pipeline.helpers.display import visible as v; \
	c = duckdb.connect('audit/audit.duckdb', read_only=True); \
	[print(f'  {v(h)}  {k:<14} {v(m)}') for h, k, m in c.execute('SELECT hand_id, \"check\", \
	message FROM divergences ORDER BY hand_id LIMIT 8').fetchall()]"
	@echo
	@$(BIN)/handaudit report divergence_summary --db audit/audit.duckdb
	@echo
	@echo "One hand, step by step (handaudit explain G00001-000001):"
	@$(BIN)/handaudit explain G00001-000001 --db audit/audit.duckdb
	@echo
	@echo "A closed Chinese hand (handaudit explain C00001-000002):"
	@$(BIN)/handaudit explain C00001-000002 --db audit/audit.duckdb
	@echo
	@echo "An open-face hand, in Fantasyland (handaudit explain P111008-000016):"
	@$(BIN)/handaudit explain P111008-000016 --db audit/audit.duckdb
	@echo
	@echo "Which house rules each table was audited under (handaudit report rules):"
	@$(BIN)/handaudit report rules --db audit/audit.duckdb --variant taiwanese_jokers
	@echo
	@echo "A hand of a table dealt by house rules (handaudit explain JD-T7003000-000005):"
	@$(BIN)/handaudit explain JD-T7003000-000005 --db audit/audit.duckdb
	@echo
	@echo "Was the deal fair? (handaudit report fairness --variant taiwanese_jokers):"
	@$(BIN)/handaudit report fairness --db audit/audit.duckdb --variant taiwanese_jokers \
		| grep -v premium

# Regenerate the bundled sample (same seed, same bytes).
sample: $(STAMP)
	$(BIN)/handaudit generate --tables 6 --hands 400 --seed 7 --faults 0.05 --out fixtures/sample/jsonl/hands.jsonl.gz
	$(BIN)/handaudit generate --tables 6 --hands 400 --seed 7 --faults 0.05 --format parquet --out fixtures/sample/parquet/hands.parquet
	$(BIN)/handaudit generate --variant chinese --tables 1 --hands 400 --seed 7 --faults 0.05 --out fixtures/sample/chinese/hands.jsonl.gz

lint: $(STAMP)
	$(BIN)/ruff check pipeline tests scripts
	$(BIN)/ruff format --check pipeline tests scripts
	$(BIN)/mypy pipeline scripts tests

# The default run: lint, then every test but the exhaustive and large ones (marker
# `slow`), the Spark engine's included (about 9 minutes on 2 cores).
test: lint
	$(BIN)/pytest -m "not slow"

# The exhaustive and large runs alone (about 6 minutes more); CI runs them after `test`.
test-slow: $(STAMP)
	$(BIN)/pytest -m slow

# The quick loop while coding: no lint, no exhaustive runs.
test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow"

# The declared floors, proved: a venv of its own with every direct dependency (and test
# tool) at the LOWEST version pyproject.toml allows, resolved by uv, then a check that each
# floor is the version installed (uv quietly takes a higher one when the floor cannot
# install) and the fast tests on it. No Spark there (that extra is not installed, so the
# Spark-only modules are not collected for doctests). A floor set too low fails here.
LOWEST := .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed-stamp

$(LOWEST_STAMP): pyproject.toml
	rm -rf $(LOWEST)
	$(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --quiet uv
	$(LOWEST)/bin/uv pip install --quiet --python $(LOWEST)/bin/python \
		--resolution lowest-direct -e '.[test]'
	@touch $(LOWEST_STAMP)

test-lowest: $(LOWEST_STAMP)
	$(LOWEST)/bin/python scripts/check_floors.py test
	$(LOWEST)/bin/pytest -m "not slow and not spark" --ignore=pipeline/spark

# End to end on 200,000 generated hands, JSON Lines and Parquet, beside a per-hand baseline;
# the JSON Lines audit beside Arrow's bare parse; 100,000 hands in each input shape; then
# the Spark engine (local[2]) beside the local one on the same hands; then a day of
# 100,000 hands appended to an audit of a million, beside that day audited alone (by the
# local engine, then by Spark).
bench: $(STAMP)
	$(BIN)/python scripts/bench_pipeline.py --hands 200000
	$(BIN)/python scripts/bench_spark.py --hands 200000
	$(BIN)/python scripts/bench_append.py --history 1000000 --day 100000
	$(BIN)/python scripts/bench_append.py --history 1000000 --day 100000 --engine spark --runs 2
	$(BIN)/python scripts/bench_spark.py --hands 1000000 --repeat 1 \
		--parquet bench/append-1000000-100000/history.parquet

# This tree against another commit, REF (required: make bench-compare REF=HEAD~1), timed
# in turns on HANDS generated Taiwanese hands (100,000 unless given), JSON Lines and
# Parquet: the median seconds of each and this tree's ratio to REF. REF is checked out
# in a temporary git worktree, removed when the comparison ends.
HANDS ?= 100000

bench-compare:
	@test -n "$(REF)" || { echo "make bench-compare: REF is required, the commit to compare \
	this tree with, e.g. make bench-compare REF=HEAD~1 [HANDS=100000]" >&2; exit 2; }
	@$(MAKE) --no-print-directory $(STAMP)
	$(BIN)/python scripts/bench_compare.py '$(REF)' --hands $(HANDS)

# A Spark standalone cluster on this machine (a master and two workers, each its own
# JVM, started from the installed PySpark), the bundled sample audited on it with the
# package shipped to executors whose Python lacks it, and compared with the local engine.
spark-cluster-demo: $(STAMP)
	$(BIN)/python scripts/spark_cluster.py demo

# Where the time of one run goes, thread by thread: a flame graph of `verify` on the
# bench's 200,000 Parquet hands, in bench/profile.svg (py-spy samples the process).
profile: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[profile]'
	$(BIN)/python scripts/bench_pipeline.py --hands 200000 --data-only
	$(BIN)/py-spy record --threads --rate 200 -o bench/profile.svg -- $(BIN)/python \
		scripts/bench_pipeline.py --measure bench/pipeline-200000/parquet/hands.parquet bench/audit

bench-eval: $(STAMP)
	$(BIN)/python scripts/bench_evaluator.py --rows 1000000

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache audit
