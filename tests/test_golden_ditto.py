"""Every ditto value in generated-ditto.json, reproduced bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import neardup_udfs
from neardup_udfs.kernels.featurize import features, fingerprints
from neardup_udfs.kernels.hamming_index import Index, block_bounds, block_keys, clamp_k
from neardup_udfs.kernels.hashing import fnv1a64
from neardup_udfs.kernels.normalize import normalize
from neardup_udfs.kernels.simhash import distance, format_hex, sum_features

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


def test_normalized_text(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]]
) -> None:
    for doc_id, data in golden_inputs:
        want = bytes.fromhex(ditto_golden["per_input"][doc_id]["normalized_hex"])
        assert normalize(data).encode("utf-8") == want, doc_id


def test_normalized_text_from_str(ditto_golden: dict[str, Any]) -> None:
    for item in ditto_golden["inputs"]:
        if item["text"] is not None:
            want = ditto_golden["per_input"][item["id"]]["normalized"]
            assert normalize(item["text"]) == want, item["id"]


@pytest.mark.parametrize("probe", ["normalize_probes"])
def test_normalize_probes(ditto_golden: dict[str, Any], probe: str) -> None:
    probes = ditto_golden["examples"][probe]
    assert len(probes) == 13
    for text, want in probes.items():
        assert normalize(text) == want, repr(text)


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


@pytest.mark.parametrize("k", [2, 3])
def test_block_keys(ditto_golden: dict[str, Any], k: int) -> None:
    per_input = ditto_golden["per_input"]
    ids = sorted(per_input)
    fps = np.array([int(per_input[i]["fp_default_char4"], 16) for i in ids], dtype=np.uint64)
    keys = block_keys(fps, k)
    for row, doc_id in zip(keys, ids, strict=True):
        assert [f"{int(v):x}" for v in row] == per_input[doc_id][f"index_k{k}_block_keys_hex"]


def test_block_bounds(ditto_golden: dict[str, Any]) -> None:
    ex = ditto_golden["examples"]
    assert block_bounds(0) == ex["index_k0_bounds"]
    assert block_bounds(4) == ex["index_k4_bounds"]
    assert len(block_bounds(63)) == ex["index_k63_bounds_len"]
    assert block_bounds(2) == [0, 21, 42, 64]
    assert clamp_k(100) == ex["index_k_100_clamped"]
    assert clamp_k(-5) == ex["index_k_neg_clamped"]


def _corpus_index(golden_inputs: list[tuple[str, bytes]], k: int) -> Index:
    fps = fingerprints([d for _, d in golden_inputs])
    index = Index(k)
    for (doc_id, _), fp in zip(golden_inputs, fps, strict=True):
        index.add(doc_id, int(fp))
    return index


@pytest.mark.parametrize("k", [0, 3, 6, 10])
def test_corpus_near_and_clusters(
    ditto_golden: dict[str, Any], golden_inputs: list[tuple[str, bytes]], k: int
) -> None:
    want = ditto_golden["corpus"][f"k{k}"]
    index = _corpus_index(golden_inputs, k)
    fps = dict(
        zip([i for i, _ in golden_inputs], fingerprints([d for _, d in golden_inputs]), strict=True)
    )
    for doc_id, expected in want["near"].items():
        got = [f"{m.id}@{m.distance}" for m in index.near(int(fps[doc_id]), k)]
        assert got == expected, doc_id
    assert index.clusters(k, 1) == want["clusters_min1"]
    assert index.clusters(k, 2) == want["clusters_min2"]


def test_example_cluster_main(ditto_golden: dict[str, Any]) -> None:
    ex = ditto_golden["examples"]["example_cluster_main"]
    index = Index(4)
    fps = {doc_id: int(h, 16) for doc_id, h in ex["fingerprints"].items()}
    for doc_id, fp in fps.items():
        index.add(doc_id, fp)
    assert index.clusters(4, 2) == ex["clusters_k4_min2"]
    for other, d in ex["distances_from_phish_apple_1"].items():
        assert distance(fps["phish-apple-1"], fps[other]) == d


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
