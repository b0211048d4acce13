"""ditto's ``Normalize``: strip markup tags, lowercase (Go simple), collapse whitespace."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, AnyStr

from neardup_udfs.kernels.text import go_collapse_spaces, go_lower, to_go_str

__all__ = ["normalize", "normalize_utf8", "strip_tags"]

# A "<" opens a tag only when the next character is ASCII "/", "!", "?" or a letter.
_TAG_START = "<(?=[/!?A-Za-z])"


@dataclass(frozen=True)
class _Syntax:
    """Tag patterns for one string type (str or bytes)."""

    edge: re.Pattern[Any]  # a tag opening or any ">"
    opening: re.Pattern[Any]  # a tag opening
    simple: re.Pattern[Any]  # a whole tag whose body holds no "<" or ">"
    lt: Any
    space: Any

    @classmethod
    def of(cls, conv: Callable[[str], Any]) -> _Syntax:
        return cls(
            re.compile(conv(_TAG_START + "|>")),
            re.compile(conv(_TAG_START)),
            re.compile(conv(_TAG_START + "[^<>]*>")),
            conv("<"),
            conv(" "),
        )


_SYNTAX = {str: _Syntax.of(str), bytes: _Syntax.of(str.encode)}


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
    syn = _SYNTAX[type(text)]
    if syn.lt not in text:
        return text
    # Fast path: replacing every simple tag by one space is exact unless a tag opening
    # survives it (a nested or unclosed tag), which the replacement cannot create.
    simple: AnyStr = syn.simple.sub(syn.space, text)
    if not syn.opening.search(simple):
        return simple
    out: list[AnyStr] = []
    depth = 0
    pos = 0
    for m in syn.edge.finditer(text):
        i = m.start()
        if text[i : i + 1] == syn.lt:
            if depth == 0:
                out.append(text[pos:i])
            depth += 1
        elif depth > 0:
            depth -= 1
            out.append(syn.space)
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
