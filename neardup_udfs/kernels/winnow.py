"""semblance ``winnow``: MOSS winnowing fingerprints, aligned overlap spans, and the Index.

Winnowing (Schleimer, Wilkerson and Aiken, 2003): from a document's sequence of k-gram
hashes, every window of w consecutive hashes contributes its minimum (the **rightmost** one
on ties) as a fingerprint, recorded with the position it came from; a selection is reported
once, when it first wins a window. Any common substring of at least w + k - 1 bytes shares at
least one fingerprint hash; matches shorter than k bytes are never detected; the expected
density is 2 / (w + 1) fingerprints per k-gram.

Text becomes bytes exactly once: ``bytes`` are taken as they are (invalid UTF-8 included) and
a ``str`` is its UTF-8 encoding (lone surrogates as their 3-byte form). K-grams are byte
windows hashed with XXH64 (seed 0), as semblance's ``shingle.Char``; positions are byte
offsets. Every result here is bit-identical to the Go reference (ophymx/semblance).

Fingerprints come back as two numpy arrays, ``pos`` (int64) and ``hash`` (uint64), ready for
an Arrow/pandas column (store hashes in a Spark ``LongType`` via ``hash.view(np.int64)``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.lsh import _go_str_key
from neardup_udfs.kernels.shingle import pack_texts

__all__ = [
    "MAX_RESULTS",
    "FingerprintBatch",
    "Fingerprints",
    "Index",
    "Match",
    "Overlap",
    "Region",
    "Span",
    "hashes",
    "overlaps",
    "remove_ranges",
    "text",
    "text_batch",
]

U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

MAX_RESULTS = 1 << 20
"""Cap on the fingerprint matches :func:`overlaps` and :meth:`Index.matches` examine (in scan
order: query fingerprint first, then the other side's positions in order), so highly
repetitive input cannot blow up quadratically; it also bounds the number of spans."""

_MASK64 = (1 << 64) - 1
_CHUNK = 1 << 14  # windows per numpy pass: temporaries stay in cache (3x faster than 1 << 20)


class Fingerprints(NamedTuple):
    """Winnowing fingerprints of one sequence, in increasing position.

    Attributes:
        pos: int64 positions: the byte offset of the selected k-gram (:func:`text`) or the
            index into the hash sequence (:func:`hashes`); strictly increasing.
        hash: uint64 selected hashes, ``hash[i]`` selected at ``pos[i]``.
    """

    pos: I64
    hash: U64


class FingerprintBatch(NamedTuple):
    """Winnowing fingerprints of many documents as flat arrays, ordered by (doc, pos).

    Attributes:
        doc: int64 index of the document (into the input sequence) of each fingerprint.
        pos: int64 byte offset of the selected k-gram within its document.
        hash: uint64 selected hash (XXH64 of the k-gram).
    """

    doc: I64
    pos: I64
    hash: U64


@dataclass(frozen=True, order=True)
class Span:
    """An aligned passage two texts share (semblance ``winnow.Span``), in bytes.

    ``a[pos_a : pos_a + length]`` aligns with ``b[pos_b : pos_b + length]``. A located region,
    not a proof of byte equality: the bounding k-grams are equal, the interior need not be, and
    edges land within about w + k bytes of the true passage boundaries.
    """

    pos_a: int
    pos_b: int
    length: int


@dataclass(frozen=True)
class Match:
    """An aligned passage a query shares with an indexed document (``winnow.Match``).

    Query bytes ``[query_pos, query_pos + length)`` align with document ``id``'s bytes
    ``[doc_pos, doc_pos + length)``; a heuristic locator like :class:`Span`.
    """

    id: str
    query_pos: int
    doc_pos: int
    length: int


@dataclass(frozen=True)
class Overlap:
    """How much a query shares with one document: ``shared`` distinct common fingerprints."""

    id: str
    shared: int


@dataclass(frozen=True, order=True)
class Region:
    """A byte range ``[pos, pos + length)`` of one text (``winnow.Region``, see ``Index.cover``)."""

    pos: int
    length: int


# --- parameters and input ------------------------------------------------------------------------


def _positive(name: str, value: int) -> int:
    """``value`` as an int; TypeError if it is no integer, ValueError naming ``name`` if <= 0."""
    if isinstance(value, bool):
        raise TypeError(f"winnow: {name} must be an integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"winnow: {name} must be an integer, got {value!r}") from None
    if v <= 0:
        raise ValueError(f"winnow: {name} must be positive, got {v}")
    return v


def _integer(name: str, value: int | np.integer) -> int:
    if isinstance(value, bool):
        raise TypeError(f"winnow: {name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"winnow: {name} must be an integer, got {value!r}") from None


def _as_bytes(text: str | bytes | bytearray | memoryview) -> bytes:
    """The bytes Go would see: ``bytes`` as is, a ``str`` as UTF-8 (surrogates as 3 bytes)."""
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text)
    raise TypeError(f"winnow: text must be str or bytes, got {type(text).__name__}")


def _as_hash_array(seq: Iterable[int] | npt.NDArray[np.integer]) -> U64:
    """64-bit hashes as a 1-D uint64 array; signed values are read as two's complement."""
    if isinstance(seq, np.ndarray):
        if seq.dtype.kind not in "iu" or seq.ndim != 1:
            raise TypeError(
                f"winnow: hashes must be a 1-D integer array, got {seq.dtype} "
                f"with {seq.ndim} dimensions"
            )
        return seq.astype(np.uint64, copy=False)
    values = [_hash64(v) for v in seq]
    return np.array(values, dtype=np.uint64)


def _hash64(value: int | np.integer) -> int:
    """A 64-bit hash as an unsigned int (a negative int64 is read as two's complement)."""
    h = _integer("hash", value)
    if not -(1 << 63) <= h <= _MASK64:
        raise ValueError(f"winnow: hash must fit in 64 bits, got {h}")
    return h & _MASK64


# --- XXH64 of every k-byte window (numpy, one pass per 4/8-byte lane) -----------------------------

_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5
_u = np.uint64


def _rotl(x: U64, r: int) -> U64:
    """Rotate every element of ``x`` left by ``r`` bits, in place; returns ``x``."""
    hi = x >> _u(64 - r)
    x <<= _u(r)
    x |= hi
    return x


def _round(acc: U64, lane: U64) -> U64:
    """XXH64 round ``rotl(acc + lane * P2, 31) * P1``, in place on ``acc``."""
    acc += lane * _u(_P2)
    _rotl(acc, 31)
    acc *= _u(_P1)
    return acc


def _words(seg: U8, width: int, count: int) -> U64:
    """Little-endian ``width``-byte words (4 or 8) at byte offsets 0..count-1 of ``seg``."""
    dt = np.dtype("<u8") if width == 8 else np.dtype("<u4")
    out = np.empty(count, dtype=np.uint64)
    for r in range(width):
        n = (count - r + width - 1) // width
        if n > 0:
            out[r::width] = seg[r : r + n * width].view(dt)
    return out


def _xxh64_windows(seg: U8, k: int) -> U64:
    """XXH64 (seed 0) of ``seg[i : i + k]`` for every i in 0..len(seg)-k (len(seg) >= k)."""
    count = len(seg) - k + 1
    w8 = _words(seg, 8, len(seg) - 7) if k >= 8 else None
    p = 0
    if k >= 32:
        assert w8 is not None
        v1 = np.full(count, (_P1 + _P2) & _MASK64, dtype=np.uint64)
        v2 = np.full(count, _P2, dtype=np.uint64)
        v3 = np.zeros(count, dtype=np.uint64)
        v4 = np.full(count, (-_P1) & _MASK64, dtype=np.uint64)
        while p + 32 <= k:
            _round(v1, w8[p : p + count])
            _round(v2, w8[p + 8 : p + 8 + count])
            _round(v3, w8[p + 16 : p + 16 + count])
            _round(v4, w8[p + 24 : p + 24 + count])
            p += 32
        h = _rotl(v1.copy(), 1) + _rotl(v2.copy(), 7) + _rotl(v3.copy(), 12)
        h += _rotl(v4.copy(), 18)
        for v in (v1, v2, v3, v4):
            h ^= _round(np.zeros(count, dtype=np.uint64), v)
            h *= _u(_P1)
            h += _u(_P4)
    else:
        h = np.full(count, _P5, dtype=np.uint64)
    h += _u(k)
    while p + 8 <= k:
        assert w8 is not None
        h ^= _round(np.zeros(count, dtype=np.uint64), w8[p : p + count])
        _rotl(h, 27)
        h *= _u(_P1)
        h += _u(_P4)
        p += 8
    if p + 4 <= k:
        w4 = _words(seg[p:], 4, count)
        h ^= w4 * _u(_P1)
        _rotl(h, 23)
        h *= _u(_P2)
        h += _u(_P3)
        p += 4
    while p < k:
        h ^= seg[p : p + count].astype(np.uint64) * _u(_P5)
        _rotl(h, 11)
        h *= _u(_P1)
        p += 1
    h ^= h >> _u(33)
    h *= _u(_P2)
    h ^= h >> _u(29)
    h *= _u(_P3)
    h ^= h >> _u(32)
    return h


# --- winnowing ----------------------------------------------------------------------------------


_Idx = npt.NDArray[np.signedinteger]


def _window_argmin(h: U64, w: int) -> _Idx:
    """Index of the rightmost minimum of every window ``h[s : s + w]``, s = 0..len(h)-w.

    Doubling: the rightmost minimum of a window of length 2L is the better of its two halves,
    the right half winning ties; a window of length w is covered by two (overlapping) windows
    of the largest power of two L <= w, again the right one winning ties. O(n log w).
    """
    n = len(h) - w + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int32)
    val = h
    idx: _Idx = np.arange(len(h), dtype=np.int32 if len(h) < 2**31 else np.int64)
    span = 1
    while 2 * span <= w:
        right = val[span:] <= val[:-span]
        idx = cast(_Idx, np.where(right, idx[span:], idx[:-span]))
        val = np.minimum(val[:-span], val[span:])
        span *= 2
    if span == w:
        return idx[:n]
    off = w - span
    right = val[off : off + n] <= val[:n]
    return cast(_Idx, np.where(right, idx[off : off + n], idx[:n]))


def _winnow_chunked(
    n: int,
    w: int,
    hashes_of: Callable[[int, int], U64],
    valid: npt.NDArray[np.bool_] | None = None,
) -> tuple[I64, U64]:
    """Winnow a sequence of ``n`` hashes, a cache-sized chunk of windows at a time.

    ``hashes_of(lo, hi)`` returns hashes ``lo..hi-1`` of the sequence. Only windows whose
    start s has ``valid[s]`` are considered (all when ``valid`` is None); the selections of the
    considered windows must be non-decreasing, so each is reported once, at its first window.
    Returns (selected indices, their hashes), in increasing index order.
    """
    n_win = n - w + 1
    pos: list[I64] = []
    hs: list[U64] = []
    prev = -1
    for lo in range(0, max(n_win, 0), _CHUNK):
        hi = min(n_win, lo + _CHUNK)
        h = hashes_of(lo, hi + w - 1)
        sel = _window_argmin(h, w)
        if valid is not None:
            inside = valid[lo:hi]
            if not inside.all():
                sel = sel[inside]
        if len(sel) == 0:
            continue
        keep = np.empty(len(sel), dtype=bool)
        keep[0] = int(sel[0]) + lo != prev
        np.not_equal(sel[1:], sel[:-1], out=keep[1:])
        sel = sel[keep]
        prev = int(sel[-1]) + lo
        pos.append(sel.astype(np.int64) + lo)
        hs.append(h[sel])
    if not pos:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    return np.concatenate(pos), np.concatenate(hs)


def _winnow_bytes(buf: U8, k: int, w: int, valid: npt.NDArray[np.bool_] | None) -> tuple[I64, U64]:
    """Winnow the k-gram hashes of ``buf``: (byte offsets of selected k-grams, hashes)."""

    def kgrams(lo: int, hi: int) -> U64:
        return _xxh64_windows(buf[lo : hi + k - 1], k)

    return _winnow_chunked(len(buf) - k + 1, w, kgrams, valid)


def hashes(seq: Iterable[int] | npt.NDArray[np.integer], w: int) -> Fingerprints:
    """Winnow a hash sequence (semblance ``winnow.Hashes``).

    Every window of ``w`` consecutive hashes selects its minimum, the rightmost one among
    equal minima; each selected position is reported once, in increasing order, with its
    hash. Sequences shorter than ``w`` give no fingerprints.

    Args:
        seq: 64-bit hashes: unsigned ints, a uint64 array, or an int64 array (read as two's
            complement).
        w: window size, >= 1 (ValueError naming ``w`` otherwise).

    Returns:
        :class:`Fingerprints` with ``pos`` the 0-based index into ``seq``.

    Example:
        >>> fp = hashes([5, 3, 3, 9, 1], 2)  # windows pick 1, then 2 (rightmost tie), 2, 4
        >>> fp.pos.tolist(), fp.hash.tolist()
        ([1, 2, 4], [3, 3, 1])
    """
    w = _positive("w", w)
    h = _as_hash_array(seq)
    return Fingerprints(*_winnow_chunked(len(h), w, lambda lo, hi: h[lo:hi]))


def text(text: str | bytes, k: int, w: int) -> Fingerprints:
    """Winnowing fingerprints of a text (semblance ``winnow.Text``).

    The hash sequence is XXH64 of every k-byte window (``shingle.Char``); ``pos`` is the byte
    offset of the selected k-gram, so ``hash[i] == xxh64(data[pos[i] : pos[i] + k])``. Texts
    shorter than w + k - 1 bytes give no fingerprints. k is checked before w; each must be
    >= 1 (ValueError naming it).

    Example:
        >>> fp = text("the quick brown fox", 4, 4)
        >>> [f"{p}:{h:016x}" for p, h in zip(fp.pos.tolist(), fp.hash.tolist())][:2]
        ['2:274f474d374b10e3', '5:079e5e25f2fca95a']
    """
    k = _positive("k", k)
    w = _positive("w", w)
    buf = np.frombuffer(_as_bytes(text), dtype=np.uint8)
    return Fingerprints(*_winnow_bytes(buf, k, w, None))


def text_batch(texts: Sequence[str | bytes], k: int, w: int) -> FingerprintBatch:
    """:func:`text` of every document at once, as flat arrays ordered by (doc, pos).

    The documents are packed into one byte buffer and winnowed in cache-sized chunks of a few
    numpy passes each; a window of w k-grams counts only if it lies inside one document, so
    document d's rows equal ``text(texts[d], k, w)`` exactly.
    """
    k = _positive("k", k)
    w = _positive("w", w)
    batch = pack_texts([_as_bytes(t) for t in texts])
    offsets = batch.offsets
    lengths = np.diff(offsets)
    # Window starts (byte offsets) whose w k-grams all lie in one document: the first
    # len - (k + w - 2) offsets of each document.
    inside = np.clip(lengths - (k + w - 2), 0, None)
    runs = np.empty(2 * len(lengths), dtype=np.int64)
    runs[0::2] = inside
    runs[1::2] = lengths - inside
    valid = np.repeat(np.tile(np.array([True, False]), len(lengths)), runs)
    sel, hs = _winnow_bytes(batch.buf, k, w, valid)
    # Selections of different documents are distinct byte offsets, so the chunked
    # first-sighting rule never merges two documents' fingerprints.
    per_doc = np.diff(np.searchsorted(sel, offsets, side="left"))
    doc = np.repeat(np.arange(len(lengths), dtype=np.int64), per_doc)
    return FingerprintBatch(doc, sel - offsets[doc], hs)


# --- aligned overlap spans -----------------------------------------------------------------------


def _runs(diag: I64, j: I64) -> tuple[I64, I64]:
    """Group matches (in scan order) into diagonal runs.

    A match continues the run on its diagonal iff the previous match on that diagonal (in scan
    order) came from query fingerprint ``j - 1``; otherwise it starts a new run. Returns the
    indices (into the scan order) of each run's first and last match.
    """
    order = np.argsort(diag, kind="stable")
    d, jj = diag[order], j[order]
    new = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        new[1:] = (d[1:] != d[:-1]) | (jj[1:] != jj[:-1] + 1)
    last = np.ones(len(order), dtype=bool)
    last[:-1] = new[1:]
    return order[new], order[last]


def overlaps(
    a: str | bytes, b: str | bytes, k: int, w: int, *, max_results: int = MAX_RESULTS
) -> list[Span]:
    """Aligned passages two texts share (semblance ``winnow.Overlaps``), sorted by (pos_a, pos_b).

    Each fingerprint of ``b`` (in order, counted by j) is matched against every position of
    the same hash in ``a`` (in order); each match costs one unit of a ``max_results`` budget,
    and the scan stops outright when it is spent. A match on diagonal ``pos_a - pos_b``
    extends the open run there when that run's last match came from fingerprint j - 1, else
    it starts a new run. A run becomes ``Span(first pos_a, first pos_b, last pos_a + k -
    first pos_a)``. A fingerprint repeated in ``a`` gives one span per alignment. A shared run
    of w + k - 1 or more bytes yields at least one span. Empty list if none.
    """
    k = _positive("k", k)
    w = _positive("w", w)
    budget = _integer("max_results", max_results)
    fa, fb = text(a, k, w), text(b, k, w)
    if len(fa.pos) == 0 or len(fb.pos) == 0 or budget <= 0:
        return []
    order = np.argsort(fa.hash, kind="stable")  # positions stay increasing within a hash
    ha, pa_sorted = fa.hash[order], fa.pos[order]
    lo = np.searchsorted(ha, fb.hash, side="left")
    cnt = np.searchsorted(ha, fb.hash, side="right") - lo
    csum = np.cumsum(cnt)
    if int(csum[-1]) > budget:  # only the first `budget` matches in scan order are examined
        cut = int(np.searchsorted(csum, budget, side="left"))
        cnt = cnt[: cut + 1].copy()
        cnt[cut] -= int(csum[cut]) - budget
        lo = lo[: cut + 1]
    total = int(cnt.sum())
    if total == 0:
        return []
    j = np.repeat(np.arange(len(cnt), dtype=np.int64), cnt)
    first = np.zeros(len(cnt), dtype=np.int64)
    np.cumsum(cnt[:-1], out=first[1:])
    pa = pa_sorted[np.arange(total, dtype=np.int64) + np.repeat(lo - first, cnt)]
    pb = fb.pos[j]
    start, end = _runs(pa - pb, j)
    pos_a, pos_b = pa[start], pb[start]
    length = pa[end] + k - pos_a
    out = np.lexsort((pos_b, pos_a))
    return [
        Span(x, y, n)
        for x, y, n in zip(
            pos_a[out].tolist(), pos_b[out].tolist(), length[out].tolist(), strict=True
        )
    ]


# --- Index --------------------------------------------------------------------------------------


def _check_id(id: str) -> str:
    if not isinstance(id, str):
        raise TypeError(f"winnow: id must be a str, got {type(id).__name__}")
    if id == "":
        raise ValueError("winnow: id must not be empty")
    return id


class Index:
    """Fingerprint index for fragment-level provenance (semblance ``winnow.Index``).

    Postings map a hash to its (id, pos) entries in add order; ids need not be unique (a
    repeated id accumulates fingerprints). All documents and queries use the index's (k, w).
    Results are deterministic; ids are ordered byte-wise by their UTF-8 form, as Go orders
    strings. Not safe for concurrent use.
    """

    __slots__ = ("_doc_freq", "_hashes", "_k", "_postings", "_w")

    def __init__(self, k: int, w: int) -> None:
        self._k = _positive("k", k)
        self._w = _positive("w", w)
        self._postings: dict[int, list[tuple[str, int]]] = {}
        self._hashes: dict[str, list[int]] = {}
        self._doc_freq: dict[int, int] | None = None

    @property
    def k(self) -> int:
        """K-gram size in bytes."""
        return self._k

    @property
    def w(self) -> int:
        """Winnowing window, in k-grams."""
        return self._w

    def _fingerprints(self, data: str | bytes) -> tuple[list[int], list[int]]:
        fp = text(data, self._k, self._w)
        return fp.pos.tolist(), fp.hash.tolist()

    def add(self, id: str, text: str | bytes) -> None:
        """Index ``text`` under ``id`` (ValueError if ``id`` is empty).

        A text too short for any fingerprint still registers ``id`` (it counts in ``len``
        and :meth:`remove` reports it present). Invalidates the document-frequency cache.
        """
        _check_id(id)
        positions, hs = self._fingerprints(text)
        self._doc_freq = None
        for pos, h in zip(positions, hs, strict=True):
            bucket = self._postings.get(h)
            if bucket is None:
                self._postings[h] = [(id, pos)]
            else:
                bucket.append((id, pos))
        self._hashes.setdefault(id, []).extend(hs)

    def remove(self, id: str) -> bool:
        """Drop every fingerprint of ``id``; True iff ``id`` was indexed."""
        hs = self._hashes.pop(id, None)
        if hs is None:
            return False
        self._doc_freq = None
        for h in dict.fromkeys(hs):
            kept = [p for p in self._postings[h] if p[0] != id]
            if kept:
                self._postings[h] = kept
            else:
                del self._postings[h]
        return True

    def __len__(self) -> int:
        """Number of distinct ids indexed."""
        return len(self._hashes)

    def __contains__(self, id: object) -> bool:
        return id in self._hashes

    def ids(self) -> list[str]:
        """The distinct indexed ids, in first-add order (semblance leaves the order unspecified)."""
        return list(self._hashes)

    def overlap(self, text: str | bytes) -> list[Overlap]:
        """Per indexed document, the number of distinct fingerprint hashes shared with ``text``.

        Sorted by ``shared`` descending, then id ascending; empty list if nothing is shared.
        """
        _, hs = self._fingerprints(text)
        counts: dict[str, int] = {}
        for h in dict.fromkeys(hs):
            for id in dict.fromkeys(p[0] for p in self._postings.get(h, ())):
                counts[id] = counts.get(id, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], _go_str_key(kv[0])))
        return [Overlap(id, n) for id, n in ranked]

    def matches(self, text: str | bytes, *, max_results: int = MAX_RESULTS) -> list[Match]:
        """Aligned passages ``text`` shares with every indexed document, as :class:`Match` runs.

        As :func:`overlaps` against all documents at once: the query's fingerprints are
        walked in order (j counts them), each posting of the same hash (in add order) is one
        match costing one unit of the ``max_results`` budget (the scan stops when it is
        spent); the diagonal is (id, doc_pos - query_pos), and a match extends that
        diagonal's open run iff the run's last match came from query fingerprint j - 1.
        Sorted by id, query_pos, doc_pos (then length: equal keys only arise from a repeated
        id holding the same text twice, where Go's order is unspecified).
        """
        budget = _integer("max_results", max_results)
        k = self._k
        positions, hs = self._fingerprints(text)
        active: dict[tuple[str, int], list[int]] = {}  # -> [q_start, d_start, q_end, last_j]
        out: list[Match] = []
        for j, (qpos, h) in enumerate(zip(positions, hs, strict=True)):
            postings = self._postings.get(h)
            if postings is None:
                continue
            if budget <= 0:
                break
            for id, dpos in postings:
                if budget <= 0:
                    break
                budget -= 1
                key = (id, dpos - qpos)
                run = active.get(key)
                if run is not None and run[3] == j - 1:
                    run[2] = qpos
                    run[3] = j
                    continue
                if run is not None:
                    out.append(Match(id, run[0], run[1], run[2] + k - run[0]))
                active[key] = [qpos, dpos, qpos, j]
        for (id, _), run in active.items():
            out.append(Match(id, run[0], run[1], run[2] + k - run[0]))
        out.sort(key=lambda m: (_go_str_key(m.id), m.query_pos, m.doc_pos, m.length))
        return out

    def _doc_freqs(self) -> dict[int, int]:
        if self._doc_freq is None:
            self._doc_freq = {h: len({p[0] for p in ps}) for h, ps in self._postings.items()}
        return self._doc_freq

    def doc_freq(self, hash: int | np.integer) -> int:
        """Number of distinct indexed ids whose fingerprints include ``hash`` (0 if none).

        ``hash`` is an unsigned 64-bit value; a negative int64 is read as two's complement.
        """
        return self._doc_freqs().get(_hash64(hash), 0)

    def cover(self, text: str | bytes, min_docs: int, min_run: int) -> list[Region]:
        """Byte ranges of ``text`` that recur across the corpus (boilerplate).

        A fingerprint qualifies when its hash is in at least ``min_docs`` indexed documents
        (the text itself counts if indexed). Consecutive qualifying fingerprints form a run;
        a run of ``n >= max(min_run, 1)`` fingerprints from Pos ``s`` to ``e`` becomes
        ``Region(s, e + k - s)``. Sorted, non-overlapping; empty list if none. No parameter
        is range-checked (as in Go): ``min_docs <= 0`` qualifies every fingerprint.
        """
        min_docs = _integer("min_docs", min_docs)
        min_run = _integer("min_run", min_run)
        df = self._doc_freqs()
        k = self._k
        out: list[Region] = []
        start = end = run = 0
        positions, hs = self._fingerprints(text)
        for pos, h in zip(positions, hs, strict=True):
            if df.get(h, 0) >= min_docs:
                if run == 0:
                    start = pos
                end = pos
                run += 1
                continue
            if run >= min_run and run > 0:
                out.append(Region(start, end + k - start))
            run = 0
        if run >= min_run and run > 0:
            out.append(Region(start, end + k - start))
        return out


def remove_ranges(data: bytes, ranges: Iterable[tuple[int, int]]) -> tuple[bytes, int]:
    """``data`` without the byte ranges ``(start, length)``, and how many bytes went.

    Each range is clipped to ``data`` and widened to whole UTF-8 characters: a cut inside a
    multi-byte sequence takes the whole sequence (continuation bytes 0x80-0xBF next to a cut
    go with it), so valid UTF-8 stays valid. Overlapping ranges are removed once.

    Example:
        >>> remove_ranges(b"keep BOILER keep", [(4, 7)])
        (b'keep keep', 7)
    """
    n = len(data)
    cuts: list[tuple[int, int]] = []
    for start, length in sorted((int(s), int(ln)) for s, ln in ranges):
        lo, hi = max(0, start), min(n, start + max(0, length))
        if lo >= hi:
            continue
        while lo > 0 and data[lo] & 0xC0 == 0x80:
            lo -= 1
        while hi < n and data[hi] & 0xC0 == 0x80:
            hi += 1
        if cuts and lo <= cuts[-1][1]:
            cuts[-1] = (cuts[-1][0], max(cuts[-1][1], hi))
        else:
            cuts.append((lo, hi))
    kept: list[bytes] = []
    at = 0
    for lo, hi in cuts:
        kept.append(data[at:lo])
        at = hi
    kept.append(data[at:])
    return b"".join(kept), sum(hi - lo for lo, hi in cuts)
