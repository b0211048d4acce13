"""semblance SimHash (kernels.simhash): goldens, the wire format, pair distances."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semblance_golden import inputs, semblance

import neardup_udfs
from neardup_udfs.kernels import simhash
from neardup_udfs.kernels.hashing import fnv1a64
from neardup_udfs.kernels.simhash import distance, format_hex, sum_features, vote
from neardup_udfs.kernels.words_jit import simhash_batch

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


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


def test_examples_sum_and_hash(ditto_golden: dict[str, Any]) -> None:
    ex = ditto_golden["examples"]
    assert format_hex(fnv1a64(b"a")) == ex["fnv1a_a"]
    assert format_hex(fnv1a64(b"")) == ex["fnv1a_empty"]
    assert format_hex(sum_features([])) == ex["sum_empty"]
    # Weight 0 counts as 1: a lone feature is its own hash.
    assert format_hex(sum_features([(0xF0, 0)])) == ex["sum_zero_weight_treated_as_1"]
    # A tie on every bit gives 0.
    assert format_hex(sum_features([(0xF0, 1), (~0xF0 & (2**64 - 1), 1)])) == ex["sum_tie_bit_is_0"]
    # Huge weights saturate instead of wrapping: bit 0 stays set.
    big = 2**63 - 1
    assert sum_features([(1, big), (1, big), (0, 1)]) & 1 == ex["sum_large_weights_bit0"]
    rd = ex["readme_apple_now_vs_bang"]
    assert distance(int(rd["a"], 16), int(rd["b"], 16)) == rd["distance"]
    for probe, want in ex["fallback_probes"].items():
        text = probe.split('"')[1]
        assert format_hex(neardup_udfs.fingerprint(text)) == want


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
