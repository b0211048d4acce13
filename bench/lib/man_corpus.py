"""The ``zh`` and ``ja`` corpora: paragraphs of the Debian man pages of manpages-zh and
manpages-ja (troff stripped), cut into documents, each with character-edited copies
(bench/bench_web.py's docstring says how)."""

from __future__ import annotations

import gzip
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lib.planted_families import (
    SEED,
    TARGET,
    Corpus,
    Editor,
    Novelty,
    Render,
    assemble,
    round_robin,
    swap_sentences,
)
from lib.visible_text import char_shingles, cjk_chars, cjk_count

MAN_ROOT = Path("/usr/share/man")
DPKG_INFO = Path("/var/lib/dpkg/info")
CJK_CHARS = (200, 1500)

# The man page directories and Debian package of each CJK corpus.
MAN_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "zh": ("manpages-zh", ("zh_CN", "zh_TW")),
    "ja": ("manpages-ja", ("ja",)),
}

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
    chars = sorted({c for p in kept for c in cjk_chars(p)})
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
            if rng.random() < 0.35 and swap_sentences(lines, rng, _sentences, ""):
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
    """The ``zh`` or ``ja`` corpus from man page files (see bench/bench_web.py's docstring)."""
    target = TARGET[name] if target is None else target
    rng = random.Random(f"{seed}:{name}")
    man = man_documents(files, seed, name)
    groups = [[(src, src, lines) for lines in docs] for src, docs in man.pages]
    rng.shuffle(groups)
    novelty = Novelty()
    corpus = assemble(
        name,
        novelty.bases(round_robin(groups), char_shingles),
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
