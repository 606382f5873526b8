"""The runs: `verify` (one run, or an append to the standing ledger), the blocks audited
side by side, the run's summary and row, and the evaluator's tables kept between runs.
(The Spark engine is `pipeline/spark/`.)"""
