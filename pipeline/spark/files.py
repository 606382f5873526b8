"""The Spark engine's files: the input listed in the local engine's order, read as lines
or whole files, and the tables written with Spark's committer, all or nothing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)

from pipeline.ingest.sources import SUFFIXES, InputError, input_files
from pipeline.spark.inputs import InputFile, file_key, is_local


@dataclass
class Listed:
    """The input's files in order, and how each is read."""

    files: list[InputFile] = field(default_factory=list)
    by_spark_path: dict[str, InputFile] = field(default_factory=dict)  # by file_key
    whole: list[str] = field(default_factory=list)  # read whole (binaryFile)
    lines: list[str] = field(default_factory=list)  # JSON Lines, split by Spark
    # The number of the first line of each (file_key, block) of the split files.
    first_lines: dict[tuple[str, int], int] = field(default_factory=dict)
    # The split files as `lines_of` spells them, by file_key.
    spelled: dict[str, str] = field(default_factory=dict)

    def add(self, spark_path: str, name: str) -> None:
        file = InputFile(len(self.files), name)
        self.files.append(file)
        self.by_spark_path[file_key(spark_path)] = file


def listed(spark: SparkSession, inputs: Sequence[str]) -> Listed:
    """The files of `inputs` in the local engine's order (local ones by `input_files`,
    so that they are named as it names them); JSON Lines with lines to split apart."""
    found = Listed()
    for given in inputs:
        if is_local(given):
            for local in input_files([Path(given.removeprefix("file:"))]):
                found.add(os.path.abspath(local), str(local))
        else:
            for remote in _remote_files(spark, given):
                found.add(remote, remote)
    paths = [path for path in found.by_spark_path]
    splittable = [path for path in paths if path.endswith(".jsonl")]
    found.first_lines, found.spelled = _first_lines(spark, splittable)
    split = {path for path, _ in found.first_lines}
    found.lines = [path for path in paths if path in split]
    found.whole = [path for path in paths if path not in split]
    return found


def _remote_files(spark: SparkSession, given: str) -> list[str]:
    """Hand-history files at or below a path of a distributed file system, sorted."""
    rows = (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .load(given)
        .select("path")
        .collect()
    )
    files = sorted(file_key(row.path) for row in rows if row.path.endswith(SUFFIXES))
    if not files:
        raise InputError(f"No hand-history files in {given} (looked for {', '.join(SUFFIXES)}).")
    return files


def lines_of(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """The lines of JSON Lines files as bytes, each with its file (as Spark spells it:
    `file_key(path, escaped=True)` is the file) and the byte where its task's block
    starts; Spark splits the files into blocks."""
    return (
        spark.read.option("lineSep", "\n")
        .text(list(paths))
        .select(
            F.col("value").cast("binary").alias("line"),
            F.col("_metadata.file_path").alias("path"),
            F.col("_metadata.file_block_start").alias("block"),
        )
    )


# No hand record is shorter (its required fields alone are longer). A file of shorter
# lines, blank or not, is read whole by the local reader, which says what it lacks.
SHORTEST_RECORD = 64


def _first_lines(
    spark: SparkSession, paths: Sequence[str]
) -> tuple[dict[tuple[str, int], int], dict[str, str]]:
    """The number of the first line of every block of the files that hold a line as
    long as a record (the others are read whole), and how `lines_of` spells each."""
    if not paths:
        return {}, {}
    lines = lines_of(spark, paths)
    counted = (
        lines.groupBy("path", "block")
        .agg(F.count("*").alias("lines"), F.max(F.octet_length("line")).alias("longest"))
        .collect()
    )
    longest: dict[str, int] = {}
    for row in counted:
        longest[row.path] = max(longest.get(row.path, 0), row.longest or 0)
    spelled = {
        file_key(path, escaped=True): path
        for path, length in longest.items()
        if length >= SHORTEST_RECORD
    }
    first: dict[tuple[str, int], int] = {}
    number: dict[str, int] = {}
    for row in sorted(counted, key=lambda r: (r.path, r.block)):
        path = file_key(row.path, escaped=True)
        if path in spelled:
            first[path, row.block] = number.get(path, 1)
            number[path] = first[path, row.block] + row.lines
    return first, spelled


class Staging:
    """Tables written as Parquet with Spark's committer beside `out/parquet`, which they
    replace only once all are written (`commit`); `discard` drops them."""

    def __init__(self, spark: SparkSession, out: str) -> None:
        self.spark = spark
        self.path = f"{out}/.parquet-{os.getpid()}.partial"
        self.target = f"{out}/parquet"
        self._fs = _FileSystem(spark, out)

    def write(self, name: str, table: DataFrame, by_day: bool) -> None:
        writer = table.write.mode("overwrite")
        if by_day:
            writer = writer.partitionBy("day")
        writer.parquet(f"{self.path}/{name}")

    def read(self, name: str) -> DataFrame:
        return self.spark.read.parquet(f"{self.path}/{name}")

    def commit(self) -> str:
        self._fs.replace(self.path, self.target)
        return self.target

    def discard(self) -> None:
        self._fs.delete(self.path)


class _FileSystem:
    """Hadoop's file system of a path (what Spark writes with), through Spark's JVM."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        jvm: Any = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._fs = self._path(path).getFileSystem(conf)

    def delete(self, path: str) -> None:
        self._fs.delete(self._path(path), True)

    def replace(self, source: str, target: str) -> None:
        old = f"{target}.{os.getpid()}.old"
        if self._fs.exists(self._path(target)):
            self._fs.rename(self._path(target), self._path(old))
        if not self._fs.rename(self._path(source), self._path(target)):
            raise OSError(f"could not move {source} to {target}")
        self.delete(old)
