"""The containment stage of the driver and local engines (``driver.containment``, reached
through ``driver.near.near_on_driver``): a kept document contained in a kept document with
more shingles is removed next to it, verified against the document actually kept."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from neardup_udfs.config import load_config
from neardup_udfs.driver.batches import promoted_clusters_fn
from neardup_udfs.driver.containment import contain_on_driver
from neardup_udfs.driver.near import near_on_driver
from neardup_udfs.runs.summary import near_settings
from neardup_udfs.schemas import CONTAINMENT, JACCARD

_WORDS = [f"w{i:04d}" for i in range(5000)]


def _text(seed: int, n: int) -> list[str]:
    return random.Random(seed).sample(_WORDS, n)


Rows = dict[str, dict[str, Any]]


def _run(docs: dict[str, str], **keys: Any) -> tuple[Rows, list[dict[str, Any]]]:
    """Each document's cluster row, and the pairs, of a driver run with containment."""
    config = load_config(input="x", output="y", containment=keys.pop("containment", 0.8), **keys)
    pipeline = config.pipeline()
    table = pa.table({"doc_id": list(docs), "text": list(docs.values())})
    found = near_on_driver(table, pipeline, near_settings(config, pipeline))
    rows = {r["doc_id"]: r for r in found.clusters.to_pylist()}
    return rows, found.pairs.to_pylist()


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def test_an_excerpt_goes_next_to_its_container_with_its_containment() -> None:
    long = _text(1, 200)
    excerpt = long[50:130]  # 80 words: 78 shingles, all in the long one
    edited = long[50:130]
    edited[40] = "changed"  # 3 shingles lost: 75 of 78 contained
    rows, pairs = _run(
        {
            "long": " ".join(long),
            "excerpt": " ".join(excerpt),
            "edited": " ".join(edited),
            "other": " ".join(_text(2, 150)),
        }  # fmt: skip
    )
    assert rows["long"]["is_representative"] and rows["long"]["relation"] is None
    assert rows["other"]["is_representative"]
    ex = rows["excerpt"]
    assert (ex["cluster_id"], ex["is_representative"]) == ("long", False)
    assert ex["relation"] == CONTAINMENT
    assert ex["similarity"] == pytest.approx(1.0)
    got = rows["edited"]
    assert got["relation"] in (CONTAINMENT, JACCARD)  # near the excerpt, or contained
    assert got["cluster_id"] == "long" or rows[got["cluster_id"]]["cluster_id"] == "long"
    contained = {(p["a"], p["b"]): p["similarity"] for p in pairs if p["relation"] == CONTAINMENT}
    assert contained[("excerpt", "long")] == pytest.approx(1.0)
    assert {p["relation"] for p in pairs} <= {JACCARD, CONTAINMENT}


def test_an_excerpt_below_the_threshold_stays() -> None:
    long = _text(3, 200)
    part = long[0:60] + _text(4, 30)  # 58 of 88 shingles inside: 0.66
    rows, _ = _run({"long": " ".join(long), "part": " ".join(part)})
    assert rows["part"]["is_representative"] and rows["part"]["relation"] is None
    rows, _ = _run({"long": " ".join(long), "part": " ".join(part)}, containment=0.6)
    assert rows["part"]["relation"] == CONTAINMENT
    assert rows["part"]["similarity"] == pytest.approx(58 / 88)


def test_a_set_smaller_than_the_minimum_takes_no_part() -> None:
    long = _text(5, 200)
    rows, _ = _run({"long": " ".join(long), "short": " ".join(long[10:29])})  # 17 shingles
    assert rows["short"]["is_representative"]
    rows, _ = _run({"long": " ".join(long), "short": " ".join(long[10:29])},
                   containment_min_shingles=17)  # fmt: skip
    assert rows["short"]["relation"] == CONTAINMENT


def test_the_container_wins_whatever_the_rule_and_equal_sizes_go_to_the_rule() -> None:
    long = _text(6, 200)
    docs = {"a-excerpt": " ".join(long[:100]), "z-long": " ".join(long)}
    rows, _ = _run(docs)  # min_id would keep "a-excerpt"; the container is kept
    assert rows["z-long"]["is_representative"] and rows["a-excerpt"]["cluster_id"] == "z-long"
    # two sets of the same size, each 0.8 contained in the other: the rule decides
    base = _text(7, 100)
    b = base[:90] + _text(8, 10)
    rows, _ = _run({"p": " ".join(base), "q": " ".join(b)}, threshold=0.95, containment=0.8)
    kept = [d for d, r in rows.items() if r["is_representative"]]
    assert kept == ["p"] and rows["q"]["relation"] == CONTAINMENT


def test_an_excerpt_is_verified_against_the_document_kept_in_its_container_s_place() -> None:
    long = _text(9, 300)
    variant = list(long)
    variant[150:160] = _text(10, 10)  # near the long one (Jaccard ~0.9), kept in its place
    excerpt_out = long[140:200]  # its middle is what the variant changed: not inside it
    excerpt_in = long[0:100]  # inside both
    docs = {"a-long": " ".join(long), "b-variant": " ".join(variant),
            "c-out": " ".join(excerpt_out), "d-in": " ".join(excerpt_in)}  # fmt: skip
    rows, _ = _run(docs, representative="longest")
    keeper = "a-long" if rows["a-long"]["is_representative"] else "b-variant"
    other = "b-variant" if keeper == "a-long" else "a-long"
    assert rows[other]["relation"] == JACCARD and rows[other]["cluster_id"] == keeper
    assert rows["d-in"]["cluster_id"] == keeper and rows["d-in"]["relation"] == CONTAINMENT
    # the excerpt of the changed middle is removed only if the kept one holds it
    s_out, s_keep = _shingles(excerpt_out), _shingles(docs[keeper].split())
    inside = len(s_out & s_keep) / len(s_out)
    assert (rows["c-out"]["relation"] == CONTAINMENT) == (inside >= 0.8)
    if rows["c-out"]["relation"] == CONTAINMENT:
        assert rows["c-out"]["cluster_id"] == keeper


def test_a_kept_document_moves_with_its_near_duplicates_only_when_all_are_contained() -> None:
    long = _text(11, 300)
    ex = long[0:120]
    near_in = list(ex)
    near_in[60] = "x1"  # near the excerpt, still contained in the long one
    near_out = ex + _text(12, 20)  # near the excerpt (J 0.855), 0.855 in the long one
    docs = {"a-ex": " ".join(ex), "b-near": " ".join(near_in), "z-long": " ".join(long)}
    rows, pairs = _run(docs, threshold=0.8)
    assert rows["b-near"]["cluster_id"] == "z-long" and rows["a-ex"]["cluster_id"] == "z-long"
    assert {rows[d]["relation"] for d in ("a-ex", "b-near")} == {CONTAINMENT}
    moved = {(p["a"], p["b"]) for p in pairs if p["relation"] == CONTAINMENT}
    assert {("a-ex", "z-long"), ("b-near", "z-long")} <= moved  # each removal's own pair
    rows, _ = _run({**docs, "b-near": " ".join(near_out)}, threshold=0.8, containment=0.9)
    # the near member holds the whole excerpt and more: it is kept in the excerpt's place,
    # and stays, being only 0.855 inside the long one
    assert rows["b-near"]["is_representative"] and rows["a-ex"]["cluster_id"] == "b-near"
    assert rows["a-ex"]["relation"] == CONTAINMENT


def test_exact_copies_of_a_contained_document_move_with_it() -> None:
    long = _text(13, 200)
    ex = " ".join(long[:100])
    rows, _ = _run({"a": ex, "b": ex, "z": " ".join(long)})
    assert [rows[d]["cluster_id"] for d in "abz"] == ["z", "z", "z"]
    assert rows["b"]["relation"] == CONTAINMENT and rows["b"]["similarity"] == pytest.approx(1.0)


def test_the_result_does_not_depend_on_the_input_order() -> None:
    rng = random.Random(14)
    docs: dict[str, str] = {}
    for i in range(12):
        words = _text(100 + i, 150)
        docs[f"s{i}"] = " ".join(words)
        for j in range(3):
            a = rng.randrange(0, 60)
            docs[f"s{i}e{j}"] = " ".join(words[a : a + rng.randrange(40, 90)])
    rows, _ = _run(docs)
    shuffled = list(docs.items())
    rng.shuffle(shuffled)
    again, _ = _run(dict(shuffled))
    assert again == rows
    assert sum(r["relation"] == CONTAINMENT for r in rows.values()) >= 30


def test_a_set_source_holding_more_sets_than_asked_is_read_by_slot() -> None:
    """The streamed engine's sets live in one store for every document: the stage reads the
    asked rows' sets by their slots, whatever else the store holds."""
    long = _text(15, 120)
    texts = [" ".join(_text(16, 50)), " ".join(long), " ".join(long[:60])]
    config = load_config(input="x", output="y")
    pipeline = config.pipeline()
    from neardup_udfs.kernels.words_jit import shingle_sets_batch

    hashes, offsets = shingle_sets_batch(pipeline.normalize_batch(texts * 2), 3)

    def store(rows: Any) -> tuple[Any, Any, Any]:
        return hashes, offsets, np.asarray(rows, dtype=np.int64) + 3  # the second copies

    ids = np.array(["a", "b", "c"], dtype=object)
    clusters = pa.table({"doc_id": list(ids), "cluster_id": list(ids),
                         "is_representative": [True] * 3, "similarity": [1.0] * 3})  # fmt: skip
    done = contain_on_driver(clusters, ids, ids, np.zeros(3, bool), np.arange(3), store,
                             threshold=0.8, min_shingles=20)  # fmt: skip
    rows = done.clusters.to_pylist()
    assert [r["cluster_id"] for r in rows] == ["a", "b", "b"]
    assert [r["relation"] for r in rows] == [None, None, CONTAINMENT]
    assert done.counts == {"containment_pairs": 1, "contained": 1, "containment_kept": 0}


def test_a_near_duplicate_that_contains_the_kept_one_is_kept_in_its_place() -> None:
    """An excerpt near enough its source to be its near-duplicate: the rule (min_id) keeps the
    excerpt, then containment keeps the source, the container, and removes the excerpt and
    its exact copy next to it; the source's own copy stays a near-duplicate of it."""
    src = _text(17, 150)
    ex = " ".join(src[:135])  # Jaccard 0.9 with the source, wholly inside it
    docs = {"a-ex": ex, "b-ex-copy": ex, "z-src": " ".join(src), "zz-src-copy": " ".join(src)}
    rows, pairs = _run(docs)
    assert rows["z-src"]["is_representative"] and rows["z-src"]["relation"] is None
    for d in ("a-ex", "b-ex-copy"):
        assert (rows[d]["cluster_id"], rows[d]["relation"]) == ("z-src", CONTAINMENT)
        assert rows[d]["similarity"] == pytest.approx(1.0)
    assert (rows["zz-src-copy"]["cluster_id"], rows["zz-src-copy"]["relation"]) == (
        "z-src",
        JACCARD,
    )
    assert ("a-ex", "z-src") in {(p["a"], p["b"]) for p in pairs if p["relation"] == CONTAINMENT}


def test_no_member_is_kept_in_the_excerpt_s_place_unless_all_others_are_inside_it() -> None:
    src = _text(18, 150)
    ex = src[:135]
    other = ex + _text(19, 20)  # near the excerpt, but 20 words are not in the source
    docs = {"a-ex": " ".join(ex), "b-other": " ".join(other), "z-src": " ".join(src)}
    rows, _ = _run(docs, threshold=0.7, containment=0.9)
    assert rows["a-ex"]["is_representative"]
    assert {rows[d]["cluster_id"] for d in docs} == {"a-ex"}


def test_an_excerpt_stays_when_a_near_duplicate_of_it_is_not_inside_the_container() -> None:
    long = _text(21, 300)
    ex = long[0:120]
    other = ex[:100] + _text(22, 20)  # as many words: near the excerpt, 0.83 in the long one
    docs = {"a-ex": " ".join(ex), "b-other": " ".join(other), "z-long": " ".join(long)}
    rows, _ = _run(docs, threshold=0.7, containment=0.9)
    assert rows["a-ex"]["is_representative"] and rows["b-other"]["cluster_id"] == "a-ex"
    assert rows["b-other"]["relation"] == JACCARD
    rows, _ = _run(docs, threshold=0.7, containment=0.8)  # now inside enough: both go
    assert {rows[d]["cluster_id"] for d in docs} == {"z-long"}


def test_a_page_is_kept_in_place_of_an_html_excerpt_whose_markup_outweighs_its_text() -> None:
    """An HTML-wrapped excerpt whose markup makes its raw text longer than its page's text,
    its visible text a near-duplicate of the page: the rule (min_id) keeps the excerpt and
    removes the page, which has more shingles, so the cluster is turned round, whatever the
    raw lengths say."""
    src = _text(23, 150)
    page = " ".join(src)  # 148 shingles
    style = "p { margin: 0 } " * 12  # invisible (the head is dropped)
    ex = (f"<!DOCTYPE html><html><head><style>{style}</style></head>"
          f"<body><p>{' '.join(src[:135])}</p></body></html>")  # fmt: skip
    assert len(ex.encode()) > len(page.encode())  # raw: the excerpt is the longer text
    rows, pairs = _run({"a-ex": ex, "z-src": page})  # 133 shingles, Jaccard 0.9
    assert rows["z-src"]["is_representative"] and rows["z-src"]["relation"] is None
    assert (rows["a-ex"]["cluster_id"], rows["a-ex"]["relation"]) == ("z-src", CONTAINMENT)
    assert rows["a-ex"]["similarity"] == pytest.approx(1.0)
    assert ("a-ex", "z-src") in {(p["a"], p["b"]) for p in pairs if p["relation"] == CONTAINMENT}


def _promoted(pipeline: Any, clusters: list[tuple[str, list[dict[str, Any]]]]) -> list[Any]:
    """``promoted_clusters_fn``'s rows (sorted) of one batch holding ``clusters``."""
    batch = pa.RecordBatch.from_pylist(
        [{"cluster_id": c, "members": m} for c, m in clusters],
        schema=pa.schema(
            [
                ("cluster_id", pa.string()),
                ("members", pa.list_(pa.struct([
                    ("doc_id", pa.string()), ("leader", pa.string()),
                    ("is_representative", pa.bool_()), ("similarity", pa.float64()),
                    ("__length", pa.int64()), ("__order", pa.int64()), ("text", pa.string()),
                ]))),
            ]  # fmt: skip
        ),
    )
    fn = promoted_clusters_fn(pipeline, "min_id", threshold=0.8, min_shingles=10)
    return sorted(tuple(r.values()) for out in fn(iter([batch])) for r in out.to_pylist())


def test_spark_s_promotion_groups_decide_as_the_rule_whatever_clusters_share_a_batch() -> None:
    """The promotion the Spark stage runs per group of whole clusters: one cluster turned
    round (a near-duplicate containing the kept excerpt is kept instead), one whose other
    member is not inside the candidate left as it is, one without a candidate; the same rows
    whether the clusters share a batch or not, in any order."""
    src, big = _text(17, 150), _text(18, 200)
    ex, big_ex = " ".join(src[:135]), " ".join(big[:135])
    other = big[:135] + _text(19, 40)  # 133 of its 173 shingles in big: 0.77

    def member(doc: str, leader: str, rep: bool, text: str, sim: float = 0.9) -> dict[str, Any]:
        return {"doc_id": doc, "leader": leader, "is_representative": rep,
                "similarity": 1.0 if rep else sim, "__length": len(text), "__order": None,
                "text": text}  # fmt: skip

    clusters = [
        ("a-ex", [member("a-ex", "a-ex", True, ex), member("b-ex-copy", "a-ex", False, ex, 1.0),
                  member("z-src", "z-src", False, " ".join(src)),
                  member("zz-src-copy", "z-src", False, " ".join(src), 1.0)]),
        ("c-ex", [member("c-ex", "c-ex", True, big_ex), member("d-other", "d-other", False,
                  " ".join(other)), member("y-big", "y-big", False, " ".join(big))]),
        ("e-one", [member("e-one", "e-one", True, " ".join(_text(23, 80))),
                   member("f-near", "f-near", False, " ".join(_text(23, 79)))]),
    ]  # fmt: skip
    pipeline = load_config(input="x", output="y", containment=0.8).pipeline()
    together = _promoted(pipeline, clusters)
    assert together == sorted(r for c in clusters for r in _promoted(pipeline, [c]))
    assert together == _promoted(pipeline, clusters[::-1])
    rows = {r[0]: r[1:] for r in together}
    assert rows["z-src"] == ("z-src", True, 1.0, None)
    assert rows["a-ex"] == ("z-src", False, pytest.approx(1.0), CONTAINMENT)
    assert rows["b-ex-copy"] == ("z-src", False, pytest.approx(1.0), CONTAINMENT)
    assert rows["zz-src-copy"] == ("z-src", False, 1.0, JACCARD)
    # y-big, the largest container of c-ex, does not hold d-other: the cluster stays
    assert {d: rows[d][:2] for d in ("c-ex", "d-other", "y-big")} == {
        "c-ex": ("c-ex", True), "d-other": ("c-ex", False), "y-big": ("c-ex", False)}
    assert rows["f-near"] == ("e-one", False, 0.9, JACCARD) and rows["e-one"][3] is None
