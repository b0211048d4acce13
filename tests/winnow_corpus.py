"""What the winnowing tests share: documents with shared passages (copied pieces, repeats,
a footer, a header), the k-gram and window they are fingerprinted with, and their JSON
lines as the spans and boilerplate jobs read them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

KGRAM_BYTES, WINDOW = 8, 6
FOOTER = (
    "\n-- \nPosted to rec.boats.paddle - archived by the list server at example.org; "
    "to leave, mail listserv@example.org\n"
)
HEADER = "Digest ünïcode édition — list header\n"


def words(rng: random.Random, n: int) -> str:
    """``n`` random words of the form ``w<number>``."""
    return " ".join(f"w{rng.randrange(5000)}" for _ in range(n))


def winnow_docs(seed: int = 3) -> list[tuple[str, str]]:
    """Documents with shared passages: copied pieces, repeats, a footer and a header."""
    rng = random.Random(seed)
    base = [words(rng, rng.randint(30, 90)) for _ in range(5)]
    docs = [(f"d{i}", t) for i, t in enumerate(base)]
    docs.append(("d5", base[0][:150] + " inserted ünï " + base[1][40:260] + base[0][:90]))
    docs.append(("d6", base[2] + " " + base[2]))
    docs.append(("d7", "short"))
    docs.append(("d8", ""))
    for i in range(9, 15):
        head = HEADER if i % 2 else ""
        tail = FOOTER if i < 13 else ""
        docs.append((f"d{i}", head + words(rng, 40) + tail))
    return docs


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """The folder ``path``, holding ``rows`` as one JSON lines file."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "part.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return path


def jsonl_rows(docs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """``docs`` as records (``url``, ``body``, ``host``), plus one without a body and one
    of 5,000 bytes."""
    out: list[dict[str, Any]] = [{"url": d, "body": t, "host": f"h{len(t) % 2}"} for d, t in docs]
    out.append({"url": "nullbody", "host": "h0"})
    out.append({"url": "huge", "body": "x" * 5000, "host": "h0"})
    return out


def read_table(spark, path: Path) -> list[tuple]:  # type: ignore[no-untyped-def]
    """The Parquet table at ``path``: its rows, columns in name order, sorted."""
    df = spark.read.parquet(str(path))
    return sorted(tuple(r) for r in df.select(sorted(df.columns)).collect())
