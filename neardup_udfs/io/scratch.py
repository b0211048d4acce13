"""Scratch space of the local engine's streamed read: a folder of the run's own under
``spark.local.dir`` (Spark's own scratch space; the system's temporary folder when unset),
made when the run needs it, checked for room before each write, and gone when the run ends,
fails or is stopped by a signal, or, after a run that was killed outright, when the next run
of the same output takes its stale lock (``io.outputs``).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping

from neardup_udfs.io.reasons import InputError

__all__ = [
    "PREFIX",
    "RESERVE_BYTES",
    "ScratchSpaceError",
    "check_room",
    "free_bytes",
    "full",
    "make_scratch",
    "remove_scratch",
    "scratch_parent",
]

_log = logging.getLogger("neardup.scratch")

PREFIX = "neardup-"
"""The name of every scratch folder a run makes starts with this (no other is removed)."""

RESERVE_BYTES = 64 << 20
"""Room a scratch write leaves free on its filesystem for everything else on the machine."""

_WHERE = (
    "the local engine keeps its scratch files under the first folder of spark.local.dir "
    "(the system's temporary folder when it is unset)"
)


class ScratchSpaceError(InputError):
    """The scratch space cannot take the run's scratch files; the message names
    ``spark.local.dir`` and the folder at fault."""


def scratch_parent(conf: Mapping[str, str]) -> str:
    """The folder the run's scratch folder goes in: the first folder of ``spark.local.dir``
    (made, with its parents, when it does not exist, as Spark makes it), else the system's
    temporary folder. ScratchSpaceError when it cannot be made or is not a folder."""
    first = conf.get("spark.local.dir", "").split(",")[0].strip().removeprefix("file:")
    if not first:
        return tempfile.gettempdir()
    try:
        os.makedirs(first, exist_ok=True)
    except OSError as e:
        raise ScratchSpaceError(
            f"spark.local.dir {first!r} cannot be made ({e.strerror or e}): {_WHERE}; point it "
            "at a writable folder"
        ) from None
    return first


def make_scratch(parent: str) -> str:
    """A new, empty scratch folder of this run's own in ``parent`` (named :data:`PREFIX`...).
    ScratchSpaceError when ``parent`` cannot hold it or has less than
    :data:`RESERVE_BYTES` free."""
    check_room(parent, 0)
    try:
        return tempfile.mkdtemp(prefix=PREFIX, dir=parent)
    except OSError as e:
        raise ScratchSpaceError(
            f"scratch folder in {parent!r} cannot be made ({e.strerror or e}): {_WHERE}"
        ) from None


def check_room(folder: str, nbytes: int) -> None:
    """ScratchSpaceError, naming ``spark.local.dir`` and ``folder``, unless ``folder``'s
    filesystem has ``nbytes`` free beyond :data:`RESERVE_BYTES`."""
    free = free_bytes(folder)
    if free < nbytes + RESERVE_BYTES:
        raise ScratchSpaceError(
            f"scratch space: {folder!r} has {free >> 20} MiB free, and the streamed read needs "
            f"{(nbytes >> 20) + 1} MiB more plus {RESERVE_BYTES >> 20} MiB kept free: {_WHERE}; "
            "point spark.local.dir at a folder with more room"
        )


def free_bytes(folder: str) -> int:
    """Bytes free for this user on ``folder``'s filesystem."""
    return shutil.disk_usage(folder).free


def full(e: OSError, folder: str) -> ScratchSpaceError | None:
    """The ScratchSpaceError of an OSError that says ``folder``'s filesystem is full (or its
    quota spent), else None."""
    if e.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return ScratchSpaceError(
        f"scratch space: {folder!r} ran full while the streamed read wrote to it: {_WHERE}; "
        "point spark.local.dir at a folder with more room"
    )


def remove_scratch(folders: Iterable[str]) -> None:
    """Each of ``folders`` that is a scratch folder (a folder named :data:`PREFIX`...)
    removed with what it holds; anything else is left alone."""
    for folder in folders:
        if os.path.basename(os.path.normpath(folder)).startswith(PREFIX) and os.path.isdir(
            folder
        ):
            shutil.rmtree(folder, ignore_errors=True)
            _log.info("removed the scratch folder %s", folder)
