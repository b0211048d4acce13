"""Keyword arguments given a clearer name: a call that still passes one by its old name keeps
working, with a DeprecationWarning naming the new one. Positional calls see no difference.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["renamed"]

F = TypeVar("F", bound=Callable[..., Any])


def renamed(**new_names: str) -> Callable[[F], F]:
    """A decorator: after ``@renamed(k="kgram_bytes")``, a call passing ``k=`` passes it as
    ``kgram_bytes=``, after a DeprecationWarning naming both; passing both names is a
    TypeError. The function keeps its name, signature and docstring."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                for old, new in new_names.items():
                    if old in kwargs:
                        kwargs[new] = _moved(fn.__qualname__, old, new, kwargs)
            return fn(*args, **kwargs)

        return cast(F, call)

    return decorate


def _moved(function: str, old: str, new: str, kwargs: dict[str, Any]) -> Any:
    """The value given as ``old`` (taken out of ``kwargs``), once the caller is warned."""
    if new in kwargs:
        raise TypeError(f"{function}() got {new!r} and its old name {old!r}: give {new!r} only")
    warnings.warn(
        f"{function}(): keyword {old!r} is deprecated, use {new!r}",
        DeprecationWarning,
        stacklevel=3,  # the caller of the decorated function
    )
    return kwargs.pop(old)
