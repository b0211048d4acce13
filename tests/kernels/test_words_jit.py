"""The compiled batch paths (kernels.words_jit) equal the per-document paths: shingle
streams, token texts, shingle sets and their Jaccard, MinHash and SimHash batches, xxh64.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels import minhash, simhash
from neardup_udfs.kernels.shingle import word_shingles, word_tokens
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
)
from neardup_udfs.kernels.xxh64_jit import xxh64, xxh64_spans

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


@given(st.binary(max_size=100), st.integers(0, 2**64 - 1))
def test_compiled_xxh64_equals_reference(data: bytes, seed: int) -> None:
    import xxhash

    assert xxh64(data) == xxhash.xxh64_intdigest(data)
    assert xxh64(data, seed) == xxhash.xxh64_intdigest(data, seed)


@given(st.lists(st.binary(max_size=80), max_size=6), st.integers(0, 2**64 - 1))
def test_compiled_xxh64_of_each_packed_text(texts: list[bytes], seed: int) -> None:
    import xxhash

    from neardup_udfs.kernels.utf8 import pack_utf8

    buf, offsets = pack_utf8(texts)
    got = xxh64_spans(buf, offsets, seed).tolist()
    assert got == [xxhash.xxh64_intdigest(t, seed) for t in texts]


def test_batch_refuses_bad_w() -> None:
    for fn in (minhash_batch, simhash_batch):
        with pytest.raises(ValueError, match="must be positive, got 0"):
            fn(["x"], w=0)


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
