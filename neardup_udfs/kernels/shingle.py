"""ditto's shingles: character n-grams over runes and word n-grams, as byte spans of a batch.

A batch of normalized documents is one UTF-8 byte buffer plus document offsets; a shingle
is a span of that buffer. Hashing the spans (``hashing.fnv1a64_spans``) gives ditto's
features with their multiplicity, every occurrence listed once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["Spans", "TextBatch", "ditto_spans", "pack_texts"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TextBatch:
    """Documents as one byte buffer: document ``d`` is ``buf[offsets[d]:offsets[d + 1]]``."""

    buf: npt.NDArray[np.uint8]
    offsets: I64

    def __len__(self) -> int:
        return len(self.offsets) - 1


@dataclass(frozen=True)
class Spans:
    """Shingle spans of a batch: span i belongs to document ``doc[i]`` (in no set order)."""

    doc: I64
    start: I64
    length: I64


def pack_texts(texts: list[bytes]) -> TextBatch:
    """Concatenate encoded documents into a :class:`TextBatch` (copies each byte once)."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    buf = np.frombuffer(b"".join(texts), dtype=np.uint8)
    return TextBatch(buf, offsets)


def _windows(unit_start: I64, unit_end: I64, first: I64, n: int) -> Spans:
    """Every run of ``n`` consecutive units (runes or words) inside one document.

    ``first[d]:first[d + 1]`` are the units of document d, units in text order.
    """
    m = len(unit_start) - n + 1
    per_doc = np.maximum(np.diff(first) - n + 1, 0)
    doc = np.repeat(np.arange(len(per_doc), dtype=np.int64), per_doc)
    if m <= 0:
        empty = np.zeros(0, dtype=np.int64)
        return Spans(doc, empty, empty)
    # Window k is valid unless it runs past the end of its document: the last n - 1 start
    # positions of every document are invalid.
    ok = np.ones(m, dtype=bool)
    for j in range(1, n):
        bad = first[1:] - j
        bad = bad[(bad >= first[:-1]) & (bad < m)]
        ok[bad] = False
    start = unit_start[:m][ok]
    return Spans(doc, start, unit_end[n - 1 :][ok] - start)


def _char_spans(batch: TextBatch, n: int) -> Spans:
    buf, offsets = batch.buf, batch.offsets
    if buf.size and int(buf.max()) < 0x80:
        rune_start = np.arange(buf.size, dtype=np.int64)
        first = offsets
    else:
        rune_start = np.flatnonzero((buf & 0xC0) != 0x80).astype(np.int64)
        first = np.searchsorted(rune_start, offsets).astype(np.int64)
    # A rune ends where the next one starts: documents are contiguous and hold whole runes,
    # so the last rune of a document ends where the next document starts.
    rune_end = np.empty_like(rune_start)
    rune_end[:-1] = rune_start[1:]
    if len(rune_end):
        rune_end[-1] = offsets[-1]
    return _windows(rune_start, rune_end, first, n)


def _word_spans(batch: TextBatch, n: int) -> Spans:
    buf, offsets = batch.buf, batch.offsets
    nonempty = offsets[1:] > offsets[:-1]
    spaces = np.flatnonzero(buf == 0x20).astype(np.int64)
    word_start = np.sort(np.concatenate([offsets[:-1][nonempty], spaces + 1]))
    word_end = np.sort(np.concatenate([spaces, offsets[1:][nonempty]]))
    first = np.searchsorted(word_start, offsets).astype(np.int64)
    return _windows(word_start, word_end, first, n)


def ditto_spans(batch: TextBatch, char_n: int, word_n: int) -> Spans:
    """All ditto feature spans of normalized documents, with multiplicity.

    Notes:
        For ``char_n > 0``: every window of ``char_n`` consecutive runes (spaces included).
        For ``word_n > 0``: every window of ``word_n`` consecutive space-separated words,
        joined by their single spaces. A document with no window of either kind (empty, or
        shorter than both n) gets one span covering the whole document: ditto's fallback
        feature. The documents must be ditto-normalized (valid UTF-8, single spaces, none at
        either end); every document therefore gets at least one span.
    """
    n_docs = len(batch)
    parts: list[Spans] = []
    if char_n > 0:
        parts.append(_char_spans(batch, char_n))
    if word_n > 0:
        parts.append(_word_spans(batch, word_n))
    have = np.zeros(n_docs, dtype=bool)
    for p in parts:
        have[p.doc] = True
    lonely = np.flatnonzero(~have).astype(np.int64)
    if len(lonely):
        off = batch.offsets
        parts.append(Spans(lonely, off[lonely], off[lonely + 1] - off[lonely]))
    if len(parts) == 1:
        return parts[0]
    return Spans(
        np.concatenate([p.doc for p in parts]),
        np.concatenate([p.start for p in parts]),
        np.concatenate([p.length for p in parts]),
    )
