"""The web bench's own view of a page, independent of the job (``html.parser``, not
``neardup_udfs.kernels.web_text``): the text a reader reads on it, and the word and character
shingles the ground truth is computed on, with their exact Jaccard."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any

# Not visible text: the head, scripts and styles, templates, frames, and (as the job's
# contract has it) form controls and their labels and the fallback content of media.
_SKIPPED = frozenset(
    "script style noscript template head title iframe frame textarea select option datalist "
    "button label object video audio embed".split()
)
_BLOCKS = frozenset(
    "address article aside blockquote body br caption center dd details dialog dir div dl dt "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li "
    "main menu nav ol p pre section summary table tbody td tfoot th thead tr ul".split()
)


class _Visible(HTMLParser):
    """Collects the text nodes outside skipped elements, with a line break at every block
    element's start and end tag; character references decoded (``convert_charrefs``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.open_skipped: Counter[str] = Counter()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":  # an unclosed head ends where the body starts
            self.open_skipped.pop("head", None)
        if tag in _SKIPPED:
            self.open_skipped[tag] += 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self.open_skipped.get(tag):
            self.open_skipped[tag] -= 1
            if not self.open_skipped[tag]:
                del self.open_skipped[tag]
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.open_skipped:
            self.parts.append(data)


def visible_text(page: str) -> str:
    """The text a reader reads on ``page``: its non-empty lines, whitespace collapsed.

    Notes:
        Dropped with their content: ``head`` (and ``title``), ``script``, ``style``,
        ``noscript``, ``template``, ``iframe``, ``frame``, the form controls ``textarea``,
        ``select``, ``option``, ``datalist``, ``button``, ``label``, and ``object``,
        ``video``, ``audio``, ``embed``; tags and comments dropped; character references
        decoded; a line break at every block element; inline elements separate nothing
        (``foo<b>bar</b>`` is ``foobar``).
    """
    parser = _Visible()
    parser.feed(page)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


_TOKEN = re.compile(r"[^\W_]+")
_CJK_CLASS = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_CJK = re.compile(f"[{_CJK_CLASS}]")


def word_tokens(text: str) -> list[str]:
    """Lowercase runs of Unicode letters and digits."""
    return _TOKEN.findall(text.lower())


def word_shingles(text: str, w: int = 3) -> set[str]:
    tokens = word_tokens(text)
    if len(tokens) < w:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i : i + w]) for i in range(len(tokens) - w + 1)}


def char_shingles(text: str, n: int = 4) -> set[str]:
    chars = "".join(text.split())
    if len(chars) < n:
        return {chars} if chars else set()
    return {chars[i : i + n] for i in range(len(chars) - n + 1)}


def web_shingles(text: str) -> set[str]:
    """The web corpus's truth: ``word_shingles``, or ``char_shingles`` for a page whose
    visible text is mostly CJK (the crawl holds Chinese pages too, and whole clauses are no
    words)."""
    if cjk_count(text) * 2 > len("".join(text.split())):
        return char_shingles(text)
    return word_shingles(text)


def jaccard(a: set[Any] | frozenset[Any], b: set[Any] | frozenset[Any]) -> float:
    """Exact Jaccard; 0.0 when either set is empty."""
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def cjk_count(text: str) -> int:
    return len(_CJK.findall(text))


def cjk_chars(text: str) -> list[str]:
    """The CJK characters of ``text``, in order."""
    return _CJK.findall(text)
