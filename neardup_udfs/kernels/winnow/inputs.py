"""Argument checks and conversions shared by the winnowing kernels: positive and plain
integers, text as the bytes Go would see (``str`` as UTF-8, lone surrogates as 3 bytes), and
64-bit hashes as uint64 (a negative int64 read as two's complement).

Every error message starts with ``winnow: `` and names the argument.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = ["MASK64", "as_bytes", "as_hash_array", "hash64", "integer", "positive"]

U64 = npt.NDArray[np.uint64]

MASK64 = (1 << 64) - 1
"""The 64 bits of a hash."""


def positive(name: str, value: int) -> int:
    """``value`` as an int; TypeError if it is no integer, ValueError naming ``name`` if <= 0."""
    v = integer(name, value)
    if v <= 0:
        raise ValueError(f"winnow: {name} must be positive, got {v}")
    return v


def integer(name: str, value: int | np.integer) -> int:
    """``value`` as an int; TypeError naming ``name`` if it is no integer (a bool is none)."""
    if isinstance(value, bool):
        raise TypeError(f"winnow: {name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"winnow: {name} must be an integer, got {value!r}") from None


def as_bytes(text: str | bytes | bytearray | memoryview) -> bytes:
    """The bytes Go would see: ``bytes`` as is, a ``str`` as UTF-8 (surrogates as 3 bytes)."""
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text)
    raise TypeError(f"winnow: text must be str or bytes, got {type(text).__name__}")


def as_hash_array(seq: Iterable[int] | npt.NDArray[np.integer]) -> U64:
    """64-bit hashes as a 1-D uint64 array; signed values are read as two's complement."""
    if isinstance(seq, np.ndarray):
        if seq.dtype.kind not in "iu" or seq.ndim != 1:
            raise TypeError(
                f"winnow: hashes must be a 1-D integer array, got {seq.dtype} "
                f"with {seq.ndim} dimensions"
            )
        return seq.astype(np.uint64, copy=False)
    values = [hash64(v) for v in seq]
    return np.array(values, dtype=np.uint64)


def hash64(value: int | np.integer) -> int:
    """A 64-bit hash as an unsigned int (a negative int64 is read as two's complement)."""
    h = integer("hash", value)
    if not -(1 << 63) <= h <= MASK64:
        raise ValueError(f"winnow: hash must fit in 64 bits, got {h}")
    return h & MASK64
