"""The decorator of every compiled kernel: numba's ``njit`` (no GIL held), cached on disk
where a writable place for it exists, compiled once per process where none does.

numba caches a kernel beside its source (``__pycache__``), else in the user's cache
directory (``NUMBA_CACHE_DIR`` when set); with neither writable (a read-only install on an
executor whose home directory is not writable), ``cache=True`` makes the import itself
fail. :func:`kernel` then caches in a private directory of the system's temporary
directory (``neardup-numba-<uid>``, owned by this user and writable by nobody else), and
where even that cannot be had, compiles without a cache: slower to start, same results.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar

import numba
from numba import njit

__all__ = ["kernel", "uncached"]

F = TypeVar("F", bound=Callable[..., Any])

_log = logging.getLogger("neardup.kernels")

uncached: list[str] = []
"""Names of the kernels of this process that compile without an on-disk cache."""


def kernel(**options: Any) -> Callable[[F], F]:
    """``njit(nogil=True, cache=True, **options)``, cached in a private temporary directory
    where numba finds no writable cache location for the function's source, or without
    ``cache`` where there is none either (then named in :data:`uncached`)."""

    def wrap(fn: F) -> F:
        for attempt in range(2):
            try:
                return njit(nogil=True, cache=True, **options)(fn)
            except RuntimeError as e:
                if "no locator available" not in str(e):
                    raise
                if attempt or not _use_private_cache():
                    break
        uncached.append(fn.__qualname__)
        _log.warning("no writable numba cache for %s: compiled in each process", fn.__name__)
        return njit(nogil=True, **options)(fn)

    return wrap


def _use_private_cache() -> bool:
    """Point numba's cache at ``<tmp>/neardup-numba-<uid>`` unless a cache directory is
    already set (by the user, or by an earlier call); True when it was set now."""
    config: Any = numba.config  # set from the environment at import: no static attributes
    if config.CACHE_DIR:
        return False
    path = os.path.join(tempfile.gettempdir(), f"neardup-numba-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    private = (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
    if not private or not os.access(path, os.W_OK):
        return False  # never load compiled code another user could have written
    config.CACHE_DIR = path
    _log.info("numba cache: %s (no writable cache beside the source or in the home)", path)
    return True
