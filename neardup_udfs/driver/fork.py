"""Work split over two processes (POSIX): one part here while the other runs in a forked
child, whose result comes back pickled through a pipe."""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["can_fork", "in_two"]

T = TypeVar("T")
U = TypeVar("U")


def can_fork() -> bool:
    """Whether this system forks (POSIX)."""
    return hasattr(os, "fork")


def in_two(
    mine: Callable[[], T],
    theirs: Callable[[], U],
    *,
    raised: tuple[type[BaseException], ...] = (),
) -> tuple[T, U | None]:
    """``mine()`` here while ``theirs()`` runs in a forked child: both results, the child's
    None when the child failed (its work is then the caller's to redo). An exception of a
    type in ``raised`` from ``theirs()`` is raised here; one from ``mine()`` is raised once
    the child is stopped."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its result to the pipe, then gone without any cleanup
        code = 1
        try:
            os.close(read_end)
            with os.fdopen(write_end, "wb") as sink:
                result: tuple[str, Any]
                try:
                    result = ("value", theirs())
                except raised as e:
                    result = ("raised", e)
                pickle.dump(result, sink, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    try:
        first = mine()
    except BaseException:
        os.close(read_end)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    try:
        with os.fdopen(read_end, "rb") as source:
            kind, second = pickle.load(source)
    except (EOFError, OSError, pickle.UnpicklingError):
        kind, second = "failed", None
    _, status = os.waitpid(pid, 0)
    if kind == "raised":
        raise second
    if kind != "value" or status != 0:
        return first, None
    return first, second
