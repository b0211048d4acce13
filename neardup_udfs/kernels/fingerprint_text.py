"""richardwooding/fingerprint text SimHash (``Compute``): per-document reference and batch kernel.

The reference reads text rune by rune the way Go does (one U+FFFD per invalid byte), keeps
runes that are Go letters (``unicode.IsLetter``, category L*) or decimal digits
(``unicode.IsDigit``, category Nd only) lowercased with Go's simple ``unicode.ToLower``, and
ends a token at any other rune. Tokens shorter than 2 UTF-8 bytes are dropped. Three
consecutive tokens joined by one ASCII space form a feature (fewer than three tokens: the
tokens themselves are the features); each feature is hashed with FNV-1a 64 and summed into a
Charikar SimHash with weight 1 per occurrence. The Unicode tables are Go 1.25's (15.0.0),
shipped in ``data/go_unicode_15.json``.

:func:`tokens`, :func:`features` and :func:`simhash` are the readable per-document reference;
:func:`simhash_batch` is the compiled kernel (one fused pass per document over its bytes) that
the oracle tests hold to them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.compiled import kernel
from neardup_udfs.kernels.data_files import shipped_json
from neardup_udfs.kernels.hashing import FNV64_PRIME, fnv1a64
from neardup_udfs.kernels.simhash_jit import FNV_OFFSET, add_votes, fnv1a_span, majority_bits
from neardup_udfs.kernels.text import char_class, go_lower, go_lower_table, to_go_str
from neardup_udfs.kernels.tokenizer import TokenTables, next_token, token_scratch, token_tables
from neardup_udfs.kernels.utf8 import pack_utf8

__all__ = [
    "MIN_TOKEN_BYTES",
    "SHINGLE_SIZE",
    "distance",
    "features",
    "similarity",
    "simhash",
    "simhash_batch",
    "tokens",
]

U64 = npt.NDArray[np.uint64]

MIN_TOKEN_BYTES = 2
"""A token is kept only if its lowercased UTF-8 encoding is at least this many bytes."""

SHINGLE_SIZE = 3
"""Tokens per feature (space-joined); fewer tokens than this make single-token features."""


@cache
def _token_ranges() -> tuple[tuple[int, int], ...]:
    """Go ``IsLetter || IsDigit`` (Unicode 15.0.0) as sorted inclusive code point ranges."""
    data = shipped_json("go_unicode_15.json")
    ranges = sorted(
        (int(lo), int(hi)) for lo, hi in data["go_letter_ranges"] + data["go_digit_ranges"]
    )
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return tuple(merged)


_TOKEN_RUN = re.compile(f"[{char_class(_token_ranges())}]+")


def tokens(text: str | bytes) -> list[str]:
    """fingerprint's ``tokenize``: lowercase letter/digit words of at least 2 UTF-8 bytes.

    Args:
        text: A ``str``, or ``bytes`` read as Go reads a string.

    Returns:
        The tokens in text order, duplicates kept.

    Notes:
        Letters are Go ``unicode.IsLetter`` (L*), digits Go ``unicode.IsDigit`` (Nd only: ``²``,
        ``½`` and ``Ⅻ`` separate tokens). Invalid UTF-8 bytes each become U+FFFD, which is a
        separator; a ``str`` with lone surrogates is read as their 3-byte encodings (three
        U+FFFD each). Lowercasing is Go's simple one-rune mapping (``İ`` -> ``i``, ``Σ`` ->
        ``σ`` even at a word end). The 2-byte minimum applies to the lowercased token: ``"a"``
        and Kelvin ``"K"`` (lowercased to ``"k"``) are dropped, ``"é"`` and ``"私"`` are kept.
    """
    out = []
    for run in _TOKEN_RUN.findall(to_go_str(text)):
        tok = go_lower(run)
        if len(tok) >= MIN_TOKEN_BYTES or ord(tok) >= 0x80:
            out.append(tok)
    return out


def features(text: str | bytes) -> list[str]:
    """fingerprint's ``shingles(tokenize(text), 3)``: the strings that get hashed.

    Notes:
        No tokens gives ``[]``; one or two tokens are their own features; otherwise every
        three consecutive tokens joined by one ASCII space (``n - 2`` features, duplicates
        kept, text order).
    """
    toks = tokens(text)
    if len(toks) < SHINGLE_SIZE:
        return toks
    return [" ".join(toks[i : i + SHINGLE_SIZE]) for i in range(len(toks) - SHINGLE_SIZE + 1)]


def simhash(text: str | bytes) -> int:
    """fingerprint ``Compute(text)``: the 64-bit SimHash as an unsigned int.

    Notes:
        Each feature adds +1 to bit counter i when bit i of its FNV-1a 64 hash is set and -1
        otherwise; output bit i is 1 iff its counter is strictly positive (a tie gives 0).
        Empty text, or text without tokens (``";.!"``, ``"a"``), gives 0. One token gives its
        FNV-1a hash (``"hi"`` -> ``0x08ba5f07b55ec3da``).
    """
    feats = features(text)
    counts = [0] * 64
    for feat in feats:
        h = fnv1a64(feat.encode("utf-8"))
        for i in range(64):
            counts[i] += (h >> i) & 1
    return sum(1 << i for i in range(64) if 2 * counts[i] > len(feats))


def distance(a: int, b: int) -> int:
    """Hamming distance (``Distance``): the number of differing bits, in [0, 64]."""
    return ((a ^ b) & 0xFFFFFFFFFFFFFFFF).bit_count()


def similarity(a: int, b: int) -> float:
    """``Similarity = 1 - Distance(a, b) / 64`` as a float64 in [0, 1].

    Notes:
        Exact: every value is a multiple of 1/64. Symmetric; 1.0 iff ``a == b``.
    """
    return 1.0 - float(distance(a, b)) / 64.0


_PRIME = np.uint64(FNV64_PRIME)
_SPACE = np.uint64(0x20)


@kernel()
def _doc(
    b: npt.NDArray[np.uint8],
    lo: int,
    hi: int,
    tables: TokenTables,
    tok: npt.NDArray[np.uint8],
    counts: npt.NDArray[np.int64],
) -> np.uint64:
    """``Compute`` of b[lo:hi]; tok is scratch for the document's lowercased tokens."""
    counts[:] = 0
    s0 = s1 = s2 = 0  # starts of the last three tokens in tok (s2 = newest)
    e0 = e1 = e2 = 0  # their ends
    ntok = 0
    m = 0  # features counted
    n = 0  # end of the tokens kept in tok
    p = lo
    while True:
        start = n
        p, n = next_token(b, p, hi, tables, tok, n)
        if n == start:
            break
        if n - start < MIN_TOKEN_BYTES:
            n = start  # drop a too-short token
            continue
        s0, e0, s1, e1, s2, e2 = s1, e1, s2, e2, start, n
        ntok += 1
        if ntok >= 3:
            h = fnv1a_span(FNV_OFFSET, tok, s0, e0)
            h = (h ^ _SPACE) * _PRIME
            h = fnv1a_span(h, tok, s1, e1)
            h = (h ^ _SPACE) * _PRIME
            h = fnv1a_span(h, tok, s2, e2)
            add_votes(counts, h)
            m += 1
    if ntok == 1:
        return fnv1a_span(FNV_OFFSET, tok, s2, e2)
    if ntok == 2:
        add_votes(counts, fnv1a_span(FNV_OFFSET, tok, s1, e1))
        add_votes(counts, fnv1a_span(FNV_OFFSET, tok, s2, e2))
        m = 2
    return majority_bits(counts, m)


@kernel()
def _all(
    b: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    tables: TokenTables,
    tok: npt.NDArray[np.uint8],
    out: U64,
) -> None:
    counts = np.zeros(64, dtype=np.int64)
    for d in range(len(offsets) - 1):
        out[d] = _doc(b, offsets[d], offsets[d + 1], tables, tok, counts)


@cache
def _tables() -> TokenTables:
    """fingerprint's tokenizer: Go letters and digits, Go's lowercase."""
    return token_tables(_token_ranges(), go_lower_table())


def simhash_batch(texts: Sequence[str | bytes]) -> U64:
    """``Compute`` of every text, as a uint64 array in input order (compiled with numba).

    Args:
        texts: ``str`` or ``bytes`` documents (bytes are read as Go reads a string).

    Returns:
        A uint64 array of shape ``(len(texts),)``; element d equals ``simhash(texts[d])``.

    Notes:
        One pass per document over its UTF-8 bytes: Go decoding, table lookups for the
        letter/digit test and the lowercase, FNV-1a of each 3-token window straight from the
        lowercased token bytes, and the bit counts. Memory is the packed batch plus a scratch
        buffer of twice the longest document (a lowercased rune is at most 1.5x its bytes).
    """
    buf, offsets = pack_utf8(texts)
    out = np.zeros(len(texts), dtype=np.uint64)
    _all(buf, offsets, _tables(), token_scratch(offsets), out)
    return out
