"""fingerprint/1 (richardwooding/fingerprint) text SimHash (kernels.fingerprint_text):
goldens of generated-fingerprint.json (pHash ignored), the compiled batch kernel against
the per-document reference, and the public API of both text SimHash presets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fingerprint_golden import FOX, docs, fp_golden, golden_inputs, hex16
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup_udfs
from neardup_udfs.kernels import anchor, fingerprint_text
from neardup_udfs.kernels.hashing import fnv1a64
from neardup_udfs.presets import get_preset, resolve

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


@settings(max_examples=300)
@given(st.lists(docs, max_size=6))
def test_fingerprint_batch_equals_reference(batch: list[str | bytes]) -> None:
    got = fingerprint_text.simhash_batch(batch)
    assert [int(v) for v in got] == [fingerprint_text.simhash(t) for t in batch]


@settings(max_examples=200)
@given(docs)
def test_fingerprint_tokens_reparse(text: str | bytes) -> None:
    toks = fingerprint_text.tokens(text)
    assert all(len(t.encode()) >= 2 and " " not in t for t in toks)
    assert fingerprint_text.tokens(" ".join(toks)) == toks


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
