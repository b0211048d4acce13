"""Work split over processes (POSIX): the first part here while each other part runs in a
forked child of its own, whose result comes back pickled through a pipe."""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["can_fork", "in_parts", "split"]

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this system forks (POSIX)."""
    return hasattr(os, "fork")


def split(n_items: int, parts: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` ranges cutting ``n_items`` into ``parts`` consecutive runs as even as
    can be (the first ones one longer), none empty: ``min(parts, n_items)`` of them, or
    one empty range when there is nothing to cut."""
    parts = max(1, min(parts, n_items))
    size, extra = divmod(n_items, parts)
    bounds, lo = [], 0
    for i in range(parts):
        hi = lo + size + (1 if i < extra else 0)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def in_parts(
    tasks: Sequence[Callable[[], T]],
    *,
    raised: tuple[type[BaseException], ...] = (),
) -> list[T | None]:
    """Every task of ``tasks`` at once: the first here, each other in a forked child of its
    own (one process a task). Their results in task order; a child's is None when the child
    failed (its task is then the caller's to redo). An exception of a type in ``raised``
    from a child's task is raised here (the first in task order, once every child is done);
    one from the first task is raised once every child is stopped."""
    children: list[tuple[int, int]] = []  # (pid, read end)
    try:
        for task in tasks[1:]:
            children.append(_forked(task, raised))
        first = tasks[0]()
    except BaseException:
        for pid, read_end in children:
            os.close(read_end)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    results: list[T | None] = [first]
    failure: BaseException | None = None
    for pid, read_end in children:
        try:
            with os.fdopen(read_end, "rb") as source:
                kind, value = pickle.load(source)
        except (EOFError, OSError, pickle.UnpicklingError):
            kind, value = "failed", None
        _, status = os.waitpid(pid, 0)
        if kind == "raised" and failure is None:
            failure = value
        results.append(value if kind == "value" and status == 0 else None)
    if failure is not None:
        raise failure
    return results


def _forked(task: Callable[[], Any], raised: tuple[type[BaseException], ...]) -> tuple[int, int]:
    """``task`` started in a forked child: its pid and the read end of the pipe its
    pickled ``("value", result)``, ``("raised", exception)`` comes through."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its result to the pipe, then gone without any cleanup
        code = 1
        try:
            os.close(read_end)
            with os.fdopen(write_end, "wb") as sink:
                result: tuple[str, Any]
                try:
                    result = ("value", task())
                except raised as e:
                    result = ("raised", e)
                pickle.dump(result, sink, protocol=pickle.HIGHEST_PROTOCOL)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end
