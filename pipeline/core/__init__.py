"""The audit's core: a batch of hands evaluated, scored, settled and checked, as arrays.

It imports no I/O (no files, DuckDB, Typer or rich): `tests/unit/test_code_shape.py`
holds it to that. The games (`games/`), the evaluator (`evaluator/`), the checks
(`checks/`), pairs' points (`scoring.py`, `games/*`), money (`money.py`), and the
batch audit that runs them in order (`audit.py`).
"""
