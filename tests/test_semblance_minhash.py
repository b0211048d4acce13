"""semblance MinHash and SimHash: goldens, wire formats, batch = per-document, properties."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import float_bits, hexes, inputs, semblance

from neardup_udfs.kernels import minhash, simhash
from neardup_udfs.kernels.shingle import char_shingles, word_shingles, word_tokens
from neardup_udfs.kernels.words_jit import (
    indexed_sets_jaccard,
    minhash_batch,
    minhash_of_sets,
    pair_jaccard_batch,
    shingle_sets_and_token_texts_batch,
    shingle_sets_batch,
    simhash_batch,
    token_texts_batch,
    word_shingles_batch,
    xxh64,
)

GOLDEN = Path(__file__).parent / "golden"
u64s = st.integers(0, 2**64 - 1)


def _signatures() -> dict[str, np.ndarray]:
    return {doc_id: minhash.signature(word_shingles(data, 3)) for doc_id, data in inputs()}


def test_params_first_values() -> None:
    a, b = minhash.params(4, 0)
    got = [f"a={int(x):016x} b={int(y):016x}" for x, y in zip(a, b, strict=True)]
    assert got == semblance()["primitives"]["minhash_seed0_first4_params"]
    assert all(int(x) & 1 for x in minhash.params(128, 7)[0])


def test_per_input_signatures_and_estimates() -> None:
    per_input = semblance()["per_input"]
    for doc_id, sig in _signatures().items():
        want = per_input[doc_id]
        assert hexes(sig) == want["minhash_default_signature"], doc_id
        assert minhash.is_empty(sig) == want["minhash_default_is_empty_set"], doc_id
        assert float_bits(minhash.cardinality(sig)) == want["minhash_cardinality"]["bits"]
        if "minhash_default_marshal_hex" in want:
            assert minhash.marshal(sig, 0).hex() == want["minhash_default_marshal_hex"]


def test_pair_estimates_exact_bits() -> None:
    sigs = _signatures()
    for pair in semblance()["pairs"]:
        a, b = sigs[pair["a"]], sigs[pair["b"]]
        got = {
            "minhash_jaccard_raw": minhash.jaccard(a, b),
            "minhash_intersection_card": minhash.intersection_cardinality(a, b),
            "semblance_similarity": minhash.similarity(a, b),
            "semblance_containment_ab": minhash.text_containment(a, b),
            "semblance_containment_ba": minhash.text_containment(b, a),
        }
        for field, value in got.items():
            assert float_bits(value) == pair[field]["bits"], (field, pair["a"], pair["b"])


def test_reference_testdata_golden() -> None:
    cases = json.loads((GOLDEN / "semblance-minhash-testdata-golden.json").read_text())
    modes = {"words": word_shingles, "char": char_shingles}
    for case in cases:
        hashes = modes[case["mode"]](case["text"], case["n"])
        sig = minhash.signature(hashes, case["k"], case["seed"])
        assert hexes(sig) == case["signature"], case["name"]
        if case["mode"] == "words":
            batch = minhash_batch([case["text"]], case["k"], case["seed"], case["n"])
            assert hexes(batch[0]) == case["signature"], case["name"]


def test_wire_format_and_errors() -> None:
    sig = np.array([1, 2, 0xDEADBEEF, 2**64 - 1], dtype=np.uint64)
    wire = minhash.marshal(sig, 42)
    assert wire.hex() == (
        "01010400" + "2a00000000000000" + "0100000000000000" + "0200000000000000"
        "efbeadde00000000" + "ffffffffffffffff"
    )
    back, seed = minhash.unmarshal(wire, k=4, seed=42)
    assert seed == 42 and np.array_equal(back, sig)
    bad = {
        wire[:11]: "truncated",
        b"\x02" + wire[1:]: "wire version 2",
        wire[:1] + b"\x02" + wire[2:]: "algorithm id 2",
        wire[:2] + b"\x00\x00" + wire[4:12]: "length 0",
        wire[:-1]: "must be 44",
    }
    for data, message in bad.items():
        with pytest.raises(ValueError, match=message):
            minhash.unmarshal(data)
    with pytest.raises(ValueError, match="k=4, hasher has k=8"):
        minhash.unmarshal(wire, k=8)
    with pytest.raises(ValueError, match="seed=42, hasher has seed=0"):
        minhash.unmarshal(wire, seed=0)
    with pytest.raises(ValueError, match=r"k must be in \[1, 65535\], got 0"):
        minhash.params(0, 0)
    with pytest.raises(ValueError, match="lengths differ: 4 and 3"):
        minhash.jaccard(sig, sig[:3])


def test_simhash_goldens_and_wire() -> None:
    per_input = semblance()["per_input"]
    docs = [d for _, d in inputs()]
    for w in (1, 2, 3):
        batch = simhash_batch(docs, w)
        for (doc_id, data), fp in zip(inputs(), batch, strict=True):
            want = per_input[doc_id][f"simhash_w{w}"]
            assert f"{simhash.sketch_text(data, w):016x}" == want, (doc_id, w)
            assert f"{int(fp):016x}" == want, (doc_id, w)
    for doc_id, data in inputs():
        want = per_input[doc_id]["simhash_w3_marshal_hex"]
        assert simhash.marshal(simhash.sketch_text(data, 3)).hex() == want
    for case in json.loads((GOLDEN / "semblance-simhash-testdata-golden.json").read_text()):
        assert f"{simhash.sketch_text(case['text'], case['w']):016x}" == case["fingerprint"]
    assert simhash.marshal(0xDEADBEEF).hex() == "0102efbeadde00000000"
    assert simhash.unmarshal(bytes.fromhex("0102efbeadde00000000")) == 0xDEADBEEF
    for data, message in [
        (b"\x01\x02", "length 2 must be 10"),
        (b"\x02\x02" + bytes(8), "wire version 2"),
        (b"\x01\x01" + bytes(8), "algorithm id 1"),
    ]:
        with pytest.raises(ValueError, match=message):
            simhash.unmarshal(data)
    assert simhash.sketch([(5, 3), (5, -3)]) == 0 and simhash.sketch([]) == 0


def test_pair_simhash_distance() -> None:
    fps = {doc_id: simhash.sketch_text(data, 3) for doc_id, data in inputs()}
    for pair in semblance()["pairs"]:
        assert simhash.distance(fps[pair["a"]], fps[pair["b"]]) == pair["simhash_w3_distance"]


# --- batch paths equal the per-document paths ---------------------------------------------

PIECES = [
    "The",
    "quick",
    "ÉCOLE",
    "İ",
    "Σ",
    "don't",
    "foo_bar",
    "x²",
    "你好",
    "😀",
    " ",
    "\t",
    "e\u0301",
    "\u212a",
    "123",
    ",",
    "ß",
]
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=30).map("".join),
    st.binary(max_size=60),
    st.text(max_size=60),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=6), st.integers(1, 4))
def test_batch_streams_equal_per_document(docs: list, w: int) -> None:  # type: ignore[type-arg]
    hashes, offsets = word_shingles_batch(docs, w)
    sigs = minhash_batch(docs, k=16, seed=3, w=w)
    fps = simhash_batch(docs, w)
    for i, doc in enumerate(docs):
        stream = word_shingles(doc, w)
        assert [int(h) for h in hashes[offsets[i] : offsets[i + 1]]] == stream
        assert np.array_equal(sigs[i], minhash.signature(stream, 16, 3))
        assert int(fps[i]) == simhash.sketch((h, 1) for h in stream)


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=6))
def test_batch_token_texts_equal_joined_tokens(docs: list) -> None:  # type: ignore[type-arg]
    buf, offsets = token_texts_batch(docs)
    for i, doc in enumerate(docs):
        want = " ".join(word_tokens(doc)).encode("utf-8", "surrogatepass")
        assert buf[offsets[i] : offsets[i + 1]].tobytes() == want


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(texts, texts), max_size=6), st.integers(1, 3))
def test_pair_jaccard_equals_the_set_definition(pairs: list, w: int) -> None:  # type: ignore[type-arg]
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    got = pair_jaccard_batch(a, b, w)
    for i, (x, y) in enumerate(pairs):
        sa, sb = set(word_shingles(x, w)), set(word_shingles(y, w))
        assert got[i] == (len(sa & sb) / len(sa | sb) if sa | sb else 0.0)
    with pytest.raises(ValueError, match="same length"):
        pair_jaccard_batch(["x"], [], w)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(texts, max_size=6),
    st.integers(1, 3),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12),
)
def test_shingle_sets_and_their_indexed_jaccard_equal_the_set_definition(docs, w, picks) -> None:  # type: ignore[no-untyped-def]
    hashes, offsets = shingle_sets_batch(docs, w)
    sets = [set(word_shingles(x, w)) for x in docs]
    for i in range(len(docs)):
        assert hashes[offsets[i] : offsets[i + 1]].tolist() == sorted(sets[i])
    pairs = [(i, j) for i, j in picks if i < len(docs) and j < len(docs)]
    ia, ib = [i for i, _ in pairs], [j for _, j in pairs]
    got = indexed_sets_jaccard(hashes.view(np.int64), offsets, ia, ib)
    for p, (i, j) in enumerate(pairs):
        union = sets[i] | sets[j]
        assert got[p] == (len(sets[i] & sets[j]) / len(union) if union else 0.0)
    with pytest.raises(ValueError, match="outside"):
        indexed_sets_jaccard(hashes, offsets, [len(docs)], [0])
    with pytest.raises(ValueError, match="one length"):
        indexed_sets_jaccard(hashes, offsets, [0], [])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(texts, max_size=8), st.integers(1, 3), st.integers(1, 40), st.integers(0, 2**64 - 1)
)
def test_minhash_of_shingle_sets_equals_minhash_of_the_texts(docs, w, k, seed) -> None:  # type: ignore[no-untyped-def]
    """The streamed local engine signs the sets it keeps for exact checks: the same rows."""
    hashes, offsets = shingle_sets_batch(docs, w)
    got = minhash_of_sets(hashes, offsets, k=k, seed=seed)
    assert got.shape == (len(docs), k)
    assert np.array_equal(got, minhash_batch(docs, k=k, seed=seed, w=w))


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, max_size=8), st.integers(1, 3))
def test_one_pass_gives_the_shingle_sets_and_the_token_texts(docs, w) -> None:  # type: ignore[no-untyped-def]
    hashes, offsets, buf, starts = shingle_sets_and_token_texts_batch(docs, w)
    want_h, want_o = shingle_sets_batch(docs, w)
    want_b, want_s = token_texts_batch(docs)
    assert np.array_equal(hashes, want_h) and np.array_equal(offsets, want_o)
    assert np.array_equal(buf, want_b) and np.array_equal(starts, want_s)


def test_pipeline_signs_texts_and_their_sets_alike() -> None:
    from neardup_udfs.presets import resolve

    pipeline = resolve("semblance", normalize="web", k=20, bands=4, rows=5)
    docs = ["<p>the quick brown fox jumps over</p>", "", "a b", "the  quick brown fox again"]
    signatures, hashes, offsets, keys = pipeline.signature_and_sets_batch(docs)
    assert np.array_equal(signatures, pipeline.signature_batch(docs))
    assert keys == pipeline.exact_keys(docs)
    want_h, want_o = shingle_sets_batch(pipeline.normalize_batch(docs), 3)
    assert np.array_equal(hashes, want_h) and np.array_equal(offsets, want_o)


@given(st.binary(max_size=100))
def test_compiled_xxh64_equals_reference(data: bytes) -> None:
    import xxhash

    assert xxh64(data) == xxhash.xxh64_intdigest(data)


def test_batch_refuses_bad_w() -> None:
    for fn in (minhash_batch, simhash_batch):
        with pytest.raises(ValueError, match="must be positive, got 0"):
            fn(["x"], w=0)


# --- properties ------------------------------------------------------------------------------


@given(st.lists(u64s, max_size=40), st.randoms())
def test_signature_ignores_order_and_duplicates(xs: list[int], rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = xs + xs[: len(xs) // 2]
    rnd.shuffle(shuffled)
    assert np.array_equal(minhash.signature(xs, 32), minhash.signature(shuffled, 32))


@given(st.lists(u64s, max_size=30), st.lists(u64s, max_size=30))
def test_union_is_signature_of_union(xs: list[int], ys: list[int]) -> None:
    got = minhash.union(minhash.signature(xs, 32, 5), minhash.signature(ys, 32, 5))
    assert np.array_equal(got, minhash.signature(xs + ys, 32, 5))


def test_jaccard_estimates_stay_within_four_standard_errors() -> None:
    rng = np.random.default_rng(2026)
    k = 128
    bound = 4 * (1 / (2 * math.sqrt(k)))
    trials, outside = 300, 0
    for _ in range(trials):
        n_shared, n_a, n_b = rng.integers(0, 300, 3)
        shared = rng.integers(0, 2**63, n_shared, dtype=np.int64).astype(np.uint64)
        a = np.concatenate([shared, rng.integers(0, 2**63, n_a, dtype=np.int64).astype(np.uint64)])
        b = np.concatenate([shared, rng.integers(0, 2**63, n_b, dtype=np.int64).astype(np.uint64)])
        if len(a) == 0 or len(b) == 0:
            continue
        exact = len(set(a.tolist()) & set(b.tolist())) / len(set(a.tolist()) | set(b.tolist()))
        est = minhash.jaccard(minhash.signature(a, k), minhash.signature(b, k))
        outside += abs(est - exact) > bound
    assert outside <= trials * 0.01


def test_empty_signatures() -> None:
    empty = minhash.signature([], 8)
    assert minhash.is_empty(empty) and minhash.cardinality(empty) == 0.0
    assert minhash.jaccard(empty, empty) == 1.0 and minhash.similarity(empty, empty) == 0.0
    assert minhash.containment(empty, minhash.signature([1, 2], 8)) == 0.0


def test_indexed_jaccard_on_threads_equals_one_thread(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Split among threads, every pair gets the value one thread gives it (the split points
    fall inside runs of pairs sharing a set, and the last slice is uneven)."""
    from neardup_udfs.kernels import words_jit

    rng = np.random.default_rng(39)
    base = rng.integers(0, 2**62, 400, dtype=np.int64)
    sets = [np.unique(np.where(rng.random(400) < 0.2, rng.integers(0, 2**62, 400), base))
            for _ in range(30)]  # fmt: skip
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in sets])])
    hashes = np.concatenate(sets)
    ia, ib = rng.integers(0, 30, 1001), rng.integers(0, 30, 1001)
    one = indexed_sets_jaccard(hashes, offsets, ia, ib)
    monkeypatch.setattr(words_jit, "THREADED_PAIRS", 10)
    for threads in (2, 3):
        assert np.array_equal(indexed_sets_jaccard(hashes, offsets, ia, ib, threads=threads), one)
    assert 0 < one.min() and one.max() <= 1.0
