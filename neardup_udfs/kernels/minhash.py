"""semblance's MinHash: k-permutation signatures, Jaccard and cardinality estimates, wire format.

Signature slot i is the minimum of ``(a_i * x + b_i) mod 2**64`` over the set's element
hashes x (Broder, "On the resemblance and containment of documents", 1997); a_i is odd, so
each slot is a bijection of the 64-bit space.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.hashing import SplitMix64

__all__ = [
    "EMPTY_SLOT",
    "MAX_K",
    "cardinality",
    "containment",
    "estimate_margin",
    "intersection_cardinality",
    "is_empty",
    "jaccard",
    "marshal",
    "params",
    "signature",
    "similarity",
    "text_containment",
    "union",
    "unmarshal",
]

U64 = npt.NDArray[np.uint64]

MAX_K = 65535
EMPTY_SLOT = np.uint64(0xFFFFFFFFFFFFFFFF)
"""Every slot of the empty-set signature (no elements) holds this value."""

WIRE_VERSION = 1
ALGO_MINHASH = 1
_HEADER = struct.Struct("<BBHQ")
_CHUNK = 4096


def _check_k(k: int) -> None:
    if not 1 <= k <= MAX_K:
        raise ValueError(f"MinHash size k must be in [1, {MAX_K}], got {k}")


@cache
def params(k: int, seed: int) -> tuple[U64, U64]:
    """The permutation parameters ``(a, b)`` of semblance ``minhash.New(k, seed)``.

    Notes:
        One SplitMix64 stream seeded with ``seed``; for i = 0..k-1 in order,
        ``a_i = next() | 1`` then ``b_i = next()``. The arrays are read-only.

    Example:
        >>> a, b = params(2, 0)
        >>> f"{int(a[0]):016x} {int(b[0]):016x}"
        'e220a8397b1dcdaf 6e789e6aa1b965f4'
    """
    _check_k(k)
    rng = SplitMix64(seed)
    a = np.empty(k, dtype=np.uint64)
    b = np.empty(k, dtype=np.uint64)
    for i in range(k):
        a[i] = rng.next() | 1
        b[i] = rng.next()
    a.flags.writeable = False
    b.flags.writeable = False
    return a, b


def signature(hashes: Iterable[int] | U64, k: int = 128, seed: int = 0) -> U64:
    """MinHash signature of a set given by its element hashes (duplicates and order ignored).

    Notes:
        No elements give the empty-set signature (every slot ``0xffffffffffffffff``).

    Example:
        >>> bool((signature([], 4) == EMPTY_SLOT).all())
        True
    """
    a, b = params(k, seed)
    x = (
        np.fromiter((int(h) for h in hashes), dtype=np.uint64)
        if not isinstance(hashes, np.ndarray)
        else hashes.astype(np.uint64, copy=False)
    )
    sig = np.full(k, EMPTY_SLOT, dtype=np.uint64)
    for lo in range(0, len(x), _CHUNK):
        chunk = x[lo : lo + _CHUNK]
        np.minimum(sig, (chunk[:, None] * a[None, :] + b[None, :]).min(axis=0), out=sig)
    return sig


def is_empty(sig: U64) -> bool:
    """True iff ``sig`` is the empty-set signature."""
    return bool((np.asarray(sig) == EMPTY_SLOT).all())


def _pair(a: U64, b: U64) -> tuple[U64, U64]:
    a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
    if len(a) != len(b):
        raise ValueError(f"signature lengths differ: {len(a)} and {len(b)}")
    if len(a) == 0:
        raise ValueError("signatures are empty (k = 0)")
    return a, b


def jaccard(a: U64, b: U64) -> float:
    """Estimated Jaccard similarity: the fraction of equal slots.

    Notes:
        Standard error sqrt(J(1-J)/k) <= 1/(2 sqrt(k)). Two empty-set signatures give 1.
        Signatures of different (k, seed) compare as garbage: callers must keep them apart.
    """
    a, b = _pair(a, b)
    return int(np.count_nonzero(a == b)) / len(a)


def cardinality(sig: U64) -> float:
    """Estimated number of distinct elements: ``k / sum(sig_i / 2**64) - 1`` (0 when empty).

    Notes:
        The sum runs in slot order in float64, as semblance does (bit-identical).
    """
    total = 0.0
    for v in np.asarray(sig, dtype=np.uint64).tolist():
        total += float(v) / 18446744073709551616.0
    return len(sig) / total - 1.0


def intersection_cardinality(a: U64, b: U64) -> float:
    """Estimated size of the intersection: ``J / (1 + J) * (|A| + |B|)``."""
    j = jaccard(a, b)
    return j / (1.0 + j) * (cardinality(a) + cardinality(b))


def containment(a: U64, b: U64) -> float:
    """Estimated fraction of A inside B, clamped to [0, 1]; 0 when A is estimated empty."""
    na = cardinality(a)
    if na <= 0:
        return 0.0
    c = intersection_cardinality(a, b) / na
    return min(max(c, 0.0), 1.0)


def union(a: U64, b: U64) -> U64:
    """Signature of the union of the two sets: the slot-wise minimum."""
    a, b = _pair(a, b)
    return np.minimum(a, b)


def marshal(sig: U64, seed: int) -> bytes:
    """semblance wire format: ``[1][1][k u16 LE][seed u64 LE][k x u64 LE]``."""
    sig = np.asarray(sig, dtype=np.uint64)
    _check_k(len(sig))
    return _HEADER.pack(WIRE_VERSION, ALGO_MINHASH, len(sig), seed) + sig.astype("<u8").tobytes()


def unmarshal(data: bytes, k: int | None = None, seed: int | None = None) -> tuple[U64, int]:
    """Decode :func:`marshal` output into ``(signature, seed)``.

    Notes:
        Raises ValueError when the data is shorter than 12 bytes ("truncated"), has another
        version or algorithm id, k = 0 ("length 0"), or a total length other than 12 + 8k
        ("must be"); and, when ``k`` / ``seed`` are given, when they differ from the data's.
    """
    if len(data) < _HEADER.size:
        raise ValueError(f"minhash: truncated signature ({len(data)} bytes)")
    version, algo, n, got_seed = _HEADER.unpack_from(data)
    if version != WIRE_VERSION:
        raise ValueError(f"minhash: unsupported wire version {version}")
    if algo != ALGO_MINHASH:
        raise ValueError(f"minhash: algorithm id {algo} is not MinHash ({ALGO_MINHASH})")
    if n == 0:
        raise ValueError("minhash: signature length 0")
    if len(data) != _HEADER.size + 8 * n:
        raise ValueError(f"minhash: data length {len(data)} must be {_HEADER.size + 8 * n}")
    if k is not None and n != k:
        raise ValueError(f"minhash: signature has k={n}, hasher has k={k}")
    if seed is not None and got_seed != seed:
        raise ValueError(f"minhash: signature has seed={got_seed}, hasher has seed={seed}")
    sig = np.frombuffer(data, dtype="<u8", offset=_HEADER.size).astype(np.uint64)
    return sig, got_seed


def similarity(a: U64, b: U64) -> float:
    """semblance's root ``Similarity``: :func:`jaccard`, but 0 when either set is empty.

    Notes:
        Two texts too short to shingle are not "identical": the empty-set signatures of both
        would otherwise give 1.
    """
    if is_empty(a) or is_empty(b):
        return 0.0
    return jaccard(a, b)


def text_containment(a: U64, b: U64) -> float:
    """semblance's root ``Containment``: :func:`containment`, but 0 when either set is empty."""
    if is_empty(a) or is_empty(b):
        return 0.0
    return containment(a, b)


def estimate_margin(k: int, sds: float = 4.0) -> float:
    """Half-width of the band around the threshold where ``hybrid`` verification checks
    exactly: ``sds`` standard deviations of a k-slot estimate at its worst (J = 1/2)."""
    return sds * math.sqrt(0.25 / k)
