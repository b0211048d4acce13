"""The benchmark corpora: the real texts of ../shared/data (with a generated stand-in for the
kernel benches when that folder is absent), the scaled corpus of near-duplicate families built
from them (seeded: the same documents on every run), and corpora written as JSON lines.

Working files go to out/bench_dedup/ (``NEARDUP_BENCH_WORK`` overrides it).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import random
import tarfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from lib.project import ROOT

SHARED_DATA = ROOT.parent / "shared" / "data"
DEBIAN_COPYRIGHT = SHARED_DATA / "text/debian_copyright/debian_bookworm_copyright_files.tar.xz"
TEXT_DATA = SHARED_DATA / "text"
FORTUNES = TEXT_DATA / "debian_fortunes" / "fortunes_1.99.1-7.3.tar.xz"
MANPAGES = TEXT_DATA / "debian_manpages" / "manpages_6.03-2_and_manpages-dev_6.03-2.tar.xz"
WORK = Path(os.environ.get("NEARDUP_BENCH_WORK", ROOT / "out" / "bench_dedup"))

SEED = 20261130
MIN_LINES = 4  # lines of a scaled-corpus family source, at least

Docs = list[tuple[str, str]]  # (id, text)
I64 = npt.NDArray[np.int64]


def load_corpus() -> tuple[str, list[bytes]]:
    """(description, documents as raw bytes)."""
    if DEBIAN_COPYRIGHT.exists():
        with tarfile.open(DEBIAN_COPYRIGHT) as tf:
            docs = []
            for m in tf.getmembers():
                f = tf.extractfile(m) if m.isfile() else None
                if f is not None:
                    docs.append(f.read())
        return f"Debian copyright files ({DEBIAN_COPYRIGHT.relative_to(SHARED_DATA)})", docs
    return "generated from samples/ (../shared/data absent)", _generated()


def _generated(n_docs: int = 2000) -> list[bytes]:
    """Sample documents replicated with seeded word substitutions, insertions and deletions."""
    rng = random.Random(20261130)
    seeds = [p.read_text("utf-8").split() for p in sorted((ROOT / "samples").iterdir())]
    vocab = sorted({w for s in seeds for w in s})
    docs = []
    for i in range(n_docs):
        words = list(seeds[i % len(seeds)]) * rng.randint(5, 40)
        for _ in range(rng.randint(0, len(words) // 10)):
            j = rng.randrange(len(words))
            op = rng.random()
            if op < 0.4:
                words[j] = rng.choice(vocab)
            elif op < 0.7:
                words.insert(j, rng.choice(vocab))
            elif len(words) > 1:
                del words[j]
        docs.append(" ".join(words).encode())
    return docs


# --- the real texts, and the scaled corpus ----------------------------------------------


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def load_real() -> dict[str, Docs]:
    """The three real collections, raw text decoded as UTF-8 with replacement.

    Ids: ``copyright/<package>.copyright``; ``fortunes/<file>:<i>`` (i = index of the piece
    in ``text.split("\\n%\\n")``, empty pieces skipped, as in the shipped ground truth);
    ``man/<path in the tarball>`` (gunzipped).
    """
    out: dict[str, Docs] = {"copyright": [], "fortunes": [], "man": []}
    with tarfile.open(DEBIAN_COPYRIGHT) as tf:
        for m in tf.getmembers():
            f = tf.extractfile(m) if m.isfile() else None
            if f is not None:
                out["copyright"].append((f"copyright/{Path(m.name).name}", _decode(f.read())))
    with tarfile.open(FORTUNES) as tf:
        for m in tf.getmembers():
            f = tf.extractfile(m) if m.isfile() and not m.name.endswith(".dat") else None
            if f is not None:
                name = Path(m.name).name
                for i, piece in enumerate(_decode(f.read()).split("\n%\n")):
                    if piece:
                        out["fortunes"].append((f"fortunes/{name}:{i}", piece))
    with tarfile.open(MANPAGES) as tf:
        for m in tf.getmembers():
            f = tf.extractfile(m) if m.isfile() else None
            if f is not None:
                raw = f.read()
                out["man"].append((f"man/{m.name}", _decode(gzip.decompress(raw))))
    return out


@dataclass(frozen=True)
class Scaled:
    docs: Docs
    source: I64  # family of each document (its copies share one source text)
    recipe: Counter[str]  # documents per edit kind


_HEADERS = (
    "Mirrored from https://mirror{a}.example.org/pub/{b} on 2026-{m:02d}-{d:02d}",
    "Archive copy {b} -- retrieved {m:02d}/{d:02d}/2026 by crawler node {a}",
    "Posted in: Licences and legal notices (item {b}, page {a})",
)
_FOOTERS = (
    "--\nThis copy is kept by mirror{a}.example.org. Report problems to webmaster@example.org"
    " quoting reference {b}.",
    "Last modified 2026-{m:02d}-{d:02d}. Page {b} of the archive. All trademarks belong to "
    "their owners.",
    "Share this page | Print | Back to top ({a}/{b})",
)


def _boilerplate(rng: random.Random, templates: Sequence[str]) -> str:
    template = templates[rng.randrange(len(templates))]
    return template.format(
        a=rng.randrange(100), b=rng.randrange(10**6), m=rng.randint(1, 12), d=rng.randint(1, 28)
    )


def mutate(text: str, rng: random.Random, vocab: Sequence[str]) -> tuple[str, list[str]]:
    """One edited copy of ``text`` and the list of edit kinds applied.

    5 % of copies are exact. The others: with p = 0.3 two random paragraphs (blank-line
    separated) swap places; then a word edit rate e ~ U(0, 0.06) of the space-separated words
    get an edit each (substitution 40 %, insertion 30 %, deletion 30 %, new words drawn from
    the real texts' vocabulary); then p = 0.3 a header line, p = 0.3 a footer line (random
    mirror / archive boilerplate with random numbers), and p = 0.2 HTML wrapping (html, head,
    title = first line, body, one <p> per paragraph).
    """
    if rng.random() < 0.05:
        return text, ["exact copy"]
    kinds: list[str] = []
    paragraphs = text.split("\n\n")
    if len(paragraphs) > 2 and rng.random() < 0.3:
        i, j = rng.sample(range(len(paragraphs)), 2)
        paragraphs[i], paragraphs[j] = paragraphs[j], paragraphs[i]
        kinds.append("paragraph swap")
    words = "\n\n".join(paragraphs).split(" ")
    n_edits = int(rng.uniform(0.0, 0.06) * len(words) + rng.random())
    for _ in range(n_edits):
        j = rng.randrange(len(words))
        op = rng.random()
        if op < 0.4:
            words[j] = vocab[rng.randrange(len(vocab))]
        elif op < 0.7:
            words.insert(j, vocab[rng.randrange(len(vocab))])
        elif len(words) > 1:
            del words[j]
    if n_edits:
        kinds.append("word edits")
    out = " ".join(words)
    if rng.random() < 0.3:
        out = _boilerplate(rng, _HEADERS) + "\n\n" + out
        kinds.append("header")
    if rng.random() < 0.3:
        out = out + "\n\n" + _boilerplate(rng, _FOOTERS) + "\n"
        kinds.append("footer")
    if rng.random() < 0.2:
        title = out.strip().split("\n", 1)[0][:80]
        body = "\n".join(f"<p>{p}</p>" for p in out.split("\n\n"))
        out = (
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"</head>\n<body>\n{body}\n</body></html>\n"
        )
        kinds.append("html")
    return out, kinds or ["nothing drawn (unchanged)"]


def family_source(template: str, rng: random.Random, lines: Sequence[str]) -> str:
    """A new source text with as many lines as ``template`` (a real text) but at least
    ``MIN_LINES``, each a uniformly random non-blank line of the real texts.

    Every line is real text, and frequent lines (licence names, markup) stay frequent, but two
    sources share only lines drawn by chance, so families stay apart however many there are.
    The minimum keeps a copy's added header or footer (the same few templates corpus-wide)
    from making two short documents of different families near duplicates: with one-line
    sources, such pairs grew with the square of the corpus size.
    """
    n = max(MIN_LINES, template.count("\n") + 1)
    return "\n".join(lines[rng.randrange(len(lines))] for _ in range(n))


def family_size(rng: random.Random, cap: int = 12) -> int:
    """1 + Poisson(1), at most ``cap``: 37 % of families are single documents, mean 2."""
    k, p, limit = 0, rng.random(), math.exp(-1.0)
    while p > limit and k < cap - 1:
        k += 1
        p *= rng.random()
    return 1 + k


def scaled_corpus(real: Docs, n: int, seed: int = SEED) -> Scaled:
    """``n`` documents in near-duplicate families (seeded).

    Each family has a source text of its own (``family_source`` shaped like a uniformly
    random real text) and ``family_size`` documents, each ``mutate`` of the source. Families
    are written one after another with ids ``s0000000``, ``s0000001``, ..., so every prefix
    of the corpus is itself a corpus of the same construction, and the number of
    near-duplicate pairs grows linearly with n (family sizes do not depend on n, as in a
    crawl that grows).
    """
    rng = random.Random(seed)
    vocab = sorted({w for _, t in real[::7] for w in t.split() if w.isalpha() and len(w) < 20})
    lines = [line for _, t in real for line in t.split("\n") if line.strip()]
    docs: Docs = []
    source = np.empty(n, dtype=np.int64)
    recipe: Counter[str] = Counter()
    width = max(7, len(str(n)))
    family = 0
    while len(docs) < n:
        text = family_source(real[rng.randrange(len(real))][1], rng, lines)
        for _ in range(min(family_size(rng), n - len(docs))):
            copy, kinds = mutate(text, rng, vocab)
            source[len(docs)] = family
            docs.append((f"s{len(docs):0{width}d}", copy))
            recipe.update(kinds)
        family += 1
    return Scaled(docs, source, recipe)


@dataclass(frozen=True)
class CorpusFile:
    """A corpus written as JSON lines (``id``, ``text``) for the job and for MLlib."""

    name: str
    path: Path
    docs: Docs

    @property
    def n(self) -> int:
        return len(self.docs)

    @property
    def nbytes(self) -> int:
        return sum(len(t.encode("utf-8")) for _, t in self.docs)


def write_corpus(name: str, docs: Docs) -> CorpusFile:
    path = WORK / "corpora" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False))
            fh.write("\n")
    return CorpusFile(name, path, docs)
