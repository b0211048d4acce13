"""Argument checks and conversions the semblance ``lsh`` kernels share (``lsh``,
``lsh_index``, ``lsh_forest``, ``lsh_hamming``): where semblance panics on an argument, these
raise ValueError naming it.

Signatures are 1-D uint64 arrays (any array-like of ints is accepted; signed integer arrays
are reinterpreted as two's complement), SimHash fingerprints Python ints in ``[0, 2**64)``.
"""

from __future__ import annotations

import operator

import numpy as np
import numpy.typing as npt

__all__ = ["as_fingerprint", "as_signature", "as_u64", "positive"]

U64 = npt.NDArray[np.uint64]
_MASK64 = (1 << 64) - 1


def positive(name: str, value: int) -> int:
    """``value`` as an int, or ValueError naming ``name`` when it is not a positive integer."""
    try:
        v = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from None
    if v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v}")
    return v


def as_u64(values: npt.ArrayLike) -> U64:
    """``values`` as a uint64 array.

    uint64 arrays pass through; other integer arrays are cast (signed ones reinterpreted as
    two's complement, e.g. Spark ``LongType``); other arrays raise ValueError. Sequences go
    through ``numpy.array(values, dtype=uint64)``: Python ints must lie in ``[0, 2**64)``
    (ValueError otherwise).
    """
    if isinstance(values, np.ndarray):
        if values.dtype == np.uint64:
            return values
        if np.issubdtype(values.dtype, np.integer):
            return values.astype(np.uint64)
        raise ValueError(f"signature values must be integers, got dtype {values.dtype}")
    try:
        arr = np.array(values, dtype=np.uint64)
    except (OverflowError, TypeError) as exc:
        raise ValueError(f"signature values must be ints in [0, 2**64): {exc}") from None
    return arr


def as_signature(sig: npt.ArrayLike, length: int, what: str) -> U64:
    """``sig`` as a 1-D uint64 array of exactly ``length`` values (ValueError otherwise, naming
    ``what``, the expression ``length`` comes from)."""
    arr = as_u64(sig)
    if arr.ndim != 1:
        raise ValueError(f"signature must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != length:
        raise ValueError(f"signature length {arr.shape[0]} does not match {what} = {length}")
    return arr


def as_fingerprint(fp: int) -> int:
    """A SimHash fingerprint as an int in ``[0, 2**64)`` (ValueError otherwise)."""
    v = operator.index(fp)
    if not 0 <= v <= _MASK64:
        raise ValueError(f"fingerprint must be in [0, 2**64), got {v}")
    return v
