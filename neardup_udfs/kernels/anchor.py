"""anchor-fingerprint (Rust) SimHash: per-document reference, murmur3 kernel and batch kernel.

anchor maps every char that is Rust ``char::is_alphanumeric`` (derived property Alphabetic, or
general category Nd/Nl/No) to its full ``char::to_lowercase`` (``İ`` -> ``i`` + U+0307) and
every other char to a separator, so its tokens are the maximal alphanumeric runs, lowercased,
with no minimum length. Each token is hashed with MurmurHash3 x64_128 (seed 0), of which the
low 64 bits (``h1``) feed a Charikar SimHash with weight 1 per occurrence. ``simhash_bytes``
skips tokenization and hashes every 8-byte window of the raw bytes instead. The Unicode tables
are rustc 1.95's (17.0.0), shipped in ``data/rust_unicode_17.json``.

Input that is not UTF-8: anchor's ``simhash`` takes ``&str``, so it never sees such input. Here
``bytes`` (and ``str`` with lone surrogates, as their 3-byte encodings) are read the way Rust's
``String::from_utf8_lossy`` reads them: one U+FFFD per maximal invalid subpart. U+FFFD is not
alphanumeric, so it only separates tokens; the tokens are therefore the same as under Go-style
decoding (one U+FFFD per invalid byte), which the batch kernel uses.

:func:`tokenize`, :func:`simhash` and :func:`simhash_bytes` are the per-document reference
(murmur3 from the ``mmh3`` package); :func:`simhash_batch`, :func:`simhash_bytes_batch` and
:func:`murmur3_x64_128` are compiled with numba and held to them by the oracle tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

import mmh3
import numpy as np
import numpy.typing as npt
from numba import njit

from neardup_udfs.kernels.compiled import kernel
from neardup_udfs.kernels.data_files import shipped_json
from neardup_udfs.kernels.simhash_jit import add_votes, majority_bits
from neardup_udfs.kernels.text import char_class
from neardup_udfs.kernels.tokenizer import TokenTables, next_token, token_scratch, token_tables
from neardup_udfs.kernels.utf8 import pack_utf8
from neardup_udfs.kernels.xxh64_jit import rotl

__all__ = [
    "UNICODE_VERSION",
    "WINDOW_SIZE",
    "hamming_distance",
    "hamming_weight",
    "murmur3_x64_128",
    "similarity",
    "simhash",
    "simhash_batch",
    "simhash_bytes",
    "simhash_bytes_batch",
    "token_hash",
    "tokenize",
]

U64 = npt.NDArray[np.uint64]

WINDOW_SIZE = 8
"""``simhash_bytes`` hashes every window of this many consecutive bytes."""


def _data() -> dict[str, Any]:
    return shipped_json("rust_unicode_17.json")


UNICODE_VERSION: str = _data()["unicode_version"]

_ALNUM: tuple[tuple[int, int], ...] = tuple(
    (int(a), int(b)) for a, b in _data()["alphanumeric_ranges"]
)
_LOWER: dict[int, str] = {
    int(cp): "".join(chr(c) for c in low) for cp, low in _data()["to_lowercase_map"]
}


_ALNUM_RUN = re.compile(f"[{char_class(_ALNUM)}]+")


def _as_rust_str(text: str | bytes) -> str:
    """The ``&str`` anchor would see: bytes decoded like ``String::from_utf8_lossy``."""
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text).decode("utf-8", "replace")
    if not isinstance(text, str):
        raise TypeError(f"expected str or bytes, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def tokenize(text: str | bytes) -> list[str]:
    """anchor ``tokenize``: the maximal alphanumeric runs, each char fully lowercased.

    Args:
        text: A ``str``, or ``bytes`` decoded as ``String::from_utf8_lossy`` does.

    Returns:
        The tokens in text order, duplicates kept; ``[]`` for empty or separator-only text.

    Notes:
        Alphanumeric is Rust ``char::is_alphanumeric`` of Unicode 17.0.0: Alphabetic (which
        includes Other_Alphabetic marks such as most Indic vowel signs, and circled letters)
        or Nd/Nl/No (``²``, ``½``, ``Ⅻ`` are kept). Marks that are not Alphabetic (U+0301, the
        virama U+094D) split words: ``"e\\u0301te\\u0301"`` -> ``["e", "te"]``. Lowercasing is
        per char and context-free: ``İ`` -> ``"i\\u0307"`` (two chars), ``Σ`` -> ``σ`` even at
        a word end, ``ẞ`` -> ``ß``. Single-char tokens such as ``"a"`` are kept. Invalid
        UTF-8 and lone surrogates become U+FFFD, a separator; ``bytes`` never raise.
    """
    return [run.translate(_LOWER) for run in _ALNUM_RUN.findall(_as_rust_str(text))]


def token_hash(token: str | bytes) -> int:
    """anchor ``hash_token``: low 64 bits (``h1``) of MurmurHash3 x64_128, seed 0, of the UTF-8."""
    data = token.encode("utf-8") if isinstance(token, str) else bytes(token)
    h1: int = mmh3.hash64(data, 0, True, signed=False)[0]
    return h1


def _charikar(hashes: Sequence[int]) -> int:
    counts = [0] * 64
    for h in hashes:
        for i in range(64):
            counts[i] += (h >> i) & 1
    n = len(hashes)
    return sum(1 << i for i in range(64) if 2 * counts[i] > n)


def simhash(text: str | bytes) -> int:
    """anchor ``simhash(text)`` (= ``fingerprint``): the 64-bit SimHash as an unsigned int.

    Notes:
        Each token adds +1 to bit counter i when bit i of :func:`token_hash` is set and -1
        otherwise; output bit i is 1 iff the counter is strictly positive (ties give 0). No
        tokens gives 0; one token gives its hash. ``"Hello, world!"`` and ``"hello world"``
        are equal (``0x41c0210240b98002``). Token order does not matter, only the multiset.
    """
    return _charikar([token_hash(t) for t in tokenize(text)])


def simhash_bytes(data: bytes) -> int:
    """anchor ``simhash_bytes``: SimHash over every 8-byte window of the raw bytes.

    Notes:
        Windows ``data[i : i + 8]`` for ``i = 0 .. len(data) - 8`` are hashed like tokens
        (murmur3 low 64, weight 1); no decoding, so any bytes are accepted. Fewer than 8
        bytes (including empty) gives 0. ``b"abcdefgh"`` gives the hash of its one window.
    """
    raw = bytes(data)
    return _charikar(
        [token_hash(raw[i : i + WINDOW_SIZE]) for i in range(len(raw) - WINDOW_SIZE + 1)]
    )


def hamming_distance(a: int, b: int) -> int:
    """anchor ``hamming_distance`` (= ``distance``): popcount of ``a ^ b``, in [0, 64]."""
    return ((a ^ b) & 0xFFFFFFFFFFFFFFFF).bit_count()


def hamming_weight(x: int) -> int:
    """anchor ``hamming_weight``: the number of set bits of a 64-bit value."""
    return (x & 0xFFFFFFFFFFFFFFFF).bit_count()


def similarity(a: int, b: int) -> float:
    """anchor ``similarity``: ``1.0f32 - (d as f32) / 64.0`` computed in float32.

    Returns:
        The float32 result as a Python float (every value is exactly representable).

    Notes:
        Symmetric, in [0, 1], 1.0 iff ``a == b``; e.g. ``0x1234567890ABCDEF`` vs
        ``0xFEDCBA0987654321``: d = 36, similarity 0.4375.
    """
    d = np.float32(hamming_distance(a, b))
    return float(np.float32(1.0) - d / np.float32(64.0))


_u = np.uint64
_C1 = _u(0x87C37B91114253D5)
_C2 = _u(0x4CF5AD432745937F)
_M1 = _u(0xFF51AFD7ED558CCD)
_M2 = _u(0xC4CEB9FE1A85EC53)
_N1 = _u(0x52DCE729)
_N2 = _u(0x38495AB5)
_FIVE = _u(5)


@njit(inline="always")
def _fmix(k: np.uint64) -> np.uint64:
    k ^= k >> _u(33)
    k *= _M1
    k ^= k >> _u(33)
    k *= _M2
    k ^= k >> _u(33)
    return k


@njit(inline="always")
def _le(b: npt.NDArray[np.uint8], p: int, n: int) -> np.uint64:
    """The n <= 8 bytes at b[p:] as a little-endian integer."""
    v = _u(0)
    for i in range(n):
        v |= _u(b[p + i]) << _u(8 * i)
    return v


@kernel()
def _murmur(b: npt.NDArray[np.uint8], lo: int, hi: int) -> tuple[np.uint64, np.uint64]:
    """MurmurHash3 x64_128 with seed 0 of b[lo:hi]: (h1, h2), the u128 being h2 << 64 | h1."""
    h1 = _u(0)
    h2 = _u(0)
    p = lo
    while p + 16 <= hi:
        k1 = _le(b, p, 8)
        k2 = _le(b, p + 8, 8)
        h1 ^= rotl(k1 * _C1, 31) * _C2
        h1 = (rotl(h1, 27) + h2) * _FIVE + _N1
        h2 ^= rotl(k2 * _C2, 33) * _C1
        h2 = (rotl(h2, 31) + h1) * _FIVE + _N2
        p += 16
    rest = hi - p
    if rest > 8:
        h2 ^= rotl(_le(b, p + 8, rest - 8) * _C2, 33) * _C1
    if rest > 0:
        h1 ^= rotl(_le(b, p, min(rest, 8)) * _C1, 31) * _C2
    n = _u(hi - lo)
    h1 ^= n
    h2 ^= n
    h1 += h2
    h2 += h1
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 += h2
    h2 += h1
    return h1, h2


@kernel()
def _doc(
    b: npt.NDArray[np.uint8],
    lo: int,
    hi: int,
    tables: TokenTables,
    tok: npt.NDArray[np.uint8],
    counts: npt.NDArray[np.int64],
) -> np.uint64:
    """anchor ``simhash`` of b[lo:hi]; tok is scratch for the token being built."""
    counts[:] = 0
    m = 0
    p = lo
    while True:
        p, n = next_token(b, p, hi, tables, tok, 0)
        if n == 0:
            break
        h1, _ = _murmur(tok, 0, n)
        add_votes(counts, h1)
        m += 1
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


@kernel()
def _bytes_all(b: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], out: U64) -> None:
    counts = np.zeros(64, dtype=np.int64)
    for d in range(len(offsets) - 1):
        counts[:] = 0
        m = 0
        for i in range(offsets[d], offsets[d + 1] - 7):
            h1, _ = _murmur(b, i, i + 8)
            add_votes(counts, h1)
            m += 1
        out[d] = majority_bits(counts, m)


@cache
def _tables() -> TokenTables:
    """anchor's tokenizer: Rust alphanumerics, Rust's ``to_lowercase`` (several chars for some)."""
    lower = np.arange(0x110000, dtype=np.int32)
    rows: list[list[int]] = []
    for cp, low in _data()["to_lowercase_map"]:
        if len(low) == 1:
            lower[cp] = low[0]
        else:
            rows.append([int(c) for c in low])
            lower[cp] = -len(rows)
    width = max((len(r) for r in rows), default=1)
    multi = np.full((max(len(rows), 1), width), -1, dtype=np.int32)
    for i, row in enumerate(rows):
        multi[i, : len(row)] = row
    return token_tables(_ALNUM, lower, multi)


def simhash_batch(texts: Sequence[str | bytes]) -> U64:
    """anchor ``simhash`` of every text, as a uint64 array in input order (numba).

    Args:
        texts: ``str`` or ``bytes`` documents.

    Returns:
        A uint64 array of shape ``(len(texts),)``; element d equals ``simhash(texts[d])``.

    Notes:
        One pass per document over its UTF-8 bytes: decoding, the alphanumeric and lowercase
        table lookups, murmur3 of each finished token and the bit counts. Invalid bytes are
        decoded one U+FFFD per byte, which yields the same tokens as the reference's lossy
        decoding (U+FFFD only separates). Scratch is twice the longest document (a
        lowercased char is at most 1.5x its bytes).
    """
    buf, offsets = pack_utf8(texts)
    out = np.zeros(len(texts), dtype=np.uint64)
    _all(buf, offsets, _tables(), token_scratch(offsets), out)
    return out


def simhash_bytes_batch(datas: Sequence[bytes]) -> U64:
    """:func:`simhash_bytes` of every byte string, as a uint64 array (numba)."""
    buf, offsets = pack_utf8(datas)
    out = np.zeros(len(datas), dtype=np.uint64)
    _bytes_all(buf, offsets, out)
    return out


def murmur3_x64_128(data: bytes) -> int:
    """MurmurHash3 x64_128, seed 0, through the compiled kernel: the u128 ``h2 << 64 | h1``.

    Notes:
        Equals ``mmh3.hash128(data, 0, True, signed=False)``; anchor keeps the low 64 bits.
    """
    arr = np.frombuffer(bytes(data), dtype=np.uint8)
    h1, h2 = _murmur(arr, 0, len(arr))
    return (int(h2) << 64) | int(h1)
