"""End-to-end benchmark of the Spark dedup job (jobs/dedup.py), with Spark MLlib's MinHashLSH
as the baseline and exact all-pairs Jaccard as the ground truth.

    .venv/bin/python bench/bench_dedup.py [--scale N] [--base B]

Everything runs in this one process with one SparkSession (local[2]):

1. corpora: the real texts of ../shared/data/text (Debian copyright files, fortunes, man
   pages; raw bytes decoded as UTF-8 with replacement) and a scaled corpus of ``--scale``
   documents in near-duplicate families: a source text per family (as many random real
   lines as a random real text has) and 1 + Poisson(1) copies of it with seeded
   random edits (see ``scaled_corpus``, ``mutate``);
2. the dedup job with its defaults, MinHash (preset semblance, threshold 0.7 -> recall-first
   banding 25 x 5 of 125 slots, hybrid verification) and SimHash (ditto/2, k=3), on both:
   end-to-end wall time and docs/s;
3. MLlib MinHashLSH + approxSimilarityJoin on the same documents, same word 3-shingles,
   same Jaccard threshold;
4. recall and precision of both against exact all-pairs Jaccard of the word 3-shingle sets;
5. scaling: 1x, 2x, 4x a base size, and a corpus of identical documents;
6. (unless --no-semblance) the job once more with semblance's own shape and the signature
   estimate (SEMBLANCE: banding "semblance" = 16 x 8, estimate verification), the previous
   default, on the real texts and the sample.

Prints a table and one JSON line. docs/benchmarks.md records a run. Working files (corpora,
job outputs) go to out/bench_dedup/.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import xxhash
from corpus import DEBIAN_COPYRIGHT, SHARED_DATA
from numba import njit
from pyspark.ml.feature import HashingTF, MinHashLSH
from pyspark.ml.functions import vector_to_array
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import ArrayType, LongType
from timing import best_of

from neardup_udfs.config import DedupConfig, load_config
from neardup_udfs.kernels.words_jit import word_shingles_batch
from neardup_udfs.presets import Pipeline, resolve
from neardup_udfs.runs import dedup as dedup_job
from neardup_udfs.stages.verify import estimate_margin
from neardup_udfs.udfs import exact_key_udf, fingerprint_udf

ROOT = Path(__file__).resolve().parent.parent

TEXT_DATA = SHARED_DATA / "text"
FORTUNES = TEXT_DATA / "debian_fortunes" / "fortunes_1.99.1-7.3.tar.xz"
MANPAGES = TEXT_DATA / "debian_manpages" / "manpages_6.03-2_and_manpages-dev_6.03-2.tar.xz"
COPYRIGHT_TRUTH_W5 = TEXT_DATA / "debian_copyright" / "groundtruth_jaccard_w5_ge0.5.tsv"
WORK = Path(os.environ.get("NEARDUP_BENCH_WORK", ROOT / "out" / "bench_dedup"))

SEED = 20261130
THRESHOLD = 0.7  # Jaccard threshold of every system and of the ground truth
T_07 = (7, 10)  # the same thresholds as exact fractions: J >= num / den
T_075 = (3, 4)
SHINGLE_W = 3  # semblance word 3-shingles
# HashingTF width: two documents of 10,000 shingles each expect ~0.05 index collisions
MLLIB_FEATURES = 1 << 30
MLLIB_SAMPLE = 50_000
EVAL_SAMPLE = 5_000
MIN_LINES = 4  # lines of a scaled-corpus family source, at least
OUTPUTS = ("docs", "clusters", "pairs", "rejects")
# The reference's own MinHash configuration (the job's default until 2026-11-30): semblance's
# closest-threshold banding (16 x 8 of 128 slots) and the signature estimate.
SEMBLANCE: dict[str, Any] = {"banding": "semblance", "verification": "estimate"}
TARGET_DOCS, TARGET_BYTES = 500_000, 500_000_000
TARGET_RECALL_075, TARGET_PRECISION, TARGET_MLLIB_RECALL_07 = 0.99, 0.99, 0.95

Docs = list[tuple[str, str]]  # (id, text)
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


def log(message: str) -> None:
    """Progress on stderr (the table and the JSON line go to stdout)."""
    print(f"[bench_dedup {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- corpora ------------------------------------------------------------------------------


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


def warmup_docs(real: Docs) -> Docs:
    """About 200 real texts and 40 edited copies of them: enough near-duplicate pairs that an
    untimed warm-up run reaches every code path of the job, hybrid's exact Jaccard included."""
    picked = real[:: max(1, len(real) // 200)]
    return picked + scaled_corpus(picked, 40, seed=SEED + 2).docs


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


# --- exact all-pairs Jaccard (the ground truth) ----------------------------------------------


def shingle_sets(texts: Sequence[str], w: int = SHINGLE_W) -> list[U64]:
    """Each text's set of semblance word w-shingles (the job's own kernel), sorted, unique."""
    hashes, offsets = word_shingles_batch(texts, w)
    return [np.unique(hashes[offsets[i] : offsets[i + 1]]) for i in range(len(texts))]


@njit(cache=False)
def _all_pairs(
    indptr: I64,
    data: I64,
    plen: I64,
    post_ptr: I64,
    post_doc: I64,
    num: int,
    den: int,
    out: I64,
) -> int:
    """Prefix-filtered all-pairs join: every (y, x), y < x, with J >= num/den, into ``out``
    rows (y, x, |x & y|). Returns the row count, or -1 when ``out`` is too small."""
    n = len(indptr) - 1
    mark = np.full(n, -1, dtype=np.int64)
    count = 0
    for x in range(n):
        x0, x1 = indptr[x], indptr[x + 1]
        nx = x1 - x0
        for q in range(x0, x0 + plen[x]):
            tok = data[q]
            for r in range(post_ptr[tok], post_ptr[tok + 1]):
                y = post_doc[r]
                if y >= x:
                    break  # postings are sorted by set index
                if mark[y] == x:
                    continue
                mark[y] = x
                y0, y1 = indptr[y], indptr[y + 1]
                ny = y1 - y0
                if den * min(nx, ny) < num * max(nx, ny):
                    continue  # J <= min/max: too different in size
                i, j, inter = x0, y0, 0
                while i < x1 and j < y1:
                    if data[i] == data[j]:
                        inter += 1
                        i += 1
                        j += 1
                    elif data[i] < data[j]:
                        i += 1
                    else:
                        j += 1
                if den * inter >= num * (nx + ny - inter):
                    if count == len(out):
                        return -1
                    out[count, 0] = y
                    out[count, 1] = x
                    out[count, 2] = inter
                    count += 1
    return count


@dataclass(frozen=True)
class Truth:
    """Exact Jaccard of every document pair with J >= 0.7 among ``n`` documents.

    Pairs are codes ``a * n + b`` (a < b, positions in the evaluated document list).
    """

    n: int
    sizes: I64  # shingle-set size per document
    codes: I64  # sorted pair codes with J >= 0.7
    inter: I64  # |A & B| per code
    union: I64  # |A | B| per code
    seconds: float

    def at_least(self, num: int, den: int) -> I64:
        return self.codes[den * self.inter >= num * self.union]


def exact_pairs(sets: Sequence[U64], t: tuple[int, int] = T_07) -> Truth:
    """All pairs with exact Jaccard >= t, by prefix filtering (AllPairs) over an inverted index.

    Notes:
        Lossless: with shingles ordered rarest first, two sets with J >= t share a shingle
        within their first ``|x| - ceil(t|x|) + 1`` shingles. Identical sets are collapsed
        first (their pairs have J = 1). Empty sets (fewer than 3 words) pair with nothing:
        J = 0, semblance's rule and the job's exact verification.
    """
    started = time.perf_counter()
    num, den = t
    n = len(sets)
    sizes = np.array([len(s) for s in sets], dtype=np.int64)
    groups: dict[bytes, list[int]] = defaultdict(list)
    for i, s in enumerate(sets):
        if len(s):
            groups[s.tobytes()].append(i)
    members = list(groups.values())
    uniq = [sets[g[0]] for g in members]
    codes: list[I64] = []
    inter: list[I64] = []
    union: list[I64] = []

    def add(a: I64, b: I64, common: I64, total: I64) -> None:
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        codes.append(lo * n + hi)
        inter.append(common)
        union.append(total)

    for g in members:  # identical sets: J = 1
        if len(g) > 1:
            a, b = np.triu_indices(len(g), 1)
            arr = np.asarray(g, dtype=np.int64)
            k = sizes[arr[a]]
            add(arr[a], arr[b], k, k)
    if len(uniq) > 1:
        allv = np.concatenate(uniq)
        tokens, inverse, counts = np.unique(allv, return_inverse=True, return_counts=True)
        rank_of = np.empty(len(tokens), dtype=np.int64)
        rank_of[np.lexsort((tokens, counts))] = np.arange(len(tokens))  # rarest first
        ranks = rank_of[inverse]
        lens = np.array([len(u) for u in uniq], dtype=np.int64)
        indptr = np.zeros(len(uniq) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        data = np.concatenate([np.sort(ranks[indptr[i] : indptr[i + 1]]) for i in range(len(uniq))])
        plen = lens - (num * lens + den - 1) // den + 1
        owner = np.repeat(np.arange(len(uniq), dtype=np.int64), lens)
        pos = np.arange(len(data), dtype=np.int64) - indptr[owner]
        in_prefix = pos < plen[owner]
        p_tok, p_doc = data[in_prefix], owner[in_prefix]
        order = np.lexsort((p_doc, p_tok))
        post_doc = p_doc[order]
        post_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(np.bincount(p_tok, minlength=len(tokens)), out=post_ptr[1:])
        cap = 1 << 16
        while True:
            out = np.empty((cap, 3), dtype=np.int64)
            got = _all_pairs(indptr, data, plen, post_ptr, post_doc, num, den, out)
            if got >= 0:
                break
            cap *= 4
        for y, x, common in out[:got]:
            ga = np.asarray(members[y], dtype=np.int64)
            gb = np.asarray(members[x], dtype=np.int64)
            a, b = np.repeat(ga, len(gb)), np.tile(gb, len(ga))
            total = lens[y] + lens[x] - common
            add(a, b, np.full(len(a), common), np.full(len(a), total))
    if codes:
        all_codes = np.concatenate(codes)
        order = np.argsort(all_codes, kind="stable")
        c, i_, u_ = all_codes[order], np.concatenate(inter)[order], np.concatenate(union)[order]
    else:
        c = i_ = u_ = np.zeros(0, dtype=np.int64)
    return Truth(n, sizes, c, i_, u_, time.perf_counter() - started)


def check_against_shipped_truth(copyright: Docs) -> dict[str, Any]:
    """Self-check of ``exact_pairs``: recompute the shipped copyright ground truth (lowercase
    ``\\w+`` word 5-grams, J >= 0.5) and compare the pair sets."""
    words = re.compile(r"\w+")
    sets = []
    for _, text in copyright:
        tok = words.findall(text.lower())
        grams = {
            xxhash.xxh64_intdigest(" ".join(tok[i : i + 5]).encode()) for i in range(len(tok) - 4)
        }
        sets.append(np.array(sorted(grams), dtype=np.uint64))
    truth = exact_pairs(sets, (1, 2))
    names = [doc_id.removeprefix("copyright/") for doc_id, _ in copyright]
    ours = {tuple(sorted((names[c // truth.n], names[c % truth.n]))) for c in truth.codes.tolist()}
    shipped = set()
    for line in COPYRIGHT_TRUTH_W5.read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            _, a, b = line.split("\t")
            shipped.add(tuple(sorted((a, b))))
    return {
        "shipped_pairs": len(shipped),
        "recomputed_pairs": len(ours),
        "identical": ours == shipped,
        "only_shipped": len(shipped - ours),
        "only_recomputed": len(ours - shipped),
    }


# --- found pairs and quality ---------------------------------------------------------------


def _group_codes(groups: Iterable[Sequence[int]], n: int) -> I64:
    parts = []
    for g in groups:
        if len(g) > 1:
            arr = np.sort(np.asarray(g, dtype=np.int64))
            a, b = np.triu_indices(len(arr), 1)
            parts.append(arr[a] * n + arr[b])
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _edge_codes(a: Sequence[int], b: Sequence[int], n: int) -> I64:
    x, y = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    return np.unique(np.minimum(x, y) * n + np.maximum(x, y))


def cluster_pairs(spark: SparkSession, out: Path, index: dict[str, int]) -> I64:
    """Pairs of evaluated documents in the same output cluster (``clusters/``)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for r in spark.read.parquet(str(out / "clusters")).select("doc_id", "cluster_id").collect():
        if r.doc_id in index:
            groups[r.cluster_id].append(index[r.doc_id])
    return _group_codes(groups.values(), len(index))


def edge_pairs(
    spark: SparkSession, out: Path, index: dict[str, int], leader: dict[str, str]
) -> I64:
    """Pairs the job asserted directly: verified edges (``pairs/``, between exact-duplicate
    leaders) expanded to every member of both groups, plus pairs inside exact-duplicate groups.

    ``leader`` maps every document of the corpus to its exact group's smallest id, as the
    job's exact stage does (same canonical form, ``Pipeline.exact_keys``).
    """
    members: dict[str, list[int]] = defaultdict(list)
    for doc_id, lead in leader.items():
        if doc_id in index:
            members[lead].append(index[doc_id])
    parts = [_group_codes(members.values(), len(index))]
    for r in spark.read.parquet(str(out / "pairs")).select("a", "b").collect():
        ma, mb = members.get(r.a), members.get(r.b)
        if ma and mb:
            a, b = np.repeat(ma, len(mb)), np.tile(mb, len(ma))
            parts.append(_edge_codes(a, b, len(index)))
    return np.unique(np.concatenate(parts))


def exact_leaders(corpus: CorpusFile, preset: str) -> dict[str, str]:
    """Every document's exact-duplicate leader under ``preset`` (the job's exact stage, with
    the job's default normalization: a text it leaves empty is its own group)."""
    normalize = DedupConfig.__dataclass_fields__["normalize"].default
    texts = [str(t) for t in resolve(preset, normalize=normalize).normalize_batch(
        [t for _, t in corpus.docs]
    )]  # fmt: skip
    if preset == "semblance":
        # Equal token text <=> equal word 3-shingle stream (up to 64-bit hash collisions), and
        # the compiled stream is ~15x faster than the per-document token text; texts of fewer
        # than 3 tokens (empty stream) get the preset's own key.
        hashes, offsets = word_shingles_batch(texts, SHINGLE_W)
        keys = [
            xxhash.xxh3_128_hexdigest(hashes[offsets[i] : offsets[i + 1]].tobytes())
            if offsets[i + 1] > offsets[i]
            else "t" + resolve(preset).exact_keys([texts[i]])[0]
            for i in range(len(texts))
        ]
    else:
        keys = resolve(preset).exact_keys(texts)
    if normalize != "none":
        ids = [d for d, _ in corpus.docs]
        keys = [k if t else f"empty:{d}" for d, t, k in zip(ids, texts, keys, strict=True)]
    lead: dict[str, str] = {}
    for (doc_id, _), key in zip(corpus.docs, keys, strict=True):
        if key not in lead or doc_id < lead[key]:
            lead[key] = doc_id
    return {doc_id: lead[key] for (doc_id, _), key in zip(corpus.docs, keys, strict=True)}


@dataclass(frozen=True)
class Quality:
    found: int
    truth_07: int
    truth_075: int
    hit_07: int
    hit_075: int
    fp_near: int  # false positives with 0.6 <= J < 0.7
    fp_far: int  # false positives with J < 0.6, at least one document with shingles
    fp_empty_same: int  # both documents without shingles, same token text (exact duplicates)
    fp_empty_diff: int  # both documents without shingles, different texts
    misses: dict[str, int] = field(default_factory=dict)  # why pairs J >= 0.75 were missed

    @property
    def recall_07(self) -> float:
        return self.hit_07 / self.truth_07 if self.truth_07 else 1.0

    @property
    def recall_075(self) -> float:
        return self.hit_075 / self.truth_075 if self.truth_075 else 1.0

    @property
    def precision(self) -> float:
        return self.hit_07 / self.found if self.found else 1.0

    def figures(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "truth_ge_0.7": self.truth_07,
            "truth_ge_0.75": self.truth_075,
            "recall_ge_0.7": round(self.recall_07, 4),
            "recall_ge_0.75": round(self.recall_075, 4),
            "precision": round(self.precision, 4),
            "fp_0.6_to_0.7": self.fp_near,
            "fp_below_0.6": self.fp_far,
            "fp_no_shingles_same_tokens": self.fp_empty_same,
            "fp_no_shingles_different": self.fp_empty_diff,
            **({"misses_ge_0.75": self.misses} if self.misses else {}),
        }


def _estimate_dropped(run: JobRun, estimate: float) -> bool:
    """Whether the run's verification rejected a pair on its signature estimate alone."""
    if run.verification == "estimate":
        return estimate < THRESHOLD
    if run.verification == "hybrid":
        return estimate < THRESHOLD - estimate_margin(run.pipeline.param("k"))
    return False


def quality(found: I64, ev: EvalSet, run: JobRun | None = None) -> Quality:
    """Recall (J >= 0.7, J >= 0.75) and precision (found pairs with J >= 0.7) of ``found``.

    With a MinHash ``run``: each missed pair with J >= 0.75 is classified against that run's
    pipeline (its banding): "lsh" (no common band key, never a candidate), "estimate" (a
    candidate rejected on its signature estimate by estimate or hybrid verification),
    "other" (neither: e.g. a hot bucket's star).
    """
    truth = ev.truth
    t075 = truth.at_least(*T_075)
    hit = np.isin(found, truth.codes)
    near = far = empty_same = empty_diff = 0
    for code in found[~hit].tolist():
        a, b = divmod(code, truth.n)
        sa, sb = ev.sets[a], ev.sets[b]
        if not len(sa) and not len(sb):
            if ev.token_key(a) == ev.token_key(b):
                empty_same += 1
            else:
                empty_diff += 1
            continue
        common = len(np.intersect1d(sa, sb, assume_unique=True))
        if common / (len(sa) + len(sb) - common) >= 0.6:
            near += 1
        else:
            far += 1
    misses: Counter[str] = Counter()
    if run is not None and run.method == "minhash":
        sigs, keys = ev.minhash(run.pipeline)
        for code in t075[~np.isin(t075, found)].tolist():
            a, b = divmod(code, truth.n)
            if not np.any(keys[a] == keys[b]):
                misses["lsh"] += 1
            elif _estimate_dropped(run, float(np.mean(sigs[a] == sigs[b]))):
                misses["estimate"] += 1
            else:
                misses["other"] += 1
    return Quality(
        found=len(found),
        truth_07=len(truth.codes),
        truth_075=len(t075),
        hit_07=int(hit.sum()),
        hit_075=int(np.isin(t075, found).sum()),
        fp_near=near,
        fp_far=far,
        fp_empty_same=empty_same,
        fp_empty_diff=empty_diff,
        misses=dict(misses),
    )


@dataclass
class EvalSet:
    """Documents to score, with their exact ground truth."""

    name: str
    docs: Docs
    sets: list[U64]
    truth: Truth
    index: dict[str, int] = field(init=False)
    results: dict[str, Quality] = field(default_factory=dict)
    _sketches: dict[str, tuple[U64, U64]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {d: i for i, (d, _) in enumerate(self.docs)}

    def token_key(self, i: int) -> str:
        return resolve("semblance").exact_keys([self.docs[i][1]])[0]

    def minhash(self, pipeline: Pipeline) -> tuple[U64, U64]:
        """A pipeline's MinHash signatures and band keys of every document (computed once)."""
        if pipeline.id not in self._sketches:
            sigs = pipeline.signature_batch([t for _, t in self.docs])
            self._sketches[pipeline.id] = (sigs, pipeline.band_keys_batch(sigs))
        return self._sketches[pipeline.id]


def make_eval(name: str, docs: Docs) -> EvalSet:
    sets = shingle_sets([t for _, t in docs])
    truth = exact_pairs(sets)
    log(
        f"truth {name}: {len(docs)} docs, {len(truth.codes)} pairs J >= 0.7 ({truth.seconds:.1f} s)"
    )
    return EvalSet(name, docs, sets, truth)


def family_sample(scaled: Scaled, limit: int, size: int, seed: int = SEED) -> list[int]:
    """Positions (< ``limit``) of ``size`` documents: all copies of randomly chosen
    families, so that the sample keeps its near-duplicate families (a uniform sample of a
    large corpus keeps almost no pairs)."""
    rng = random.Random(seed + 1)
    by_source: dict[int, list[int]] = defaultdict(list)
    for i, s in enumerate(scaled.source[:limit].tolist()):
        by_source[s].append(i)
    sources = sorted(by_source)
    rng.shuffle(sources)
    picked: list[int] = []
    for s in sources:
        if len(picked) >= size:
            break
        picked.extend(by_source[s][: size - len(picked)])
    return sorted(picked)


# --- the runs ------------------------------------------------------------------------------


def start_spark() -> SparkSession:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("neardup-bench-dedup")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "2000")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    return spark


@dataclass
class JobRun:
    label: str
    corpus: CorpusFile
    method: str
    seconds: float
    summary: dedup_job.Summary
    output: Path
    load: tuple[float, float]  # 1-minute load average before and after
    pipeline: Pipeline
    verification: str  # MinHash: exact | estimate; SimHash: distance
    variant: bool = False  # the SEMBLANCE MinHash configuration instead of the defaults

    @property
    def docs_s(self) -> float:
        return self.corpus.n / self.seconds

    @property
    def system(self) -> str:
        return f"neardup {self.method}" + (" semblance 16x8 estimate" if self.variant else "")

    def figures(self) -> dict[str, Any]:
        s = self.summary
        return {
            "corpus": self.corpus.name,
            "method": self.method,
            "pipeline": s.pipeline,
            "verification": self.verification,
            "docs": self.corpus.n,
            "mb": round(self.corpus.nbytes / 1e6, 2),
            "seconds": round(self.seconds, 1),
            "docs_s": round(self.docs_s, 1),
            "mb_s": round(self.corpus.nbytes / 1e6 / self.seconds, 3),
            "exact_duplicates": s.exact_duplicates,
            "candidates": s.candidates,
            "verified": s.verified,
            "clusters": s.clusters,
            "kept": s.kept,
            "removed": s.removed,
            "chained": s.chained,
            "hot_buckets": s.hot_buckets,
            "rounds": s.rounds,
            "stage_seconds": s.seconds,
            "load_1min_before_after": list(self.load),
        }


def run_job(
    spark: SparkSession, corpus: CorpusFile, method: str, label: str, variant: bool = False
) -> JobRun:
    """One end-to-end run of ``jobs/dedup.py``'s ``run`` (read jsonl .. write parquet)."""
    out = WORK / "runs" / label
    shutil.rmtree(out, ignore_errors=True)
    minhash = method == "minhash"
    config = load_config(
        None,
        input=str(corpus.path),
        output=str(out),
        input_format="jsonl",
        id_col="id",
        text_col="text",
        method=method,
        threshold=THRESHOLD if minhash else None,
        outputs=OUTPUTS,
        **(SEMBLANCE if variant else {}),
    )
    log(f"job {label}: {method} on {corpus.name} ({corpus.n} docs)")
    before = os.getloadavg()[0]
    result: list[dedup_job.Summary] = []
    seconds = best_of(lambda: result.append(dedup_job.run(spark, config)), 1)
    load = (before, os.getloadavg()[0])
    check = config.verification if minhash else "distance"
    run = JobRun(label, corpus, method, seconds, result[0], out, load, config.pipeline(), check)
    run.variant = variant
    log(f"job {label}: {seconds:.1f} s, {run.docs_s:.0f} docs/s, stages {result[0].seconds}")
    return run


def mllib_tables(target_recall: float = TARGET_RECALL_075, j: float = 0.75) -> int:
    """Fewest MinHashLSH tables L with candidate probability 1 - (1 - J)^L >= target at J.

    MLlib's MinHashLSH is pure OR-amplification (one MinHash per table), so a pair with
    Jaccard J is a candidate with probability 1 - (1 - J)^L, and approxSimilarityJoin then
    checks its exact Jaccard distance: recall = that probability, precision = 1 (on the
    hashed sets). L = 3 already gives 0.973 at J = 0.7 (the baseline's >= 0.95); L = 4 is
    the fewest that also gives >= 0.99 at J = 0.75 (0.996; 0.992 at 0.7), the job's target.
    """
    return math.ceil(math.log(1 - target_recall) / math.log(1 - j))


@dataclass
class MllibRun:
    corpus: CorpusFile
    tables: int
    seconds: float
    with_shingles: int  # documents with at least one shingle (MinHashLSH rejects empty vectors)
    pairs: list[tuple[str, str]]
    load: tuple[float, float]
    buckets: dict[str, int]  # largest bucket, and join rows (sum of squared bucket sizes)

    def figures(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus.name,
            "docs": self.corpus.n,
            "docs_with_shingles": self.with_shingles,
            "num_hash_tables": self.tables,
            "seconds": round(self.seconds, 1),
            "docs_s": round(self.corpus.n / self.seconds, 1),
            "pairs": len(self.pairs),
            "load_1min_before_after": list(self.load),
            "buckets": self.buckets,
        }


def _shingles_udf() -> Any:
    w = SHINGLE_W

    @pandas_udf(ArrayType(LongType()))  # type: ignore[call-overload]
    def shingles(texts: pd.Series) -> pd.Series:
        hashes, offsets = word_shingles_batch(texts.tolist(), w)
        signed = hashes.view(np.int64)
        return pd.Series(
            [np.unique(signed[offsets[i] : offsets[i + 1]]) for i in range(len(texts))]
        )

    return shingles


def mllib_join(
    spark: SparkSession, path: Path, out: Path, tables: int, id_col: str = "id"
) -> tuple[DataFrame, int]:
    """The MLlib pipeline ``run_mllib`` times: read the jsonl at ``path`` (columns ``id_col``,
    text), word 3-shingles (documents without any dropped: MinHashLSH rejects empty
    vectors), HashingTF (binary, 2^30), MinHashLSH (``tables`` tables, seeded), self-join
    with approxSimilarityJoin at Jaccard distance 1 - 0.7, and the pairs (a < b, distance)
    written as parquet to ``out``. Returns the hashed documents (persisted: unpersist them)
    and their count."""
    shingles = _shingles_udf()
    text = shingles(F.col("text")).alias("sh")
    docs = spark.read.json(str(path)).select(F.col(id_col).alias("id"), text)
    docs = docs.where(F.size("sh") > 0)
    tf = HashingTF(inputCol="sh", outputCol="features", numFeatures=MLLIB_FEATURES)
    feats = tf.setBinary(True).transform(docs).select("id", "features")
    lsh = MinHashLSH(inputCol="features", outputCol="hashes", numHashTables=tables, seed=SEED)
    model = lsh.fit(feats)
    hashed = model.transform(feats).persist()
    count = hashed.count()
    # distance < 1 - 0.7 would drop pairs at exactly J = 0.7 (Spark filters with "<")
    joined = model.approxSimilarityJoin(hashed, hashed, 1.0 - THRESHOLD + 1e-9, "distance")
    pairs = joined.select(
        F.col("datasetA.id").alias("a"), F.col("datasetB.id").alias("b"), "distance"
    ).where(F.col("a") < F.col("b"))
    pairs.write.mode("overwrite").parquet(str(out))
    return hashed, count


def run_mllib(spark: SparkSession, corpus: CorpusFile, label: str, tables: int) -> MllibRun:
    """MinHashLSH + approxSimilarityJoin (self-join, Jaccard distance < 1 - 0.7), read jsonl ..
    write the pairs as parquet, timed end to end like the job (``mllib_join``)."""
    out = WORK / "runs" / label
    shutil.rmtree(out, ignore_errors=True)
    counted: list[int] = []
    kept: list[DataFrame] = []

    def job() -> None:
        hashed, count = mllib_join(spark, corpus.path, out, tables)
        counted.append(count)
        kept.append(hashed)

    log(f"mllib {label}: {tables} tables on {corpus.name} ({corpus.n} docs)")
    before = os.getloadavg()[0]
    seconds = best_of(job, 1)
    load = (before, os.getloadavg()[0])
    pairs = [(r.a, r.b) for r in spark.read.parquet(str(out)).select("a", "b").collect()]
    # untimed: why the join costs what it costs (MLlib has no cap on bucket sizes)
    sizes = (
        kept[0]
        .select(F.posexplode("hashes").alias("table", "h"))
        .select("table", vector_to_array("h")[0].alias("h"))
        .groupBy("table", "h")
        .count()
    )
    row = sizes.agg(F.max("count"), F.sum(F.col("count") * F.col("count"))).first()
    kept[0].unpersist()
    buckets = {"largest": int(row[0] or 0), "join_rows": int(row[1] or 0)} if row else {}
    log(f"mllib {label}: {seconds:.1f} s, {len(pairs)} pairs, buckets {buckets}")
    return MllibRun(corpus, tables, seconds, counted[0], pairs, load, buckets)


# --- scoring -------------------------------------------------------------------------------


def mllib_codes(ev: EvalSet, run: MllibRun) -> I64:
    a, b = [], []
    for x, y in run.pairs:
        if x in ev.index and y in ev.index:
            a.append(ev.index[x])
            b.append(ev.index[y])
    return _edge_codes(a, b, len(ev.docs))


class Leaders:
    """``exact_leaders`` per (corpus, preset), computed once."""

    def __init__(self) -> None:
        self._done: dict[tuple[str, str], dict[str, str]] = {}

    def get(self, corpus: CorpusFile, method: str) -> dict[str, str]:
        preset = "semblance" if method == "minhash" else "ditto/2"
        key = (corpus.name, preset)
        if key not in self._done:
            self._done[key] = exact_leaders(corpus, preset)
        return self._done[key]


def score_runs(
    spark: SparkSession, ev: EvalSet, jobs: Sequence[JobRun], ml: MllibRun, leaders: Leaders
) -> None:
    """Score the job's runs (both readings of "found") and MLlib's on ``ev``."""
    for run in jobs:
        found = cluster_pairs(spark, run.output, ev.index)
        ev.results[f"{run.system} (cluster pairs)"] = quality(found, ev)
        lead = leaders.get(run.corpus, run.method)
        found = edge_pairs(spark, run.output, ev.index, lead)
        ev.results[f"{run.system} (edges + exact dups)"] = quality(found, ev, run)
    ev.results[f"MLlib MinHashLSH L={ml.tables}"] = quality(mllib_codes(ev, ml), ev)


def check_counts(run: JobRun, leaders: Leaders) -> list[str]:
    """Cross-checks of the job's summary: record conservation, and its exact-duplicate count
    against an independent one (same canonical form, computed here without Spark)."""
    problems = []
    s = run.summary
    if s.kept + s.removed + s.rejected != s.input or s.input != run.corpus.n:
        problems.append(f"{run.label}: kept + removed + rejected != input")
    groups = len(set(leaders.get(run.corpus, run.method).values()))
    if s.exact_duplicates != run.corpus.n - groups:
        problems.append(
            f"{run.label}: exact_duplicates {s.exact_duplicates}, independent count "
            f"{run.corpus.n - groups}"
        )
    return problems


# --- report --------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import pyspark

    free = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    return {
        "nproc": os.cpu_count(),
        "free_h": free.strip(),
        "load_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "java": (java.stderr.splitlines() or ["?"])[0],
        "platform": platform.platform(),
    }


def _cell(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:.0f}" if abs(c) >= 1000 else f"{c:.4g}"
    return str(c)


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [list(header)] + [[_cell(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n== {title} ==")
    for k, r in enumerate(cells):
        print(
            "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))
        )
        if k == 0:
            print("  ".join("-" * w for w in widths))


def lsh_curve(variant: bool = False) -> dict[str, Any]:
    """The job's MinHash banding at threshold 0.7 (default, or SEMBLANCE's) and its candidate
    probability per Jaccard similarity, 1 - (1 - J^rows)^bands."""
    options = SEMBLANCE if variant else {}
    pipeline = load_config(None, input="-", output="-", threshold=THRESHOLD, **options).pipeline()
    b, r = pipeline.param("bands"), pipeline.param("rows")
    curve = {f"{j:.2f}": round(1 - (1 - j**r) ** b, 4) for j in (0.6, 0.65, 0.7, 0.75, 0.8, 0.9)}
    return {"bands": b, "rows": r, "lsh_threshold": round(pipeline.threshold, 4), "p": curve}


# --- main ----------------------------------------------------------------------------------


@dataclass
class Corpora:
    parts: dict[str, Docs]
    real: CorpusFile
    scaled: Scaled
    large: CorpusFile
    sample: CorpusFile  # MLlib's sample: a prefix of ``large`` (or all of it)
    prefixes: dict[int, CorpusFile]  # scaling: 1x, 2x, 4x the base
    identical: CorpusFile
    identical_source: str
    warm: CorpusFile
    seconds: float


def build_corpora(args: argparse.Namespace) -> Corpora:
    started = time.perf_counter()
    parts = {k: v[:: args.real_every] for k, v in load_real().items()}
    real_docs = [d for docs in parts.values() for d in docs]
    real = write_corpus("real", real_docs)
    scaled = scaled_corpus(real_docs, args.scale)
    large = write_corpus(f"scaled_{args.scale}", scaled.docs)

    written: dict[int, CorpusFile] = {large.n: large}

    def prefix(n: int) -> CorpusFile:
        n = min(n, large.n)
        if n not in written:
            written[n] = write_corpus(f"prefix_{n}", large.docs[:n])
        return written[n]

    base = args.base or max(1, min(12_500, args.scale // 4))
    prefixes = {n: prefix(n) for n in (base, 2 * base, 4 * base) if n <= large.n}
    distinct = prefixes[base]
    mean = distinct.nbytes / distinct.n
    pick = min(real_docs, key=lambda d: abs(len(d[1].encode("utf-8")) - mean))
    width = len(str(base))
    identical = write_corpus(
        f"identical_{base}", [(f"i{i:0{width}d}", pick[1]) for i in range(base)]
    )
    warm = write_corpus("warmup", warmup_docs(real_docs))
    seconds = time.perf_counter() - started
    log(f"corpora built in {seconds:.1f} s: real {real.n}, scaled {large.n}")
    return Corpora(
        parts,
        real,
        scaled,
        large,
        prefix(min(args.mllib_sample, large.n)),
        prefixes,
        identical,
        pick[0],
        warm,
        seconds,
    )


def warm_up(spark: SparkSession, warm: CorpusFile, tables: int) -> None:
    """Untimed: JVM and plan code paths, Python workers, both presets' JIT kernels, MLlib."""
    run_job(spark, warm, "minhash", "warmup_minhash")
    ditto = resolve("ditto/2")
    text = F.col("text")
    df = spark.read.json(str(warm.path)).repartition(2)
    df = df.select(fingerprint_udf(ditto)(text), exact_key_udf(ditto)(text))
    df.write.format("noop").mode("overwrite").save()
    run_mllib(spark, warm, "warmup_mllib", tables)


@dataclass
class Runs:
    jobs: dict[str, JobRun]
    scaling: dict[int, JobRun]
    mllib: dict[str, MllibRun]


def spark_runs(spark: SparkSession, c: Corpora, tables: int, variant: bool) -> Runs:
    warm_up(spark, c.warm, tables)
    jobs: dict[str, JobRun] = {}
    mllib: dict[str, MllibRun] = {}
    for method in ("minhash", "simhash"):
        jobs[f"real_{method}"] = run_job(spark, c.real, method, f"real_{method}")
    mllib["real"] = run_mllib(spark, c.real, "mllib_real", tables)
    for method in ("minhash", "simhash"):
        jobs[f"large_{method}"] = run_job(spark, c.large, method, f"large_{method}")
    if c.sample is not c.large:
        jobs["sample_minhash"] = run_job(spark, c.sample, "minhash", "sample_minhash")
    mllib["sample"] = run_mllib(spark, c.sample, "mllib_sample", tables)
    if variant:
        for name, corpus in (("real", c.real), ("sample", c.sample)):
            label = f"{name}_minhash_semblance"
            jobs[label] = run_job(spark, corpus, "minhash", label, variant=True)
    scaling: dict[int, JobRun] = {}
    for n, corpus in c.prefixes.items():
        if corpus is c.large:
            scaling[n] = jobs["large_minhash"]
        elif corpus is c.sample:
            scaling[n] = jobs["sample_minhash"]
        else:
            scaling[n] = run_job(spark, corpus, "minhash", f"scale_{n}")
    jobs["identical_minhash"] = run_job(spark, c.identical, "minhash", "identical_minhash")
    return Runs(jobs, scaling, mllib)


def report(
    c: Corpora, runs: Runs, evals: Sequence[EvalSet], figures: dict[str, Any], tables: int
) -> None:
    jobs, ml = runs.jobs, runs.mllib
    all_runs = {**jobs, **{f"scale_{n}": r for n, r in runs.scaling.items()}}
    sample_job = jobs["sample_minhash"] if "sample_minhash" in jobs else jobs["large_minhash"]
    base = min(runs.scaling)
    figures["job_runs"] = {k: r.figures() for k, r in all_runs.items()}
    figures["mllib"] = {k: r.figures() for k, r in ml.items()}
    figures["mllib_over_neardup_seconds"] = {
        "real": round(ml["real"].seconds / jobs["real_minhash"].seconds, 2),
        "sample": round(ml["sample"].seconds / sample_job.seconds, 2),
    }
    figures["quality"] = {
        ev.name: {name: q.figures() for name, q in ev.results.items()} for ev in evals
    }
    figures["truth_seconds"] = {ev.name: round(ev.truth.seconds, 2) for ev in evals}
    figures["scaling_seconds"] = {str(n): round(r.seconds, 1) for n, r in runs.scaling.items()}
    figures["identical_vs_distinct_seconds"] = {
        "identical": round(jobs["identical_minhash"].seconds, 1),
        "distinct": round(runs.scaling[base].seconds, 1),
    }
    large = c.large
    met = large.n >= TARGET_DOCS and large.nbytes >= TARGET_BYTES
    figures["target_scale_met"] = met

    print("neardup dedup job, end to end (read jsonl .. write parquet), local[2], one session")
    m = figures["machine"]
    print(f"machine: nproc {m['nproc']}, 1/5/15-min load at start {m['load_1_5_15']}")
    print(
        f"real texts: {c.real.n} docs, {c.real.nbytes / 1e6:.1f} MB "
        f"({', '.join(f'{k} {len(v)}' for k, v in c.parts.items())})"
    )
    print(
        f"scaled corpus: {large.n} docs, {large.nbytes / 1e6:.1f} MB in {c.scaled.source.max() + 1}"
        f" families (scaled_corpus: 1 + Poisson(1) seeded random edits of a per-family source"
        f" text). Target {TARGET_DOCS} docs / {TARGET_BYTES // 10**6} MB: "
        f"{'met' if met else 'timed by --large-only --scale 500000 (make bench runs it)'}"
    )
    print(f"edits applied (documents): {figures['scaled_recipe']}")
    print(f"identical corpus: {c.identical.n} copies of {c.identical_source}")
    print_table(
        "dedup job runs (seconds = wall time of dedup.run, one run each)",
        ["run", "method", "docs", "MB", "seconds", "docs/s", "exact", "cand", "verified"]
        + ["clusters", "removed", "chained", "hot", "load 1m"],
        [
            (k, r.system.removeprefix("neardup "), r.corpus.n, round(r.corpus.nbytes / 1e6, 1))
            + (r.seconds, round(r.docs_s))
            + (r.summary.exact_duplicates, r.summary.candidates, r.summary.verified)
            + (r.summary.clusters, r.summary.removed, r.summary.chained, r.summary.hot_buckets)
            + (f"{r.load[0]:.1f}/{r.load[1]:.1f}",)
            for k, r in all_runs.items()
        ],
    )
    stages = list(jobs["real_minhash"].summary.seconds)
    print_table(
        "stage seconds",
        ["run", *stages],
        [(k, *(r.summary.seconds.get(s, 0.0) for s in stages)) for k, r in all_runs.items()],
    )
    ratio = figures["mllib_over_neardup_seconds"]
    print_table(
        f"MLlib MinHashLSH (numHashTables={tables}) vs neardup minhash, same documents",
        ["corpus", "docs", "neardup s", "MLlib s", "MLlib/neardup", "MLlib pairs"],
        [
            (r.corpus.name, r.corpus.n, j.seconds, r.seconds, ratio[k], len(r.pairs))
            for k, r, j in (
                ("real", ml["real"], jobs["real_minhash"]),
                ("sample", ml["sample"], sample_job),
            )
        ],
    )
    for ev in evals:
        print_table(
            f"quality on {ev.name} ({len(ev.docs)} docs; truth: exact J of word 3-shingle sets)",
            ["system", "found", "T>=.7", "T>=.75", "R>=.7", "R>=.75", "precision"]
            + ["fp .6-.7", "fp <.6", "fp no-shingle same/diff", "misses >=.75"],
            [
                (name, q.found, q.truth_07, q.truth_075, q.recall_07, q.recall_075, q.precision)
                + (q.fp_near, q.fp_far, f"{q.fp_empty_same}/{q.fp_empty_diff}", q.misses or "")
                for name, q in ev.results.items()
            ],
        )
    identical = jobs["identical_minhash"]
    print_table(
        "scaling (minhash)",
        ["corpus", "docs", "seconds", "docs/s"],
        [(r.corpus.name, n, r.seconds, round(r.docs_s)) for n, r in runs.scaling.items()]
        + [(identical.corpus.name, identical.corpus.n, identical.seconds, round(identical.docs_s))],
    )
    print(f"\njob MinHash banding at 0.7: {figures['neardup_lsh']}")
    if figures["neardup_lsh_semblance"]:
        print(f"semblance 16x8 (estimate verification): {figures['neardup_lsh_semblance']}")
    print(f"MLlib buckets: { {k: r.buckets for k, r in ml.items()} }")
    print(
        "found pairs: 'cluster pairs' = every pair inside one output cluster; 'edges + exact "
        "dups' = verified pairs (pairs/) expanded over exact-duplicate groups, plus the pairs "
        "inside those groups; MLlib = its join's pairs"
    )
    print(
        f"targets: recall(J >= 0.75) >= {TARGET_RECALL_075}, precision >= {TARGET_PRECISION}, "
        f"MLlib recall(J >= 0.7) >= {TARGET_MLLIB_RECALL_07}"
    )
    print(f"problems: {figures['problems'] or 'none'}")


def large_only(args: argparse.Namespace) -> int:
    """``--large-only``: build the scaled corpus and time both methods on it, nothing else.

    For the 500,000-document target: scoring and MLlib at that size do not fit the machine's
    time budget, so the full bench runs at a smaller ``--scale``."""
    started = time.perf_counter()
    real_docs = [d for docs in load_real().values() for d in docs]
    scaled = scaled_corpus(real_docs, args.scale)
    large = write_corpus(f"scaled_{args.scale}", scaled.docs)
    built = time.perf_counter() - started
    log(f"corpus built in {built:.1f} s: {large.n} docs, {large.nbytes / 1e6:.1f} MB")
    figures: dict[str, Any] = {"bench": "dedup_large", "machine": machine(), "args": vars(args)}
    figures["corpus"] = {"docs": large.n, "mb": round(large.nbytes / 1e6, 2)}
    figures["scaled_recipe"] = dict(scaled.recipe.most_common())
    figures["corpus_build_seconds"] = round(built, 1)
    spark = start_spark()
    try:
        warm = write_corpus("warmup", warmup_docs(real_docs))
        run_job(spark, warm, "minhash", "warmup_minhash")
        runs = [run_job(spark, large, m, f"large_{m}") for m in ("minhash", "simhash")]
    finally:
        spark.stop()
    figures["job_runs"] = {r.label: r.figures() for r in runs}
    print_table(
        f"dedup job on the scaled corpus ({large.n} docs, {large.nbytes / 1e6:.1f} MB)",
        ["run", "seconds", "docs/s", "MB/s", "exact", "cand", "verified", "removed", "load 1m"],
        [
            (r.label, r.seconds, round(r.docs_s), round(large.nbytes / 1e6 / r.seconds, 2))
            + (r.summary.exact_duplicates, r.summary.candidates, r.summary.verified)
            + (r.summary.removed, f"{r.load[0]:.1f}/{r.load[1]:.1f}")
            for r in runs
        ],
    )
    print(json.dumps(figures, default=str))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=50_000, help="documents in the scaled corpus")
    p.add_argument("--base", type=int, help="scaling base size (default: min(12,500, scale/4))")
    p.add_argument("--eval-sample", type=int, default=EVAL_SAMPLE)
    p.add_argument("--mllib-sample", type=int, default=MLLIB_SAMPLE)
    p.add_argument("--tables", type=int, help="MLlib numHashTables (default: mllib_tables())")
    p.add_argument("--real-every", type=int, default=1, help="smoke tests: every k-th real text")
    p.add_argument(
        "--no-semblance",
        dest="variant",
        action="store_false",
        help="skip the SEMBLANCE MinHash runs (16 x 8, estimate)",
    )
    p.add_argument(
        "--large-only", action="store_true", help="only time both methods on --scale documents"
    )
    args = p.parse_args(argv)
    if not SHARED_DATA.is_dir():
        print(f"bench_dedup: skipped: {SHARED_DATA} is absent (the real texts are needed)")
        return 0
    if args.large_only:
        return large_only(args)
    started = time.perf_counter()
    tables = args.tables or mllib_tables()
    figures: dict[str, Any] = {"bench": "dedup_e2e", "date": "2026-11-30", "machine": machine()}
    figures["args"] = vars(args)
    figures["neardup_lsh"] = lsh_curve()
    figures["neardup_lsh_semblance"] = lsh_curve(variant=True) if args.variant else None

    c = build_corpora(args)
    figures["corpora"] = {
        f.name: {"docs": f.n, "mb": round(f.nbytes / 1e6, 2)}
        for f in (c.real, c.large, c.sample, c.identical, *c.prefixes.values())
    }
    figures["real_parts"] = {k: len(v) for k, v in c.parts.items()}
    figures["scaled_recipe"] = dict(c.scaled.recipe.most_common())
    figures["identical_doc"] = c.identical_source
    figures["corpus_build_seconds"] = round(c.seconds, 1)

    # the exact ground truth needs no Spark
    figures["truth_self_check"] = check_against_shipped_truth(load_real()["copyright"])
    log(f"truth self-check: {figures['truth_self_check']}")
    positions = family_sample(c.scaled, c.sample.n, args.eval_sample)
    evals = [
        make_eval("copyright", c.parts["copyright"]),
        make_eval("real", c.real.docs),
        make_eval(f"scaled sample {len(positions)}", [c.large.docs[i] for i in positions]),
    ]

    spark = start_spark()
    try:
        runs = spark_runs(spark, c, tables, args.variant)
        leaders = Leaders()
        jobs = runs.jobs
        real_jobs = [jobs["real_minhash"], jobs["real_simhash"]]
        sample_jobs = [jobs.get("sample_minhash", jobs["large_minhash"]), jobs["large_simhash"]]
        if args.variant:
            real_jobs.append(jobs["real_minhash_semblance"])
            sample_jobs.append(jobs["sample_minhash_semblance"])
        score_runs(spark, evals[0], real_jobs, runs.mllib["real"], leaders)
        score_runs(spark, evals[1], real_jobs, runs.mllib["real"], leaders)
        score_runs(spark, evals[2], sample_jobs, runs.mllib["sample"], leaders)
        distinct_runs = {r.label: r for r in [*jobs.values(), *runs.scaling.values()]}
        problems = [m for r in distinct_runs.values() for m in check_counts(r, leaders)]
    finally:
        spark.stop()
    s = runs.jobs["identical_minhash"].summary
    if (s.exact_duplicates, s.kept, s.clusters) != (c.identical.n - 1, 1, 1):
        problems.append(f"identical corpus: {s}")
    if not figures["truth_self_check"]["identical"]:
        problems.append("exact_pairs does not reproduce the shipped copyright ground truth")
    figures["problems"] = problems
    report(c, runs, evals, figures, tables)
    figures["total_seconds"] = round(time.perf_counter() - started, 1)
    print(f"total wall time {figures['total_seconds']:.0f} s")
    print(json.dumps(figures, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
