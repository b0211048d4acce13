"""The compiled word tokenizer of semblance, fingerprint and anchor: a token is a maximal run
of token runes, each rune lowercased, every other rune a separator.

The three references differ only in their tables (:data:`TokenTables`, made by
:func:`token_tables`): which runes at U+0080 and above are token runes (``flags``:
semblance's frozen L*/N*, Go ``IsLetter || IsDigit``, Rust ``is_alphanumeric``) and how a
rune lowercases (``lower``, and ``multi`` for the lowercases of several runes: Rust's
``to_lowercase``; Go's ``ToLower`` needs none).
ASCII is the same for all three: letters and digits are token runes, ``A-Z`` lowercase to
``a-z``. Text is decoded as Go decodes it (``utf8.decode_rune``); U+FFFD is a separator in
every table.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
from numba import njit

from neardup_udfs.kernels.utf8 import decode_rune, put_rune

__all__ = ["TokenTables", "next_token", "token_scratch", "token_tables"]

TokenTables = tuple[npt.NDArray[np.uint8], npt.NDArray[np.int32], npt.NDArray[np.int32]]
"""A tokenizer's ``(flags, lower, multi)``, as :func:`next_token` reads them."""

_NO_MULTI = np.full((1, 1), -1, dtype=np.int32)


def token_tables(
    ranges: Iterable[tuple[int, int]],
    lower: npt.NDArray[np.int32],
    multi: npt.NDArray[np.int32] = _NO_MULTI,
) -> TokenTables:
    """The tables of the tokenizer whose token runes at U+0080 and above are those of the
    inclusive code point ``ranges`` (ASCII is fixed), and whose lowercase is ``lower``
    (indexed by code point) with the several-rune lowercases in the rows of ``multi`` (none by
    default)."""
    flags = np.zeros(0x110000, dtype=np.uint8)
    for lo, hi in ranges:
        flags[lo : hi + 1] = 1
    return flags, lower, multi


def token_scratch(offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """Room for the lowercased tokens of the longest text of a packed batch (text d is
    ``offsets[d]:offsets[d + 1]``): a lowercased rune is at most 1.5 times its bytes."""
    longest = int(np.diff(offsets).max()) if len(offsets) > 1 else 0
    return np.empty(2 * longest + 8, dtype=np.uint8)


@njit(inline="always")
def next_token(
    b: npt.NDArray[np.uint8],
    p: int,
    end: int,
    tables: TokenTables,
    tok: npt.NDArray[np.uint8],
    n: int,
) -> tuple[int, int]:
    """The first token of ``b[p:end]``, lowercased, written as UTF-8 at ``tok[n:]``.

    Returns ``(p, n)``: where the rest of the text starts (after the separator that ended the
    token) and the new end of ``tok``; ``n`` unchanged means no token is left (and ``p`` is
    ``end``). With ``tables = (flags, lower, multi)``, a rune ``r >= 0x80`` is a token rune
    iff ``flags[r]``; it lowercases to ``lower[r]`` when that is >= 0, else to the runes of
    row ``-lower[r] - 1`` of ``multi`` (-1 padded). ``tok`` needs room for the lowercase of
    ``b[p:end]``.
    """
    flags, lower, multi = tables
    start = n
    while p < end:
        c = b[p]
        if c < 0x80:
            p += 1
            if 97 <= c <= 122 or 48 <= c <= 57:
                tok[n] = c
                n += 1
                continue
            if 65 <= c <= 90:
                tok[n] = c + 32
                n += 1
                continue
        else:
            r, size = decode_rune(b, p, end)
            p += size
            if flags[r]:
                low = lower[r]
                if low >= 0:
                    n = put_rune(tok, n, low)
                else:
                    for r2 in multi[-low - 1]:
                        if r2 >= 0:
                            n = put_rune(tok, n, r2)
                continue
        if n > start:
            break
    return p, n
