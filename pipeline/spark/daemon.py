"""Spark's Python worker daemon for the audit (`spark.python.daemon.module`).

Spark forks a Python worker from this daemon for its tasks. The daemon imports the
engine's tasks and reads the evaluator's tables once, before it forks: each worker
starts with them instead of importing and loading on its first task.
"""

from pyspark import daemon

import pipeline.spark.tasks  # noqa: F401 (imported for the workers it forks)
from pipeline.engine import table_cache

if __name__ == "__main__":
    table_cache.load()
    daemon.manager()
