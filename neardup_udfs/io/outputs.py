"""An output folder a job may write: never over its inputs, never over what it did not write,
never two runs at once.

:func:`claim_output` runs before any work and either refuses (an :class:`OutputRefused`
naming the path at fault) or hands back an :class:`OutputClaim`: the job holds the folder's
lock (``_LOCK.json``, created through the storage layer, so a second run into the same
folder is refused while the first runs) until ``release``.

What a job may delete or replace in its output folder is only what it can prove it wrote:

- a named output folder (``docs/``, ``clusters/``, ...) whose every file is one Spark's
  Parquet writer writes (``part-*``, ``_SUCCESS``, ``_committed_*``/``_started_*``,
  ``.crc`` checksums, ``_temporary/``);
- ``report.json`` / ``_MANIFEST.json`` that parse as a neardup report or manifest, and a
  ``report.html`` neardup wrote.

Anything else under one of those names is the user's: the claim is refused and nothing is
touched. Files and folders of other names in the output folder are never touched.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from neardup_udfs.io.reasons import InputError
from neardup_udfs.io.scratch import remove_scratch
from neardup_udfs.io.storage import FileStore, Storage, StorageError, file_in_the_way, join

__all__ = [
    "LOCK_NAME",
    "check_directory",
    "OutputClaim",
    "OutputRefused",
    "claim_output",
    "overlap",
    "refuse_overlap",
    "written_by_spark",
]

_log = logging.getLogger("neardup.outputs")

LOCK_NAME = "_LOCK.json"
MANIFEST = "_MANIFEST.json"  # the success marker every job writes last
REPORT_FILES = ("report.json", "report.html", MANIFEST)
HEARTBEAT_SECONDS = 30.0  # a running job renews its lock this often
STALE_SECONDS = 600  # a lock not renewed for this long belongs to a run that died
_GLOB = "*?[{"


class OutputRefused(InputError):
    """The output cannot be written as asked; the message names the path at fault."""


def _local_real(uri: str) -> str:
    """A ``file:`` URI with symbolic links resolved (a link into the input is the input)."""
    path = urllib.parse.unquote(urllib.parse.urlparse(uri).path)
    return "file:" + os.path.realpath(path)


def _literal_root(store: FileStore, path: str) -> str:
    """The fixed part of ``path``: the path itself when it exists as written, else its
    components before the first one with a glob character."""
    if not any(c in path for c in _GLOB) or store.exists_literally(path):
        return path
    parts = path.split("/")
    fixed = []
    for part in parts:
        if any(c in part for c in _GLOB):
            break
        fixed.append(part)
    return "/".join(fixed) or "/"


def _canonical(store: FileStore, path: str, what: str) -> str:
    try:
        uri = store.qualified(_literal_root(store, path)).rstrip("/")
    except StorageError as e:  # a scheme the cluster's Hadoop cannot open
        raise OutputRefused(f"{what}: {e}") from None
    return _local_real(uri) if uri.startswith("file:") else uri


def overlap(a: str, b: str) -> str | None:
    """How canonical location ``a`` relates to ``b``: ``"is"``, ``"contains"`` (``b`` lies
    inside ``a``), ``"lies inside"``, or None when neither holds the other."""
    if a == b:
        return "is"
    if b.startswith(a.rstrip("/") + "/"):
        return "contains"
    if a.startswith(b.rstrip("/") + "/"):
        return "lies inside"
    return None


def refuse_overlap(
    store: FileStore, what: str, output: str, inputs: Sequence[tuple[str, str | None]]
) -> None:
    """OutputRefused, naming both, when ``output`` (called ``what`` in the message) is,
    contains or lies inside one of ``inputs`` ((setting, location) pairs; None entries are
    skipped). Locations are compared as the filesystem names them, symbolic links resolved
    on local storage, a glob by its fixed leading part."""
    out = _canonical(store, output, what)
    for name, location in inputs:
        if not location:
            continue
        relation = overlap(out, _canonical(store, location, name))
        if relation is not None:
            raise OutputRefused(
                f"{what} {output!r} {relation} {name} {location!r}: the job would write over "
                f"or read back its own files; choose a location outside {location!r}"
            )


def check_directory(store: Storage, path: str, what: str) -> None:
    """OutputRefused (an InputError) unless a directory can be made (or is) at ``path``: no
    regular file is at ``path`` or at one of its parents. ``what`` names the setting in the
    message."""
    blocking = file_in_the_way(store, path)
    if blocking is not None:
        where = "is" if blocking == (path.rstrip("/") or path) else f"lies under {blocking!r},"
        raise OutputRefused(f"{what} {path!r} {where} a regular file, not a directory")


def written_by_spark(under: str) -> bool:
    """Is a file at ``under`` (its path below an output folder) one Spark's Parquet writer
    and Hadoop's committers write?"""
    parts = under.split("/")
    if parts[0] == "_temporary":
        return True
    name = parts[-1]
    if len(parts) > 1 and not all("=" in p for p in parts[:-1]):
        return False  # a sub-folder that is not a partition folder: not ours
    return (
        name.startswith("part-")
        or name in ("_SUCCESS", "_metadata", "_common_metadata")
        or name.startswith(("_committed_", "_started_"))
        or (name.startswith(".") and name.endswith(".crc"))
    )


def _ours_file(store: FileStore, path: str) -> bool:
    """A report or manifest neardup wrote (so a run may replace it)."""
    data = store.read_bytes(path)
    if data is None:
        return True
    if path.endswith(".html"):
        return b"neardup" in data[:4096]
    try:
        parsed = json.loads(data)
    except ValueError:
        return False
    return isinstance(parsed, dict) and ("neardup_version" in parsed or "job" in parsed)


@dataclass
class OutputClaim:
    """A run's hold on its output folder (see :func:`claim_output`): until ``release``, the
    lock's heartbeat is renewed every :data:`HEARTBEAT_SECONDS`."""

    store: FileStore
    output: str
    lock: str
    holder: dict[str, Any]
    released: bool = field(default=False)
    _stop: threading.Event = field(default_factory=threading.Event)
    _beating: threading.Thread | None = field(default=None)

    def __post_init__(self) -> None:
        self._beating = threading.Thread(target=self._beat, name="neardup-lock", daemon=True)
        self._beating.start()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            try:
                self.store.replace_in_place(self.lock, _lock_body(self.holder))
            except Exception as e:  # the session is closing: the run's end releases the lock
                _log.debug("lock heartbeat %s: %s", self.lock, e)

    def note_scratch(self, folder: str) -> None:
        """The lock names ``folder``, a scratch folder of this run's own on this host, so that
        a later run that finds the lock stale (this run was killed) removes it
        (``io.scratch.remove_scratch``)."""
        self.holder = {**self.holder, "scratch": [*self.holder.get("scratch", []), folder]}
        self.store.replace_in_place(self.lock, _lock_body(self.holder))

    def release(self) -> None:
        """The lock is gone (idempotent); outputs stay."""
        if not self.released:
            self.released = True
            self._stop.set()
            if self._beating is not None:  # a renewal under way must not outlive the delete
                self._beating.join(timeout=120)
            try:
                self.store.delete(self.lock)
            except StorageError as e:  # never hide the run's own outcome behind this
                _log.warning("could not remove the lock %s: %s", self.lock, e)


def claim_output(
    store: FileStore,
    output: str,
    *,
    job: str,
    names: Iterable[str],
    inputs: Sequence[tuple[str, str | None]] = (),
    keep_existing: bool = False,
) -> OutputClaim:
    """Take ``output`` for a run of ``job`` that writes the folders ``names`` (and
    report.json, report.html, _MANIFEST.json) into it; the previous run's success marker is
    removed, so a run that fails leaves none.

    Raises:
        OutputRefused, before anything is written or deleted, when ``output``:
        - is, contains or lies inside one of ``inputs`` ((setting, location) pairs: input
          paths, indexes; None entries are skipped);
        - is, or lies under, a regular file;
        - holds one of ``names`` (or a report file) that the job did not write (see the
          module's rules), or, with ``keep_existing``, holds one of ``names`` at all;
        - is locked by another run that is still alive;
        - cannot be written (the lock cannot be created).
    """
    refuse_overlap(store, "output", output, inputs)
    check_directory(store, output, "output")
    lock = join(output, LOCK_NAME)
    holder = _take_lock(store, output, lock, job)
    claim = OutputClaim(store, output, lock, holder)
    try:
        _check_owned(store, output, tuple(names), keep_existing)
        store.delete(join(output, MANIFEST))
    except BaseException:
        claim.release()
        raise
    return claim


def _check_owned(store: FileStore, output: str, names: tuple[str, ...], keep: bool) -> None:
    present = set(store.list(output))
    for name in names:
        if name not in present:
            continue
        folder = join(output, name)
        if keep:
            raise OutputRefused(
                f"output {output!r} already holds {name}/ from an earlier run: pass "
                "--overwrite to replace it, or choose another output"
            )
        foreign = [f.under for f in store.walk(folder) if not written_by_spark(f.under)]
        if store.kind(folder) == "file" or foreign:
            example = f" (e.g. {foreign[0]!r})" if foreign else ""
            raise OutputRefused(
                f"output {output!r} already holds {name!r}{example}, which neardup did not "
                "write; the job replaces that folder, so it refuses: choose another output"
            )
    for name in REPORT_FILES:
        if name in present and not _ours_file(store, join(output, name)):
            raise OutputRefused(
                f"output {output!r} already holds {name}, which neardup did not write; "
                "choose another output"
            )


def _lock_body(holder: dict[str, Any]) -> bytes:
    return (json.dumps({**holder, "heartbeat": int(time.time())}, sort_keys=True) + "\n").encode()


def _take_lock(store: FileStore, output: str, lock: str, job: str) -> dict[str, Any]:
    me = {
        "job": job,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for _ in range(2):
        try:
            if store.create_new(lock, _lock_body(me)):
                return me
        except StorageError as e:
            raise OutputRefused(f"output {output!r} is not writable: {e}") from None
        holder = _holder(store, lock)
        if holder is not None and _alive(holder):
            raise OutputRefused(
                f"output {output!r} is in use by another neardup run ({holder.get('job')}, "
                f"host {holder.get('host')}, pid {holder.get('pid')}, since "
                f"{holder.get('started')}); if no run is using it, delete {lock!r}"
            )
        _log.warning("output %s: removing the stale lock of a run that ended (%s)", output, holder)
        if holder is not None and holder.get("host") == socket.gethostname():
            remove_scratch(str(f) for f in holder.get("scratch") or [])
        store.delete(lock)
    raise OutputRefused(f"output {output!r}: could not take its lock {lock!r}")


def _holder(store: FileStore, lock: str) -> dict[str, Any] | None:
    data = store.read_bytes(lock)
    if data is None:
        return None
    try:
        parsed = json.loads(data)
    except ValueError:
        return {"job": "?", "host": "?", "pid": "?", "started": "?"}
    return parsed if isinstance(parsed, dict) else None


def _alive(holder: dict[str, Any]) -> bool:
    """False when the lock's run was on this host and its process is gone, or when its
    heartbeat is older than :data:`STALE_SECONDS` (a driver that died on another host)."""
    beat = holder.get("heartbeat")
    if isinstance(beat, int | float) and time.time() - beat > STALE_SECONDS:
        return False
    if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
        return True
    try:
        os.kill(holder["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
