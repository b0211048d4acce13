"""A generated corpus with planted near-duplicate families, for the dedup job's tests."""

from __future__ import annotations

import random
from dataclasses import dataclass

WORDS = (
    "harbour council budget river station market winter garden library museum bridge tower "
    "village engine signal forest meadow valley summit canyon island desert glacier orchard "
    "teacher doctor farmer sailor miner baker painter writer singer dancer pilot driver "
    "quickly slowly quietly loudly early late often rarely always never maybe surely "
    "red green blue yellow purple orange silver golden bright dark heavy light narrow wide "
    "opened closed built painted carried followed watched answered started finished moved"
).split()


@dataclass(frozen=True)
class Corpus:
    docs: list[tuple[str, str]]  # (doc_id, text)
    families: list[list[str]]  # planted near-duplicate families (ids), size >= 2


def _text(rng: random.Random, n_words: int) -> str:
    sentences = []
    words = [rng.choice(WORDS) for _ in range(n_words)]
    for i in range(0, n_words, 12):
        chunk = words[i : i + 12]
        sentences.append(" ".join(chunk).capitalize() + ".")
    paragraphs = [" ".join(sentences[i : i + 4]) for i in range(0, len(sentences), 4)]
    return "\n\n".join(paragraphs)


def _edit(rng: random.Random, text: str, kind: str) -> str:
    if kind == "html":
        paras = text.split("\n\n")
        body = "".join(f"<p>{p}</p>\n" for p in paras)
        return f"<html><head><title>Page</title></head><body>\n{body}</body></html>"
    if kind == "reorder":
        paras = text.split("\n\n")
        if len(paras) > 2:
            paras[0], paras[1] = paras[1], paras[0]
        return "\n\n".join(paras)
    words = text.split(" ")
    for _ in range(max(1, len(words) // 60)):
        i = rng.randrange(len(words))
        if kind == "substitute":
            words[i] = rng.choice(WORDS)
        elif kind == "insert":
            words.insert(i, rng.choice(WORDS))
        else:
            del words[i]
    return " ".join(words)


def planted(n_families: int = 30, n_singles: int = 60, seed: int = 7) -> Corpus:
    """Families of an original plus 1-4 light edits (substitutions, insertions, deletions,
    a paragraph swap, HTML wrapping) and an exact copy now and then, plus unrelated texts."""
    rng = random.Random(seed)
    docs: list[tuple[str, str]] = []
    families: list[list[str]] = []
    kinds = ["substitute", "insert", "delete", "reorder", "html"]
    for f in range(n_families):
        base = _text(rng, rng.randint(150, 400))
        ids = [f"fam{f:03d}-0"]
        docs.append((ids[0], base))
        for v in range(1, rng.randint(2, 5)):
            ids.append(f"fam{f:03d}-{v}")
            variant = base if rng.random() < 0.15 else _edit(rng, base, rng.choice(kinds))
            docs.append((ids[-1], variant))
        families.append(ids)
    for s in range(n_singles):
        docs.append((f"single{s:03d}", _text(rng, rng.randint(20, 400))))
    rng.shuffle(docs)
    return Corpus(docs, families)


def pairs_of(groups: list[list[str]]) -> set[tuple[str, str]]:
    out = set()
    for g in groups:
        s = sorted(g)
        out.update((a, b) for i, a in enumerate(s) for b in s[i + 1 :])
    return out
