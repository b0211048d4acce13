"""Shingles: ditto's rune/word n-gram spans of a batch, and semblance's hashed streams.

ditto: a batch of normalized documents is one UTF-8 byte buffer plus document offsets; a
shingle is a span of that buffer. Hashing the spans (``hashing.fnv1a64_spans``) gives ditto's
features with their multiplicity, every occurrence listed once.

semblance: ``char_shingles`` (byte k-grams), ``char_rune_shingles`` (rune k-grams) and
``word_shingles`` (the tokenizer + Mix fold of every default semblance pipeline), one document
at a time; the compiled batch forms live in ``words_jit``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import xxhash

from neardup_udfs.kernels.hashing import mix_fold
from neardup_udfs.kernels.text import TOKEN_RUN, go_decode, go_lower, to_go_str

__all__ = [
    "Spans",
    "TextBatch",
    "char_rune_shingles",
    "char_shingles",
    "ditto_spans",
    "pack_texts",
    "word_shingles",
    "word_tokens",
]

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


# --- semblance's shingles: per-document reference streams -----------------------------------


def _as_bytes(text: str | bytes) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    return bytes(text)


def char_shingles(text: str | bytes, k: int) -> list[int]:
    """semblance ``shingle.Char``: xxh64 of every k-byte window, in order.

    Notes:
        Byte windows (they may split a multi-byte rune). Fewer than k bytes gives nothing.
        k <= 0 raises ValueError.

    Example:
        >>> len(char_shingles(b"abcde", 4))
        2
    """
    if k <= 0:
        raise ValueError(f"shingle size k must be positive, got {k}")
    data = _as_bytes(text)
    return [xxhash.xxh64_intdigest(data[i : i + k]) for i in range(len(data) - k + 1)]


def char_rune_shingles(text: str | bytes, k: int) -> list[int]:
    """semblance ``shingle.CharRunes``: xxh64 of the bytes of every k consecutive runes.

    Notes:
        Runes are decoded Go-style: an invalid byte is a one-byte rune (its raw byte is
        hashed). Fewer than k runes gives nothing. k <= 0 raises ValueError.
    """
    if k <= 0:
        raise ValueError(f"shingle size k must be positive, got {k}")
    data = _as_bytes(text)
    bounds = [0]
    for r in go_decode(data):
        # An invalid byte decodes to U+FFFD but spans exactly one byte of the input.
        step = len(r.encode("utf-8"))
        nxt = bounds[-1] + step
        if r == "\ufffd" and data[bounds[-1] : nxt] != b"\xef\xbf\xbd":
            nxt = bounds[-1] + 1
        bounds.append(nxt)
    return [xxhash.xxh64_intdigest(data[bounds[i] : bounds[i + k]]) for i in range(len(bounds) - k)]


def word_tokens(text: str | bytes) -> list[str]:
    """semblance's tokens: maximal runs of token runes, each lowercased the Go way.

    Notes:
        Token runes are ASCII letters and digits and, from U+0080 on, every rune of general
        category L* or N* (frozen Unicode 15.0.0). Everything else separates tokens and is
        dropped: punctuation, ``_``, spaces, combining marks, emoji, ZWJ, invalid bytes.
        Lowercasing is Go's simple mapping, rune by rune.

    Example:
        >>> word_tokens("Don't stop, Ĝis!")
        ['don', 't', 'stop', 'ĝis']
    """
    tokens = TOKEN_RUN.findall(to_go_str(text))
    # Lowercasing is rune by rune and never touches the separator, so one call serves all.
    return go_lower("\x00".join(tokens)).split("\x00") if tokens else []


def word_shingles(text: str | bytes, w: int) -> list[int]:
    """semblance ``shingle.Words(text, w)``: Mix-fold of every w consecutive token hashes.

    Notes:
        Token hash = xxh64 of the lowercased token's UTF-8 bytes. Each window of w token
        hashes is folded from MIX_INIT (even w = 1 gives ``mix(MIX_INIT, t)``). Fewer than
        w tokens gives nothing. w <= 0 raises ValueError.

    Example:
        >>> word_shingles("The quick brown Fox!", 3) == word_shingles("the quick brown fox", 3)
        True
    """
    if w <= 0:
        raise ValueError(f"word shingle size w must be positive, got {w}")
    hashes = [xxhash.xxh64_intdigest(t.encode("utf-8")) for t in word_tokens(text)]
    return [mix_fold(hashes[i : i + w]) for i in range(len(hashes) - w + 1)]
