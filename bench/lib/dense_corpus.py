"""The duplicate-dense corpus (seeded): documents in families of heavy-tailed (Zipf) sizes,
each family's first text cut from a real text of ../shared/data/text and every further member
a clause-level edit of a random earlier member, written as JSON lines {"doc_id", "text"} to
out/bench_dense/corpus-N.jsonl and reused while its .meta.json records the same parameters.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lib.corpora import Docs, load_real
from lib.processes import log
from lib.project import ROOT

WORK = ROOT / "out" / "bench_dense"
SEED = 20261201
GENERATOR = 1  # bump when dense_corpus changes: cached corpora are rebuilt
ZIPF_ALPHA = 2.0  # family sizes: P(s) ~ s^-alpha
MAX_FAMILY = 0.1  # the largest family size allowed, as a share of the corpus
ROOT_WORDS = (200, 3000)  # a family's first text: log-uniform length in words
KINDS = {"copyright": 0.45, "man": 0.3, "fortunes": 0.25}  # a family's first text's origin
EDIT_RATE = (0.01, 0.05)  # a new member: edits touching this share of its parent's words
EXACT_COPY = 0.03  # a new member: an unedited copy of its parent
EDIT_OPS = {"insert line": 0.35, "delete line/sentence": 0.35, "substitute words": 0.3}
MIN_WORDS = 60  # no deletions below this many words
SENTENCE = re.compile(r"(?<=[.!?;])\s+")


def params(docs: int, seed: int) -> dict[str, Any]:
    """Everything the corpus depends on (a cached corpus is reused only when all are equal)."""
    return {
        "docs": docs,
        "seed": seed,
        "generator": GENERATOR,
        "zipf_alpha": ZIPF_ALPHA,
        "max_family": MAX_FAMILY,
        "root_words": list(ROOT_WORDS),
        "kinds": KINDS,
        "edit_rate": list(EDIT_RATE),
        "exact_copy": EXACT_COPY,
        "edit_ops": EDIT_OPS,
        "min_words": MIN_WORDS,
    }


# --- the corpus ----------------------------------------------------------------------------


def family_sizes(n: int, seed: int = SEED) -> list[int]:
    """Family sizes summing to ``n``, drawn in order from the truncated Zipf law (the last one
    cut to fit). Its own random stream, so ``--plan`` needs no texts."""
    rng = random.Random(seed)
    cap = max(1, int(n * MAX_FAMILY))
    support = range(1, cap + 1)
    cum = list(itertools.accumulate(s**-ZIPF_ALPHA for s in support))
    sizes: list[int] = []
    total = 0
    while total < n:
        s = min(rng.choices(support, cum_weights=cum)[0], n - total)
        sizes.append(s)
        total += s
    return sizes


def _words(lines: Sequence[str]) -> int:
    return sum(len(line.split()) for line in lines)


class Roots:
    """First texts of families, cut from the real texts.

    Copyright files and man pages (those of >= 200 words) are used in a seeded round robin:
    each use takes the next window of the text (its beginning first) of a log-uniform length
    in ``ROOT_WORDS``, ended at a line boundary, and a text leaves the queue when fewer than
    200 words are left, so no two families start from overlapping windows (the real texts'
    own shared passages, licences above all, still make some near duplicates across
    families). When a queue is empty, fortunes: random fortunes concatenated up to the length.
    """

    def __init__(self, real: dict[str, Docs], rng: random.Random) -> None:
        self.queues: dict[str, deque[tuple[str, list[str], int]]] = {}
        for kind in ("copyright", "man"):
            texts = [(d, t.split("\n")) for d, t in real[kind] if len(t.split()) >= ROOT_WORDS[0]]
            rng.shuffle(texts)
            self.queues[kind] = deque((d, lines, 0) for d, lines in texts)
        self.fortunes = [t for _, t in real["fortunes"] if t.strip()]

    def draw(self, rng: random.Random) -> tuple[str, list[str]]:
        """(origin, lines) of a new family's first text."""
        lo, hi = ROOT_WORDS
        target = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        if kind != "fortunes" and not self.queues[kind]:
            kind = next((k for k, q in self.queues.items() if q), "fortunes")
        if kind != "fortunes":
            queue = self.queues[kind]
            doc_id, lines, start = queue.popleft()
            end, words = start, 0
            while end < len(lines) and words < target:
                words += len(lines[end].split())
                end += 1
            if _words(lines[end:]) >= lo:
                queue.append((doc_id, lines, end))
            return f"{doc_id}@{start}", lines[start:end]
        picked: list[str] = []
        while _words(picked) < target:
            picked.extend(self.fortunes[rng.randrange(len(self.fortunes))].split("\n"))
            picked.append("%")
        return "fortunes", picked


class Editor:
    """Clause-level edits of a document held as its lines."""

    def __init__(self, real: dict[str, Docs]) -> None:
        texts = [t for docs in real.values() for _, t in docs]
        self.lines = [line for t in texts for line in t.split("\n") if len(line.split()) >= 3]
        self.vocab = sorted(
            {w for t in texts[::7] for w in t.split() if w.isalpha() and len(w) < 20}
        )
        self.ops: Counter[str] = Counter()

    def edit(self, parent: Sequence[str], rng: random.Random) -> list[str]:
        """A new member from ``parent``: edits until they touch a share ~U(EDIT_RATE) of its
        words (at least one edit): EDIT_OPS: a random line of a random real text inserted at
        a random place; a random sentence deleted (its line, if the line is one sentence);
        1-3 consecutive words of a random line replaced by real words."""
        lines = list(parent)
        words = _words(lines)
        budget = max(1, round(rng.uniform(*EDIT_RATE) * words))
        spent = 0
        while spent < budget:
            op = rng.choices(list(EDIT_OPS), weights=list(EDIT_OPS.values()))[0]
            filled = [i for i, line in enumerate(lines) if line.split()]
            if op == "delete line/sentence" and (words <= MIN_WORDS or len(filled) < 3):
                op = "insert line"
            if op == "substitute words" and not filled:
                op = "insert line"
            if op == "insert line":
                new = self.lines[rng.randrange(len(self.lines))]
                lines.insert(rng.randint(0, len(lines)), new)
                cost = len(new.split())
                words += cost
            elif op == "delete line/sentence":
                i = filled[rng.randrange(len(filled))]
                sentences = SENTENCE.split(lines[i].strip())
                if len(sentences) > 1:
                    cut = sentences.pop(rng.randrange(len(sentences)))
                    lines[i] = " ".join(sentences)
                    cost = len(cut.split())
                else:
                    cost = len(lines.pop(i).split())
                words -= cost
            else:
                i = filled[rng.randrange(len(filled))]
                tokens = lines[i].split()
                k = min(len(tokens), rng.randint(1, 3))
                j = rng.randrange(len(tokens) - k + 1)
                tokens[j : j + k] = [self.vocab[rng.randrange(len(self.vocab))] for _ in range(k)]
                lines[i] = " ".join(tokens)
                cost = k
            self.ops[op] += 1
            spent += max(1, cost)
        return lines


@dataclass
class Corpus:
    path: Path
    docs: Docs
    family: np.ndarray  # family number of each document
    meta: dict[str, Any]

    @property
    def nbytes(self) -> int:
        return sum(len(t.encode("utf-8")) for _, t in self.docs)


def dense_corpus(n: int, seed: int = SEED) -> tuple[Docs, np.ndarray, dict[str, Any]]:
    """``n`` documents in ``family_sizes`` families, members edited from each other in
    chains (member k of a family = ``Editor.edit`` of member ``randrange(k)``, or with
    p = EXACT_COPY an unedited copy of it), then shuffled (seeded) and numbered: ids
    ``d000000``, ... in the shuffled order, so a family's smallest id (the job's
    representative) is a random member, not its first text."""
    sizes = family_sizes(n, seed)
    real = load_real()
    rng = random.Random(seed + 1)
    roots, editor = Roots(real, rng), Editor(real)
    texts: list[str] = []
    family: list[int] = []
    origins: Counter[str] = Counter()
    copies = 0
    for f, size in enumerate(sizes):
        origin, first = roots.draw(rng)
        origins[origin.split("/")[0].split("@")[0]] += 1
        members = [first]
        for k in range(1, size):
            parent = members[rng.randrange(k)]
            if rng.random() < EXACT_COPY:
                members.append(list(parent))
                copies += 1
            else:
                members.append(editor.edit(parent, rng))
        texts.extend("\n".join(m) for m in members)
        family.extend([f] * size)
    order = list(range(n))
    rng.shuffle(order)
    width = max(6, len(str(n - 1)))
    docs = [(f"d{i:0{width}d}", texts[j]) for i, j in enumerate(order)]
    fam = np.asarray(family, dtype=np.int64)[order]
    stats = {
        "families": len(sizes),
        "first_texts": dict(origins),
        "exact_copies": copies,
        "edits": dict(editor.ops),
    }
    return docs, fam, stats


def reused(path: Path, want: dict[str, Any]) -> tuple[Docs, dict[str, Any]] | None:
    """The documents and meta of the corpus at ``path`` when its ``.meta.json`` records the
    parameters ``want``; None when it must be built."""
    meta_path = path.with_suffix(".meta.json")
    if not (path.exists() and meta_path.exists()):
        return None
    meta = json.loads(meta_path.read_text("utf-8"))
    if meta.get("params") != want:
        return None
    with open(path, encoding="utf-8") as fh:
        docs = [(r["doc_id"], r["text"]) for r in map(json.loads, fh)]
    log(f"corpus reused: {path} ({len(docs)} docs)")
    return docs, meta


def write_jsonl(path: Path, docs: Docs) -> None:
    """``docs`` as JSON lines ``{"doc_id", "text"}`` at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"doc_id": doc_id, "text": text}, ensure_ascii=False) + "\n")


def load_or_build(n: int, seed: int) -> Corpus:
    path = WORK / f"corpus-{n}.jsonl"
    meta_path = path.with_suffix(".meta.json")
    want = params(n, seed)
    found = reused(path, want)
    if found is not None:
        docs, meta = found
        return Corpus(path, docs, np.asarray(meta["family"], dtype=np.int64), meta)
    started = time.perf_counter()
    docs, fam, stats = dense_corpus(n, seed)
    write_jsonl(path, docs)
    seconds = round(time.perf_counter() - started, 1)
    meta = {"params": want, "build_seconds": seconds, **stats, "family": fam.tolist()}
    meta_path.write_text(json.dumps(meta), "utf-8")
    log(f"corpus built in {seconds} s: {path} ({len(docs)} docs)")
    return Corpus(path, docs, fam, meta)
