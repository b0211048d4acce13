"""Arrow string arrays as the byte buffers the compiled kernels read, without a copy."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

__all__ = ["string_buffers"]


def string_buffers(array: pa.Array) -> tuple[npt.NDArray[np.uint8], npt.NDArray[Any]]:
    """``(data, offsets)`` of a string or large_string ``array``, views of its own buffers:
    string i's UTF-8 bytes are ``data[offsets[i]:offsets[i + 1]]`` (offsets int32, or
    int64 for large_string; ``data`` is empty when no string holds a byte)."""
    n = len(array)
    _, offsets, data = array.buffers()
    kind = np.int64 if pa.types.is_large_string(array.type) else np.int32
    if offsets is None:
        return np.zeros(0, dtype=np.uint8), np.zeros(n + 1, dtype=kind)
    at = np.frombuffer(offsets, dtype=kind)[array.offset : array.offset + n + 1]
    body = np.zeros(0, dtype=np.uint8) if data is None else np.frombuffer(data, dtype=np.uint8)
    return body, at
