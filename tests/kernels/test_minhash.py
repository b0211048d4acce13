"""semblance MinHash (kernels.minhash): goldens, the wire format, properties."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from semblance_golden import float_bits, hexes, inputs, semblance

from neardup_udfs.kernels import minhash
from neardup_udfs.kernels.shingle import char_shingles, word_shingles
from neardup_udfs.kernels.words_jit import minhash_batch

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


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
