"""The second duplicate-dense corpus (issue 39): short real texts in their natural families.

The recipe, fixed before any optimization against it (change it only with ``RECIPE`` bumped,
which rebuilds the cached file):

1. texts, from the tarballs of ../shared/data/text, read with ``tarfile`` (nothing is
   extracted to disk), every member decoded as UTF-8 with replacement:
   a. every paragraph (stanza) of every Debian copyright file of
      ``debian_copyright/debian_bookworm_copyright_files.tar.xz``: the file split at blank
      lines (lines holding only spaces or tabs count as blank). Licence stanzas repeat
      across packages word for word or nearly: the natural families;
   b. every fortune of ``debian_fortunes/fortunes_1.99.1-7.3.tar.xz``: each fortune file
      split at lines holding only ``%`` (the binary index files ``*.dat`` and ``*.u8``
      skipped);
   c. only while a and b give fewer than ``MIN_TEXTS`` texts: paragraphs of the man pages of
      ``debian_manpages/...tar.xz`` (gunzipped roff; paragraphs end at a blank line or a
      paragraph macro, font macros keep their words, every other request line and the
      inline escapes are dropped), page after page in name order until ``MIN_TEXTS``.
   Members are taken in name order (not archive order), texts in file order, each with
   leading and trailing whitespace stripped;
2. a text is kept when it has at least ``MIN_WORDS`` word (``re.findall(r"\\w+", lower)``,
   the exact baseline's words); a text longer than ``MAX_CHARS`` characters is cut to its
   first ``MAX_CHARS`` at the last whitespace before that (only copies of two copyright
   stanzas of over 100,000 characters, lists of files and holders, are cut: 8 texts);
3. a seeded shuffle (``random.Random(SEED)``) and ids ``s000000``, ``s000001``, ... in the
   shuffled order, so id order (the representative rule min_id) is not source order;
4. written as JSON lines ``{"doc_id", "text"}`` to out/bench_dense/short-corpus.jsonl, its
   parameters and shape in short-corpus.meta.json; the file is reused while the meta records
   the same parameters.

No text is edited or generated: every near duplicate is one the real texts have. The shape
(``python -m lib.short_corpus`` from bench/ builds it and prints it; bench_dense prints it
too), recipe 1: 43,955 texts (29,559 copyright stanzas, 14,396 fortunes, no man page
needed), 19.5 MB, words median 23, p10 8, p90 114, p99 572, max 14,538; 599 texts of fewer
than 3 words; 21,470 texts are exact copies of an earlier one.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import statistics
import tarfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from lib.corpora import DEBIAN_COPYRIGHT, FORTUNES, MANPAGES, Docs
from lib.dense_corpus import Corpus, reused, write_jsonl
from lib.processes import log
from lib.project import ROOT

WORK = ROOT / "out" / "bench_dense"
PATH = WORK / "short-corpus.jsonl"
RECIPE = 1  # bump when the recipe changes: the cached corpus is rebuilt
SEED = 39
MIN_WORDS = 1
MAX_CHARS = 100_000
MIN_TEXTS = 30_000  # man page paragraphs only while the first two sources give fewer

WORD = re.compile(r"\w+")
BLANK_LINES = re.compile(r"\n(?:[ \t]*\n)+")
FORTUNE_SEP = re.compile(r"^%$\n?", re.MULTILINE)
SKIPPED_FORTUNE_FILES = (".dat", ".u8")

# roff: requests that end a paragraph, and those whose arguments are words in a font
_PARAGRAPH_MACROS = {"PP", "P", "LP", "TP", "TQ", "IP", "HP", "SH", "SS", "RS", "RE", "sp"}
_FONT_MACROS = {"B", "I", "R", "SM", "SB", "BR", "RB", "BI", "IB", "IR", "RI"}
_ROFF_ESCAPES = re.compile(r"\\(?:f(?:\[[^\]]*\]|\(..|.)|\(..|\[[^\]]*\]|\*(?:\(..|.)|.)")
_ROFF_KEEP = {"\\-": "-", "\\e": "\\", "\\ ": " ", "\\~": " "}


def params() -> dict[str, Any]:
    """Everything the corpus depends on (the cached file is reused only when all are equal)."""
    return {
        "recipe": RECIPE,
        "seed": SEED,
        "min_words": MIN_WORDS,
        "max_chars": MAX_CHARS,
        "min_texts": MIN_TEXTS,
        "sources": {
            str(p.relative_to(p.parent.parent.parent)): p.stat().st_size
            for p in (DEBIAN_COPYRIGHT, FORTUNES, MANPAGES)
            if p.exists()
        },
    }


def words(text: str) -> int:
    return len(WORD.findall(text.lower()))


def _members(tarball: Path) -> list[tuple[str, bytes]]:
    """(name, bytes) of every regular file, in name order (read in archive order: xz does
    not seek)."""
    out = []
    with tarfile.open(tarball) as tf:
        for m in tf:
            f = tf.extractfile(m) if m.isfile() else None
            if f is not None:
                out.append((m.name, f.read()))
    return sorted(out)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def copyright_paragraphs() -> list[str]:
    texts = []
    for _, raw in _members(DEBIAN_COPYRIGHT):
        texts.extend(p.strip() for p in BLANK_LINES.split(_decode(raw)))
    return texts


def fortunes() -> list[str]:
    texts = []
    for name, raw in _members(FORTUNES):
        if not name.endswith(SKIPPED_FORTUNE_FILES):
            texts.extend(p.strip() for p in FORTUNE_SEP.split(_decode(raw)))
    return texts


def _roff_text(line: str) -> str:
    line = _ROFF_ESCAPES.sub(lambda m: _ROFF_KEEP.get(m.group(0), ""), line)
    return line.replace('"', "")


def roff_paragraphs(roff: str) -> list[str]:
    """A man page's paragraphs, its roff stripped simply (see the module's recipe, 1c)."""
    paragraphs: list[list[str]] = [[]]
    for line in roff.split("\n"):
        if line.startswith((".", "'")):
            name, _, rest = line[1:].strip().partition(" ")
            if name in _PARAGRAPH_MACROS:
                paragraphs.append([])
            elif name in _FONT_MACROS and rest.strip():
                paragraphs[-1].append(_roff_text(rest).strip())
        elif not line.strip():
            paragraphs.append([])
        else:
            paragraphs[-1].append(_roff_text(line).strip())
    return [" ".join(p).strip() for p in paragraphs]


def man_paragraphs(needed: int) -> list[str]:
    texts: list[str] = []
    for _, raw in _members(MANPAGES):
        if len(texts) >= needed:
            break
        page = _decode(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        texts.extend(p for p in roff_paragraphs(page) if words(p) >= MIN_WORDS)
    return texts[:needed]


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    head = text[:MAX_CHARS]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return (head[:space] if space > 0 else head).rstrip()


def short_corpus() -> tuple[Docs, dict[str, Any]]:
    """The texts of the recipe, kept, cut, shuffled and numbered; and their counts."""
    sources: dict[str, list[str]] = {
        "copyright": copyright_paragraphs(),
        "fortunes": fortunes(),
    }
    texts: list[tuple[str, str]] = []
    for kind, found in sources.items():
        texts.extend((kind, t) for t in found if words(t) >= MIN_WORDS)
    if len(texts) < MIN_TEXTS:
        texts.extend(("man", t) for t in man_paragraphs(MIN_TEXTS - len(texts)))
    cut = sum(len(t) > MAX_CHARS for _, t in texts)
    texts = [(kind, _cut(t)) for kind, t in texts]
    random.Random(SEED).shuffle(texts)
    width = max(6, len(str(len(texts) - 1)))
    docs = [(f"s{i:0{width}d}", t) for i, (_, t) in enumerate(texts)]
    copies = len(texts) - len({t for _, t in texts})
    stats = {
        "texts_by_source": dict(Counter(kind for kind, _ in texts)),
        "paragraphs_read": {k: len(v) for k, v in sources.items()},
        "cut_to_max_chars": cut,
        "exact_copies": copies,  # texts equal to an earlier one, character for character
    }
    return docs, stats


def shape(docs: Docs) -> dict[str, Any]:
    """Documents, megabytes and word percentiles (the baseline's words)."""
    counts = sorted(words(t) for _, t in docs)
    deciles = statistics.quantiles(counts, n=10)
    centiles = statistics.quantiles(counts, n=100)
    return {
        "docs": len(docs),
        "mb": round(sum(len(t.encode("utf-8")) for _, t in docs) / 1e6, 2),
        "words": {
            "min": counts[0],
            "p10": deciles[0],
            "median": statistics.median(counts),
            "p90": deciles[8],
            "p99": centiles[98],
            "max": counts[-1],
            "mean": round(statistics.fmean(counts), 1),
            "under_3": sum(c < 3 for c in counts),
        },
    }


def describe(meta: dict[str, Any]) -> str:
    s, w = meta["shape"], meta["shape"]["words"]
    return (
        f"short corpus: {s['docs']} docs, {s['mb']} MB, {meta['texts_by_source']}; words "
        f"median {w['median']:g}, p10 {w['p10']:g}, p90 {w['p90']:g}, p99 {w['p99']:g}, max "
        f"{w['max']}, {w['under_3']} under 3 words; {meta['exact_copies']} exact copies, "
        f"{meta['cut_to_max_chars']} cut to {MAX_CHARS} chars (recipe {RECIPE}, seed {SEED})"
    )


def load_or_build(path: Path = PATH) -> Corpus:
    """The corpus as a ``lib.dense_corpus.Corpus``. It has no generated families: ``family``
    numbers every text on its own (``meta["families"]`` is None)."""
    meta_path = path.with_suffix(".meta.json")
    want = params()
    found = reused(path, want)
    if found is not None:
        docs, meta = found
        return Corpus(path, docs, np.arange(len(docs), dtype=np.int64), meta)
    started = time.perf_counter()
    docs, stats = short_corpus()
    write_jsonl(path, docs)
    seconds = round(time.perf_counter() - started, 1)
    meta = {
        "params": want,
        "build_seconds": seconds,
        "families": None,
        **stats,
        "shape": shape(docs),
    }
    meta_path.write_text(json.dumps(meta, indent=1), "utf-8")
    log(f"short corpus built in {seconds} s: {path} ({len(docs)} docs)")
    return Corpus(path, docs, np.arange(len(docs), dtype=np.int64), meta)


if __name__ == "__main__":  # from bench/: python -m lib.short_corpus
    print(describe(load_or_build().meta))
