"""The corpus on which the dedup job's two engines (the driver's process, Spark stages) must
agree, and the tables and report parts they are compared on."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from dedup_corpus import planted
from dedup_runs import TOKEN_LESS

TABLES = ("docs", "clusters", "pairs", "samples", "rejects")
REPORTED = ("counts", "bands", "hot_buckets", "cluster_size_histogram", "scores")
# JSON lines as written, backslash escapes and all: lone surrogates (a, b, c: rejected) and
# the escapes that are not (d: a pair; e: an escaped backslash; f, g: another field, the id)
LONE_SURROGATES = [
    r'{"id": "a", "text": "x\ud800y", "n": 1}',
    r'{"text": "a lone low \uDC00 surrogate before the id", "id": "b", "n": 2}',
    r'{"id": "c", "text": "a pair the wrong way round \ude00\ud83d", "n": 3}',
    r'{"id": "d", "text": "a pair \ud83d\ude00 is one character", "n": 4}',
    r'{"id": "e", "text": "an escaped backslash: \\ud800 is six characters", "n": 5}',
    r'{"id": "f", "title": "t\ud800", "text": "the lone surrogate is in the title", "n": 6}',
    r'{"id": "g\udfff", "text": "the lone surrogate is in the id", "n": 7}',
]


def engine_corpus(path: Path) -> Path:
    """Planted families, a dense family (hot buckets at a small ``hot_bucket_size``), exact
    copies, texts without a token, pages with no visible text, a null text and an order
    column with nulls and ties."""
    rng = random.Random(39)
    corpus = planted(n_families=12, n_singles=25, seed=39)
    rows: list[dict[str, Any]] = [
        {"url": d, "body": t, "crawl": rng.choice([None, 1, 2, 2, 3])} for d, t in corpus.docs
    ]
    base = corpus.docs[0][1].split()
    for i in range(9):  # one dense family: each drops a different word
        words = base[:i] + base[i + 1 :]
        rows.append({"url": f"dense-{i}", "body": " ".join(words), "crawl": i % 3})
    rows += [{"url": f"tokenless-{d}", "body": t, "crawl": 1} for d, t in TOKEN_LESS]
    rows += [
        {"url": "script-only", "body": "<script>var x = 1;</script>", "crawl": 2},
        {"url": "copy-of-first", "body": corpus.docs[0][1], "crawl": None},
        {"url": "html-of-first", "body": f"<p>{corpus.docs[0][1]}</p>", "crawl": 4},
        {"url": "null-text", "body": None, "crawl": 1},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def with_excerpts(src: Path, path: Path) -> Path:
    """The JSON lines of ``src`` (``url``, ``body``) at ``path``, plus excerpts of its longer
    texts (a few edited, one wrapped in HTML, one copied exactly, one holding 90 % of its
    page: a near-duplicate of it that the rules min_id and earliest keep, and one more in
    HTML whose markup makes it longer than its page's text) and a teaser too short to take
    part in containment (12 words)."""
    rows = [json.loads(line) for line in src.read_text().splitlines()]
    long = [r for r in rows if r["url"] and r["body"] and len(r["body"].split()) >= 60][:8]
    added = []
    for i, r in enumerate(long):
        words = r["body"].split()
        part = words[len(words) // 4 : len(words) // 4 + max(30, len(words) // 2)]
        if i % 3 == 1:
            part[5] = "edited"
        text = " ".join(part)
        added.append({"url": f"excerpt-{i}", "body": f"<p>{text}</p>" if i == 2 else text,
                      "crawl": i % 3})  # fmt: skip
    added.append({"url": "excerpt-copy", "body": added[0]["body"], "crawl": None})
    # most of a page: its near-duplicate too, kept by the rule until containment prefers the page
    most = long[3]["body"].split()
    added.append({"url": "a-most", "body": " ".join(most[: len(most) * 9 // 10]), "crawl": 0})
    page = long[7]["body"]
    style = "p { margin: 0 } " * (len(page) // 16)  # invisible: the raw text outgrows the page's
    most = " ".join(page.split()[: len(page.split()) * 9 // 10])
    body = f"<html><head><style>{style}</style></head><body><p>{most}</p></body></html>"
    added.append({"url": "a-most-html", "body": body, "crawl": 0})
    added.append({"url": "teaser", "body": " ".join(long[0]["body"].split()[:12]), "crawl": 1})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows + added), encoding="utf-8")
    return path
