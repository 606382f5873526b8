"""Where the audit goes: the stored tables (`stored.py`), the DuckDB database (`store.py`),
and the standing ledger's locks, versions and digests (`ledger.py`)."""
