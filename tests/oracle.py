"""Naive, per-character and per-shingle re-implementations of ditto from the spec text.

Written independently of the package (no shared helpers beyond the Go tables, read from the
golden copy): the vectorised kernels must agree with these on every input.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
MASK = (1 << 64) - 1


@cache
def go_tables() -> tuple[frozenset[int], dict[int, int]]:
    t = json.loads((GOLDEN / "unicode-15.0.0-go-and-semblance-tables.json").read_text())
    return frozenset(t["go_IsSpace_runes"]), {a: b for a, b in t["go_ToLower_map"]}


def go_runes(b: bytes) -> list[str]:
    """Go's range-over-string decoding, by hand: one U+FFFD per invalid byte."""
    out: list[str] = []
    i, n = 0, len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            out.append(chr(c))
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            need, lo, hi, cp = 1, 0x80, 0xBF, c & 0x1F
        elif c == 0xE0:
            need, lo, hi, cp = 2, 0xA0, 0xBF, c & 0x0F
        elif 0xE1 <= c <= 0xEC or 0xEE <= c <= 0xEF:
            need, lo, hi, cp = 2, 0x80, 0xBF, c & 0x0F
        elif c == 0xED:
            need, lo, hi, cp = 2, 0x80, 0x9F, c & 0x0F
        elif c == 0xF0:
            need, lo, hi, cp = 3, 0x90, 0xBF, c & 0x07
        elif 0xF1 <= c <= 0xF3:
            need, lo, hi, cp = 3, 0x80, 0xBF, c & 0x07
        elif c == 0xF4:
            need, lo, hi, cp = 3, 0x80, 0x8F, c & 0x07
        else:
            out.append("\ufffd")
            i += 1
            continue
        ok = i + need < n  # all continuation bytes present
        if ok:
            ok = lo <= b[i + 1] <= hi and all(0x80 <= b[i + j] <= 0xBF for j in range(2, need + 1))
        if not ok:
            out.append("\ufffd")
            i += 1
            continue
        for j in range(1, need + 1):
            cp = (cp << 6) | (b[i + j] & 0x3F)
        out.append(chr(cp))
        i += need + 1
    return out


def naive_strip_tags(runes: Sequence[str]) -> list[str]:
    """``runes`` outside markup: a ``<`` before a letter, ``/``, ``!`` or ``?`` opens a
    tag (tags nest), its ``>`` closes it and stands as one space."""
    kept: list[str] = []
    depth = 0
    for i, r in enumerate(runes):
        nxt = runes[i + 1] if i + 1 < len(runes) else ""
        if r == "<" and nxt != "" and (nxt in "/!?" or (nxt.isascii() and nxt.isalpha())):
            depth += 1
        elif r == ">" and depth > 0:
            depth -= 1
            kept.append(" ")
        elif depth == 0:
            kept.append(r)
    return kept


def naive_normalize(data: bytes) -> str:
    spaces, lower = go_tables()
    kept = naive_strip_tags(go_runes(data))
    lowered = [chr(lower.get(ord(r), ord(r))) for r in kept]
    fields: list[str] = []
    cur: list[str] = []
    for r in lowered:
        if ord(r) in spaces:
            if cur:
                fields.append("".join(cur))
                cur = []
        else:
            cur.append(r)
    if cur:
        fields.append("".join(cur))
    return " ".join(fields)


def fnv1a(b: bytes) -> int:
    h = 0xCBF29CE484222325
    for c in b:
        h = ((h ^ c) * 0x100000001B3) & MASK
    return h


def naive_features(data: bytes, char_n: int, word_n: int) -> Counter[int]:
    norm = naive_normalize(data)
    counts: Counter[int] = Counter()
    if char_n > 0:
        runes = list(norm)
        for i in range(len(runes) - char_n + 1):
            counts[fnv1a("".join(runes[i : i + char_n]).encode())] += 1
    if word_n > 0:
        words = norm.split(" ") if norm else []
        for i in range(len(words) - word_n + 1):
            counts[fnv1a(" ".join(words[i : i + word_n]).encode())] += 1
    if not counts:
        counts[fnv1a(norm.encode())] = 1
    return counts


def naive_simhash(features: Counter[int]) -> int:
    acc = [0] * 64
    for h, w in features.items():
        for i in range(64):
            acc[i] += w if (h >> i) & 1 else -w
    return sum(1 << i for i in range(64) if acc[i] > 0)


def naive_fingerprint(data: bytes, char_n: int = 4, word_n: int = 0) -> int:
    return naive_simhash(naive_features(data, char_n, word_n))
