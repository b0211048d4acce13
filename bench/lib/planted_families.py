"""Corpora of planted near-duplicate families (web, zh, ja): documents, the families drawn
from their bases (a base and 1-4 edited copies, or the base alone) and how a copy is written out
(plain text, minimal HTML, or re-saved as an archiving crawler saves pages)."""

from __future__ import annotations

import html
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lib.visible_text import visible_text, word_tokens

SEED = 20261207
TARGET = {"web": 1200, "zh": 1000, "ja": 1000}
CORPORA = ("web", "zh", "ja")
SINGLETON_SHARE = 0.15  # of the family bases that get no copy
MAX_COPIES = 4

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


def host_of(source: str) -> str:
    m = re.match(r"[a-z]+://([^/?#]+)", source)
    return m.group(1) if m else "example.org"


def resaved_html(lines: Sequence[str], render: Render, source: str, rng: random.Random) -> str:
    """``lines`` as an archive re-saves a page: the shared stylesheet, script and banner, and
    about one word in 25 turned into a link rewritten to the archive."""
    host = host_of(source)
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


class Novelty:
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


def round_robin(groups: Sequence[Sequence[Any]]) -> Iterable[Any]:
    for depth in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if depth < len(g):
                yield g[depth]


def swap_sentences(
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
