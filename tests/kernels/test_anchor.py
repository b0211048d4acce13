"""anchor/1 (anchor-fingerprint) text SimHash (kernels.anchor): goldens of
generated-anchor-fingerprint.json, the compiled batch kernels against the per-document
references, and the compiled murmur3 against the mmh3 package.
"""

from __future__ import annotations

import struct

import mmh3
import numpy as np
import pytest
from fingerprint_golden import FOX, an_golden, docs, f32_bits, golden_inputs, hex16
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels import anchor, fingerprint_text

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
