"""ditto/2's pipeline (kernels.featurize, featurize_jit): every ditto value of
generated-ditto.json reproduced bit for bit (features, fingerprints), and the vectorised
batch path equal to the naive per-shingle path (tests/oracle.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup_udfs
from neardup_udfs.kernels.featurize import features, fingerprints
from neardup_udfs.kernels.featurize_jit import ditto_simhash
from neardup_udfs.kernels.normalize import normalize_utf8
from neardup_udfs.kernels.shingle import pack_texts
from neardup_udfs.kernels.simhash import distance, format_hex

from oracle import naive_features, naive_fingerprint

VARIANTS = {
    "fp_default_char4": (4, 0),
    "fp_char3_word1": (3, 1),
    "fp_char4_word2": (4, 2),
    "fp_char5": (5, 0),
    "fp_word2": (0, 2),
}


def test_pipeline_version(ditto_golden: dict[str, Any]) -> None:
    assert ditto_golden["pipeline_version"] == "ditto/2"
    assert neardup_udfs.resolve("ditto/2").version == "ditto/2"


def test_features_char4(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]]
) -> None:
    checked = 0
    for doc_id, data in golden_inputs:
        want = ditto_golden["per_input"][doc_id]
        got = features(data)
        assert len(got) == want["feature_count_char4"], doc_id
        if "features_char4_sorted" in want:
            assert [f"{h:016x}:{w}" for h, w in got] == want["features_char4_sorted"], doc_id
            checked += 1
    assert checked >= 30


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize("field", sorted(VARIANTS))
def test_fingerprint_variants(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]], field: str, engine: str
) -> None:
    char_n, word_n = VARIANTS[field]
    docs = [d for _, d in golden_inputs]
    got = fingerprints(docs, char_n=char_n, word_n=word_n, engine=engine)  # type: ignore[arg-type]
    for (doc_id, data), fp in zip(golden_inputs, got, strict=True):
        want = ditto_golden["per_input"][doc_id][field]
        assert format_hex(int(fp)) == want, (field, doc_id)
        # One at a time, through the public API, gives the same value.
        assert format_hex(neardup_udfs.fingerprint(data, char=char_n, word=word_n)) == want


def test_pair_distances(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]]
) -> None:
    texts = dict(golden_inputs)
    for pair in ditto_golden["pairs"]:
        a, b = texts[pair["a"]], texts[pair["b"]]
        d4 = distance(neardup_udfs.fingerprint(a), neardup_udfs.fingerprint(b))
        d2 = distance(
            neardup_udfs.fingerprint(a, char=0, word=2), neardup_udfs.fingerprint(b, char=0, word=2)
        )
        assert (d4, d2) == (pair["distance_default_char4"], pair["distance_word2"]), pair


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
