"""The ``web`` corpus: the distinct HTML pages of the WARC files under ../shared/data/crawl,
and passages cut from their visible text, each with edited copies (bench/bench_web.py's
docstring says how)."""

from __future__ import annotations

import itertools
import random
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lib.planted_families import (
    SEED,
    TARGET,
    Base,
    Corpus,
    Editor,
    Novelty,
    Render,
    assemble,
    host_of,
    round_robin,
    swap_sentences,
)
from lib.project import ROOT
from lib.visible_text import visible_text, web_shingles, word_shingles, word_tokens

CRAWL = ROOT.parent / "shared" / "data" / "crawl"
MIN_WORDS = 80  # a page's visible text, at least
PASSAGE_WORDS = (80, 400)


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
            if rng.random() < 0.35 and swap_sentences(
                lines, rng, lambda s: _SENTENCE_END.split(s), " "
            ):
                edits.append("swap")
            if rng.random() < 0.35:
                host = host_of(source)
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
    """The web corpus from (URI, HTML) pages (see bench/bench_web.py's docstring)."""
    rng = random.Random(f"{seed}:web")
    pages = web_pages(raw)
    htmls = [p.html for p in pages]
    render = Render(largest_inline(htmls, _STYLE), largest_inline(htmls, _SCRIPT))
    vocab = sorted({t for p in pages for line in p.lines for t in word_tokens(line)})
    page_sh = {str(i): word_shingles("\n".join(p.lines)) for i, p in enumerate(pages)}
    novelty = Novelty(page_sh)
    order = list(range(len(pages)))
    rng.shuffle(order)
    whole = [Base(pages[i].lines, pages[i].uri, pages[i].html) for i in order]
    # (page key, source, lines); a URI can name two pages (two captures of one address)
    cut = [[(str(i), pages[i].uri, ps) for ps in passages(pages[i], rng)] for i in order]
    corpus = assemble(
        "web",
        itertools.chain(whole, novelty.bases(round_robin(cut), word_shingles)),
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
