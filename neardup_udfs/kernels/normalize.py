"""ditto's ``Normalize``: strip markup tags, lowercase (Go simple), collapse whitespace."""

from __future__ import annotations

import re
from typing import AnyStr

from neardup_udfs.kernels.text import go_collapse_spaces, go_lower, to_go_str

__all__ = ["normalize", "normalize_utf8", "strip_tags"]

# A "<" opens a tag only when the next character is ASCII "/", "!", "?" or a letter.
_TAG_START = "<(?=[/!?A-Za-z])"
_EDGE = {str: re.compile(_TAG_START + "|>"), bytes: re.compile((_TAG_START + "|>").encode())}
_OPEN = {str: re.compile(_TAG_START), bytes: re.compile(_TAG_START.encode())}
# A tag whose body holds no "<" or ">": the common, non-nested case.
_SIMPLE = {
    str: re.compile(_TAG_START + "[^<>]*>"),
    bytes: re.compile((_TAG_START + "[^<>]*>").encode()),
}
_LT = {str: "<", bytes: b"<"}
_SPACE = {str: " ", bytes: b" "}


def strip_tags(text: AnyStr) -> AnyStr:
    """Remove markup tags exactly as ditto's ``stripTags`` does (``str`` or ASCII ``bytes``).

    Notes:
        Tags nest: every tag-opening ``<`` raises the depth and every ``>`` inside a tag
        lowers it and emits one space (so words either side of a tag never fuse). Everything
        inside a tag is dropped. A ``<`` that does not open a tag, and a ``>`` outside any
        tag, are ordinary text. An unclosed tag swallows the rest of the input. No entity
        decoding; ``<script>`` content is kept as text; comments end at the first ``>``.

    Example:
        >>> strip_tags("a<b>c")
        'a c'
    """
    kind = type(text)
    if _LT[kind] not in text:
        return text
    # Fast path: replacing every simple tag by one space is exact unless a tag opening
    # survives it (a nested or unclosed tag), which the replacement cannot create.
    simple = _SIMPLE[kind].sub(_SPACE[kind], text)
    if not _OPEN[kind].search(simple):
        return simple
    out = []
    depth = 0
    pos = 0
    lt = _LT[kind]
    for m in _EDGE[kind].finditer(text):
        i = m.start()
        if text[i : i + 1] == lt:
            if depth == 0:
                out.append(text[pos:i])
            depth += 1
        elif depth > 0:
            depth -= 1
            out.append(_SPACE[kind])
            if depth == 0:
                pos = i + 1
    if depth == 0:
        out.append(text[pos:])
    return text[:0].join(out)


def normalize(text: str | bytes) -> str:
    """ditto ``Normalize(text)``: the canonical form that ditto/2 shingles.

    Notes:
        Bytes are decoded the Go way (one U+FFFD per invalid byte). Then markup tags are
        stripped (:func:`strip_tags`), every rune is lowercased with Go's simple mapping
        (Unicode 15.0.0), and runs of Go whitespace become one ASCII space with none at
        either end. Punctuation, zero-width characters and U+001C..U+001F are kept. Empty,
        whitespace-only and markup-only input give ``""``.

    Example:
        >>> normalize("  <p>Hello   WORLD</p>\\n<a href=x>Link</a>  ")
        'hello world link'
    """
    return normalize_utf8(text).decode("utf-8")


def normalize_utf8(text: str | bytes) -> bytes:
    """:func:`normalize`, encoded as UTF-8 (what the shingle kernels read)."""
    if isinstance(text, str) and text.isascii():
        text = text.encode("ascii")
    if isinstance(text, bytes) and text.isascii():
        # On ASCII, Go's whitespace is bytes.split()'s and Go's lowercase is bytes.lower()'s.
        return b" ".join(strip_tags(text).lower().split())
    return go_collapse_spaces(go_lower(strip_tags(to_go_str(text)))).encode("utf-8")
