"""The web normalization kernels (``neardup_udfs.kernels.web_text``): HTML detection, visible
text, whitespace, CJK bigrams, and the stage that chains them.

The pages in tests/data/web are real ``text/html`` responses of the WARC samples, unchanged:
iana-time-zones.html (http://www.iana.org/time-zones, 2014-01-26) and
iana-reserved-domains.html (http://www.iana.org/domains/reserved, 2014-01-26), both from
../shared/data/crawl/pywb_sample_archive/iana.warc.gz, and data-gov-uk-accessibility.html
(http://data.gov.uk/accessibility-statement, 2014-03-25) from
../shared/data/crawl/ukwa_webarchive_discovery/BL-20140325121225068-00000-32090_opera_8443.warc.gz.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup_udfs.kernels import words_jit
from neardup_udfs.kernels.shingle import word_shingles, word_tokens
from neardup_udfs.kernels.text import TOKEN_RUN, go_is_space
from neardup_udfs.kernels.web_text import (
    CJK_TOKEN_RANGES,
    LINE_BREAKS,
    WHITESPACE,
    cjk_bigrams,
    cjk_chars,
    collapse_whitespace,
    looks_like_html,
    normalize_web,
    normalize_web_batch,
    visible_text,
)

WEB = Path(__file__).resolve().parents[1] / "data" / "web"
PAGES = sorted(WEB.glob("*.html"))
DEBIAN_COPYRIGHTS = sorted(Path("/usr/share/doc").glob("*/copyright"))


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


# --- looks_like_html --------------------------------------------------------------------------

PLAIN = [
    "Jane Doe <jdoe@example.org>",
    "if a < b and c > d",
    "<URL:http://x>",
    "Copyright (C) 2001 Foo <foo@bar.org>",
    "#include <stdio.h>\n#include <string.h>\nint main(void) { return 0; }",
    "List<String> names = new ArrayList<>();",
    # element names as type parameters and placeholders
    "List<Object> xs; Map<Option, Data> m; Vec<Option<Box<T>>> v;",
    "template <typename T> T max(T a, T b);",
    "usage: cp <source> <dest>",
    "usage: tool [-p <p>] <input> <output>",
    "if a <b and c> d",
    "the <html> and <body> elements",
    # obfuscated addresses, as in the GnuTLS copyright files
    "Ander Juaristi <a at juaristi.eus>, Nikos <code at example.net>",
    # an HTML comment alone, as quoted in two Debian copyright files
    " <!-- Seamless texture provided by FreeSeamlessTextures.com -->\n <!-- License: CC -->",
    "cat <<EOF > out.txt",
    # a closing tag never opened: text quoting markup (a real page's search-terms list)
    "/search/apachesolr_search?search=no-results:</SCRIPT>\">'><SC..\n3\n/dataset/x",
    "some text</b> more",
    "x <- c(1, 2); y <= 3; a => b",
    "",
]

HTML = [
    "<!DOCTYPE html><title>x</title>",
    "<!doctype HTML PUBLIC '-//W3C//DTD HTML 4.01//EN'>",
    "<p>Hello</p>",
    "<P>Hello</P >",
    "some <b>text</b> more",
    "text</p><p>more</p>",  # a fragment cut inside its first paragraph
    "line one<br>line two",
    "a<br/>b",
    "a<BR />b",
    "a<hr>b",
    '<a href="http://example.org/">x',
    "<img src='a.png' alt='a'>",
    '<div class = "x">',
    '<meta charset="utf-8">',
    "<html><body>hi</body></html>",
    "<table><tr><td>1</td></tr></table>",
]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_text_is_not_html(text: str) -> None:
    assert not looks_like_html(text)


@pytest.mark.parametrize("text", HTML)
def test_html_is_html(text: str) -> None:
    assert looks_like_html(text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_real_pages_are_html(page: Path) -> None:
    assert looks_like_html(_read(page))


def test_no_copyright_file_is_html() -> None:
    """The suggested rule (a known tag name followed by whitespace or ">", or "<!--") takes
    GnuTLS's "<a at juaristi.eus>" and the comments quoted in adwaita-icon-theme and
    libflac12 for HTML (shipped here: excerpts of the first two, the third whole); none is.
    And every copyright file of this Debian machine."""
    shipped = sorted((WEB / "plain").glob("*.txt"))
    assert len(shipped) == 3 and len(DEBIAN_COPYRIGHTS) > 50
    assert [p for p in shipped + DEBIAN_COPYRIGHTS if looks_like_html(_read(p))] == []


def test_normalize_web_of_a_copyright_file_only_collapses_its_whitespace() -> None:
    checked_default = 0
    sample = sorted((WEB / "plain").glob("*.txt")) + DEBIAN_COPYRIGHTS[::10]
    for p in sample:
        text = _read(p)
        collapsed = collapse_whitespace(text)
        assert normalize_web(text, cjk=None) == collapsed, p
        # most have no CJK character (some credit translators, e.g. perl-base's 唐鳳, a run
        # that cjk_bigrams leaves as it is but cjk_chars splits)
        if not any(_is_cjk(ch) for ch in collapsed):
            assert normalize_web(text) == collapsed, p
            checked_default += 1
    assert checked_default > len(sample) // 2


def test_detection_of_adversarial_text() -> None:
    """Long runs of near-signals (a quadratic search would hit the test timeout)."""
    n = 200_000
    texts = ["<a " * (n // 3), "<a " + " " * n + "x", "<div x" * (n // 6), "</" * (n // 2), "<" * n]
    for text in texts:
        assert not looks_like_html(text)


# --- visible_text -----------------------------------------------------------------------------


def test_hidden_content_is_dropped() -> None:
    html = (
        "<html><head><title>TITLE</title><style>p { color: red }</style>"
        "<script>var SCRIPT = 1;</script></head><body>"
        "<noscript>NOSCRIPT</noscript><template><p>TEMPLATE</p></template>"
        "<p>one</p><script type='text/javascript'>document.write('SCRIPT2')</script>"
        "<style>.x{}</style><!-- COMMENT --><iframe>IFRAME</iframe>"
        "<form><label>LABEL</label><input value=INPUT><textarea>TEXTAREA</textarea>"
        "<select><option>OPTION1<option>OPTION2</select><button>BUTTON</button></form>"
        "<img alt=ALT src=x.png><video>VIDEO</video><object>OBJECT</object>"
        "<p>two</p></body></html>"
    )
    assert collapse_whitespace(visible_text(html)) == "one\ntwo"


def test_figures_and_svg_text_are_kept() -> None:
    html = "<figure><pre>code</pre><figcaption>caption</figcaption></figure><svg><text>S</text>"
    assert collapse_whitespace(visible_text(html)) == "code\ncaption\nS"


def test_character_references_are_decoded() -> None:
    html = "<p>&amp; &lt;b&gt; &quot;q&quot; &#233; &#xE9; &eacute; x&nbsp;y &copy 2014</p>"
    assert visible_text(html) == '& <b> "q" é é é x\xa0y © 2014'
    # &nbsp; is whitespace, collapse_whitespace makes it a space
    assert normalize_web(html) == '& <b> "q" é é é x y © 2014'


BLOCKS = (
    "address article aside blockquote center dd details div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hgroup li main nav ol p pre section ul"
).split()
INLINE = "a abbr b bdi cite code em font i kbd mark q s small span strong sub sup time u".split()


@pytest.mark.parametrize("tag", BLOCKS)
def test_block_elements_break_lines(tag: str) -> None:
    text = visible_text(f"<body>before<{tag}>inside</{tag}>after</body>")
    assert collapse_whitespace(text) == "before\ninside\nafter"


@pytest.mark.parametrize("tag", ["br", "hr"])
def test_void_block_elements_break_lines(tag: str) -> None:
    assert collapse_whitespace(visible_text(f"one<{tag}>two<{tag}/>three")) == "one\ntwo\nthree"


@pytest.mark.parametrize("tag", INLINE)
def test_inline_elements_join(tag: str) -> None:
    assert visible_text(f"<p>one<{tag}>two</{tag}>three</p>") == "onetwothree"


def test_tables_give_a_line_per_row() -> None:
    html = "a<table><tr><th>h1</th><th>h2</th></tr><tr><td>1</td><td>2</td></tr></table>b"
    assert collapse_whitespace(visible_text(html)) == "a\nh1 h2\n1 2\nb"


def test_paragraphs_are_blank_line_apart() -> None:
    assert visible_text("<p>one</p><p>two</p>") == "one\n\ntwo"


def test_whitespace_is_collapsed_as_a_browser_does_except_in_pre() -> None:
    html = "<p>one\n   two <b> three</b></p><pre>  a\n   b</pre>"
    assert visible_text(html) == "one two three\n\n  a\n   b"


def test_odd_inputs() -> None:
    assert visible_text("") == ""
    assert visible_text("plain text, no markup") == "plain text, no markup"
    assert visible_text("<p>a\ud800b</p>") == "a\ufffdb"  # a lone surrogate
    assert visible_text("<frameset><frame src=a.html></frameset>") == ""
    bom = "\ufeff<html><head><title>T</title></head><body><p>body</p></body></html>"
    assert visible_text(bom) == "body"


PARAGRAPHS = [
    "The Time Zone Database (often called tz or zoneinfo) contains code and data.",
    "It is updated periodically to reflect changes made by political bodies.",
]


def test_a_page_and_its_text_normalize_alike() -> None:
    page = "<html><body>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS) + "</body></html>"
    plain = "\n\n".join(PARAGRAPHS)
    assert normalize_web(page) == normalize_web(plain) == "\n".join(PARAGRAPHS)
    # and written as a document with head, scripts, indentation and entities
    full = (
        "<!DOCTYPE html>\n<html>\n <head>\n  <title>Time zones</title>\n"
        "  <script>track();</script>\n </head>\n <body>\n"
        + "".join(
            f"  <div>\n   <p>\n    {p.replace('(', '&#40;')}\n   </p>\n  </div>\n"
            for p in PARAGRAPHS
        )
        + " </body>\n</html>\n"
    )
    assert normalize_web(full) == normalize_web(plain)


class _GroundTruth(HTMLParser):
    """An independent visible-text extractor (Python's tokenizer, no tree construction) for
    the same contract: body text only, the skipped elements' content dropped, a line break
    at each block element boundary, a space at each table cell, whitespace outside <pre>
    collapsed to spaces, character references decoded."""

    BLOCK = frozenset(
        "address article aside blockquote br center dd details div dl dt fieldset figcaption "
        "figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre section "
        "table tr ul".split()
    )
    SKIP = frozenset(
        "head title script style noscript template iframe frame textarea button select "
        "option label video audio object input img area embed".split()
    )
    VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skipping: list[str] = []  # the open skipped elements
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" and "head" in self.skipping:  # an unclosed head ends here
            del self.skipping[self.skipping.index("head") :]
        if tag in self.SKIP:
            if tag not in self.VOID:
                self.skipping.append(tag)
            return
        if self.skipping:
            return
        self.pre += tag == "pre"
        if tag in self.BLOCK:
            self.out.append("\n")
        elif tag in ("td", "th"):
            self.out.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self.skipping and tag in self.BLOCK:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.skipping:
            del self.skipping[len(self.skipping) - 1 - self.skipping[::-1].index(tag) :]
        elif not self.skipping:
            self.pre -= tag == "pre" and self.pre > 0
            if tag in self.BLOCK:
                self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.out.append(data if self.pre else re.sub(r"[ \t\n\r\f]+", " ", data))


def _ground_truth(html: str) -> str:
    parser = _GroundTruth()
    parser.feed(html)
    parser.close()
    return "".join(parser.out)


def test_ground_truth_extractor_sanity() -> None:
    html = "<head><title>t</title></head><p>a &amp; <b>b</b></p><script>x</script><li>c"
    assert collapse_whitespace(_ground_truth(html)) == "a & b\nc"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_visible_text_of_real_pages_matches_an_independent_extractor(page: Path) -> None:
    html = _read(page)
    ours = collapse_whitespace(visible_text(html))
    assert ours == collapse_whitespace(_ground_truth(html))
    assert len(ours) > 1000 and ours.count("\n") > 20
    assert "function(" not in ours and "document.ready" not in ours and "<" not in ours


def test_real_pages_are_present() -> None:
    assert len(PAGES) == 3
    assert sum(p.stat().st_size for p in PAGES) < 60_000


# --- collapse_whitespace ----------------------------------------------------------------------


def test_whitespace_is_unicode_white_space_as_go_has_it() -> None:
    assert len(WHITESPACE) == len(set(WHITESPACE)) == 25
    assert {c for c in map(chr, range(0x10000)) if go_is_space(c)} == set(WHITESPACE)
    assert set(LINE_BREAKS) <= set(WHITESPACE)


def test_python_str_methods_split_where_the_fast_path_assumes() -> None:
    # collapse_whitespace's fast path uses str.split and str.splitlines when the text has no
    # U+001C..U+001F: both must split at exactly WHITESPACE / LINE_BREAKS besides those.
    separators = {chr(c) for c in range(0x1C, 0x20)}
    py_space = {c for c in map(chr, range(0x110000)) if c.isspace()}
    assert py_space == set(WHITESPACE) | separators
    py_breaks = {c for c in py_space if len(f"a{c}b".splitlines()) == 2}
    assert py_breaks == set(LINE_BREAKS) | (separators - {"\x1f"})


def _collapse_oracle(text: str) -> str:
    out: list[str] = []
    run: list[str] = []
    for ch in text:
        if ch in WHITESPACE:
            run.append(ch)
            continue
        if run and out:
            out.append("\n" if any(c in LINE_BREAKS for c in run) else " ")
        run = []
        out.append(ch)
    return "".join(out)


def test_collapse_whitespace_examples() -> None:
    assert collapse_whitespace("  a \t b \r\n\n  c\u3000d ") == "a b\nc d"
    assert collapse_whitespace("a\r\nb\rc\u2028d\x85e\x0bf\x0cg") == "a\nb\nc\nd\ne\nf\ng"
    assert collapse_whitespace("a\xa0\u2009 \u202fb") == "a b"
    assert collapse_whitespace("a \x1c b\x1fc") == "a \x1c b\x1fc"  # not whitespace
    assert collapse_whitespace("a\u200bb\ufeffc") == "a\u200bb\ufeffc"  # nor these
    assert collapse_whitespace(" \n\t ") == ""
    assert collapse_whitespace("") == ""
    assert collapse_whitespace("a" + " " * 100_000 + "b" + " \n" * 50_000) == "a b"


_WS_ALPHABET = list(WHITESPACE) + list("ab中\x1c\x1f\u200b") + ["\r\n"]


@given(st.lists(st.sampled_from(_WS_ALPHABET), max_size=40).map("".join))
def test_collapse_whitespace_matches_its_definition(text: str) -> None:
    got = collapse_whitespace(text)
    assert got == _collapse_oracle(text)
    assert collapse_whitespace(got) == got


_BATCH_ALPHABET = _WS_ALPHABET + list("Zé3\u0e01\u3042\uac00\U00020000\ud800\U0001f600<p>&")


@given(
    st.lists(
        st.one_of(st.none(), st.lists(st.sampled_from(_BATCH_ALPHABET), max_size=30).map("".join)),
        max_size=8,
    ),
    st.sampled_from([None, "chars", "bigrams"]),
)
def test_normalize_web_batch_is_normalize_web_of_each_text(texts: list[str | None], cjk) -> None:  # type: ignore[no-untyped-def]
    """The batch's one compiled pass (whitespace, then CJK) gives each text's own result,
    for every whitespace character, information separators, CJK of every plane, lone
    surrogates and None."""
    got = normalize_web_batch(texts, cjk=cjk)
    assert got == [None if t is None else normalize_web(t, cjk=cjk) for t in texts]


def test_normalize_web_batch_of_real_text_is_normalize_web_of_each() -> None:
    texts = [_read(p) for p in DEBIAN_COPYRIGHTS[::40]] + [_read(p) for p in PAGES[:20]]
    assert texts and normalize_web_batch(texts) == [normalize_web(t) for t in texts]
    with pytest.raises(ValueError, match="cjk must be"):
        normalize_web_batch(["a"], cjk="words")  # type: ignore[arg-type]


@pytest.mark.skipif(not DEBIAN_COPYRIGHTS, reason="no /usr/share/doc/*/copyright here")
def test_collapse_whitespace_of_real_text_matches_its_definition() -> None:
    for p in DEBIAN_COPYRIGHTS[::40]:
        text = _read(p)
        assert collapse_whitespace(text) == _collapse_oracle(text), p


# --- cjk_bigrams ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc中文字符def", "abc 中文 文字 字符 def"),
        ("中。文", "中。文"),
        ("中", "中"),
        ("中文", "中文"),
        ("这是中文。", "这是 是中 中文。"),
        ("Hello 世界!", "Hello 世界!"),
        ("abc中def", "abc 中 def"),  # a single character is kept, apart from Latin letters
        ("第3章", "第 3 章"),
        ("「日本語」と", "「日本 本語」と"),
        # Japanese: hiragana, katakana with the prolonged sound mark, halfwidth, mixed kanji
        ("ひらがな", "ひら らが がな"),
        ("コーヒー", "コー ーヒ ヒー"),
        ("ｶﾀｶﾅ", "ｶﾀ ﾀｶ ｶﾅ"),
        ("東京タワーへ行く", "東京 京タ タワ ワー ーへ へ行 行く"),
        ("カタカナ・テスト", "カタ タカ カナ・テス スト"),  # the middle dot is punctuation
        # Korean: syllables (Korean writes spaces between words), jamo
        ("한국어 텍스트", "한국 국어 텍스 스트"),
        ("ㄱㄴㄷ", "ㄱㄴ ㄴㄷ"),
        # Thai, Lao, Khmer, Myanmar: letters between the combining marks
        ("ภาษาไทย", "ภา าษ ษา าไ ไท ทย"),
        ("สวัสดี", "สวัสดี"),  # ส ว ั ส ด ี: the runs สว and สด
        ("ພາສາລາວ", "ພາ າສ ສາ າລ ລາ າວ"),
        ("ភាសា", "ភាសា"),  # ភ ា ស ា: each letter stands alone between vowel signs
        ("ကက", "ကက"),
        # beyond the BMP: CJK Extension B
        ("𠀀𠀁𠀂", "𠀀𠀁 𠀁𠀂"),
        # not grouped: Latin, Cyrillic, fullwidth Latin, Bopomofo, emoji
        ("Привет мир", "Привет мир"),
        ("ＡＢＣ中文", "ＡＢＣ 中文"),
        ("ㄅㄆ", "ㄅㄆ"),
        ("中🙂文", "中🙂文"),
    ],
)
def test_cjk_bigrams_examples(text: str, expected: str) -> None:
    assert cjk_bigrams(text) == expected


def test_text_without_cjk_is_returned_as_is() -> None:
    for text in ["plain English, unchanged.", "café – naïve “quotes” ½ Ⅻ", "Привет", ""]:
        assert cjk_bigrams(text) is text
    long_english = "The quick brown fox jumps over the lazy dog. " * 10_000
    assert cjk_bigrams(long_english) is long_english


_CJK_STARTS = [lo for lo, _ in CJK_TOKEN_RANGES]


def _is_cjk(ch: str) -> bool:
    i = bisect.bisect_right(_CJK_STARTS, ord(ch)) - 1
    return i >= 0 and ord(ch) <= CJK_TOKEN_RANGES[i][1]


def _is_token_rune(ch: str) -> bool:
    return TOKEN_RUN.fullmatch(ch) is not None


def test_grouped_characters_are_token_runes_of_the_scripts() -> None:
    # every grouped character is a token rune of semblance's tokenizer (the claim rests on it)
    for lo, hi in CJK_TOKEN_RANGES:
        for cp in {lo, (lo + hi) // 2, hi}:
            assert _is_token_rune(chr(cp)), hex(cp)
    grouped = "中々〆〇ひカーｰｶ한ㄱᄀกລကក𠀀丽"
    assert all(_is_cjk(c) for c in grouped)
    not_grouped = "。、・「」゛\u3099\u0e31\u0e48\u17b6\u102baZ9éЖ\uff21ㄅ🙂"
    assert not any(_is_cjk(c) for c in not_grouped)
    for c in grouped:
        assert unicodedata.category(c)[0] in "LN" or ord(c) > 0x2FFFF


def _bigrams_oracle(text: str, chars: bool = False) -> str:
    """cjk_bigrams (cjk_chars with ``chars``) by its definition, one run at a time."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if not _is_cjk(text[i]):
            out.append(text[i])
            i += 1
            continue
        j = i
        while j < len(text) and _is_cjk(text[j]):
            j += 1
        run = text[i:j]
        if chars:
            piece = " ".join(run)
        else:
            piece = run if len(run) == 1 else " ".join(run[k : k + 2] for k in range(len(run) - 1))
        if i > 0 and _is_token_rune(text[i - 1]):
            piece = " " + piece
        if j < len(text) and _is_token_rune(text[j]):
            piece += " "
        out.append(piece)
        i = j
    return "".join(out)


def _bigram_tokens(text: str, chars: bool = False) -> list[str]:
    """What the tokenizer should give on cjk_bigrams(text): its tokens of ``text``, every
    CJK segment of a token replaced by the segment's bigrams (a single character by itself);
    with ``chars``, what it should give on cjk_chars(text): every CJK character a token."""
    out: list[str] = []
    for token in word_tokens(text):
        i = 0
        while i < len(token):
            j = i + 1
            while j < len(token) and _is_cjk(token[j]) == _is_cjk(token[i]):
                j += 1
            seg = token[i:j]
            if _is_cjk(seg[0]) and chars:
                out.extend(seg)
            elif _is_cjk(seg[0]) and len(seg) > 1:
                out.extend(seg[k : k + 2] for k in range(len(seg) - 1))
            else:
                out.append(seg)
            i = j
    return out


MIXED = [
    "abc中文字符def",
    "日本語のテキストとEnglish words、そして数字123。",
    "서울특별시는 대한민국의 수도이다. Seoul2024",
    "ภาษาไทยเป็นภาษาที่มีระดับเสียง",
    "北京是中华人民共和国的首都，也是全国的政治、文化中心。iPhone15发布了",
    "ພາສາລາວ ភាសាខ្មែរ မြန်မာဘာသာ",
    "Ⅻ中½文𝐀字",
]


@pytest.mark.parametrize("text", MIXED)
def test_tokenizer_gives_exactly_the_bigram_tokens(text: str) -> None:
    transformed = cjk_bigrams(text)
    expected = _bigram_tokens(text)
    assert word_tokens(transformed) == expected
    # the compiled tokenizer and the word shingles agree
    buf, offsets = words_jit.token_texts_batch([transformed])
    assert buf.tobytes().decode() == " ".join(expected)
    assert word_shingles(transformed, 3) == word_shingles(" ".join(expected), 3)


_CJK_ALPHABET = list(
    "ab Z09é中文字符日本ひらがなカタカナーｶﾀ한국ㄱภาษไทั่ລາខ្មែរမြန်。、・「」!?,.\n\t\u0301Ⅻ½𠀀𠀁🙂ㄅ"
)


@given(st.lists(st.sampled_from(_CJK_ALPHABET), max_size=40).map("".join))
def test_cjk_bigrams_matches_its_definition_and_the_tokenizer(text: str) -> None:
    transformed = cjk_bigrams(text)
    assert transformed == _bigrams_oracle(text)
    assert word_tokens(transformed) == _bigram_tokens(text)


@given(st.lists(st.sampled_from(_CJK_ALPHABET), max_size=40).map("".join))
def test_cjk_chars_matches_its_definition_and_the_tokenizer(text: str) -> None:
    transformed = cjk_chars(text)
    assert transformed == _bigrams_oracle(text, chars=True)
    assert word_tokens(transformed) == _bigram_tokens(text, chars=True)
    if not any(_is_cjk(c) for c in text):
        assert transformed is text


@pytest.mark.parametrize("text", MIXED)
def test_tokenizer_gives_exactly_the_character_tokens(text: str) -> None:
    transformed = cjk_chars(text)
    expected = _bigram_tokens(text, chars=True)
    assert word_tokens(transformed) == expected
    buf, _ = words_jit.token_texts_batch([transformed])
    assert buf.tobytes().decode() == " ".join(expected)
    assert cjk_chars("abc中文字符def") == "abc 中 文 字 符 def"
    assert cjk_chars("中。文") == "中。文" and cjk_chars("中") == "中"


# --- the stage --------------------------------------------------------------------------------


def test_normalize_web_chains_the_kernels() -> None:
    assert normalize_web("<p>Hello,</p>\n<p>中文字符</p>") == "Hello,\n中 文 字 符"
    assert normalize_web("<p>中文字符</p>", cjk="bigrams") == "中文 文字 字符"
    assert normalize_web("<p>中文字符</p>", cjk=None) == "中文字符"
    with pytest.raises(ValueError, match="cjk must be 'chars', 'bigrams' or None, not 'x'"):
        normalize_web("中文", cjk="x")  # type: ignore[arg-type]
    assert normalize_web("Jane  Doe\n\n<jdoe@example.org>") == "Jane Doe\n<jdoe@example.org>"
    # forced either way
    assert normalize_web("<p>x</p>", html=False) == "<p>x</p>"
    assert normalize_web("x<p>y", html=True) == "x\ny"
    assert normalize_web("a <b and c> d", html=True) == "a d"


def test_normalize_web_batch() -> None:
    texts = ["<p>a</p><p>b</p>", None, "  plain  text ", "日本語", ""]
    assert normalize_web_batch(texts) == ["a\nb", None, "plain text", "日 本 語", ""]
    assert normalize_web_batch([]) == []
    assert normalize_web_batch(texts, cjk=None)[3] == "日本語"
    assert normalize_web_batch(texts, cjk="bigrams")[3] == "日本 本語"


def test_docstring_examples() -> None:
    import doctest

    from neardup_udfs.kernels import web_text

    result = doctest.testmod(web_text)
    assert result.failed == 0 and result.attempted >= 5
