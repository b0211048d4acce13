"""The files under an input path that Spark's readers pass over, so a job can account for
them: names Spark treats as hidden, symbolic links whose target is missing, and (text
input) files of zero bytes.

Spark's file sources never read a file or directory whose name starts with ``_`` (unless
it holds ``=``, a partition directory) or ``.``, or ends with ``._COPYING_``; its binary
reader also yields no row for a 0-byte file; its listing passes over a dangling symbolic
link. Spark's and Hadoop's own bookkeeping files (``_SUCCESS``, ``_committed_*``,
``_started_*``, ``_temporary/``, ``.crc`` checksums, and under Parquet input Parquet's
``_metadata`` / ``_common_metadata`` summaries) are not user files and are not reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from neardup_udfs.io.storage import FileStore, Listed

__all__ = [
    "DANGLING_REASON",
    "INPUT_FORMATS", "HIDDEN_REASON", "Unread", "hidden_name", "unread_files"]

INPUT_FORMATS = ("text", "jsonl", "parquet", "warc", "wet")  # what the readers read

HIDDEN_REASON = "not read: a name starting with '_' or '.' (Spark skips it)"
DANGLING_REASON = "not read: a symbolic link whose target does not exist"

_BOOKKEEPING_PREFIXES = ("_SUCCESS", "_committed_", "_started_", "_temporary")
_BOOKKEEPING_NAMES = ("_metadata", "_common_metadata")


def hidden_name(name: str) -> bool:
    """Would Spark's file listing skip a file or directory of this name?"""
    if name.startswith(_BOOKKEEPING_NAMES):
        return False
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or (name.endswith("._COPYING_"))
    )


def _bookkeeping(name: str) -> bool:
    return name.startswith(_BOOKKEEPING_PREFIXES) or (
        name.startswith(".") and name.endswith(".crc")
    )


@dataclass(frozen=True)
class Unread:
    """Files under an input path that a Spark reader yields no row for, and the ones it reads."""

    hidden: tuple[Listed, ...]  # user files under a hidden name: never read
    empty: tuple[Listed, ...]  # read, but 0 bytes long
    read_bytes: int = 0  # the bytes of the files Spark reads
    dangling: tuple[Listed, ...] = ()  # symbolic links whose target is missing: never read
    read: tuple[Listed, ...] = ()  # the files Spark reads (the empty ones included)


def unread_files(store: FileStore, path: str, *, parquet: bool = False) -> Unread:
    """The user files under ``path`` (a file, a directory read recursively, or a glob) that
    Spark skips for their names, the dangling symbolic links, the readable files of 0 bytes
    and all the readable files, each sorted by URI; and the bytes Spark reads. ``parquet``:
    the input is Parquet, whose ``_metadata`` / ``_common_metadata`` summary files are
    bookkeeping (under other formats Spark skips them like any ``_`` name: hidden)."""
    hidden, empty, dangling, read, size = [], [], [], [], 0
    for f in store.files(path):
        parts = f.under.split("/") if f.under else [f.uri.rsplit("/", 1)[-1]]
        if any(_bookkeeping(p) for p in parts):
            continue
        if parts[-1].startswith(_BOOKKEEPING_NAMES):
            if parquet:
                continue
            hidden.append(f)
            continue
        if f.dangling:
            dangling.append(f)
            continue
        if any(hidden_name(p) for p in parts):
            hidden.append(f)
            continue
        if f.length == 0:
            empty.append(f)
        read.append(f)
        size += f.length
    key = lambda f: f.uri  # noqa: E731
    return Unread(
        tuple(sorted(hidden, key=key)),
        tuple(sorted(empty, key=key)),
        size,
        tuple(sorted(dangling, key=key)),
        tuple(sorted(read, key=key)),
    )
