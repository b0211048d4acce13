"""Charikar SimHash: ditto's saturating ``Sum`` and semblance's exact ``Sketch``, Hamming
distance, a batch vote for many documents, and semblance's wire format.

Reference: M. Charikar, "Similarity estimation techniques from rounding algorithms", STOC 2002.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = [
    "distance",
    "distances",
    "format_hex",
    "marshal",
    "near",
    "sketch",
    "sketch_text",
    "sum_features",
    "unmarshal",
    "vote",
]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

_INT64_MAX = (1 << 63) - 1
_INT64_MIN = -(1 << 63)
_CHUNK_DOCS = 2048
# _BIT_OF_BYTE[v, k] = bit k of byte value v.
_BIT_OF_BYTE = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)


def _sat_add(a: int, b: int) -> int:
    s = a + b
    if s > _INT64_MAX:
        return _INT64_MAX
    if s < _INT64_MIN:
        return _INT64_MIN
    return s


def sum_features(features: Iterable[tuple[int, int]]) -> int:
    """ditto ``Sum``: SimHash of ``(hash, weight)`` features with a saturating accumulator.

    Notes:
        Each feature adds ``+w`` to counter i when bit i of its hash is set and ``-w``
        otherwise; a weight <= 0 counts as 1. Counters saturate at the int64 limits. Bit i of
        the result is set iff counter i is strictly positive (ties give 0). No features give
        0; one feature gives its own hash. (Go's saturating sum is not associative for
        weights near 2**62; there the result follows the order given.)

    Example:
        >>> f"{sum_features([(0xF0, 1)]):016x}"
        '00000000000000f0'
    """
    counters = [0] * 64
    for h, w in features:
        w = int(w)
        if w <= 0:
            w = 1
        h = int(h)
        for i in range(64):
            counters[i] = _sat_add(counters[i], w if (h >> i) & 1 else -w)
    out = 0
    for i, c in enumerate(counters):
        if c > 0:
            out |= 1 << i
    return out


def vote(hashes: U64, doc: I64, n_docs: int) -> U64:
    """SimHash of every document from all its feature occurrences, each with weight 1.

    Args:
        hashes: feature hashes, one entry per occurrence (a feature seen c times appears c
            times, which is ditto's multiplicity weight), in any order.
        doc: the document of each entry, in ``range(n_docs)``.
        n_docs: number of documents; a document with no entry gets 0.

    Notes:
        Bit i of document d is set iff strictly more than half of d's entries have bit i
        set. Equals :func:`sum_features` over the distinct hashes weighted by their counts.
        Working memory is about 16 KiB per document, in blocks of 2048 documents.
    """
    out = np.zeros(n_docs, dtype=np.uint64)
    if len(hashes) == 0:
        return out
    lanes = np.ascontiguousarray(hashes, dtype="<u8").view(np.uint8).reshape(-1, 8)
    doc = np.asarray(doc, dtype=np.int64)
    if n_docs <= _CHUNK_DOCS:
        out[:] = _vote_block(lanes, doc, n_docs)
        return out
    order = np.argsort(doc, kind="stable")
    lanes, doc = lanes[order], doc[order]
    bounds = np.searchsorted(doc, np.arange(0, n_docs + _CHUNK_DOCS, _CHUNK_DOCS))
    for c, d0 in enumerate(range(0, n_docs, _CHUNK_DOCS)):
        d1 = min(d0 + _CHUNK_DOCS, n_docs)
        s0, s1 = int(bounds[c]), int(bounds[c + 1])
        out[d0:d1] = _vote_block(lanes[s0:s1], doc[s0:s1] - d0, d1 - d0)
    return out


def _vote_block(lanes: npt.NDArray[np.uint8], doc: I64, nd: int) -> U64:
    base = doc * 256
    hist = np.empty((nd, 8, 256), dtype=np.float64)
    for lane in range(8):
        hist[:, lane, :] = np.bincount(base + lanes[:, lane], minlength=nd * 256).reshape(nd, 256)
    ones = (hist.reshape(nd * 8, 256) @ _BIT_OF_BYTE).reshape(nd, 64)
    total = np.bincount(doc, minlength=nd)
    bits = (2 * ones > total[:, None]).astype(np.uint8)
    packed: U64 = np.packbits(bits, axis=1, bitorder="little").view("<u8").ravel()
    return packed


def distance(a: int, b: int) -> int:
    """Hamming distance of two 64-bit fingerprints (popcount of ``a ^ b``), in [0, 64]."""
    return ((a ^ b) & 0xFFFFFFFFFFFFFFFF).bit_count()


def distances(a: U64, b: U64) -> npt.NDArray[np.uint8]:
    """Element-wise Hamming distance of two uint64 arrays."""
    return np.bitwise_count(np.bitwise_xor(a, b))


def near(a: int, b: int, k: int) -> bool:
    """ditto ``Near``: true iff the fingerprints differ in at most ``k`` bits."""
    return distance(a, b) <= k


def format_hex(fp: int) -> str:
    """A fingerprint as 16 lowercase hex digits, zero-padded (ditto ``Fingerprint.String``)."""
    return f"{fp & 0xFFFFFFFFFFFFFFFF:016x}"


# --- semblance's flavour: arbitrary integer weights, no saturation -------------------------

WIRE_VERSION = 1
ALGO_SIMHASH = 2


def sketch(features: Iterable[tuple[int, int]]) -> int:
    """semblance ``simhash.Sketch``: SimHash of ``(hash, weight)`` features, exact counters.

    Notes:
        Weight n counts as n occurrences; weight 0 is a no-op; a negative weight subtracts
        (a feature can cancel itself). Bit i is set iff counter i is strictly positive.
        No features give 0. Unlike ditto's :func:`sum_features`, nothing saturates.

    Example:
        >>> sketch([(0b1010, 2), (0b1010, -2)])
        0
    """
    counters = [0] * 64
    for h, w in features:
        h, w = int(h), int(w)
        if w == 0:
            continue
        for i in range(64):
            counters[i] += w if (h >> i) & 1 else -w
    return sum(1 << i for i, c in enumerate(counters) if c > 0)


def sketch_text(text: str | bytes, w: int = 3) -> int:
    """semblance ``simhash.SketchText``: SimHash of ``Words(text, w)``, each weight 1.

    Notes:
        Repeated shingles accumulate. Fewer than w tokens gives 0; w <= 0 raises ValueError.

    Example:
        >>> f"{sketch_text('The quick brown fox jumps over the lazy dog', 3):016x}"
        '52f39a596b4bb5fb'
    """
    from neardup_udfs.kernels.shingle import word_shingles

    return sketch((h, 1) for h in word_shingles(text, w))


def marshal(fp: int) -> bytes:
    """semblance wire format of a SimHash: ``[1][2][fp u64 LE]`` (10 bytes)."""
    return bytes([WIRE_VERSION, ALGO_SIMHASH]) + (int(fp) & 0xFFFFFFFFFFFFFFFF).to_bytes(
        8, "little"
    )


def unmarshal(data: bytes) -> int:
    """Decode :func:`marshal` output; ValueError on a length other than 10, or another
    version or algorithm id."""
    if len(data) != 10:
        raise ValueError(f"simhash: data length {len(data)} must be 10")
    if data[0] != WIRE_VERSION:
        raise ValueError(f"simhash: unsupported wire version {data[0]}")
    if data[1] != ALGO_SIMHASH:
        raise ValueError(f"simhash: algorithm id {data[1]} is not SimHash ({ALGO_SIMHASH})")
    return int.from_bytes(data[2:], "little")
