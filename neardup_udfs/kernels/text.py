"""Go-compatible text primitives: UTF-8 decoding, simple lowercasing, whitespace fields.

The Go references (ditto, semblance, fingerprint) read text the way Go's ``unicode/utf8`` and
``unicode`` packages do, with the Unicode 15.0.0 tables of Go 1.25. Python's codecs, case
mappings and ``str.split`` differ from Go on invalid bytes, special casing, final sigma and
the information separators U+001C..U+001F, so this module ships Go's tables as data and
emulates Go exactly.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.data_files import shipped_json

__all__ = [
    "GO_DECODE_ERRORS",
    "TOKEN_RANGES_GE_0X80",
    "TOKEN_RUN",
    "UNICODE_VERSION",
    "char_class",
    "go_decode",
    "go_fields",
    "go_is_space",
    "go_lower",
    "go_lower_table",
    "go_str_key",
    "to_go_str",
]

GO_DECODE_ERRORS = "neardup-go-utf8"
"""Name of the codec error handler that decodes like Go: one U+FFFD per invalid byte."""


def _replace_one_byte(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeDecodeError):
        raise err
    return "\ufffd", err.start + 1


codecs.register_error(GO_DECODE_ERRORS, _replace_one_byte)


def _tables() -> dict[str, Any]:
    return shipped_json("go_unicode_15.json")


UNICODE_VERSION: str = _tables()["unicode_version"]

_SPACE_RUNES: frozenset[int] = frozenset(_tables()["is_space_runes"])
_SPACE_CLASS = "".join(re.escape(chr(c)) for c in sorted(_SPACE_RUNES))
_SPACE_RUN = re.compile(f"[{_SPACE_CLASS}]+")

_LOWER: dict[int, int] = {int(a): int(b) for a, b in _tables()["to_lower_map"]}

TOKEN_RANGES_GE_0X80: tuple[tuple[int, int], ...] = tuple(
    (int(a), int(b)) for a, b in _tables()["token_ranges_ge_0x80"]
)
"""semblance's frozen token runes at or above U+0080 (category L* or N*), inclusive ranges."""


def char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The inside of a regular-expression character class (``[...]``) that matches exactly
    the code points of the inclusive ``ranges``."""
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        for lo, hi in ranges
    )


TOKEN_RUN = re.compile(f"[A-Za-z0-9{char_class(TOKEN_RANGES_GE_0X80)}]+")
"""A maximal run of semblance token runes (ASCII letters/digits, or L*/N* at U+0080 and up)."""


# No code point at or above U+20000 has a case mapping in any Unicode version up to 17.0.
_CASED_LIMIT = 0x20000


def _python_lower_disagrees() -> str:
    """Characters where CPython's ``str.lower`` is not Go's simple ``unicode.ToLower``.

    Covers special casing (U+0130 -> two characters), case pairs whose Unicode version
    differs between CPython's ``unicodedata`` and Go 1.25, and the capital sigma, whose
    CPython result depends on context (final sigma).
    """
    bad = {0x03A3} | {cp for cp in _LOWER if cp >= _CASED_LIMIT}
    for cp in range(0x80, _CASED_LIMIT):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if chr(cp).lower() != chr(_LOWER.get(cp, cp)):
            bad.add(cp)
    return "".join(chr(c) for c in sorted(bad))


def _python_split_extra() -> str:
    """Characters ``str.split()`` treats as whitespace and Go does not (U+001C..U+001F)."""
    py = {cp for cp in range(0x3001) if chr(cp).isspace()}
    if not _SPACE_RUNES <= py or any(cp >= 0x3001 for cp in _SPACE_RUNES):
        raise RuntimeError("this Python's str.isspace does not cover Go's unicode.IsSpace")
    return "".join(chr(c) for c in sorted(py - _SPACE_RUNES))


# Fast paths: CPython's C string methods equal Go's tables except on these few characters.
_LOWER_FIXUPS = _python_lower_disagrees()
_SPLIT_EXTRA = _python_split_extra()


def go_decode(data: bytes) -> str:
    """Decode bytes as Go ranges over a string.

    Notes:
        Every byte that does not start a valid shortest-form UTF-8 sequence of a scalar value
        becomes its own U+FFFD and decoding resumes at the next byte; so ``b"\\xe2\\x82"``
        gives two U+FFFD and an encoded surrogate gives three. Valid input decodes as UTF-8.

    Example:
        >>> go_decode(b"a\\xe2\\x82b")
        'a\\ufffd\\ufffdb'
    """
    return data.decode("utf-8", GO_DECODE_ERRORS)


def to_go_str(text: str | bytes) -> str:
    """Return ``text`` as the sequence of runes a Go program would see.

    Notes:
        ``bytes`` are decoded with :func:`go_decode`. A ``str`` is taken as its UTF-8
        encoding: lone surrogates (which no Go string can hold as runes) are encoded as their
        3-byte form and so become three U+FFFD each, as Go does for those bytes.
    """
    if isinstance(text, bytes | bytearray | memoryview):
        return go_decode(bytes(text))
    if not isinstance(text, str):
        raise TypeError(f"expected str or bytes, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return go_decode(text.encode("utf-8", "surrogatepass"))
    return text


def go_str_key(s: str) -> bytes:
    """A sort key that orders strings as Go orders them: by their bytes, the UTF-8 encoding
    (characters smuggled in by ``surrogateescape`` as the raw bytes they stand for, other lone
    surrogates as their 3-byte form)."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass")


def go_lower(text: str) -> str:
    """Lowercase every rune with Go's simple ``unicode.ToLower`` (Unicode 15.0.0).

    Notes:
        One rune in, one rune out: no special casing (``İ`` -> ``i``), no final sigma
        (``Σ`` -> ``σ`` everywhere). Runes without a lowercase mapping are unchanged.

    Example:
        >>> go_lower("ΣΟΦΟΣ İ")
        'σοφοσ i'
    """
    if text.isascii() or not any(ch in text for ch in _LOWER_FIXUPS):
        return text.lower()
    return text.translate(_LOWER)


def go_lower_table() -> npt.NDArray[np.int32]:
    """Go's simple lowercase of every code point, as an int32 array indexed by code point."""
    table = np.arange(0x110000, dtype=np.int32)
    keys = np.fromiter(_LOWER.keys(), dtype=np.int64, count=len(_LOWER))
    table[keys] = np.fromiter(_LOWER.values(), dtype=np.int32, count=len(_LOWER))
    return table


def go_is_space(ch: str) -> bool:
    """Go's ``unicode.IsSpace`` for one character (exactly 25 runes are spaces)."""
    return len(ch) == 1 and ord(ch) in _SPACE_RUNES


def go_fields(text: str) -> list[str]:
    """Split on runs of Go ``unicode.IsSpace`` runes, dropping empty fields (``strings.Fields``).

    Notes:
        Unlike ``str.split()``, U+001C..U+001F, U+200B and U+FEFF are not separators.
    """
    if any(ch in text for ch in _SPLIT_EXTRA):
        return [f for f in _SPACE_RUN.split(text) if f]
    return text.split()


def go_collapse_spaces(text: str) -> str:
    """``strings.Join(strings.Fields(text), " ")``: runs of Go spaces become one ASCII space.

    Notes:
        The result has no leading or trailing space; whitespace-only input gives ``""``.
    """
    return " ".join(go_fields(text))
