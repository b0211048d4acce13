"""ditto's ``Featurizer``: normalized text -> FNV-1a shingle features -> SimHash.

The batch form fingerprints many documents with numpy over all shingles of the batch; only
normalization runs per document (as C-level string operations).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.hashing import fnv1a64_spans
from neardup_udfs.kernels.normalize import normalize_utf8
from neardup_udfs.kernels.shingle import TextBatch, ditto_spans, pack_texts
from neardup_udfs.kernels.simhash import vote

__all__ = ["DEFAULT_CHAR_N", "DEFAULT_WORD_N", "features", "fingerprints"]

DEFAULT_CHAR_N = 4
DEFAULT_WORD_N = 0
Engine = Literal["numba", "numpy"]
_BLOCK_BYTES = 1 << 18
_BLOCK_DOCS = 1024


def _normalized_batch(texts: Iterable[str | bytes]) -> TextBatch:
    return pack_texts([normalize_utf8(t) for t in texts])


def features(
    text: str | bytes, char_n: int = DEFAULT_CHAR_N, word_n: int = DEFAULT_WORD_N
) -> list[tuple[int, int]]:
    """ditto ``Featurizer{CharN, WordN}.Features(text)``: ``(hash, weight)`` pairs, by hash.

    Notes:
        Shingles of the normalized text (rune ``char_n``-grams and/or word ``word_n``-grams;
        a value <= 0 disables that kind) hashed with FNV-1a 64; weight = occurrences, char
        and word hashes counted in one table. With no shingle at all, the single feature is
        FNV-1a of the whole normalized text (so empty text gives ``cbf29ce484222325``).
        ditto returns map order; this returns ascending hash order.
    """
    batch = _normalized_batch([text])
    spans = ditto_spans(batch, char_n, word_n)
    hashes = fnv1a64_spans(batch.buf, spans.start, spans.length)
    return sorted((int(h), c) for h, c in Counter(hashes.tolist()).items())


def fingerprints(
    texts: Sequence[str | bytes],
    char_n: int = DEFAULT_CHAR_N,
    word_n: int = DEFAULT_WORD_N,
    engine: Engine = "numba",
) -> npt.NDArray[np.uint64]:
    """ditto ``Featurizer{CharN, WordN}.Of`` for every text, as a uint64 array in input order.

    Args:
        texts: documents, ``str`` or raw ``bytes``.
        char_n: rune n-gram size (<= 0 disables).
        word_n: word n-gram size (<= 0 disables).
        engine: ``"numba"`` (compiled, one fused pass per document; the default) or
            ``"numpy"`` (vectorised over all shingles of the batch). Both give identical
            values; ``make bench`` measures both.

    Notes:
        Bit-identical to ditto for every input, including invalid UTF-8 (one U+FFFD per bad
        byte), markup, CJK, emoji and combining marks. An empty sequence gives an empty array.
    """
    encoded = [normalize_utf8(t) for t in texts]
    if engine == "numba":
        from neardup_udfs.kernels.featurize_jit import ditto_simhash

        batch = pack_texts(encoded)
        return ditto_simhash(batch.buf, batch.offsets, char_n, word_n)
    if engine != "numpy":
        raise ValueError(f"engine must be 'numba' or 'numpy', got {engine!r}")
    out = np.zeros(len(encoded), dtype=np.uint64)
    for lo, hi in _blocks(encoded):
        batch = pack_texts(encoded[lo:hi])
        spans = ditto_spans(batch, char_n, word_n)
        hashes = fnv1a64_spans(batch.buf, spans.start, spans.length)
        out[lo:hi] = vote(hashes, spans.doc, hi - lo)
    return out


def _blocks(encoded: Sequence[bytes]) -> Iterator[tuple[int, int]]:
    """Consecutive document ranges of at most _BLOCK_DOCS documents and about _BLOCK_BYTES.

    Blocks keep the per-shingle arrays small enough to stay in the CPU caches.
    """
    lo, size = 0, 0
    for i, t in enumerate(encoded):
        size += len(t)
        if size >= _BLOCK_BYTES or i + 1 - lo >= _BLOCK_DOCS:
            yield lo, i + 1
            lo, size = i + 1, 0
    if lo < len(encoded):
        yield lo, len(encoded)
