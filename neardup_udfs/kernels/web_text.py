"""Web text in, right answers out: the normalization stage before shingling.

Text from text / JSON-lines / parquet input carries no content type, yet much of it is HTML
(whole pages or CMS fragments), and much of it is Chinese, Japanese, Korean or Thai, written
without spaces between words. Left alone, the markup becomes tokens and a CJK sentence one
giant "word", and neither shingles nor near-duplicate scores mean anything. The kernels here
run per document, with no Spark (one small numba kernel):

``looks_like_html``
    a conservative test for "this text is HTML".
``visible_text``
    the text a person reads, from HTML.
``collapse_whitespace``
    whitespace runs to one space, or to one line break.
``cjk_chars`` / ``cjk_bigrams``
    the characters of the scripts written without spaces as tokens of their own, or runs of
    them as overlapping character bigrams.
``normalize_web`` / ``normalize_web_batch``
    the stage: the three in order (``cjk_chars`` by default).

Figures below are MB of input (UTF-8) per CPU-second of one process, i.e. per core, best of
5-9 interleaved rounds, from ``bench/bench_web_text.py`` on the 2-core development machine
while a Spark test run kept it loaded (load average 2.5 to 7.5): they vary by a factor of
up to 1.7 between runs.

HTML detection (``looks_like_html``)
------------------------------------
True when the text contains any of:

1. a doctype for HTML: ``<!doctype html`` (every HTML doctype, HTML5 or one of the old
   public identifiers, starts so);
2. a closing tag of a known HTML element: ``</name``, optional whitespace, ``>``, with an
   opening tag of the same element before it (``<name`` then whitespace, ``/``, ``>`` or
   the end): the real pages of the WARC samples include a search-terms list whose text holds
   an injection probe, ``no-results:</SCRIPT>">'><SC..``, and extracting "visible text" from
   it cut the page short;
3. a line break or rule written as HTML: ``<br>``, ``<br/>``, ``<br />``, and so for ``hr``
   and ``wbr``;
4. an opening tag of a known HTML element whose first attribute has a quoted value:
   ``<name``, whitespace, an attribute name, optional whitespace, ``=``, optional
   whitespace, then ``"`` or ``'``.

Case-insensitive. The known names (:data:`HTML_ELEMENTS`) are every element of the HTML
living standard, the obsolete ones still met on the web (``center``, ``font``, ``tt``, ...),
``svg`` and ``math``. This is the suggested rule (a doctype, ``<!--``, or a known tag name
followed by whitespace, ``/`` or ``>``) with two refinements, both forced by real plain text:

* A known tag name followed by whitespace or ``>`` is not enough. The GnuTLS copyright files
  (5 of the 825 Debian copyright files on the development machine) write obfuscated
  addresses such as ``Ander Juaristi <a at juaristi.eus>`` (``<a `` and ``<code ``); usage
  texts and type signatures use element names as placeholders: ``cp <source> <dest>``,
  ``tool <input> <output>``, ``List<Object>``, ``Map<Option, Data>``, ``if a <b and c> d``.
  None of them has a closing tag, a quoted attribute or a ``<br>``, and an HTML page or
  fragment has at least one (paragraphs ``</p>``, a link ``</a>``, an image ``<img src="``,
  a review's line breaks ``<br />``).
* An HTML comment is not a signal: adwaita-icon-theme's and libflac12's copyright files quote
  ``<!-- ... -->`` comments of SVG and XML sources, and the comments hold license text that
  extraction would delete. A page with comments has tags as well.

Over the plain text of the machine the suggested rule says HTML for 7 of the 825 copyright
files (6 of the 732 of ../shared/data's Debian corpus), this rule for none; 13 of 2000 man
pages against 2; 478 of 3896 other files under /usr/share/doc against 222 (what remains
there is Markdown, changelogs and JavaScript that do hold HTML). Every one of the 85 HTML
pages of the WARC samples and 291 HTML files under /usr/share/doc is detected. Known false
negatives: HTML whose only markup is bare opening tags or unquoted attributes
(``<p>one<p>two``, ``<a href=x>`` with no ``</a>``); ``normalize_web(text, html=True)``
forces extraction when the source is known to be HTML. Known false positives: text that
quotes HTML (Markdown with inline HTML, a tutorial about ``</p>``): it loses the quoted tags,
and angle-bracketed addresses or ``<https://...>`` autolinks in it.

It is one compiled regular expression, searched once, linear in the text. Every alternative
starts with ``<``, and the element names are matched through a trie (``re`` tries the
branches of an alternation one by one: a flat list of the 144 names made a text of 300,000
``</`` take 1.3 s): 0.7-1.5 GB/s on the copyright files; the worst case, a text of nothing
but ``<``, about 2 MB/s.

Visible text (``visible_text``)
-------------------------------
Resiliparse's ``extract_plain_text``: lexbor's HTML5 parser and a C++ serializer, the
``extract`` extra the WARC reader already uses. Measured on the 85 distinct ``text/html``
responses of the WARC samples under ../shared/data (4.25 MB, pages of 0.3 to 780 KB):

==============================================  ===========  ==============================
extractor (same contract)                       MB/s/core    notes
==============================================  ===========  ==============================
resiliparse 2.0.1 ``extract_plain_text``        23 - 41      chosen; 41.3 in the last
                                                             interleaved run
selectolax 1.0.2 (lexbor), blocks from Python   22 - 37      37.0 in that run; its parse
                                                             alone 50 - 107
``normalize_web_batch`` (with resiliparse)      22 - 34      32.9 in that run
==============================================  ===========  ==============================

Resiliparse was as fast or faster in every interleaved run, and does the work in one call:
selectolax's ``text()`` has no block awareness (its separator goes between every two text
nodes: ``foo<b>bar</b>`` would be two words), so a line break must be inserted before and
after each block element from Python (45,000 of them in the sample), which about doubles
selectolax's time; and resiliparse is already a dependency of the project (the ``extract``
extra). The 30 MB/s target is met in most runs; the low figures are from rounds when the
Spark tests held both cores.

The contract (the tests hold it to it, against an extractor of their own built on Python's
``html.parser``; on all 85 sample pages the two agree after ``collapse_whitespace``):

* only the body, as the HTML5 parser builds it: the head, and with it ``<title>``, is
  dropped; a frameset document gives ``""``; a leading byte order mark is ignored (left in,
  the parser would take it for body text and move the head's title into the body);
* dropped with their content: ``script style noscript template iframe frame``, the form
  controls and their labels ``textarea input button select option label``, and the
  embedded media ``img area video audio object embed`` (so no ``alt`` texts and no "your
  browser does not support video" fallbacks). ``figure``, ``figcaption`` and ``svg`` text
  are kept (resiliparse's ``alt_texts=False`` would drop them: hence ``alt_texts=True`` and
  the media skipped by selector);
* comments, doctypes and tags dropped; character references decoded (``&amp;`` to ``&``,
  ``&#233;`` to ``é``, ``&nbsp;`` to U+00A0), legacy ones without ``;`` as HTML5 decodes;
* a line break at every block element boundary (``address article aside blockquote br
  center dd details div dl dt fieldset figcaption figure footer form h1-h6 header hgroup hr
  li main nav ol p pre section table tr ul``), a blank line around ``p`` and ``h1``-``h4``,
  tabs between table cells; inline elements (``b``, ``span``, ``a``, ...) separate nothing:
  ``foo<b>bar</b>`` is ``foobar``;
* whitespace outside ``<pre>`` collapsed as a browser collapses it (ASCII whitespace; U+00A0
  stays), ``<pre>`` as written;
* no CSS is applied: elements hidden by ``hidden``, ``display:none`` or class names stay;
* lone surrogates (``surrogateescape`` decoding) become U+FFFD; NUL characters vanish.

Whitespace (``collapse_whitespace``)
------------------------------------
Whitespace is Unicode's White_Space (:data:`WHITESPACE`, as Go's ``unicode.IsSpace``).
Python's ``str.split`` splits at exactly these plus U+001C..U+001F, ``str.splitlines`` at
:data:`LINE_BREAKS` plus U+001C..U+001E (the information separators; the tests check both),
so a text without U+001C..U+001F is collapsed with the two str methods (35-59 MB/s, the
copyright files included), and one with them by two regular expression substitutions
(10-16 MB/s).

CJK tokens (``cjk_chars``, ``cjk_bigrams``)
-------------------------------------------
Which scheme: on the bench's planted Chinese and Japanese families (bench/bench_web.py, 1,303
and 1,396 same-family pairs, truth = character 4-gram Jaccard of the text without
whitespace), word 3-shingles of single-character tokens (character 3-grams within CJK runs)
put 98.6 % (zh) and 99.4 % (ja) of the pairs with truth >= 0.75 at or above the job's 0.7,
against 89.9 % and 95.2 % for Lucene's bigrams, and follow the truth more closely (mean
absolute difference over pairs with truth >= 0.5: 0.027 and 0.021 against 0.067 and 0.051);
neither scheme lifts a pair with truth < 0.5 to 0.7. Bigram 3-shingles span four
characters, so one changed character changes four of them, as many as in the truth, but
Latin words inside CJK text (commands, names) are one token whatever their length, and an
edit inside one splits it into three tokens: bigram shingles then lose more than the truth.
``cjk_chars`` is the web normalization's scheme; ``cjk_bigrams`` stays for comparison.

semblance's word tokenizer (``shingle.word_tokens``, compiled in ``words_jit``) takes a token
to be a maximal run of token runes (ASCII letters and digits and, from U+0080, the Unicode
15.0 categories L* and N*: ``text.TOKEN_RUN``) and splits on every other character, which it
drops. So a text transform is enough to give it character bigrams: every character the
transform groups is a token rune, so the tokenizer never splits inside a bigram, and the
single spaces the transform puts between bigrams, and between a run and an adjacent letter or
digit of another script, are exactly where it must split. ``word_tokens(cjk_bigrams(t))`` is
``word_tokens(t)`` with every CJK segment of every token replaced by its bigrams (a
one-character segment by itself); the tests check it, with ``word_shingles`` and the compiled
``token_texts_batch``, on every script and on random text. A pipeline that splits words at
spaces (ditto's word shingles) sees the same bigrams.

The grouped characters (:data:`CJK_TOKEN_RANGES`) are the token runes in the blocks of Han
(unified ideographs, extensions A-H, compatibility ideographs, 々〆〇 and the Hangzhou
numerals), Hiragana, Katakana (phonetic extensions, the kana supplements, halfwidth katakana,
and the prolonged sound mark ー), Hangul (syllables, jamo, compatibility and halfwidth
jamo), Thai, Lao, Khmer and Myanmar. Punctuation (。、・「」), symbols and combining marks of
these scripts are not token runes: they end a run as they end a token.

Speed: a numba loop over the UTF-32 code points with a class table of every code point,
after ``str.isascii`` and a regular expression search have let texts without such characters
through untouched: 170-230 MB/s on the troff sources of /usr/share/man/zh_CN. A regular
expression with a replacement function ran at 1.3-11 MB/s: ``re`` tests a character class
with ranges beyond the BMP range by range, and the classes here have hundreds.

Limitation: Thai, Lao, Khmer and Myanmar write many vowels and the tone marks as combining
marks (Mn/Mc), which the tokenizer drops and splits on, so their runs are the letters between
marks (``สวัสดี`` is the runs ``สว`` and ``สด``); bigrams of grapheme clusters would need a
tokenizer that keeps marks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from neardup_udfs.kernels.compiled import kernel
from neardup_udfs.kernels.text import TOKEN_RANGES_GE_0X80, char_class
from neardup_udfs.kernels.utf8 import put_rune

__all__ = [
    "CJK_RANGES",
    "CJK_TOKEN_RANGES",
    "HTML_ELEMENTS",
    "LINE_BREAKS",
    "WHITESPACE",
    "cjk_bigrams",
    "cjk_chars",
    "collapse_whitespace",
    "looks_like_html",
    "normalize_web",
    "normalize_web_batch",
    "visible_text",
]

# --- HTML detection ---------------------------------------------------------------------------

HTML_ELEMENTS: frozenset[str] = frozenset(
    # The HTML living standard (2024) ...
    "a abbr address area article aside audio b base bdi bdo blockquote body br button canvas "
    "caption cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed "
    "fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html i "
    "iframe img input ins kbd label legend li link main map mark menu meta meter nav noscript "
    "object ol optgroup option output p param picture pre progress q rp rt ruby s samp script "
    "search section select slot small source span strong style sub summary sup table tbody td "
    "template textarea tfoot th thead time title tr track u ul var video wbr "
    # ... the obsolete elements still found on the web, and the foreign roots.
    "acronym applet basefont bgsound big blink center dir font frame frameset image isindex "
    "keygen listing marquee menuitem multicol nextid nobr noembed noframes plaintext rb rtc "
    "spacer strike tt xmp svg math".split()
)
"""Element names ``looks_like_html`` recognizes (lowercase)."""


def _trie_pattern(names: frozenset[str]) -> str:
    """A regular expression matching exactly ``names``, as a trie: ``re`` tries the branches
    of an alternation one by one, so a flat list of 144 names would cost 144 attempts at
    every ``<`` of the text; the trie costs about one per character of the name."""
    trie: dict[str, Any] = {}
    for name in names:
        node = trie
        for ch in name:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" not in node:
            return body
        return f"(?:{body})?" if len(branches) == 1 else body + "?"

    return emit(trie)


_NAMES = _trie_pattern(HTML_ELEMENTS)
_HTML_SIGNAL = re.compile(
    "<(?:"
    r"!doctype\s+html"  # 1. a doctype
    rf"|/(?P<close>{_NAMES})\s*>"  # 2. a closing tag of a known element (opened before it)
    r"|(?:br|hr|wbr)\s*/?>"  # 3. a bare or self-closing line break / rule
    rf"|(?:{_NAMES})\s+[^\s\"'<>/=]+\s*=\s*[\"']"  # 4. an opening tag with a quoted attribute
    ")",
    re.IGNORECASE,
)


def looks_like_html(text: str) -> bool:
    """Whether ``text`` is HTML (a page or a fragment), by the rule in the module docstring.

    Notes:
        Conservative: True only on a doctype for HTML, a closing tag of a known HTML
        element after an opening tag of the same element (``<p>..</p>``, ``<a x>..</A >``),
        ``<br>``/``<hr>``/``<wbr>`` (bare or self-closing),
        or an opening tag of a known element with a quoted first attribute
        (``<a href="...``). Plain text that merely uses angle brackets is False: e-mail
        addresses (``Jane Doe <jdoe@example.org>``, ``<a at example.org>``), comparisons,
        ``#include <stdio.h>``, generics (``List<Object>``), usage placeholders
        (``cp <source> <dest>``), HTML comments alone, text quoting a closing tag it never
        opens (a search log holding ``</SCRIPT>">``). One regular-expression scan, plus one
        search per element name whose closing tag occurs: linear in the text.

    Example:
        >>> looks_like_html("Jane Doe <jdoe@example.org>"), looks_like_html("<p>Hi</p>")
        (False, True)
    """
    opened: dict[str, int] = {}  # element -> where its first opening tag starts (-1: none)
    for m in _HTML_SIGNAL.finditer(text):
        name = m.group("close")
        if name is None:
            return True
        name = name.lower()
        if name not in opened:
            first = _opening(name).search(text)
            opened[name] = -1 if first is None else first.start()
        if 0 <= opened[name] < m.start():
            return True
    return False


@cache
def _opening(name: str) -> re.Pattern[str]:
    return re.compile(f"<{re.escape(name)}(?:[\\s/>]|$)", re.IGNORECASE)


# --- visible text -----------------------------------------------------------------------------

# Besides what resiliparse always skips (script, style, iframe, frame, template, and with the
# options below noscript and the form controls), the embedded media: their alt texts and
# fallback content are not what a reader of the page reads. (``alt_texts=False`` would skip
# those too, but also figure, figcaption and svg, whose text is visible.)
_SKIP_ELEMENTS = ("img", "area", "video", "audio", "object", "embed")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _extract(html: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text

    text: str = extract_plain_text(
        html,
        preserve_formatting=True,
        main_content=False,
        list_bullets=False,
        alt_texts=True,
        links=False,
        form_fields=False,
        noscript=False,
        skip_elements=_SKIP_ELEMENTS,
    )
    return text


def visible_text(html: str) -> str:
    """The text a person reads on the page: the contract is in the module docstring.

    Notes:
        Tags, comments and the head dropped; the content of script, style, noscript,
        template, iframe, form controls and embedded media dropped; character references
        decoded; a line break (or two) at every block element boundary and none at inline
        ones. Whitespace is collapsed as a browser collapses it (outside ``<pre>``), not as
        ``collapse_whitespace`` does: apply that next. A leading byte order mark is
        ignored (as HTML decoding drops it). Never raises on a ``str``.

    Example:
        >>> visible_text("<p>Fish &amp; chips</p><p>to<b>day</b></p><script>x()</script>")
        'Fish & chips\\n\\ntoday'
    """
    if html.startswith("\ufeff"):
        # Left in, the parser would take it for body text and move the head into the body.
        html = html[1:]
    try:
        return _extract(html)
    except TypeError:
        # resiliparse refuses a str it cannot encode as UTF-8 (lone surrogates).
        if _SURROGATE.search(html) is None:
            raise
        return _extract(_SURROGATE.sub("\ufffd", html))


# --- whitespace -------------------------------------------------------------------------------

WHITESPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode's White_Space property: 25 characters, the same as Go's ``unicode.IsSpace``.

Python's ``str.isspace`` (so ``str.split`` and ``\\s``) adds U+001C..U+001F, the
information separators, which are not whitespace."""

LINE_BREAKS = "\n\v\f\r\x85\u2028\u2029"
"""The whitespace characters that end a line (UAX #14 classes BK, CR, LF, NL)."""

_WS = "".join(re.escape(c) for c in WHITESPACE)
_BR = "".join(re.escape(c) for c in LINE_BREAKS)
_NB = "".join(re.escape(c) for c in WHITESPACE if c not in LINE_BREAKS)
# The general path. A whole whitespace run holding a line break: it must start a run (the
# lookbehind keeps the search linear on long runs of spaces), then the spaces before the
# first break, the break, and everything after it.
_BREAK_RUN = re.compile(f"(?<![{_WS}])[{_NB}]*+[{_BR}][{_WS}]*+")
# A run of whitespace without a break that is not already a single space.
_SPACE_RUN = re.compile(f"[{_NB}]{{2,}}|[{_NB.replace(' ', '')}]")
# With none of these in the text, Python's str.splitlines and str.split break exactly at
# LINE_BREAKS and WHITESPACE (they also break at U+001C..U+001E, U+001C..U+001F).
_INFO_SEPARATOR = re.compile("[\x1c-\x1f]")


def collapse_whitespace(text: str) -> str:
    """Every run of Unicode whitespace to one space, or to one ``\\n`` if it holds a line break.

    Notes:
        Whitespace is :data:`WHITESPACE` (Unicode White_Space), line breaks are
        :data:`LINE_BREAKS` (``\\r\\n``, ``\\r``, U+2028, ... all count). The result has no
        whitespace at either end, no two whitespace characters in a row, and no whitespace
        other than ``" "`` and ``"\\n"``; every other character is kept, in order.
        Idempotent.

    Example:
        >>> collapse_whitespace("  a \\t b \\r\\n\\n  c\\u3000d ")
        'a b\\nc d'
    """
    if _INFO_SEPARATOR.search(text) is None:
        # Fast path (str methods, no regex): the non-blank lines, each with its words
        # joined by single spaces, joined by single line breaks.
        return "\n".join([line for ln in text.splitlines() if (line := " ".join(ln.split()))])
    return _SPACE_RUN.sub(" ", _BREAK_RUN.sub("\n", text)).strip(WHITESPACE)


# --- CJK bigrams ------------------------------------------------------------------------------

CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3000, 0x303F),  # CJK Symbols and Punctuation: 々〆〇, Hangzhou numerals, kana repeat marks
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana (with the prolonged sound mark U+30FC)
    (0x3130, 0x318F),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xA9E0, 0xA9FF),  # Myanmar Extended-B
    (0xAA60, 0xAA7F),  # Myanmar Extended-A
    (0xAC00, 0xD7AF),  # Hangul Syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F),  # Halfwidth Katakana (with U+FF70)
    (0xFFA0, 0xFFDC),  # Halfwidth Hangul
    (0x1AFF0, 0x1B16F),  # Kana Extended-B, Kana Supplement, Kana Extended-A, Small Kana Ext.
    (0x20000, 0x323AF),  # CJK Extensions B-H and the Compatibility Ideographs Supplement
)
"""Blocks of the scripts written without spaces; only their token runes (L*, N*) are grouped."""


def _intersect(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Intersection of two sorted lists of disjoint inclusive ranges."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


CJK_TOKEN_RANGES: tuple[tuple[int, int], ...] = tuple(_intersect(CJK_RANGES, TOKEN_RANGES_GE_0X80))
"""The characters ``cjk_bigrams`` groups: the token runes of :data:`CJK_RANGES` (inclusive)."""

_OTHER, _CJK, _TOKEN = 0, 1, 2


@cache
def _class_table() -> npt.NDArray[np.uint8]:
    """Class of every code point: 1 grouped (CJK token rune), 2 other token rune, 0 neither."""
    table = np.zeros(0x110000, dtype=np.uint8)
    for lo, hi in ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A), *TOKEN_RANGES_GE_0X80):
        table[lo : hi + 1] = _TOKEN
    for lo, hi in CJK_TOKEN_RANGES:
        table[lo : hi + 1] = _CJK
    return table


# A quick filter, a superset of the grouped characters: exact in the BMP, whole blocks beyond
# it (a character class with many ranges above U+FFFF costs re 5-10 times as much per
# character). The kernel decides exactly.
_MAYBE_CJK = re.compile(
    f"[{char_class(r for r in CJK_TOKEN_RANGES if r[1] <= 0xFFFF)}"
    "\U0001aff0-\U0001b16f\U00020000-\U000323af]"
)


@kernel()
def _cjk_kernel(
    cp: npt.NDArray[np.uint32], table: npt.NDArray[np.uint8], pairs: bool
) -> npt.NDArray[np.uint32]:
    """The code points of ``cjk_bigrams`` (``pairs``) or ``cjk_chars`` of the text with code
    points ``cp``."""
    n = cp.shape[0]
    out = np.empty(3 * n, dtype=np.uint32)
    k = 0
    prev = np.uint8(_OTHER)
    for i in range(n):
        c = cp[i]
        cls = table[c]
        # A space between a grouped character and a token rune of another script, and (chars)
        # between two grouped characters.
        if (
            (cls == _CJK and prev == _TOKEN)
            or (cls == _TOKEN and prev == _CJK)
            or (not pairs and cls == _CJK and prev == _CJK)
        ):
            out[k] = 32
            k += 1
        out[k] = c
        k += 1
        # A grouped character with grouped characters on both sides ends one bigram and
        # starts the next: "中文字" is "中文" + " " + "文字".
        if pairs and cls == _CJK and prev == _CJK and i + 1 < n and table[cp[i + 1]] == _CJK:
            out[k] = 32
            out[k + 1] = c
            k += 2
        prev = cls
    return out[:k]


def cjk_bigrams(text: str) -> str:
    """Every run of CJK (and Thai, Lao, Khmer, Myanmar) token runes to its overlapping bigrams.

    Notes:
        A run is a maximal run of :data:`CJK_TOKEN_RANGES` characters. A run of n >= 2
        characters becomes its n - 1 overlapping bigrams joined by single spaces; a run of
        one character stays itself. A space separates a run from an adjacent letter or digit
        of another script (a token rune outside the ranges), so that no token mixes the two;
        nothing else changes: no space goes next to punctuation, whitespace, symbols or
        marks. Text without a grouped character is returned as it is (the same object).
        ``word_tokens`` of the result is exactly the bigram tokens (module docstring).

    Example:
        >>> cjk_bigrams("abc中文字符def"), cjk_bigrams("中。文")
        ('abc 中文 文字 字符 def', '中。文')
    """
    return _cjk_transform(text, pairs=True)


def cjk_chars(text: str) -> str:
    """Every CJK (and Thai, Lao, Khmer, Myanmar) token rune as a token of its own.

    Notes:
        A single space goes between two adjacent :data:`CJK_TOKEN_RANGES` characters and, as
        in ``cjk_bigrams``, between such a character and an adjacent letter or digit of
        another script; nothing else changes. Text without a grouped character is returned
        as it is (the same object). ``word_tokens`` of the result is ``word_tokens(t)`` with
        every CJK segment of every token split into its characters, so word 3-shingles of it
        are character 3-grams within CJK runs (the web normalization's scheme: module notes).

    Example:
        >>> cjk_chars("abc中文字符def"), cjk_chars("中。文")
        ('abc 中 文 字 符 def', '中。文')
    """
    return _cjk_transform(text, pairs=False)


def _cjk_transform(text: str, pairs: bool) -> str:
    if text.isascii() or _MAYBE_CJK.search(text) is None:
        return text
    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    out = _cjk_kernel(cp, _class_table(), pairs)
    if len(out) == len(cp):  # the kernel only inserts: nothing inserted, nothing changed
        return text
    result: str = out.tobytes().decode("utf-32-le", "surrogatepass")
    return result


# --- the stage --------------------------------------------------------------------------------


def normalize_web(
    text: str, *, html: bool | None = None, cjk: Literal["chars", "bigrams"] | None = "chars"
) -> str:
    """The web normalization of one text: visible text, whitespace collapsed, CJK tokens.

    Notes:
        ``html=True`` extracts the visible text, ``html=False`` never does, ``html=None``
        (the default) does when ``looks_like_html(text)``. Then ``collapse_whitespace``,
        then ``cjk_chars`` (``cjk="chars"``, the default), ``cjk_bigrams`` (``"bigrams"``)
        or nothing (None). A text that does not look like HTML and has no CJK characters
        comes out as ``collapse_whitespace(text)``.

    Example:
        >>> normalize_web("<p>Hello,</p>\\n<p>中文字符</p>")
        'Hello,\\n中 文 字 符'
    """
    if html or (html is None and looks_like_html(text)):
        text = visible_text(text)
    text = collapse_whitespace(text)
    if not cjk:
        return text
    if cjk not in ("chars", "bigrams"):
        raise ValueError(f"cjk must be 'chars', 'bigrams' or None, not {cjk!r}")
    return cjk_chars(text) if cjk == "chars" else cjk_bigrams(text)


def normalize_web_batch(
    texts: Sequence[str | None],
    *,
    html: bool | None = None,
    cjk: Literal["chars", "bigrams"] | None = "chars",
) -> list[str | None]:
    """``normalize_web`` of every text, in order; None stays None (one list in, one out).

    Notes:
        The visible text of the HTML ones is extracted text by text; the whitespace and CJK
        steps run over the whole batch at once in one compiled pass (the same result as
        ``collapse_whitespace`` then ``cjk_chars`` / ``cjk_bigrams`` of each text)."""
    if cjk not in (None, "chars", "bigrams"):
        raise ValueError(f"cjk must be 'chars', 'bigrams' or None, not {cjk!r}")
    present = [
        visible_text(t) if html or (html is None and looks_like_html(t)) else t
        for t in texts
        if t is not None
    ]
    done = iter(_collapsed_batch(present, _CJK_MODES[cjk]))
    return [None if t is None else next(done) for t in texts]


_CJK_MODES = {None: 0, "chars": 1, "bigrams": 2}
_SPACE, _BREAK = 1, 2


@cache
def _space_table() -> npt.NDArray[np.uint8]:
    """Every code point's whitespace class: 2 a line break, 1 other whitespace, 0 neither."""
    table = np.zeros(0x110000, dtype=np.uint8)
    for c in WHITESPACE:
        table[ord(c)] = _BREAK if c in LINE_BREAKS else _SPACE
    return table


def _collapsed_batch(texts: list[str], mode: int) -> list[str]:
    """``collapse_whitespace`` of every text, then (``mode`` 1) ``cjk_chars`` or (2)
    ``cjk_bigrams``, in one kernel call over the batch's UTF-8 bytes."""
    if not texts:
        return []
    joined = "".join(texts).encode("utf-8", "surrogatepass")
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    longest = int(lengths.max())
    out, ends = _collapse_kernel(
        np.frombuffer(joined, dtype=np.uint8), lengths, longest, _space_table(),
        _class_table(), mode,
    )  # fmt: skip
    whole = out.tobytes().decode("utf-8", "surrogatepass")
    return [whole[ends[i] : ends[i + 1]] for i in range(len(texts))]


@kernel()
def _collapse_kernel(b, lengths, longest, space, table, mode):
    """Texts of ``lengths`` code points, one after another in UTF-8 ``b`` (surrogates as
    three bytes): each with whitespace collapsed (a run holding a line break to one
    ``\n``, any other run to one space, none at either end), then the CJK spaces of
    ``_cjk_kernel`` (mode 1 chars, 2 bigrams). The outputs' UTF-8, concatenated, and
    their starts in code points."""
    out = np.empty(3 * b.shape[0] + 8, dtype=np.uint8)
    tmp = np.empty(longest + 1, dtype=np.uint32)
    ends = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    k = 0  # bytes out
    chars = 0  # code points out
    p = 0
    for d in range(lengths.shape[0]):
        m = 0
        run = 0  # 0: no whitespace pending, 1: a space, 2: a line break
        for _ in range(lengths[d]):
            c = np.uint32(b[p])
            if c < 0x80:
                p += 1
            elif c < 0xE0:
                c = ((c & 0x1F) << 6) | (b[p + 1] & 0x3F)
                p += 2
            elif c < 0xF0:
                c = ((c & 0x0F) << 12) | ((b[p + 1] & 0x3F) << 6) | (b[p + 2] & 0x3F)
                p += 3
            else:
                c = (
                    ((c & 0x07) << 18)
                    | ((b[p + 1] & 0x3F) << 12)
                    | ((b[p + 2] & 0x3F) << 6)
                    | (b[p + 3] & 0x3F)
                )
                p += 4
            w = space[c]
            if w != 0:
                if w > run:
                    run = w
                continue
            if run != 0 and m > 0:
                tmp[m] = 10 if run == 2 else 32
                m += 1
            run = 0
            tmp[m] = c
            m += 1
        pairs = mode == 2
        prev = np.uint8(0)
        for i in range(m):
            c = tmp[i]
            if mode != 0:
                cls = table[c]
                if (
                    (cls == 1 and prev == 2)
                    or (cls == 2 and prev == 1)
                    or (not pairs and cls == 1 and prev == 1)
                ):
                    out[k] = 32
                    k += 1
                    chars += 1
            k = put_rune(out, k, c)
            chars += 1
            if mode != 0:
                if pairs and cls == 1 and prev == 1 and i + 1 < m and table[tmp[i + 1]] == 1:
                    out[k] = 32
                    k = put_rune(out, k + 1, c)
                    chars += 2
                prev = cls
        ends[d + 1] = chars
    return out[:k], ends
