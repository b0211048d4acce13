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
