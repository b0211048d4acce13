"""The files under an input path that Spark's readers pass over, so a job can account for
them: names Spark treats as hidden, and (text input) files of zero bytes.

Spark's file sources never read a file or directory whose name starts with ``_`` (unless
it holds ``=``, a partition directory) or ``.``, or ends with ``._COPYING_``; its binary
reader also yields no row for a 0-byte file. Spark's and Hadoop's own bookkeeping files
(``_SUCCESS``, ``_committed_*``, ``_started_*``, ``_temporary/``, ``.crc`` checksums,
Parquet's ``_metadata``) are not user files and are not reported.
"""

from __future__ import annotations

from dataclasses import dataclass

from neardup_udfs.io.storage import HadoopStorage, Listed

__all__ = ["HIDDEN_REASON", "Unread", "hidden_name", "unread_files"]

HIDDEN_REASON = "not read: a name starting with '_' or '.' (Spark skips it)"

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
    """Files under an input path that a Spark reader yields no row for."""

    hidden: tuple[Listed, ...]  # user files under a hidden name: never read
    empty: tuple[Listed, ...]  # read, but 0 bytes long
    read_bytes: int = 0  # the bytes of the files Spark reads


def unread_files(store: HadoopStorage, path: str) -> Unread:
    """The user files under ``path`` (a file, a directory read recursively, or a glob) that
    Spark skips for their names, and the readable ones of 0 bytes; both sorted by URI; and
    the bytes Spark reads."""
    hidden, empty, read = [], [], 0
    for f in store.files(path):
        parts = f.under.split("/") if f.under else [f.uri.rsplit("/", 1)[-1]]
        if any(_bookkeeping(p) for p in parts):
            continue
        if any(hidden_name(p) for p in parts):
            hidden.append(f)
            continue
        if f.length == 0:
            empty.append(f)
        read += f.length
    key = lambda f: f.uri  # noqa: E731
    return Unread(tuple(sorted(hidden, key=key)), tuple(sorted(empty, key=key)), read)
