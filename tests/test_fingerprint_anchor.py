"""fingerprint/1 (richardwooding/fingerprint) and anchor/1 (anchor-fingerprint) text SimHash.

Goldens: every text field of generated-fingerprint.json (pHash ignored) and
generated-anchor-fingerprint.json; oracles: the compiled batch kernels against the
per-document references, and the compiled murmur3 against the mmh3 package.
"""

from __future__ import annotations

import json
import struct
from functools import cache
from pathlib import Path
from typing import Any

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup_udfs
from neardup_udfs.kernels import anchor, fingerprint_text
from neardup_udfs.kernels.hashing import fnv1a64
from neardup_udfs.presets import get_preset, resolve

GOLDEN = Path(__file__).parent / "golden"
DATA = Path(__file__).parent.parent / "neardup_udfs" / "data"


@cache
def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / name).read_text("utf-8"))
    return data


def fp_golden() -> dict[str, Any]:
    return _load("generated-fingerprint.json")


def an_golden() -> dict[str, Any]:
    return _load("generated-anchor-fingerprint.json")


def golden_inputs(doc: dict[str, Any]) -> list[tuple[str, bytes]]:
    return [(i["id"], bytes.fromhex(i["hex"])) for i in doc["inputs"]]


def hex16(values: list[int]) -> list[str]:
    return [f"{v:016x}" for v in values]


def f32_bits(x: float) -> str:
    return struct.pack(">f", x).hex()


# --- tables ---------------------------------------------------------------------------------


def test_shipped_tables_equal_the_golden_tables() -> None:
    go = json.loads((DATA / "go_unicode_15.json").read_text("utf-8"))
    go_golden = _load("unicode-15.0.0-go-and-semblance-tables.json")
    assert go["go_letter_ranges"] == go_golden["go_IsLetter_ranges"]
    assert go["go_digit_ranges"] == go_golden["go_IsDigit_ranges"]
    assert go["to_lower_map"] == go_golden["go_ToLower_map"]
    rust = json.loads((DATA / "rust_unicode_17.json").read_text("utf-8"))
    rust_golden = _load("unicode-17.0.0-rust-anchor-tables.json")
    assert rust["unicode_version"] == rust_golden["rust_unicode_version"] == "17.0.0"
    assert rust["alphanumeric_ranges"] == rust_golden["alphanumeric_ranges"]
    assert rust["to_lowercase_map"] == rust_golden["to_lowercase_map"]
    assert anchor.UNICODE_VERSION == "17.0.0"


# --- fingerprint goldens --------------------------------------------------------------------


@pytest.mark.parametrize("doc_id", [i["id"] for i in fp_golden()["inputs"]])
def test_fingerprint_per_input(doc_id: str) -> None:
    data = dict(golden_inputs(fp_golden()))[doc_id]
    want = fp_golden()["per_input"][doc_id]
    toks = fingerprint_text.tokens(data)
    feats = fingerprint_text.features(data)
    assert len(toks) == want["token_count"]
    assert len(feats) == want["feature_count"]
    if "tokens" in want:
        assert toks == want["tokens"]
        assert feats == (want["features"] or [])  # Go nil = no features
        assert hex16([fnv1a64(f.encode()) for f in feats]) == (want["feature_fnv1a64"] or [])
    else:
        assert toks[:30] == want["tokens_first_30"]
    fp = fingerprint_text.simhash(data)
    assert f"{fp:016x}" == want["simhash_hex"]
    assert fp == want["simhash_uint64"]
    assert int(fingerprint_text.simhash_batch([data])[0]) == fp
    # The str path (valid UTF-8 only) agrees with the bytes path.
    text = next(i["text"] for i in fp_golden()["inputs"] if i["id"] == doc_id)
    if text is not None:
        assert fingerprint_text.simhash(text) == fp


def test_fingerprint_batch_over_all_golden_inputs() -> None:
    items = golden_inputs(fp_golden())
    got = fingerprint_text.simhash_batch([d for _, d in items])
    assert got.dtype == np.uint64 and got.shape == (len(items),)
    want = [fp_golden()["per_input"][i]["simhash_uint64"] for i, _ in items]
    assert [int(v) for v in got] == want


def test_fingerprint_pairs() -> None:
    fps = {i: fingerprint_text.simhash(d) for i, d in golden_inputs(fp_golden())}
    for pair in fp_golden()["pairs"]:
        a, b = fps[pair["a"]], fps[pair["b"]]
        assert fingerprint_text.distance(a, b) == pair["distance"], pair
        sim = fingerprint_text.similarity(a, b)
        assert isinstance(sim, float) and sim == pair["similarity"], pair


def test_fingerprint_tokenize_cases() -> None:
    for text, want in fp_golden()["examples"]["tokenize_cases"].items():
        assert fingerprint_text.tokens(text) == want, text
    assert fingerprint_text.tokens("") == [] and fingerprint_text.tokens("...") == []


# Texts of the upstream Example_textNearDuplicate and TestSimilarity_Unrelated.
CARTOGRAPHER = (
    "The cartographer unrolled the brittle chart across the captain's table and traced the "
    "reef-strewn passage with a steady finger, warning that the southern current would carry "
    "any vessel onto the rocks before {} if the helmsman misjudged the tide by even a quarter "
    "hour."
)
REVENUE = (
    "Quarterly revenue rose twelve percent as the cloud division expanded its enterprise "
    "subscriptions, while the board approved a share buyback and raised guidance for the "
    "upcoming fiscal year."
)
GO_LANG = (
    "The Go programming language was developed at Google and announced publicly in November 2009."
)
PHOTOSYNTHESIS = (
    "Photosynthesis converts light energy into chemical energy stored in glucose molecules."
)


def test_fingerprint_examples() -> None:
    ex = fp_golden()["examples"]
    near = ex["example_textNearDuplicate"]
    base = fingerprint_text.simhash(CARTOGRAPHER.format("dawn"))
    edit = fingerprint_text.simhash(CARTOGRAPHER.format("dusk"))
    other = fingerprint_text.simhash(REVENUE)
    assert hex16([base, edit, other]) == [near["base"], near["edit"], near["other"]]
    assert fingerprint_text.similarity(base, edit) == near["sim_base_edit"]
    assert fingerprint_text.similarity(base, other) == near["sim_base_other"]
    un = ex["test_unrelated"]
    a, b = fingerprint_text.simhash(GO_LANG), fingerprint_text.simhash(PHOTOSYNTHESIS)
    assert hex16([a, b]) == [un["a"], un["b"]]
    assert fingerprint_text.similarity(a, b) == un["similarity"]


def test_fingerprint_spec_vectors() -> None:
    assert fingerprint_text.simhash("") == 0
    assert fingerprint_text.simhash(";.!") == 0
    assert fingerprint_text.simhash("a") == 0
    assert fingerprint_text.simhash("hi") == 0x08BA5F07B55EC3DA
    assert fingerprint_text.tokens("\u212a") == []  # Kelvin lowercases to 1-byte "k"
    assert fingerprint_text.tokens("\u0130\u0130 ΣΣ") == ["ii", "σσ"]
    assert fingerprint_text.tokens(b"ab\xffcd\xe2\x82x") == ["ab", "cd"]
    assert fingerprint_text.features("one two") == ["one", "two"]
    ones = 0xFFFFFFFFFFFFFFFF
    distance = fingerprint_text.distance
    assert [distance(0, 0), distance(1, 0), distance(ones, 0), distance(ones, ones)] == [
        0,
        1,
        64,
        0,
    ]
    assert distance(0xF0F0F0F0F0F0F0F0, 0x0F0F0F0F0F0F0F0F) == 64
    sim = fingerprint_text.similarity
    assert [sim(0, 0), sim(ones, ones), sim(ones, 0)] == [1.0, 1.0, 0.0]


# --- anchor goldens -------------------------------------------------------------------------


@pytest.mark.parametrize("doc_id", [i["id"] for i in an_golden()["inputs"]])
def test_anchor_per_input(doc_id: str) -> None:
    data = dict(golden_inputs(an_golden()))[doc_id]
    want = an_golden()["per_input"][doc_id]
    assert f"{anchor.simhash_bytes(data):016x}" == want["simhash_bytes_hex"]
    assert f"{int(anchor.simhash_bytes_batch([data])[0]):016x}" == want["simhash_bytes_hex"]
    if want.get("tokens", ()) is None:
        # Not UTF-8: the reference cannot take it (tokens/simhash are null). Ours decodes
        # lossily, like String::from_utf8_lossy; checked in test_anchor_invalid_utf8.
        assert want["simhash_hex"] is None
        return
    toks = anchor.tokenize(data)
    if "tokens" in want:
        assert toks == want["tokens"]
    else:
        assert toks[:30] == want["tokens_first_30"]
    if "token_count" in want:
        assert len(toks) == want["token_count"]
    if "token_murmur3_low64" in want:
        assert hex16([anchor.token_hash(t) for t in toks]) == want["token_murmur3_low64"]
    fp = anchor.simhash(data)
    assert f"{fp:016x}" == want["simhash_hex"]
    if "simhash_uint64" in want:
        assert fp == want["simhash_uint64"]
    assert int(anchor.simhash_batch([data])[0]) == fp
    text = next(i["text"] for i in an_golden()["inputs"] if i["id"] == doc_id)
    assert anchor.simhash(text) == fp


def test_anchor_batch_over_all_golden_inputs() -> None:
    items = golden_inputs(an_golden())
    got = anchor.simhash_batch([d for _, d in items])
    assert got.dtype == np.uint64 and got.shape == (len(items),)
    assert [int(v) for v in got] == [anchor.simhash(d) for _, d in items]
    got_bytes = anchor.simhash_bytes_batch([d for _, d in items])
    want = [int(an_golden()["per_input"][i]["simhash_bytes_hex"], 16) for i, _ in items]
    assert [int(v) for v in got_bytes] == want


def test_anchor_pairs_f32_bits() -> None:
    fps = {i: anchor.simhash(d) for i, d in golden_inputs(an_golden())}
    for pair in an_golden()["pairs"]:
        a, b = fps[pair["a"]], fps[pair["b"]]
        assert anchor.hamming_distance(a, b) == pair["hamming_distance"], pair
        sim = anchor.similarity(a, b)
        assert f32_bits(sim) == pair["similarity_f32_bits"], pair
        assert sim == pair["similarity_f32"]


def test_anchor_murmur3_vectors() -> None:
    for text, want in an_golden()["murmur3_x64_128_seed0"].items():
        data = text.encode()
        assert f"{anchor.murmur3_x64_128(data):032x}" == want["u128_hex"], text
        assert f"{mmh3.hash128(data, 0, True, signed=False):032x}" == want["u128_hex"]
        assert f"{anchor.token_hash(text):016x}" == want["h1_low64"]
        assert f"{anchor.murmur3_x64_128(data) >> 64:016x}" == want["h2_high64"]


FOX = "The quick brown fox {} over the lazy dog"
DIFFERENT = "Completely different text about something else"


def test_anchor_examples() -> None:
    ex = an_golden()["examples"]
    jumps, leaps = anchor.simhash(FOX.format("jumps")), anchor.simhash(FOX.format("leaps"))
    other = anchor.simhash(DIFFERENT)
    assert hex16([jumps, leaps, other]) == [
        ex["fox_jumps"],
        ex["fox_leaps"],
        ex["completely_different"],
    ]
    assert anchor.hamming_distance(jumps, leaps) == ex["d12"]
    assert anchor.hamming_distance(jumps, other) == ex["d13"]
    assert f"{anchor.simhash('Hello, world!'):016x}" == ex["hello_world_comma"]
    assert f"{anchor.simhash('hello world'):016x}" == ex["hello_world_plain"]
    assert anchor.tokenize("Hello, world! This is a test.") == ex["tokens_hello_world_test"]
    a, b = 0x1234567890ABCDEF, 0xFEDCBA0987654321
    assert anchor.hamming_distance(a, b) == ex["hamming_0x1234567890ABCDEF_vs_0xFEDCBA0987654321"]
    assert anchor.similarity(a, b) == ex["similarity_same"]
    assert f"{anchor.simhash_bytes(b'Hello, world!'):016x}" == ex["simhash_bytes_hello_world"]
    assert f"{anchor.simhash_bytes(b'abcdefg'):016x}" == ex["simhash_bytes_7_bytes"]
    assert f"{anchor.simhash_bytes(b'abcdefgh'):016x}" == ex["simhash_bytes_8_bytes"]
    for text, want in ex["tokenize_special"].items():
        assert anchor.tokenize(text) == want, text
        assert int(anchor.simhash_batch([text])[0]) == anchor.simhash(text)


def test_anchor_spec_vectors() -> None:
    assert anchor.tokenize("") == [] and anchor.tokenize("   \t\n  ") == []
    assert anchor.tokenize("Hello HELLO heLLo") == ["hello"] * 3
    assert anchor.tokenize("Test 123 with 456 numbers") == ["test", "123", "with", "456", "numbers"]
    assert anchor.tokenize("你好，世界！Hello, World!") == ["你好", "世界", "hello", "world"]
    assert anchor.tokenize("İ") == ["i\u0307"]
    assert anchor.simhash("") == 0 and anchor.simhash(" ,. ") == 0
    assert anchor.simhash("hello") == anchor.token_hash("hello") != 0
    assert anchor.simhash_bytes(b"") == 0
    ones = 0xFFFFFFFFFFFFFFFF
    assert anchor.hamming_distance(0, ones) == 64 and anchor.hamming_distance(0, 4) == 1
    assert anchor.hamming_distance(0xAAAA, 0x5555) == 16
    assert anchor.hamming_weight(0b1010_1010_1010_1010) == 8  # upstream's test wrongly says 4
    assert anchor.hamming_weight(ones) == 64 and anchor.hamming_weight(0xAAAAAAAAAAAAAAAA) == 32
    assert anchor.similarity(0, 0xFFFFFFFF00000000) == 0.5
    assert anchor.similarity(0, ones) == 0.0 and anchor.similarity(ones, ones) == 1.0


def test_anchor_invalid_utf8() -> None:
    """Documented behaviour: bytes decode like Rust's String::from_utf8_lossy; never raise."""
    data = dict(golden_inputs(an_golden()))["invalid_utf8"]
    lossy = data.decode("utf-8", "replace")
    assert anchor.tokenize(data) == anchor.tokenize(lossy)
    assert anchor.tokenize(data) == ["valid", "invalid", "bytes", "end", "surrogate", "café"]
    assert anchor.simhash(data) == anchor.simhash(lossy) == int(anchor.simhash_batch([data])[0])
    # Go would give two U+FFFD for b"\xe2\x82", lossy one; U+FFFD only separates either way.
    assert anchor.tokenize(b"ab\xe2\x82cd\xed\xa0\x80ef\xff") == ["ab", "cd", "ef"]
    assert anchor.tokenize("x\ud800y") == ["x", "y"]  # lone surrogate: a separator
    assert int(anchor.simhash_batch(["x\ud800y"])[0]) == anchor.simhash("x y")


# --- oracles: batch kernels == per-document references --------------------------------------

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


@settings(max_examples=300)
@given(st.lists(docs, max_size=6))
def test_fingerprint_batch_equals_reference(batch: list[str | bytes]) -> None:
    got = fingerprint_text.simhash_batch(batch)
    assert [int(v) for v in got] == [fingerprint_text.simhash(t) for t in batch]


@settings(max_examples=300)
@given(st.lists(docs, max_size=6))
def test_anchor_batch_equals_reference(batch: list[str | bytes]) -> None:
    got = anchor.simhash_batch(batch)
    assert [int(v) for v in got] == [anchor.simhash(t) for t in batch]


@settings(max_examples=100)
@given(st.lists(st.binary(max_size=40), max_size=6))
def test_anchor_bytes_batch_equals_reference(batch: list[bytes]) -> None:
    got = anchor.simhash_bytes_batch(batch)
    assert [int(v) for v in got] == [anchor.simhash_bytes(b) for b in batch]


@settings(max_examples=300)
@given(st.binary(max_size=80))
def test_murmur3_kernel_equals_mmh3(data: bytes) -> None:
    assert anchor.murmur3_x64_128(data) == mmh3.hash128(data, 0, True, signed=False)


def test_murmur3_kernel_every_tail_length() -> None:
    data = bytes(range(256)) * 2
    for n in range(70):
        assert anchor.murmur3_x64_128(data[:n]) == mmh3.hash128(data[:n], 0, True, signed=False)


@settings(max_examples=200)
@given(docs)
def test_anchor_tokens_are_lowercase_alnum_runs(text: str | bytes) -> None:
    toks = anchor.tokenize(text)
    assert all(t and " " not in t for t in toks)
    # Re-tokenizing the tokens is the identity, except that İ's lowercase ends in U+0307,
    # which is not alphanumeric (the only lowercase that leaves the alphanumeric set).
    plain = [t.replace("i\u0307", "i") for t in toks]
    assert anchor.tokenize(" ".join(plain)) == plain


@settings(max_examples=200)
@given(docs)
def test_fingerprint_tokens_reparse(text: str | bytes) -> None:
    toks = fingerprint_text.tokens(text)
    assert all(len(t.encode()) >= 2 and " " not in t for t in toks)
    assert fingerprint_text.tokens(" ".join(toks)) == toks


# --- properties -----------------------------------------------------------------------------

u64 = st.integers(min_value=0, max_value=2**64 - 1)


@given(u64, u64)
def test_distance_and_similarity_properties(a: int, b: int) -> None:
    for dist, sim in (
        (fingerprint_text.distance, fingerprint_text.similarity),
        (anchor.hamming_distance, anchor.similarity),
    ):
        d = dist(a, b)
        assert d == dist(b, a) and 0 <= d <= 64 and (d == 0) == (a == b)
        s = sim(a, b)
        assert s == sim(b, a) and 0.0 <= s <= 1.0 and s == 1.0 - d / 64
    f32 = np.float32(1.0) - np.float32(anchor.hamming_distance(a, b)) / np.float32(64.0)
    assert f32_bits(anchor.similarity(a, b)) == struct.pack(">f", f32).hex()


# --- presets and the public API -------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "ref"), [("fingerprint", fingerprint_text.simhash), ("anchor", anchor.simhash)]
)
def test_public_api(preset: str, ref: Any) -> None:
    p = get_preset(preset)
    assert p.kind == "simhash" and p.version == f"{preset}/1" and p.defaults() == {}
    assert resolve(preset).id == f"{preset}/1"
    items = [FOX.format("jumps"), b"caf\xc3\xa9 \xff ol\xc3\xa9 Stra\xc3\x9fe", "", "a", "hi"]
    for t in items:
        assert neardup_udfs.fingerprint(t, preset=preset) == ref(t)
    batch = neardup_udfs.fingerprint_batch(items, preset=preset)
    assert [int(v) for v in batch] == [ref(t) for t in items]
    assert neardup_udfs.fingerprint_batch([], preset=preset).shape == (0,)
    with pytest.raises(neardup_udfs.PresetError, match="has no option 'w'"):
        resolve(preset, w=3)


@pytest.mark.parametrize(
    ("preset", "ref"), [("fingerprint", fingerprint_text.simhash), ("anchor", anchor.simhash)]
)
def test_equal_canonical_forms_mean_equal_fingerprints(preset: str, ref: Any) -> None:
    variants = ["Hello, World! Foo bar.", "hello world foo bar", " HELLO\u3000world -- foo:bar "]
    keys = resolve(preset).exact_keys(variants)
    assert len(set(keys)) == 1
    assert len({ref(v) for v in variants}) == 1
    assert resolve(preset).exact_keys(["hello world foo baz"]) != keys[:1]
