"""The decorator of every compiled kernel: numba's ``njit`` (no GIL held), cached on disk
where numba finds a writable place for it, compiled once per process where it does not.

numba caches a kernel beside its source (``__pycache__``), else in the user's cache
directory (``NUMBA_CACHE_DIR`` when set); with neither writable (a read-only install on an
executor whose home directory is not writable), ``cache=True`` makes the import itself
fail. :func:`kernel` then compiles without a cache instead: slower to start, same results.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from numba import njit

__all__ = ["kernel", "uncached"]

F = TypeVar("F", bound=Callable[..., Any])

_log = logging.getLogger("neardup.kernels")

uncached: list[str] = []
"""Names of the kernels of this process that compile without an on-disk cache."""


def kernel(**options: Any) -> Callable[[F], F]:
    """``njit(nogil=True, cache=True, **options)``, or the same without ``cache`` where numba
    has no writable cache location for the function's source (named in :data:`uncached`)."""

    def wrap(fn: F) -> F:
        try:
            return njit(nogil=True, cache=True, **options)(fn)
        except RuntimeError as e:
            if "no locator available" not in str(e):
                raise
            uncached.append(fn.__qualname__)
            _log.warning("no writable numba cache for %s: compiled in each process", fn.__name__)
            return njit(nogil=True, **options)(fn)

    return wrap
