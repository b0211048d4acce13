"""Helpers to read generated-fingerprint.json and generated-anchor-fingerprint.json, and the
texts the oracles of the two text SimHash kernels (fingerprint/1, anchor/1) draw from."""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

GOLDEN = Path(__file__).parent / "golden"


@cache
def golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / name).read_text("utf-8"))
    return data


def fp_golden() -> dict[str, Any]:
    return golden("generated-fingerprint.json")


def an_golden() -> dict[str, Any]:
    return golden("generated-anchor-fingerprint.json")


def golden_inputs(doc: dict[str, Any]) -> list[tuple[str, bytes]]:
    return [(i["id"], bytes.fromhex(i["hex"])) for i in doc["inputs"]]


def hex16(values: list[int]) -> list[str]:
    return [f"{v:016x}" for v in values]


def f32_bits(x: float) -> str:
    return struct.pack(">f", x).hex()


FOX = "The quick brown fox {} over the lazy dog"

# texts: Unicode fragments where case mapping and alphanumeric classes are tricky, and
# invalid UTF-8
FRAGMENTS = [
    "İ", "ı", "İstanbul", "Σ", "ΣΟΦΟΣ", "σ", "ς", "ǅ", "ǈ", "ẞ", "ß", "Straße", "\u212a", "Ω",
    "\u2126", "é", "e\u0301", "\u0301", "\u0307", "\u094d", "नमस्ते", "私", "你好", "世界",
    "😀", "👨\u200d👩\u200d👧", "🇫🇷", "Ⅻ", "ⅻ", "½", "²", "٣٤", "०१२", "߀", "𝟘", "ﬁ", "Ａｂｃ",
    "\u023a", "\u2c65", "ⓐ", "Ⓐ", "\u0345", " ", "  ", "\u00a0", "\u3000", "\u200b", "\u2028",
    "\x1c", "\n", "\t", ",", ".", "-", "'", "_", "a", "Z", "9", "ab", "cd", "word", "fox",
    "123", "\ufffd", "\U000e0041", "\U0001e900", "\U0001e922", "\u10a0", "\u1c90",
]  # fmt: skip
INVALID = [
    b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\xaf", b"\xc2", b"\xe2\x82", b"\xed\xa0\x80",
    b"\xef\xbf", b"\xf0\x9f\x98", b"\xf4\x90\x80\x80", b"\xf5\x80", b"\xe0\x80\x80",
]  # fmt: skip

texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.characters(), st.characters(codec="ascii")),
    max_size=40,
).map("".join)
texts_with_surrogates = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.characters(categories=["Cs"])), max_size=20
).map("".join)
raw = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS).map(str.encode),
        st.sampled_from(INVALID),
        st.binary(max_size=4),
    ),
    max_size=40,
).map(b"".join)
docs = st.one_of(texts, texts_with_surrogates, raw)
