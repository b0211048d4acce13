"""The vectorised batch path equals the naive per-shingle path (tests/oracle.py)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_udfs.kernels.featurize import features, fingerprints
from neardup_udfs.kernels.featurize_jit import ditto_simhash
from neardup_udfs.kernels.hashing import fnv1a64, fnv1a64_spans
from neardup_udfs.kernels.normalize import normalize_utf8
from neardup_udfs.kernels.shingle import pack_texts
from neardup_udfs.kernels.simhash import sum_features, vote

from oracle import naive_features, naive_fingerprint

ENGINES = ("numba", "numpy")

# Text built from pieces that stress each step: tags, stray angles, Go-only spaces, case
# specials, combining marks, CJK, emoji, ZWJ, and invalid UTF-8 bytes.
PIECES = [
    "a",
    "B",
    "the",
    " ",
    "  ",
    "\t",
    "\n",
    "\u00a0",
    "\u3000",
    "\x1c",
    "\u200b",
    "<",
    ">",
    "<p>",
    "</div>",
    "<!-- c -->",
    "<1>",
    "<é>",
    "İ",
    "Σ",
    "ǅ",
    "é",
    "e\u0301",
    "你好",
    "😀",
    "👨\u200d👩",
    ".",
    "!",
    "0",
    "\u212a",
]
BAD_BYTES = [b"\xff", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0", b"\xf0\x9f\x98"]

adversarial = st.lists(
    st.one_of(st.sampled_from(PIECES).map(lambda s: s.encode()), st.sampled_from(BAD_BYTES)),
    max_size=40,
).map(b"".join)
documents = st.one_of(adversarial, st.binary(max_size=80), st.text(max_size=80).map(str.encode))
sizes = st.tuples(st.integers(0, 6), st.integers(0, 4))


@settings(max_examples=300, deadline=None)
@given(st.lists(documents, max_size=8), sizes)
def test_batch_equals_naive(docs: list[bytes], size: tuple[int, int]) -> None:
    char_n, word_n = size
    want = [naive_fingerprint(d, char_n, word_n) for d in docs]
    for engine in ENGINES:
        got = fingerprints(docs, char_n=char_n, word_n=word_n, engine=engine)
        assert got.dtype == np.uint64 and len(got) == len(docs)
        assert [int(x) for x in got] == want, engine


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine must be 'numba' or 'numpy', got 'gpu'"):
        fingerprints(["x"], engine="gpu")  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(documents, sizes)
def test_features_equal_naive(doc: bytes, size: tuple[int, int]) -> None:
    char_n, word_n = size
    assert dict(features(doc, char_n, word_n)) == dict(naive_features(doc, char_n, word_n))


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300),
    st.lists(st.tuples(st.integers(0, 299), st.integers(0, 70)), max_size=50),
)
def test_fnv_spans_equal_scalar(buf: bytes, raw: list[tuple[int, int]]) -> None:
    spans = [(s, min(n, len(buf) - s)) for s, n in raw if s <= len(buf)]
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n in spans], dtype=np.int64)
    got = fnv1a64_spans(np.frombuffer(buf, dtype=np.uint8), starts, lengths)
    assert [int(h) for h in got] == [fnv1a64(buf[s : s + n]) for s, n in spans]


def test_fnv_spans_longer_than_sort_key() -> None:
    buf = bytes(range(256)) * 600  # spans longer than 65535 bytes take the long-span path
    starts = np.array([0, 5, 7, 1], dtype=np.int64)
    lengths = np.array([70000, 66000, 3, 0], dtype=np.int64)
    got = fnv1a64_spans(np.frombuffer(buf, dtype=np.uint8), starts, lengths)
    assert [int(h) for h in got] == [
        fnv1a64(buf[s : s + n]) for s, n in zip(starts, lengths, strict=True)
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 4)), max_size=60),
    st.integers(1, 5),
)
def test_vote_equals_weighted_sum(entries: list[tuple[int, int]], n_docs: int) -> None:
    hashes = np.array([h for h, _ in entries], dtype=np.uint64)
    doc = np.array([d % n_docs for _, d in entries], dtype=np.int64)
    got = vote(hashes, doc, n_docs)
    for d in range(n_docs):
        weighted = Counter(int(h) for h, dd in zip(hashes, doc, strict=True) if dd == d)
        assert int(got[d]) == sum_features(weighted.items())


def test_vote_many_documents_in_blocks() -> None:
    rng = np.random.default_rng(7)
    n_docs = 5000  # more than one 2048-document block, entries in shuffled order
    doc = rng.integers(0, n_docs, 40000)
    hashes = rng.integers(0, 2**63, 40000, dtype=np.int64).astype(np.uint64) * np.uint64(3)
    got = vote(hashes, doc, n_docs)
    for d in rng.integers(0, n_docs, 25):
        hs = hashes[doc == d]
        assert int(got[d]) == sum_features((int(h), 1) for h in hs)


def test_large_batch_equals_naive_across_blocks() -> None:
    rng = np.random.default_rng(1)
    words = [
        "alpha",
        "beta",
        "gamma",
        "délta",
        "ε",
        "<b>",
        "日本",
        "x\xff".encode("latin-1").decode("latin-1"),
    ]
    docs = [
        " ".join(rng.choice(words, size=int(rng.integers(0, 400)))).encode(
            "utf-8", "surrogateescape"
        )
        for _ in range(1500)
    ]
    docs[10] = b"z" * 300_000  # one document larger than a block
    numpy_path = fingerprints(docs, engine="numpy")
    assert np.array_equal(numpy_path, fingerprints(docs, engine="numba"))
    sample = list(range(0, 1500, 97)) + [10]
    assert [int(numpy_path[i]) for i in sample] == [naive_fingerprint(docs[i]) for i in sample]


def test_compiled_kernel_on_a_packed_batch() -> None:
    """``featurize_jit.ditto_simhash`` on one packed buffer (empty documents at both ends)
    gives each document's naive fingerprint; an empty batch gives an empty array."""
    docs = [b"", b"the quick brown fox", "Gr\u00fc\u00dfe, \u4e16\u754c \U0001f600".encode(), b""]
    batch = pack_texts([normalize_utf8(d) for d in docs])
    got = ditto_simhash(batch.buf, batch.offsets, 4, 1)
    assert [int(x) for x in got] == [naive_fingerprint(d, 4, 1) for d in docs]
    empty = pack_texts([])
    assert ditto_simhash(empty.buf, empty.offsets, 4, 0).shape == (0,)
