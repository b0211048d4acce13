"""Winnowing fingerprints (semblance ``winnow.Hashes`` and ``winnow.Text``): every window of
w consecutive hashes selects its rightmost minimum, each selection reported once, at the
first window it wins, with its position.

Texts are winnowed over XXH64 k-gram hashes with byte-offset positions; :func:`text_batch`
gives the same fingerprints for many documents at once. Windows are processed a cache-sized
chunk (``_CHUNK``) at a time, which changes no result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, cast

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.renamed import renamed
from neardup_udfs.kernels.shingle import pack_texts
from neardup_udfs.kernels.winnow.inputs import as_bytes, as_hash_array, positive
from neardup_udfs.kernels.winnow.xxh64 import xxh64_windows

U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

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
        return xxh64_windows(buf[lo : hi + k - 1], k)

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
    w = positive("w", w)
    h = as_hash_array(seq)
    return Fingerprints(*_winnow_chunked(len(h), w, lambda lo, hi: h[lo:hi]))


@renamed(k="kgram_bytes")
def text(text: str | bytes, kgram_bytes: int, w: int) -> Fingerprints:
    """Winnowing fingerprints of a text (semblance ``winnow.Text``, whose ``k`` is
    ``kgram_bytes``: ``k=`` is still read, with a DeprecationWarning).

    The hash sequence is XXH64 of every k-byte window, k = ``kgram_bytes`` (``shingle.Char``);
    ``pos`` is the byte offset of the selected k-gram, so ``hash[i] == xxh64(data[pos[i] :
    pos[i] + k])``. Texts shorter than w + k - 1 bytes give no fingerprints. k is checked
    before w; each must be >= 1 (ValueError naming it ``k`` or ``w``, as semblance does).

    Example:
        >>> fp = text("the quick brown fox", 4, 4)
        >>> [f"{p}:{h:016x}" for p, h in zip(fp.pos.tolist(), fp.hash.tolist())][:2]
        ['2:274f474d374b10e3', '5:079e5e25f2fca95a']
    """
    k = positive("k", kgram_bytes)
    w = positive("w", w)
    buf = np.frombuffer(as_bytes(text), dtype=np.uint8)
    return Fingerprints(*_winnow_bytes(buf, k, w, None))


@renamed(k="kgram_bytes")
def text_batch(texts: Sequence[str | bytes], kgram_bytes: int, w: int) -> FingerprintBatch:
    """:func:`text` of every document at once, as flat arrays ordered by (doc, pos).

    The documents are packed into one byte buffer and winnowed in cache-sized chunks of a few
    numpy passes each; a window of w k-grams counts only if it lies inside one document, so
    document d's rows equal ``text(texts[d], kgram_bytes, w)`` exactly.
    """
    k = positive("k", kgram_bytes)
    w = positive("w", w)
    batch = pack_texts([as_bytes(t) for t in texts])
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
