"""ditto's ``Normalize``: strip markup tags, lowercase (Go simple), collapse whitespace."""

from __future__ import annotations

import re

from neardup_udfs.kernels.text import go_collapse_spaces, go_lower, to_go_str

__all__ = ["normalize", "strip_tags"]

# A "<" opens a tag only when the next character is ASCII "/", "!", "?" or a letter.
_TAG_EDGE = re.compile(r"<(?=[/!?A-Za-z])|>")


def strip_tags(text: str) -> str:
    """Remove markup tags exactly as ditto's ``stripTags`` does.

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
    if "<" not in text:
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for m in _TAG_EDGE.finditer(text):
        i = m.start()
        if text[i] == "<":
            if depth == 0:
                out.append(text[pos:i])
            depth += 1
        elif depth > 0:
            depth -= 1
            out.append(" ")
            if depth == 0:
                pos = i + 1
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


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
    return go_collapse_spaces(go_lower(strip_tags(to_go_str(text))))
