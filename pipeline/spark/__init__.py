"""The Spark engine: `verify --engine spark`, the same audit on Apache Spark (`engine.py`).

Nothing here is imported by the local engine; pyspark is needed only by the driver
modules (`engine`, `files`, `session`), and the executors run `tasks` on Arrow.
"""
