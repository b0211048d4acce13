"""Read-only attributes of the reference structures: a value fixed by the constructor,
readable under the reference's name, never assigned from outside."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

__all__ = ["ReadOnly"]

T = TypeVar("T")


class ReadOnly(Generic[T]):
    """A class attribute ``name = ReadOnly[int]("_name", "doc")`` reads ``self._name`` on an
    instance (typed ``T``), refuses assignment (``AttributeError``, as a property without a
    setter does) and carries ``doc`` as its docstring."""

    def __init__(self, attr: str, doc: str = "") -> None:
        self.attr = attr
        self.__doc__ = doc
        self.name = attr

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> ReadOnly[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj, self.attr)

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(f"{type(obj).__name__}.{self.name} is read-only")
