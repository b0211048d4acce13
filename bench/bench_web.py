"""Benchmark: web text in, right answers out (HTML pages and CJK text through the dedup job).

    python bench/bench_web.py [--corpus web|zh|ja|all] [--normalize web|none] [--json PATH]
                              [--out DIR] [--threshold T] [--docs N] [--build-only]

Three corpora of planted near-duplicate families, with exact ground truth computed on text
extracted independently of the job (``visible_text`` below, built on ``html.parser``; not
``neardup_udfs.kernels.web_text``):

``web``
    the distinct ``text/html`` responses of the WARC files under ../shared/data/crawl
    (decoded as UTF-8 with replacement, so the few GB2312 / windows-1251 pages keep their
    mojibake; pages whose visible text has at least 80 words and differs from every earlier
    page's). Families: each page itself (its original HTML) with 1-4 near copies of its
    visible text, or alone; and passages of 80-400 words cut from the pages' visible text
    (at line boundaries, at most a third of their page), written as plain text (half of
    them) or in one of the two HTML forms below, with 1-4 near copies, or alone. A copy is
    the visible words edited (a few words substituted, two sentences swapped, a header or
    footer line added, spaces doubled), emitted as plain text, as minimal markup
    (``<html><body><p>..</p></body></html>``) or "re-saved as an archiving crawler saves
    pages": a full HTML document that inlines the largest real ``<style>`` and ``<script>``
    of the crawl (the same for every re-saved document, as in the reported bug where
    unrelated archived pages looked alike), with links rewritten to
    ``http://archive.example/web/...`` and the same archive banner ``<div>`` on top.
``zh`` / ``ja``
    paragraphs of the Debian packages manpages-zh (/usr/share/man/zh_CN, zh_TW: one of the
    two variants of each page) and manpages-ja (/usr/share/man/ja): troff stripped by
    ``troff_paragraphs`` below; paragraphs mostly CJK (at least 5 CJK characters and a
    quarter of the characters other than whitespace); paragraphs found on several pages
    (headings, translation credits) dropped; documents of 200-1,500 characters of
    consecutive paragraphs. Families: a base and 1-4 copies with character edits (a few
    characters substituted, inserted or deleted, two sentences swapped, a line added, a line
    re-wrapped), a third of the copies wrapped in minimal HTML; or a base alone.

A passage or CJK base is skipped when half of its shingles already occur in another page or
another base, so that families rarely overlap (the crawl's own near-duplicate pages do); every
overlap left is in the ground truth anyway.
Document ids are a seeded permutation (the job's ``min_id`` representative is no systematic
family member). Everything is seeded (``--seed``).

Ground truth: web, word 3-shingles of the visible text, tokens the lowercase runs of Unicode
letters and digits (a page whose visible text is mostly CJK: as for CJK); CJK, character
4-grams of the visible text without whitespace. The exact Jaccard of every pair within a
family and of every pair anywhere with J >= 0.5 (an inverted index over prefix-filtered
shingles: no all-pairs loop).

Scores, from the job's ``clusters/`` (parquet ``doc_id``, ``cluster_id``,
``is_representative``; a document is kept iff it is its cluster's representative, removed
iff it is in ``clusters/`` and is not, rejected (and not kept) iff it is absent):

- ``resolved``: of the pairs with J >= threshold + 0.05, the share not both kept;
- ``one_cluster``: of those pairs, the share with both documents in one cluster;
- ``removal_precision``: of the removed documents, the share whose J with their cluster's
  representative (the document kept in their place) is >= 0.5; ``removal_precision_at_t``
  the share >= the threshold; ``removed_unrelated`` the removed documents that share no
  shingle of visible text with their representative, ``removed_unrelated_but_banner`` those
  that share none but the archive banner's (every re-saved document has the banner), by
  kinds (``removed<-representative``);
- ``resolved_by_kinds``: ``resolved`` by the kinds of the pair's two documents.

``--build-only`` writes the corpora (``DIR/corpora/NAME.jsonl``: ``id``, ``text``, the job's
input; ``NAME.meta.jsonl``: family, kind, role, source, edits, visible text;
``NAME.truth.tsv``: the ground-truth pairs) and prints their sizes and pair counts, with no
Spark. Otherwise the corpora are written the same way and the dedup job (``jobs/dedup.py``
``run``, default configuration, ``threshold``) runs over each, once per ``--normalize``
given (repeatable; passed to ``load_config`` as ``normalize=`` only when given, so that the
bench also runs against a job without that setting), into ``DIR/runs/NAME-SETTING``; one
JSON line per corpus and setting. Default DIR: out/bench_web.
"""

from __future__ import annotations

import argparse
import gzip
import html
import itertools
import json
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
CRAWL = SHARED_DATA / "crawl"
MAN_ROOT = Path("/usr/share/man")
DPKG_INFO = Path("/var/lib/dpkg/info")
WORK = ROOT / "out" / "bench_web"

SEED = 20261207
THRESHOLD = 0.7
FLOOR = 0.5  # every pair with J >= FLOOR is in the ground truth
MIN_WORDS = 80  # a page's visible text, at least
PASSAGE_WORDS = (80, 400)
CJK_CHARS = (200, 1500)
TARGET = {"web": 1200, "zh": 1000, "ja": 1000}
CORPORA = ("web", "zh", "ja")
SINGLETON_SHARE = 0.15  # of the family bases that get no copy
MAX_COPIES = 4

# The man page directories and Debian package of each CJK corpus.
MAN_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "zh": ("manpages-zh", ("zh_CN", "zh_TW")),
    "ja": ("manpages-ja", ("ja",)),
}

# --- the independent extractor ----------------------------------------------------------------

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


# --- shingles and Jaccard ---------------------------------------------------------------------

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


# --- documents --------------------------------------------------------------------------------

KINDS = ("page", "plain", "html", "resaved")
HTML_KINDS = frozenset({"page", "html", "resaved"})


@dataclass(frozen=True)
class Doc:
    doc_id: str
    text: str  # what the job reads
    kind: str  # page (an original crawled page) | plain | html (minimal markup) | resaved
    family: str | None  # None: a document with no planted copy
    role: str  # base | copy
    source: str  # the page's URI or the man page's path
    plain: str  # the visible text the builder meant: the lines before rendering
    visible: str  # the visible text extracted from ``text`` (= ``text`` for plain documents)
    edits: tuple[str, ...] = ()


@dataclass
class Corpus:
    name: str
    docs: list[Doc]
    shingles: Callable[[str], set[str]]
    stats: dict[str, Any] = field(default_factory=dict)
    boilerplate: str = ""  # visible text every re-saved document has (the archive banner)

    def families(self) -> dict[str, list[int]]:
        """Family -> the indices of its documents (every family has at least two)."""
        out: dict[str, list[int]] = defaultdict(list)
        for i, d in enumerate(self.docs):
            if d.family is not None:
                out[d.family].append(i)
        return dict(out)

    def pairs_of_families(self) -> list[tuple[int, int]]:
        return [
            (a, b)
            for members in self.families().values()
            for x, a in enumerate(members)
            for b in members[x + 1 :]
        ]


@dataclass(frozen=True)
class Base:
    """A family's source: its lines of visible text, and how its base document is emitted."""

    lines: list[str]
    source: str
    page_html: str | None = None  # an original page: the base document is this HTML


@dataclass(frozen=True)
class Render:
    """How copies are written out as HTML."""

    style: str
    script: str
    banner: str = (
        "This page was archived on 25 March 2014 by the Example Web Archive. "
        "Archived pages may differ from the live site."
    )


# An edit: (the base's lines, rng, the base's source) -> (the copy's lines, the edits' names).
Editor = Callable[[list[str], random.Random, str], tuple[list[str], list[str]]]


def minimal_html(lines: Sequence[str]) -> str:
    body = "".join(f"<p>{html.escape(line, quote=False)}</p>\n" for line in lines)
    return f"<html><body>\n{body}</body></html>"


def _host(source: str) -> str:
    m = re.match(r"[a-z]+://([^/?#]+)", source)
    return m.group(1) if m else "example.org"


def resaved_html(lines: Sequence[str], render: Render, source: str, rng: random.Random) -> str:
    """``lines`` as an archive re-saves a page: the shared stylesheet, script and banner, and
    about one word in 25 turned into a link rewritten to the archive."""
    host = _host(source)
    stamp = f"2014{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 235959):06d}"
    paragraphs = []
    for line in lines:
        words = line.split(" ")
        out = []
        for word in words:
            esc = html.escape(word, quote=False)
            if word and rng.random() < 0.04:
                slug = "-".join(word_tokens(word)) or "page"
                href = f"http://archive.example/web/{stamp}/http://{host}/{slug}"
                esc = f'<a href="{href}">{esc}</a>'
            out.append(esc)
        paragraphs.append("<p>" + " ".join(out) + "</p>")
    title = html.escape(" ".join(lines[0].split()[:8]) if lines else "", quote=False)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{render.style}</style>\n"
        f"<script>{render.script}</script>\n</head>\n<body>\n"
        f'<div id="archive-banner"><a href="http://archive.example/">'
        f"{html.escape(render.banner, quote=False)}</a></div>\n"
        f'<div id="content">\n' + "\n".join(paragraphs) + "\n</div>\n</body>\n</html>"
    )


def _render(
    kind: str, lines: list[str], render: Render, source: str, rng: random.Random
) -> tuple[str, str]:
    """(text, plain) of ``lines`` emitted as ``kind``."""
    if kind == "html":
        return minimal_html(lines), "\n".join(lines)
    if kind == "resaved":
        return resaved_html(lines, render, source, rng), "\n".join([render.banner, *lines])
    return "\n".join(lines), "\n".join(lines)


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    names = list(weights)
    return rng.choices(names, [weights[n] for n in names])[0]


def assemble(
    name: str,
    bases: Iterable[Base],
    edit: Editor,
    render: Render,
    rng: random.Random,
    target: int,
    base_kinds: dict[str, float],
    copy_kinds: dict[str, float],
    shingles: Callable[[str], set[str]],
) -> Corpus:
    """Families from ``bases`` (in order, taken as needed) until ``target`` documents: a base
    document and 1-4 edited copies, or the base alone (SINGLETON_SHARE); ids permuted at
    the end."""
    drafts: list[Doc] = []

    def draft(
        text: str,
        kind: str,
        family: str | None,
        role: str,
        base: Base,
        plain: str,
        edits: Sequence[str] = (),
    ) -> Doc:
        visible = visible_text(text) if kind in HTML_KINDS else text
        return Doc("", text, kind, family, role, base.source, plain, visible, tuple(edits))

    pending = iter(bases)
    n_family = 0
    while len(drafts) < target and (base := next(pending, None)) is not None:
        n_family += 1
        copies = 0 if rng.random() < SINGLETON_SHARE else rng.randint(1, MAX_COPIES)
        copies = min(copies, max(0, target - len(drafts) - 1))
        family = f"{name}-f{n_family:04d}" if copies else None
        if base.page_html is not None:
            kind, text, plain = "page", base.page_html, "\n".join(base.lines)
        else:
            kind = _pick(rng, base_kinds)
            text, plain = _render(kind, base.lines, render, base.source, rng)
        drafts.append(draft(text, kind, family, "base", base, plain))
        for _ in range(copies):
            lines, edits = edit(list(base.lines), rng, base.source)
            kind = _pick(rng, copy_kinds)
            text, plain = _render(kind, lines, render, base.source, rng)
            drafts.append(draft(text, kind, family, "copy", base, plain, edits))
    ids = list(range(len(drafts)))
    rng.shuffle(ids)
    docs = [replace(d, doc_id=f"{name}-{k:05d}") for k, d in zip(ids, drafts, strict=True)]
    docs.sort(key=lambda d: d.doc_id)
    return Corpus(name, docs, shingles)


class _Novelty:
    """Accepts a candidate base unless half of its shingles are already taken (by an
    accepted base, or by another page than its own): no accepted base then has J >= 0.5
    with another, nor with another page."""

    def __init__(self, pages: dict[str, set[str]] | None = None) -> None:
        self.taken: set[str] = set()
        self.owners: dict[str, set[str]] = defaultdict(set)
        for page, sh in (pages or {}).items():
            for s in sh:
                self.owners[s].add(page)
        self.accepted = self.skipped = 0

    def accept(self, sh: set[str], page: str) -> bool:
        if not sh:
            return False
        seen = sum(1 for s in sh if s in self.taken or (self.owners.get(s, {page}) - {page}))
        if 2 * seen >= len(sh):
            return False
        self.taken |= sh
        return True

    def bases(
        self,
        candidates: Iterable[tuple[str, str, list[str]]],
        shingles: Callable[[str], set[str]],
    ) -> Iterable[Base]:
        """The accepted ones of (page key, source, lines) ``candidates``, lazily, counted."""
        for page, source, lines in candidates:
            if self.accept(shingles("\n".join(lines)), page):
                self.accepted += 1
                yield Base(lines, source)
            else:
                self.skipped += 1


def _round_robin(groups: Sequence[Sequence[Any]]) -> Iterable[Any]:
    for depth in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if depth < len(g):
                yield g[depth]


# --- web ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    uri: str
    html: str
    lines: list[str]
    words: int


def warc_files(root: Path = CRAWL) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*.warc*")
        if p.is_file() and not p.name.endswith((".wat.gz", ".wet.gz"))
    )


def warc_html(files: Sequence[Path]) -> list[tuple[str, str]]:
    """(URI, page) of every ``text/html`` response record, decoded as UTF-8 with
    replacement, in file and record order."""
    from warcio.archiveiterator import ArchiveIterator

    out = []
    for path in files:
        with open(path, "rb") as fh:
            try:
                for rec in ArchiveIterator(fh):
                    if rec.rec_type != "response" or rec.http_headers is None:
                        continue
                    ctype = (rec.http_headers.get_header("Content-Type") or "").lower()
                    if not ctype.startswith("text/html"):
                        continue
                    data = rec.content_stream().read()
                    uri = rec.rec_headers.get_header("WARC-Target-URI") or path.name
                    out.append((uri, data.decode("utf-8", "replace")))
            except Exception as e:  # noqa: BLE001 -- a truncated file ends its records
                print(f"[bench_web] {path.name}: {type(e).__name__}: {e}", file=sys.stderr)
    return out


def web_pages(raw: Sequence[tuple[str, str]]) -> list[Page]:
    """The pages with at least MIN_WORDS words of visible text, the first of each text."""
    seen: set[str] = set()
    pages = []
    for uri, page in raw:
        text = visible_text(page)
        words = len(word_tokens(text))
        if words < MIN_WORDS or text in seen:
            continue
        seen.add(text)
        pages.append(Page(uri, page, text.split("\n"), words))
    return pages


_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.I | re.S)
_SCRIPT = re.compile(r"<script\b[^>]*>(.*?)</script\s*>", re.I | re.S)


def largest_inline(pages: Iterable[str], pattern: re.Pattern[str]) -> str:
    """The longest content of ``pattern`` (a ``<style>`` or ``<script>`` element) in
    ``pages`` without a replacement character (ties: the first)."""
    best = ""
    for page in pages:
        for m in pattern.finditer(page):
            body = m.group(1)
            if len(body) > len(best) and "\ufffd" not in body:
                best = body
    return best


def _split_long(lines: Sequence[str], limit: int) -> list[str]:
    out = []
    for line in lines:
        words = line.split(" ")
        out += [" ".join(words[i : i + limit]) for i in range(0, len(words), limit)]
    return out


def passages(page: Page, rng: random.Random) -> list[list[str]]:
    """Consecutive runs of whole lines of ``page``, each of PASSAGE_WORDS words and at most a
    third of the page (so a passage has J < 0.5 with its page); none from short pages."""
    top = min(PASSAGE_WORDS[1], page.words // 3)
    if top < PASSAGE_WORDS[0]:
        return []
    out: list[list[str]] = []
    cur: list[str] = []
    n = 0
    goal = rng.randint(PASSAGE_WORDS[0], top)
    for line in _split_long(page.lines, PASSAGE_WORDS[0]):
        k = len(word_tokens(line))
        if n + k > top:
            cur, n = [], 0
        cur.append(line)
        n += k
        if n >= goal:
            out.append(cur)
            cur, n = [], 0
            goal = rng.randint(PASSAGE_WORDS[0], top)
    return out


_MONTHS = "January February March April May June July August September October November December"
_NAMES = ("admin", "editor", "webmaster", "J. Smith", "the team", "A. Jones")
_SECTIONS = ("News", "About", "Data", "Blog", "Resources", "Help", "Library", "Contact")


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(_MONTHS.split())} {rng.randint(2005, 2014)}"


def _boiler_line(rng: random.Random, host: str) -> str:
    templates = (
        lambda: f"Last updated {_date(rng)}",
        lambda: f"Posted by {rng.choice(_NAMES)} on {_date(rng)}",
        lambda: "Share this page: Email Facebook Twitter LinkedIn",
        lambda: f"Printed from {host} on {_date(rng)}",
        lambda: f"Copyright {rng.randint(2005, 2014)} {host}. All rights reserved.",
        lambda: "Back to top | Skip to main content | Accessibility",
        lambda: f"Home > {rng.choice(_SECTIONS)} > {rng.choice(_SECTIONS)}",
        lambda: f"{rng.randint(2, 250)} comments | Report this page | Print",
    )
    return rng.choice(templates)()


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
WEB_RATES = (0.003, 0.01, 0.02, 0.035, 0.05, 0.08)  # share of words substituted


def _swap_sentences(
    lines: list[str], rng: random.Random, split: Callable[[str], list[str]], joiner: str
) -> bool:
    """Swap two adjacent sentences of a line that has two, else two adjacent lines."""
    multi = [i for i, line in enumerate(lines) if len(split(line)) >= 2]
    if multi:
        i = rng.choice(multi)
        parts = split(lines[i])
        j = rng.randrange(len(parts) - 1)
        parts[j], parts[j + 1] = parts[j + 1], parts[j]
        lines[i] = joiner.join(parts)
        return True
    if len(lines) >= 2:
        j = rng.randrange(len(lines) - 1)
        lines[j], lines[j + 1] = lines[j + 1], lines[j]
        return True
    return False


def _double_spaces(line: str, rng: random.Random) -> str:
    return "".join(c + " " if c == " " and rng.random() < 0.2 else c for c in line)


def web_editor(vocab: Sequence[str]) -> Editor:
    """Edits on visible words (a header or footer line names the source's host)."""

    def edit(lines: list[str], rng: random.Random, source: str) -> tuple[list[str], list[str]]:
        edits: list[str] = []
        while not edits:
            if rng.random() < 0.8:
                words = [line.split(" ") for line in lines]
                slots = [(i, j) for i, w in enumerate(words) for j in range(len(w))]
                k = max(1, round(rng.choice(WEB_RATES) * len(slots)))
                for i, j in rng.sample(slots, min(k, len(slots))):
                    words[i][j] = rng.choice(vocab)
                lines = [" ".join(w) for w in words]
                edits.append(f"substitute:{k}")
            if rng.random() < 0.35 and _swap_sentences(
                lines, rng, lambda s: _SENTENCE_END.split(s), " "
            ):
                edits.append("swap")
            if rng.random() < 0.35:
                host = _host(source)
                if rng.random() < 0.5:
                    lines.insert(0, _boiler_line(rng, host))
                    edits.append("header")
                else:
                    lines.append(_boiler_line(rng, host))
                    edits.append("footer")
        if rng.random() < 0.3:
            lines = [_double_spaces(line, rng) for line in lines]
            edits.append("spaces")
        return lines, edits

    return edit


def build_web(
    raw: Sequence[tuple[str, str]], seed: int = SEED, target: int = TARGET["web"]
) -> Corpus:
    """The web corpus from (URI, HTML) pages (see the module docstring)."""
    rng = random.Random(f"{seed}:web")
    pages = web_pages(raw)
    htmls = [p.html for p in pages]
    render = Render(largest_inline(htmls, _STYLE), largest_inline(htmls, _SCRIPT))
    vocab = sorted({t for p in pages for line in p.lines for t in word_tokens(line)})
    page_sh = {str(i): word_shingles("\n".join(p.lines)) for i, p in enumerate(pages)}
    novelty = _Novelty(page_sh)
    order = list(range(len(pages)))
    rng.shuffle(order)
    whole = [Base(pages[i].lines, pages[i].uri, pages[i].html) for i in order]
    # (page key, source, lines); a URI can name two pages (two captures of one address)
    cut = [[(str(i), pages[i].uri, ps) for ps in passages(pages[i], rng)] for i in order]
    corpus = assemble(
        "web",
        itertools.chain(whole, novelty.bases(_round_robin(cut), word_shingles)),
        web_editor(vocab),
        render,
        rng,
        target,
        base_kinds={"plain": 0.5, "html": 0.25, "resaved": 0.25},
        copy_kinds={"plain": 1, "html": 1, "resaved": 1},
        shingles=web_shingles,
    )
    corpus.stats = {
        "pages": len(pages),
        "passages": novelty.accepted,
        "passages_skipped_overlap": novelty.skipped,
        "style_chars": len(render.style),
        "script_chars": len(render.script),
    }
    corpus.boilerplate = render.banner
    return corpus


# --- CJK ---------------------------------------------------------------------------------------

_SPECIAL = {
    "em": "—",
    "en": "–",
    "hy": "-",
    "mi": "-",
    "bu": "•",
    "co": "©",
    "rg": "®",
    "aq": "'",
    "dq": '"',
    "lq": "“",
    "rq": "”",
    "oq": "‘",
    "cq": "’",
    "sc": "§",
    "de": "°",
    "tm": "™",
    "ti": "~",
    "ha": "^",
    "rs": "\\",
    "ga": "`",
    "ul": "_",
    "<=": "≤",
    ">=": "≥",
    "mu": "×",
    "pl": "+",
    "eq": "=",
    "fo": "«",
    "fc": "»",
    "at": "@",
    "sh": "#",
    "Do": "$",
    "ba": "|",
}
_KEPT_ESCAPE = {
    "-": "-",
    "e": "\\",
    "\\": "\\",
    " ": " ",
    "~": " ",
    "0": " ",
    "'": "'",
    "`": "`",
    ".": ".",
    "[": "[",
    "]": "]",
}
_ESCAPE = re.compile(
    r'\\(?:".*'  # a comment, to the end of the line
    r"|[fF](?:\[[^\]]*\]|\(..|.)"  # font
    r"|s(?:[+-]?\d{1,2}|[+-]?\[[^\]]*\]|[+-]?\(..)"  # size
    r"|[*nmMgkY$](?:\[[^\]]*\]|\(..|[+-]?.)"  # strings, registers, colours, arguments
    r"|\((..)"  # a special character, two letters
    r"|\[([^\]]*)\]"  # a special character, long name
    r"|[hvwlLoxbDNXZRSABC]'[^']*'"  # escapes with a delimited argument
    r"|(.)|$)"
)
_ARG = re.compile(r'"((?:[^"]|"")*)"?|((?:\\.|\S)+)')
_BREAKS = frozenset("PP LP P TP IP HP SH SS sp TH nf fi RS RE Sh Ss Pp Bl El It".split())
_FONT_SPACED = frozenset("B I SM SB SH SS Sh Ss".split())
_NO_TEXT = frozenset("TH UC Dd Dt Os PD AT IX DT".split())  # macros whose arguments are not text
_FONT_JOINED = frozenset("BR BI IB IR RB RI".split())


def troff_text(s: str) -> str:
    """``s`` with its troff escapes removed or replaced by the characters they stand for."""

    def repl(m: re.Match[str]) -> str:
        if m.group(1) is not None or m.group(2) is not None:
            return _SPECIAL.get(m.group(1) or m.group(2), "")
        c = m.group(3)
        if c is None:
            return ""
        return _KEPT_ESCAPE.get(c, "")

    return _ESCAPE.sub(repl, s)


def _join(parts: Sequence[str]) -> str:
    """Pieces of one paragraph as troff fills them: a space between two pieces, none
    between two CJK (non-ASCII) characters."""
    out = ""
    for p in parts:
        p = " ".join(p.split())
        if not p:
            continue
        if out and (out[-1].isascii() or p[0].isascii()):
            out += " "
        out += p
    return out


def troff_paragraphs(source: str) -> list[str]:
    """The paragraphs of a man page's troff source, as filled text.

    Notes:
        Comments and the bodies of ``.de``/``.am``/``.ig`` and of ``.if``/``.ie``/``.el``
        blocks are dropped, as are the other requests, except the text arguments of the
        font and heading macros (``.B``, ``.BR``, ``.SH``, ``.IP`` ...; an unknown macro
        with a capital letter contributes its arguments too). A paragraph ends at
        ``.PP``/``.TP``/``.SH``/``.sp`` ... and at blank lines. Escapes: ``troff_text``.
    """
    paragraphs: list[str] = []
    cur: list[str] = []

    def flush() -> None:
        text = _join(cur)
        if text:
            paragraphs.append(text)
        cur.clear()

    lines = source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            flush()
            continue
        if line[0] not in ".'":
            cur.append(troff_text(line))
            continue
        m = re.match(r"[.'][ \t]*(\S*)[ \t]*(.*)", line)
        name, rest = (m.group(1), m.group(2)) if m else ("", "")
        if name.startswith('\\"') or not name:
            continue
        if name in ("de", "de1", "am", "am1", "ig"):
            words = rest.split()
            ends = words[0:1] if name == "ig" else words[1:2]
            end = ends[0] if ends else "."
            while i < len(lines) and lines[i].rstrip() not in ("..", f".{end}"):
                i += 1
            i += 1
            continue
        if name in ("if", "ie", "el"):
            depth = rest.count("\\{") - rest.count("\\}")
            while depth > 0 and i < len(lines):
                depth += lines[i].count("\\{") - lines[i].count("\\}")
                i += 1
            continue
        args = [troff_text(u or q.replace('""', '"')) for q, u in _ARG.findall(rest)]
        if name in _BREAKS:
            flush()
        if name == "IP":
            cur.append(args[0] if args else "")
        elif name in _FONT_SPACED:
            cur.append(" ".join(args))
        elif name in _FONT_JOINED:
            cur.append("".join(args))
        elif name[:1].isupper() and name not in _BREAKS and name not in _NO_TEXT:
            cur.append(" ".join(args))
        if name in ("SH", "SS", "Sh", "Ss"):
            flush()
    flush()
    return paragraphs


def man_files(corpus: str, base: Path = MAN_ROOT) -> list[Path]:
    """The man pages of ``corpus``'s Debian package under ``base`` (dpkg's file list when
    ``base`` is the system's man directory, else every ``.gz`` file under its language
    directories), symbolic links left out, sorted."""
    package, dirs = MAN_SOURCES[corpus]
    listing = DPKG_INFO / f"{package}.list"
    if base == MAN_ROOT and listing.exists():
        roots = tuple(str(base / d) + "/" for d in dirs)
        paths = [Path(p.strip()) for p in listing.read_text().splitlines()]
        files = [p for p in paths if str(p).startswith(roots) and p.name.endswith(".gz")]
    else:
        files = [p for d in dirs for p in (base / d).rglob("*.gz")]
    return sorted(p for p in files if p.is_file() and not p.is_symlink())


def _page_key(path: Path) -> tuple[str, str]:
    return path.parent.name, path.name  # (man1, ls.1.gz): the same page in zh_CN and zh_TW


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[。．！？!?])", text)
    return [p for p in parts if p]


def _chunks(paragraph: str, limit: int) -> list[str]:
    """``paragraph`` cut at sentence ends into pieces of at most ``limit`` characters."""
    if len(paragraph) <= limit:
        return [paragraph]
    out, cur = [], ""
    for s in _sentences(paragraph):
        while len(s) > limit:
            out.append(s[:limit])
            s = s[limit:]
        if len(cur) + len(s) > limit:
            out.append(cur)
            cur = ""
        cur += s
    return [c for c in [*out, cur] if c]


@dataclass(frozen=True)
class ManDocs:
    """Candidate documents of man pages: per page (in page order), lists of lines."""

    pages: list[tuple[str, list[list[str]]]]
    paragraphs: list[str]  # every kept paragraph, for the "line added" edit
    chars: list[str]  # the CJK characters of those paragraphs, sorted


def _mostly_cjk(paragraph: str) -> bool:
    """At least 5 CJK characters, and a quarter of the characters other than whitespace."""
    n = cjk_count(paragraph)
    return n >= 5 and 4 * n >= len("".join(paragraph.split()))


def man_documents(files: Sequence[Path], seed: int = SEED, corpus: str = "zh") -> ManDocs:
    """Documents of CJK_CHARS characters from the paragraphs (``_mostly_cjk``, not repeated
    on another page) of one variant of each page of ``files``."""
    rng = random.Random(f"{seed}:{corpus}:man")
    variants: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for p in files:
        variants[_page_key(p)].append(p)
    chosen = [rng.choice(sorted(v)) for _, v in sorted(variants.items())]
    per_page: list[tuple[Path, list[str]]] = []
    occurs: Counter[str] = Counter()
    for path in chosen:
        source = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        paras = [p for p in troff_paragraphs(source) if _mostly_cjk(p)]
        per_page.append((path, paras))
        occurs.update(set(paras))
    lo, hi = CJK_CHARS
    pages = []
    kept: list[str] = []
    for path, paras in per_page:
        docs: list[list[str]] = []
        cur: list[str] = []
        goal = rng.randint(lo, 900)
        for para in paras:
            if occurs[para] > 1:
                continue
            kept.append(para)
            for piece in _chunks(para, hi):
                if cur and len("\n".join([*cur, piece])) > hi:  # it does not fit
                    if len("\n".join(cur)) >= lo:
                        docs.append(cur)
                    cur = []
                cur.append(piece)
                if len("\n".join(cur)) >= goal:
                    docs.append(cur)
                    cur = []
                    goal = rng.randint(lo, 900)
        pages.append((str(path), docs))
    chars = sorted({c for p in kept for c in _CJK.findall(p)})
    return ManDocs(pages, kept, chars)


CJK_RATES = (0.003, 0.01, 0.02, 0.03, 0.05)  # share of characters edited


def cjk_editor(paragraphs: Sequence[str], chars: Sequence[str]) -> Editor:
    """Character edits on the lines."""

    def edit(lines: list[str], rng: random.Random, source: str) -> tuple[list[str], list[str]]:
        edits: list[str] = []
        while not edits:
            if rng.random() < 0.8:
                text = "\n".join(lines)
                spots = [i for i, c in enumerate(text) if not c.isspace()]
                k = max(1, round(rng.choice(CJK_RATES) * len(spots)))
                chosen = sorted(rng.sample(spots, min(k, len(spots))), reverse=True)
                buf = list(text)
                for i in chosen:  # from the end, so earlier positions stay valid
                    op = rng.random()
                    if op < 0.5:
                        buf[i] = rng.choice(chars)
                    elif op < 0.75:
                        buf.insert(i, rng.choice(chars))
                    else:
                        del buf[i]
                lines = [ln for ln in "".join(buf).split("\n") if ln.strip()]
                edits.append(f"chars:{k}")
            if rng.random() < 0.35 and _swap_sentences(lines, rng, _sentences, ""):
                edits.append("swap")
            if rng.random() < 0.3:
                sentence = rng.choice(_sentences(rng.choice(paragraphs)))[:60]
                lines.insert(rng.choice((0, len(lines))), sentence)
                edits.append("line")
        if rng.random() < 0.3:
            i = rng.randrange(len(lines))
            if len(lines[i]) > 2:
                j = rng.randrange(1, len(lines[i]))
                lines[i : i + 1] = [lines[i][:j], lines[i][j:]]
                edits.append("rewrap")
        return lines, edits

    return edit


def build_cjk(
    name: str, files: Sequence[Path], seed: int = SEED, target: int | None = None
) -> Corpus:
    """The ``zh`` or ``ja`` corpus from man page files (see the module docstring)."""
    target = TARGET[name] if target is None else target
    rng = random.Random(f"{seed}:{name}")
    man = man_documents(files, seed, name)
    groups = [[(src, src, lines) for lines in docs] for src, docs in man.pages]
    rng.shuffle(groups)
    novelty = _Novelty()
    corpus = assemble(
        name,
        novelty.bases(_round_robin(groups), char_shingles),
        cjk_editor(man.paragraphs, man.chars),
        Render("", ""),
        rng,
        target,
        base_kinds={"plain": 1.0},
        copy_kinds={"plain": 2, "html": 1},
        shingles=char_shingles,
    )
    corpus.stats = {
        "man_pages": len(man.pages),
        "candidates": sum(len(d) for _, d in man.pages),
        "bases": novelty.accepted,
        "bases_skipped_overlap": novelty.skipped,
    }
    return corpus


# --- ground truth -----------------------------------------------------------------------------


@dataclass
class Truth:
    sets: list[frozenset[int]]  # each document's shingles (as ids)
    pairs: dict[tuple[int, int], float]  # (i, j), i < j: every family pair, every J >= floor
    floor: float
    boilerplate: frozenset[int] = frozenset()  # the shingles of ``Corpus.boilerplate``

    def at_least(self, t: float) -> list[tuple[int, int]]:
        if t < self.floor:
            raise ValueError(f"the truth holds the pairs with J >= {self.floor} only")
        return sorted(p for p, j in self.pairs.items() if j >= t)


def similar_pairs(sets: Sequence[frozenset[int]], floor: float) -> dict[tuple[int, int], float]:
    """Every pair (i < j) with exact Jaccard >= ``floor``, by prefix filtering: with the
    shingles of each set in one global order (rarest first), two sets with J >= t share a
    shingle among the first ``|x| - ceil(t |x|) + 1`` of each. Candidates from an inverted
    index of those prefixes, then the exact Jaccard of each."""
    df: Counter[int] = Counter()
    for s in sets:
        df.update(s)
    index: dict[int, list[int]] = defaultdict(list)
    out: dict[tuple[int, int], float] = {}
    for x, s in enumerate(sets):
        if not s:
            continue
        ordered = sorted(s, key=lambda t: (df[t], t))
        prefix = ordered[: len(ordered) - math.ceil(floor * len(ordered) - 1e-9) + 1]
        candidates: set[int] = set()
        for t in prefix:
            candidates.update(index[t])
            index[t].append(x)
        for y in candidates:
            j = jaccard(sets[y], s)
            if j >= floor:
                out[(y, x)] = j
    return out


def ground_truth(corpus: Corpus, floor: float = FLOOR) -> Truth:
    ids: dict[str, int] = {}
    sets = [
        frozenset(ids.setdefault(s, len(ids)) for s in sorted(corpus.shingles(d.visible)))
        for d in corpus.docs
    ]
    pairs = similar_pairs(sets, floor)
    for a, b in corpus.pairs_of_families():
        pairs[(a, b)] = jaccard(sets[a], sets[b])
    boiler = frozenset(ids[s] for s in corpus.shingles(corpus.boilerplate) if s in ids)
    return Truth(sets, pairs, floor, boiler)


def truth_counts(corpus: Corpus, truth: Truth, threshold: float) -> dict[str, Any]:
    fam = set(corpus.pairs_of_families())
    strong = truth.at_least(threshold + 0.05)
    floor = truth.at_least(truth.floor)
    return {
        "family_pairs": len(fam),
        f"pairs_j{_tag(truth.floor)}": len(floor),
        f"cross_family_pairs_j{_tag(truth.floor)}": sum(1 for p in floor if p not in fam),
        f"pairs_j{_tag(threshold + 0.05)}": len(strong),
        f"family_pairs_below_j{_tag(truth.floor)}": sum(
            1 for p in fam if truth.pairs[p] < truth.floor
        ),
    }


def _tag(t: float) -> str:
    return f"{round(t * 100):03d}"


# --- scoring ----------------------------------------------------------------------------------


def read_clusters(out: Path) -> dict[str, tuple[str, bool]]:
    """doc_id -> (cluster_id, is_representative) from the job's ``clusters/``."""
    import pyarrow.dataset as ds

    table = ds.dataset(str(out / "clusters"), format="parquet").to_table(
        columns=["doc_id", "cluster_id", "is_representative"]
    )
    cols = table.to_pydict()
    return {
        d: (c, bool(r))
        for d, c, r in zip(
            cols["doc_id"], cols["cluster_id"], cols["is_representative"], strict=True
        )
    }


def score(
    corpus: Corpus,
    truth: Truth,
    out: Path | None,
    threshold: float = THRESHOLD,
    clusters: dict[str, tuple[str, bool]] | None = None,
) -> dict:
    """The figures of one job output directory ``out`` (or of its ``clusters``, restricted to
    this corpus's documents) against ``truth`` (module docstring)."""
    if clusters is None:
        assert out is not None
        clusters = read_clusters(out)
    place = {d.doc_id: i for i, d in enumerate(corpus.docs)}
    n = len(corpus.docs)
    kept = [False] * n
    cluster: list[str | None] = [None] * n
    removed = precise05 = precise_t = unrelated = 0
    unrelated_kinds: Counter[str] = Counter()  # of those sharing at most the banner
    for doc_id, (cid, rep) in clusters.items():
        i = place[doc_id]
        kept[i] = rep
        cluster[i] = cid
        if rep:
            continue
        removed += 1
        r = place[cid]
        a, b = truth.sets[i], truth.sets[r]
        j = jaccard(a, b) if (a or b) and a != b else 1.0
        precise05 += j >= FLOOR
        precise_t += j >= threshold
        shared = a & b
        unrelated += not shared
        if not (shared - truth.boilerplate):
            unrelated_kinds[f"{corpus.docs[i].kind}<-{corpus.docs[r].kind}"] += 1
    strong = truth.at_least(threshold + 0.05)
    both_kept = sum(1 for a, b in strong if kept[a] and kept[b])
    together = sum(1 for a, b in strong if cluster[a] is not None and cluster[a] == cluster[b])
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for a, b in strong:
        key = "+".join(sorted((corpus.docs[a].kind, corpus.docs[b].kind)))
        by_kind[key][0] += 1
        by_kind[key][1] += not (kept[a] and kept[b])
    t = _tag(threshold + 0.05)
    return {
        "kept": sum(kept),
        "removed": removed,
        "rejected": n - len(clusters),
        f"pairs_j{t}": len(strong),
        "resolved": _share(len(strong) - both_kept, len(strong)),
        "one_cluster": _share(together, len(strong)),
        "removal_precision": _share(precise05, removed, 1.0),
        "removal_precision_at_t": _share(precise_t, removed, 1.0),
        "removed_unrelated": unrelated,
        "removed_unrelated_but_banner": sum(unrelated_kinds.values()),
        "removed_unrelated_but_banner_kinds": dict(sorted(unrelated_kinds.items())),
        "resolved_by_kinds": {k: _share(v[1], v[0]) for k, v in sorted(by_kind.items())},
    }


def _share(num: int, den: int, empty: float = 0.0) -> float:
    return round(num / den, 5) if den else empty


# --- corpora, files, runs ---------------------------------------------------------------------


def build(name: str, seed: int = SEED, target: int | None = None) -> Corpus:
    """Corpus ``name`` from the machine's data (the WARC samples; the Debian man pages)."""
    if name == "web":
        files = warc_files()
        if not files:
            raise SystemExit(f"no WARC files under {CRAWL}")
        return build_web(warc_html(files), seed, TARGET["web"] if target is None else target)
    files = man_files(name)
    if not files:
        package = MAN_SOURCES[name][0]
        raise SystemExit(f"no man pages of {package}: apt-get install -y {package}")
    return build_cjk(name, files, seed, target)


def write_corpus(corpus: Corpus, truth: Truth, directory: Path) -> Path:
    """``NAME.jsonl`` (the job's input), ``NAME.meta.jsonl``, ``NAME.truth.tsv``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{corpus.name}.jsonl"
    with (
        open(path, "w", encoding="utf-8") as fh,
        open(directory / f"{corpus.name}.meta.jsonl", "w", encoding="utf-8") as meta,
    ):
        for d in corpus.docs:
            fh.write(json.dumps({"id": d.doc_id, "text": d.text}, ensure_ascii=False) + "\n")
            row = {
                "id": d.doc_id,
                "family": d.family,
                "kind": d.kind,
                "role": d.role,
                "source": d.source,
                "edits": list(d.edits),
                "visible": d.visible,
            }
            meta.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(directory / f"{corpus.name}.truth.tsv", "w", encoding="utf-8") as fh:
        fh.write("a\tb\tjaccard\tsame_family\n")
        for (a, b), j in sorted(truth.pairs.items()):
            da, db = corpus.docs[a], corpus.docs[b]
            same = da.family is not None and da.family == db.family
            fh.write(f"{da.doc_id}\t{db.doc_id}\t{j:.6f}\t{int(same)}\n")
    return path


def describe(corpus: Corpus, truth: Truth, threshold: float) -> dict[str, Any]:
    fams = corpus.families()
    return {
        "corpus": corpus.name,
        "docs": len(corpus.docs),
        "mb": round(sum(len(d.text.encode("utf-8")) for d in corpus.docs) / 1e6, 2),
        "families": len(fams),
        "in_families": sum(len(m) for m in fams.values()),
        "singletons": sum(1 for d in corpus.docs if d.family is None),
        "kinds": dict(sorted(Counter(d.kind for d in corpus.docs).items())),
        **truth_counts(corpus, truth, threshold),
        **corpus.stats,
    }


def run_job(
    corpus_path: Path, out: Path, normalize: str | None, threshold: float | None, **settings: Any
) -> Any:
    """The dedup job's ``run`` over one corpus (Spark started on first use)."""
    global _SPARK
    from lib.spark import start_spark

    from neardup_udfs.config import ConfigError, load_config
    from neardup_udfs.runs import dedup as dedup_job

    if _SPARK is None:
        _SPARK = start_spark()
    extra = {} if normalize is None else {"normalize": normalize}
    try:
        config = load_config(
            None,
            input=str(corpus_path),
            output=str(out),
            input_format="jsonl",
            id_col="id",
            text_col="text",
            threshold=threshold,
            outputs=("docs", "clusters"),
            **extra,
            **settings,
        )
    except ConfigError as e:
        if normalize is None or "normalize" not in str(e):
            raise
        raise SystemExit(f"this job has no normalize={normalize!r} yet: {e}") from e
    return dedup_job.run(_SPARK, config)


_SPARK: Any = None


def plain_runs(work: Path, threshold: float) -> list[dict[str, Any]]:
    """The real plain texts of ../shared/data/text (lib.corpora.load_real's copyright files,
    fortunes and man pages, in one input) deduplicated with ``web`` and with ``none``, MinHash and
    SimHash: how many documents end in another place, and which."""
    from lib.corpora import load_real

    from neardup_udfs.kernels.web_text import looks_like_html

    docs = [d for collection in load_real().values() for d in collection]
    path = work / "corpora" / "plain.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    html = {d for d, t in docs if looks_like_html(t)}
    rows = []
    for method in ("minhash", "simhash"):
        placed = {}
        for setting in ("web", "none"):
            out = work / "runs" / f"plain-{method}-{setting}"
            t = time.perf_counter()
            t_job = threshold if method == "minhash" else None
            s = run_job(path, out, setting, t_job, method=method)
            placed[setting] = (read_clusters(out), round(time.perf_counter() - t, 1), s)
        web, none = placed["web"][0], placed["none"][0]
        moved = sorted(d for d in none if web.get(d) != none[d])
        rows.append(
            {
                "corpus": "plain",
                "method": method,
                "docs": len(docs),
                "looks_like_html": len(html),
                "kept_web": placed["web"][2].kept,
                "kept_none": placed["none"][2].kept,
                "moved": len(moved),
                "moved_html": sum(1 for d in moved if d in html),
                "moved_ids": moved[:20],
                "seconds_web": placed["web"][1],
                "seconds_none": placed["none"][1],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpus", choices=[*CORPORA, "all"], default="all")
    p.add_argument(
        "--normalize",
        choices=["web", "none"],
        action="append",
        help="the job's normalize setting (repeatable: one run each); default: not passed",
    )
    p.add_argument("--json", type=Path, help="write the figures here too")
    p.add_argument("--out", type=Path, default=WORK, help=f"working directory ({WORK})")
    p.add_argument("--threshold", type=float, default=THRESHOLD)
    p.add_argument("--docs", type=int, help="documents per corpus (default: web 1200, CJK 1000)")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--build-only", action="store_true", help="write the corpora; no Spark")
    p.add_argument(
        "--plain",
        action="store_true",
        help="instead: web against none on the real plain texts (bench_dedup's corpora)",
    )
    args = p.parse_args(argv)
    if args.plain:
        rows = plain_runs(args.out, args.threshold)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n")
        return 0
    names = CORPORA if args.corpus == "all" else (args.corpus,)
    floor = min(FLOOR, args.threshold + 0.05)
    results: list[dict[str, Any]] = []
    for name in names:
        t0 = time.perf_counter()
        corpus = build(name, args.seed, args.docs)
        truth = ground_truth(corpus, floor)
        path = write_corpus(corpus, truth, args.out / "corpora")
        info = describe(corpus, truth, args.threshold)
        info["build_seconds"] = round(time.perf_counter() - t0, 1)
        if args.build_only:
            print(json.dumps(info, ensure_ascii=False), flush=True)
            results.append(info)
            continue
        for setting in args.normalize or [None]:
            label = setting or "default"
            out = args.out / "runs" / f"{name}-{label}"
            t1 = time.perf_counter()
            summary = run_job(path, out, setting, args.threshold)
            row = {
                "corpus": name,
                "normalize": label,
                "threshold": args.threshold,
                "docs": len(corpus.docs),
                "job_removed": summary.removed,
                "job_seconds": round(time.perf_counter() - t1, 1),
                **score(corpus, truth, out, args.threshold),
            }
            print(json.dumps(row), flush=True)
            results.append(row)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    if _SPARK is not None:
        _SPARK.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
