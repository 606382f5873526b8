"""The input's files as both sides of the Spark engine name them (no pyspark here)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlparse


def is_local(path: str) -> bool:
    """Whether a path names this machine's file system (no scheme, or file:)."""
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


def file_key(spark_path: str, escaped: bool = False) -> str:
    """One spelling of a file whichever way Spark gives it (`binaryFile` paths as they
    are, `_metadata.file_path` URI-escaped); local files as absolute paths."""
    path = unquote(spark_path) if escaped else spark_path
    if path.startswith("file:"):
        return "/" + path.removeprefix("file:").lstrip("/")
    return path


@dataclass(frozen=True)
class InputFile:
    """A file of the input as the driver listed it: its place in the input's order and
    the name sources give it (the local engine's name for a local file)."""

    number: int
    name: str
