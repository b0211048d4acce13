"""The driver engine (``driver.near``, config key ``engine``): the dedup job's outputs and
report counts are the same whether its core runs in the driver's process or as Spark stages,
for every text pipeline, representative rule and verification; ``auto`` picks the driver
only for what it can take, and says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from dedup_runs import TEXT_PRESETS, run_dedup
from engine_corpus import REPORTED, TABLES, engine_corpus

from neardup_udfs import engine as engine_rules
from neardup_udfs.config import ConfigError, load_config, load_index_config
from neardup_udfs.runs import dedup as dedup_run
from neardup_udfs.runs.summary import near_settings


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return engine_corpus(tmp_path_factory.mktemp("driver") / "corpus.jsonl")


def _both(  # type: ignore[no-untyped-def]
    spark, corpus: Path, out: Path, tables: tuple[str, ...] = TABLES, **settings: Any
) -> dict[str, Any]:
    """Each engine's ``tables`` (rows sorted) and report parts."""
    got = {}
    for engine in ("spark", "driver"):
        where = out / engine
        run_dedup(spark, corpus, where, outputs=tables, engine=engine, **settings)
        report = json.loads((where / "report.json").read_text())
        assert report["engine"]["engine"] == engine
        written = {}
        for name in tables:
            table = pq.read_table(where / name)
            rows = table.to_pylist()
            written[name] = (
                table.schema.names,
                sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str)),
            )
        got[engine] = (written, {k: report[k] for k in REPORTED})
    return got


def _assert_same(got: dict[str, Any]) -> None:
    spark_tables, spark_report = got["spark"]
    driver_tables, driver_report = got["driver"]
    assert driver_tables.keys() == spark_tables.keys()
    for name in spark_tables:
        assert driver_tables[name][0] == spark_tables[name][0], name  # the columns, in order
        assert driver_tables[name][1] == spark_tables[name][1], name
    assert driver_report == spark_report


# Every text preset; MinHash with and without web normalization (its exact checks read the
# texts, normalized by each engine's verification), each SimHash preset with one of them:
# there normalization changes only the feature pass, the one both engines run
# (driver.batches.document_features_fn), and each is covered by two presets.
PIPELINES = [("semblance", "web"), ("semblance", "none"), ("semblance-simhash", "web"),
             ("ditto/2", "none"), ("fingerprint", "web"), ("anchor", "none")]  # fmt: skip
assert {p for p, _ in PIPELINES} == set(TEXT_PRESETS)


@pytest.mark.parametrize(("preset", "normalize"), PIPELINES)
def test_engines_agree_for_every_text_pipeline(
    spark, corpus: Path, tmp_path: Path, preset: str, normalize: str
) -> None:  # type: ignore[no-untyped-def]
    """Every text preset (see :data:`PIPELINES`), hot buckets included: the same clusters,
    pairs and report counts (the other outputs derive from these two and the read, which
    both engines share; the rule and verification test compares them all)."""
    method = "minhash" if preset == "semblance" else "simhash"
    got = _both(
        spark,
        corpus,
        tmp_path,
        ("clusters", "pairs"),
        method=method,
        preset=preset,
        normalize=normalize,
        hot_bucket_size=3,
        representative="longest",
    )
    _assert_same(got)
    counts = got["driver"][1]["counts"]
    assert counts["removed"] > 0 and counts["exact_duplicates"] > 0
    if preset == "semblance":
        assert counts["hot_buckets"] > 0  # the star rule ran on both paths


@pytest.mark.parametrize(
    "settings",
    [
        {"verification": "exact", "representative": "earliest", "order_col": "crawl"},
        {"verification": "estimate", "representative": "min_id", "normalize": "none"},
        {
            "verification": "hybrid",
            "threshold": 0.9,
            "representative": "earliest",
            "order_col": "crawl",
        },  # fmt: skip
    ],
    ids=["exact-earliest", "estimate-min-id", "hybrid-0.9-earliest"],
)
def test_engines_agree_for_every_verification_and_rule(
    spark, corpus: Path, tmp_path: Path, settings: dict[str, Any]
) -> None:  # type: ignore[no-untyped-def]
    """MinHash under each verification and representative rule (``earliest`` with nulls
    and ties in the order column): the same outputs and counts."""
    got = _both(spark, corpus, tmp_path, **settings)
    _assert_same(got)
    assert got["driver"][1]["counts"]["verified"] > 0


def test_auto_runs_small_inputs_on_the_driver_and_says_why(
    spark, corpus: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """``auto`` (the default): a small anchored run's core runs on the driver, with the
    budget and need in report.json; connected clustering runs on Spark stages (and keeps a
    page with no visible text as a cluster of its own: it was once lost there)."""
    for clustering, engine in (("connected", "spark"), ("anchored", "driver")):
        out = tmp_path / clustering
        cfg = load_config(
            input=str(corpus), output=str(out), input_format="jsonl", id_col="url",
            text_col="body", clustering=clustering,
        )  # fmt: skip
        assert cfg.engine == "auto"
        dedup_run.run(spark, cfg)
        said = json.loads((out / "report.json").read_text())["engine"]
        assert said["engine"] == engine, said
        if engine == "driver":
            assert said["why"] == "the accepted texts fit the driver's budget"
            assert 0 < said["need_bytes"] <= said["driver_budget_bytes"]
            assert said["budget_from"].startswith("spark.driver.")
        else:
            assert said["why"] == "connected clustering runs on Spark stages"
            # a page with no visible text has no sketch: its own cluster, kept, not lost
            rows = {r["doc_id"]: r for r in pq.read_table(out / "clusters").to_pylist()}
            assert rows["script-only"]["cluster_id"] == "script-only"
            assert rows["script-only"]["is_representative"]
            assert rows["script-only"]["similarity"] == 1.0


@pytest.mark.parametrize(
    ("conf", "text_bytes", "docs", "engine"),
    [
        ({}, 10 << 20, 10_000, "driver"),  # 1g: half is 512 MiB; need 60 MiB + 40 MB
        ({}, 100 << 20, 1_000, "spark"),  # 600 MiB of text copies
        ({"spark.driver.memory": "8g", "spark.driver.maxResultSize": "4g"}, 200 << 20, 1, "driver"),
        ({"spark.driver.maxResultSize": "64m"}, 20 << 20, 1, "spark"),  # the result limit
    ],
)
def test_auto_weighs_the_texts_against_the_driver_budget(
    conf: dict[str, str], text_bytes: int, docs: int, engine: str
) -> None:
    """``auto``: the driver when six bytes a byte of accepted text and 4 KiB a document fit
    half the smaller of the driver's memory and its result limit."""
    cfg = load_config(input="in", output="out")
    said = engine_rules.core_engine(cfg, text_bytes, docs, conf)
    assert said["engine"] == engine
    need = engine_rules.DRIVER_TEXT_COPIES * text_bytes + engine_rules.DRIVER_BYTES_PER_DOC * docs
    assert said["need_bytes"] == need


def test_an_engine_chosen_by_the_user_is_kept_and_checked() -> None:
    """``engine`` set: kept as given; ``driver`` refuses what only Spark stages do, and the
    index job refuses the key (ConfigError names it)."""
    cfg = load_config(input="in", output="out", engine="spark")
    said = engine_rules.core_engine(cfg, 0, 0, {})
    assert said == {"engine": "spark", "why": "config key engine = 'spark'"}
    with pytest.raises(ConfigError, match="engine"):
        load_config(input="in", output="out", engine="driver", clustering="connected")
    with pytest.raises(ConfigError, match="engine"):
        load_config(input="in", output="out", engine="driver", against="idx")
    with pytest.raises(ConfigError, match="engine"):
        load_config(input="in", output="out", engine="gpu")
    with pytest.raises(ConfigError, match="engine"):
        load_index_config(action="build", input="in", index="idx", engine="driver")


def test_the_core_alone_groups_copies_and_near_copies_without_spark() -> None:
    """``near_on_driver`` on an Arrow table: exact copies join their leader's group, a near
    copy is removed next to the kept text with its verified score, an unrelated text and an
    empty page stay; no rows: no pairs; connected clustering is refused."""
    import pyarrow as pa

    from neardup_udfs.driver.near import near_on_driver

    cfg = load_config(input="in", output="out")
    pipeline = cfg.pipeline()
    settings = near_settings(cfg, pipeline)
    story = " ".join(f"word{i}" for i in range(60))
    rows = {
        "b": story,
        "a": story,  # an exact copy: leader a
        "c": story.replace("word30", "other"),  # a near copy
        "d": "an unrelated short text about something else entirely",
        "e": "<script>1</script>",  # no visible text
    }
    table = pa.table({"doc_id": list(rows), "text": list(rows.values())})
    got = near_on_driver(table, pipeline, settings)
    clusters = {r["doc_id"]: r for r in got.clusters.to_pylist()}
    assert {d: clusters[d]["cluster_id"] for d in rows} == {
        "a": "a", "b": "a", "c": "a", "d": "d", "e": "e"
    }  # fmt: skip
    assert [d for d in rows if clusters[d]["is_representative"]] == ["a", "d", "e"]
    assert clusters["b"]["similarity"] == 1.0
    assert 0.7 <= clusters["c"]["similarity"] < 1.0
    assert got.pairs.to_pylist() == [
        {"a": "a", "b": "c", "band": got.pairs.column("band")[0].as_py(),
         "similarity": clusters["c"]["similarity"]}
    ]  # fmt: skip
    assert got.counts["exact_duplicates"] == 1 and got.counts["empty"] == 1
    assert (got.counts["kept"], got.counts["removed"]) == (3, 2)
    assert got.histogram == {1: 2, 3: 1}
    nothing = near_on_driver(table.slice(0, 0), pipeline, settings)
    assert nothing.clusters.num_rows == 0 and nothing.pairs.num_rows == 0
    connected = near_settings(
        load_config(input="i", output="o", clustering="connected"), pipeline
    )
    with pytest.raises(ValueError, match="anchored"):
        near_on_driver(table, pipeline, connected)


def test_the_feature_pass_on_n_processes_equals_one(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Runs of batches in forked processes give the rows one process gives, in order; a
    child that fails leaves its run to the parent, with the same rows."""
    import pyarrow as pa

    from neardup_udfs.driver import near
    from neardup_udfs.presets import resolve

    texts = [f"doc {i} " + " ".join(f"w{(i * j) % 97}" for j in range(30)) for i in range(50)]
    table = pa.table({"doc_id": [f"d{i:03d}" for i in range(50)], "text": texts})
    pipeline = resolve("semblance")
    monkeypatch.setattr(near, "BATCH_ROWS", 8)
    one = near._features(table, pipeline, workers=1)
    monkeypatch.setattr(near, "FORK_MIN_ROWS", 0)
    assert near._features(table, pipeline, workers=3).equals(one)
    assert near._features(table, pipeline, workers=5).equals(one)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the child cannot write")

    from neardup_udfs.driver import fork

    monkeypatch.setattr(fork.pickle, "dump", broken)  # only the child pickles
    assert near._features(table, pipeline, workers=3).equals(one)


def test_the_core_removes_index_matches_first_and_their_edges_play_no_part() -> None:
    """``anchored_clusters`` with index matches: a matched leader's whole group goes to its
    closest indexed document (ties: the smallest id) with that score, before the greedy
    pass, and its edges decide nothing; the other rows are as without matches."""
    import numpy as np

    from neardup_udfs.driver.near import IndexMatches, anchored_clusters

    ids = np.array(["a", "a2", "b", "c", "d"], dtype=object)
    leader = np.array(["a", "a", "b", "c", "d"], dtype=object)  # a2 an exact copy of a
    place = np.arange(5, dtype=np.int64)  # a first in the rule's order, then a2, b, c, d
    # a-b and b-c near; without the index, a keeps b out and c stays
    a, b = np.array(["a", "b"], dtype=object), np.array(["b", "c"], dtype=object)
    score = np.array([2, 3], dtype=np.int64)
    plain = anchored_clusters(ids, leader, place, a, b, score, simhash=True).to_pylist()
    assert [(r["cluster_id"], r["is_representative"], r["distance"]) for r in plain] == [
        ("a", True, 0), ("a", False, 0), ("a", False, 2), ("c", True, 0), ("d", True, 0)
    ]  # fmt: skip
    matches = IndexMatches(
        np.array(["a", "a", "a", "d"], dtype=object),
        np.array(["x9", "x2", "x1", "x5"], dtype=object),
        np.array([1, 1, 3, 0], dtype=np.int64),
    )
    got = anchored_clusters(ids, leader, place, a, b, score, simhash=True, matches=matches)
    rows = [(r["doc_id"], r["cluster_id"], r["is_representative"], r["distance"],
             r["indexed_id"]) for r in got.to_pylist()]  # fmt: skip
    assert rows == [
        ("a", "x2", False, 1, "x2"),  # closest at distance 1: x2 and x9 tie, x2 the smaller
        ("a2", "x2", False, 1, "x2"),  # the group goes with its leader
        ("b", "b", True, 0, None),  # a is gone: b keeps its place and removes c
        ("c", "b", False, 3, None),
        ("d", "x5", False, 0, "x5"),
    ]
    assert got.schema.field("indexed_id").type == "string"
    none = anchored_clusters(ids, leader, place, a, b, score, simhash=True,
                             matches=IndexMatches(*(np.zeros(0, dtype=object),) * 3))  # fmt: skip
    assert none.drop(["indexed_id"]).to_pylist() == plain
    assert none.column("indexed_id").null_count == 5
