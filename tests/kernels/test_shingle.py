"""semblance shingle streams (Char, CharRunes, Words) against the goldens."""

from __future__ import annotations

import pytest
import xxhash
from semblance_golden import hexes, inputs, matches_stream, semblance

from neardup_udfs.kernels.shingle import (
    char_rune_shingles,
    char_shingles,
    word_shingles,
    word_tokens,
)

STREAMS = [
    ("words_w1_shingles", word_shingles, 1),
    ("words_w2_shingles", word_shingles, 2),
    ("words_w3_shingles", word_shingles, 3),
    ("char_k4_shingles", char_shingles, 4),
    ("char_k8_shingles", char_shingles, 8),
    ("char_runes_k4_shingles", char_rune_shingles, 4),
]


@pytest.mark.parametrize(("field", "fn", "k"), STREAMS, ids=[s[0] for s in STREAMS])
def test_streams(field: str, fn, k: int) -> None:  # type: ignore[no-untyped-def]
    for doc_id, data in inputs():
        want = semblance()["per_input"][doc_id][field]
        assert matches_stream(hexes(fn(data, k)), want), (field, doc_id)


def test_tokens_and_token_hashes() -> None:
    for doc_id, data in inputs():
        want = semblance()["per_input"][doc_id]["tokens"]
        got = word_tokens(data)
        assert len(got) == want["token_count"], doc_id
        full = want.get("tokens")
        if "tokens_first_50" in want:
            assert got[:50] == want["tokens_first_50"], doc_id
            assert (
                hexes(xxhash.xxh64_intdigest(t.encode()) for t in got[:50])
                == want["token_xxhash_first_50"]
            )
        else:
            assert got == (full or []), doc_id
            assert hexes([xxhash.xxh64_intdigest(t.encode()) for t in got]) == (
                want["token_xxhash"] or []
            )


def test_spec_examples() -> None:
    assert word_tokens("don't stop") == ["don", "t", "stop"]
    assert word_tokens("foo_bar") == ["foo", "bar"]
    assert word_tokens("Re\u0301sume\u0301") == ["re", "sume"]
    assert word_tokens("x² ½ Ⅻ ٣٤٥") == ["x²", "½", "ⅻ", "٣٤٥"]
    assert word_tokens("ΣΟΦΟΣ \u212a") == ["σοφοσ", "k"]
    assert word_tokens("你好，世界！😀a") == ["你好", "世界", "a"]
    assert word_tokens(b"ab\xffcd") == ["ab", "cd"]
    assert char_rune_shingles(b"\xffab", 2) == [
        xxhash.xxh64_intdigest(b"\xffa"),
        xxhash.xxh64_intdigest(b"ab"),
    ]
    assert word_shingles("one two", 3) == [] and char_shingles("abc", 4) == []


@pytest.mark.parametrize("fn", [char_shingles, char_rune_shingles, word_shingles])
def test_non_positive_sizes_are_refused(fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="must be positive, got 0"):
        fn("text", 0)
