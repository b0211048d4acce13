"""The filesystem layer (``neardup_udfs.io.storage``): every file a job writes by name goes
through Hadoop's FileSystem, so a scheme Hadoop maps to local storage by configuration
(``viewfs://``) receives every output; the CLI reads through pyarrow and names the schemes
it cannot open."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import dedup as dedup_job
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neardup_udfs import cli
from neardup_udfs.config import load_config
from neardup_udfs.index import store as index_store
from neardup_udfs.index.store import IndexStoreError
from neardup_udfs.io.storage import ArrowStorage, HadoopStorage, LocalStorage, StorageError, join
from neardup_udfs.report import ReportError, build_report

ROOT = Path(__file__).resolve().parents[2]

OUTPUTS = ("docs", "clusters", "pairs", "rejects", "samples")


def _exercise(store, base: str) -> None:  # type: ignore[no-untyped-def]
    """The contract both implementations keep."""
    f = join(base, "a", "b.json")
    assert store.kind(f) is None and store.read_bytes(f) is None
    store.write_bytes(f, b"one")
    store.write_bytes(f, b"two")  # replaced
    assert store.read_bytes(f) == b"two" and store.kind(f) == "file"
    assert store.kind(join(base, "a")) == "dir"
    assert store.list(join(base, "a")) == ["b.json"]  # no temporary file left behind
    assert store.read_bytes(join(base, "a")) is None  # a directory is not a file
    store.delete(join(base, "a"))
    assert store.kind(join(base, "a")) is None and store.list(join(base, "a")) == []
    store.delete(join(base, "a"))  # nothing there: nothing to do


def test_join_keeps_schemes_and_single_slashes() -> None:
    assert join("hdfs://nn:8020/data/", "out", "/x/") == "hdfs://nn:8020/data/out/x"
    assert join("/", "tmp") == "/tmp" and join("rel", "a") == "rel/a"


def test_arrow_storage_on_paths_and_file_uris(tmp_path: Path) -> None:
    _exercise(ArrowStorage(str(tmp_path)), str(tmp_path))
    uri = tmp_path.as_uri()
    _exercise(ArrowStorage(uri), uri)


def test_arrow_storage_names_a_scheme_only_spark_reads() -> None:
    with pytest.raises(StorageError, match="viewfs://.* readable from a Spark job"):
        ArrowStorage("viewfs://cluster/out")
    with pytest.raises(IndexStoreError, match="cannot open index location"):
        index_store.open_index("viewfs://cluster/index")
    with pytest.raises(ReportError, match="readable from a Spark job"):
        build_report("viewfs://cluster/out")


def _viewfs(spark, local: Path) -> str:  # type: ignore[no-untyped-def]
    """A viewfs:// root that Hadoop's configuration maps onto ``local`` (a new mount table
    name each time: Hadoop caches a FileSystem per scheme and authority)."""
    name = f"t{uuid.uuid4().hex[:10]}"
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    local.mkdir(parents=True, exist_ok=True)
    conf.set(f"fs.viewfs.mounttable.{name}.link./data", local.as_uri())
    return f"viewfs://{name}/data"


@pytest.mark.spark
def test_hadoop_storage_on_file_uris_and_a_mapped_scheme(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = HadoopStorage(spark)
    _exercise(store, (tmp_path / "f").as_uri())
    root = _viewfs(spark, tmp_path / "mapped")
    _exercise(store, root)
    store.write_bytes(join(root, "x.txt"), b"here")
    assert (tmp_path / "mapped" / "x.txt").read_bytes() == b"here"  # landed where mapped
    with pytest.raises(StorageError, match="cannot open 'nosuch://"):
        store.kind("nosuch://x/y")


def _rows(path: Path, name: str) -> list[dict[str, object]]:
    rows = pq.read_table(path / name).to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.mark.spark
def test_dedup_outputs_all_go_through_the_layer(spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same run into a plain path, a file:// URI and a viewfs:// root mapped to a local
    directory: identical tables, and every file (report, page, manifest) where it belongs;
    nothing appears in the working directory."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    plain, as_uri, mapped = tmp_path / "plain", tmp_path / "uri", tmp_path / "mapped"
    targets = {plain: str(plain), as_uri: as_uri.as_uri(), mapped: _viewfs(spark, mapped)}
    for local, target in targets.items():
        cfg = load_config(input=str(ROOT / "samples"), output=target, outputs=OUTPUTS)
        dedup_job.run(spark, cfg)
        names = set(os.listdir(local))
        assert {"report.json", "report.html", "_MANIFEST.json", *OUTPUTS} <= names, target
        assert not [n for n in names if n.endswith(".tmp")]
        report = json.loads((local / "report.json").read_text())
        assert report["config"]["output"] == target
        assert report["scores"]["count"] == report["counts"]["verified"]
        page = (local / "report.html").read_text()
        assert "Clusters side by side" in page and 'class="cluster"' in page
    assert os.listdir(cwd) == []  # no directory named "file:" or "viewfs:" appeared
    for name in OUTPUTS:
        assert _rows(plain, name) == _rows(as_uri, name) == _rows(mapped, name), name
    # a rerun into the mapped root removes outputs it no longer writes, there
    cfg = load_config(
        input=str(ROOT / "samples"), output=targets[mapped], outputs=("docs", "clusters")
    )
    dedup_job.run(spark, cfg)
    assert not (mapped / "pairs").exists() and (mapped / "_MANIFEST.json").exists()


@pytest.mark.spark
def test_index_on_a_mapped_scheme(spark, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """dedup --against --update-index with the index on viewfs://: the manifest and the
    batch land in the mapped directory; the CLI (pyarrow) says it cannot read there."""
    index = _viewfs(spark, tmp_path / "idx")
    cfg = load_config(
        input=str(ROOT / "samples"),
        output=str(tmp_path / "out"),
        against=index,
        update_index=True,
        batch_id="b1",
    )
    summary = dedup_job.run(spark, cfg)
    manifest = json.loads((tmp_path / "idx" / index_store.MANIFEST).read_text())
    assert [b["batch_id"] for b in manifest["batches"]] == ["b1"]
    assert manifest["documents"] == summary.index_added == summary.kept
    assert index_store.open_index(index, HadoopStorage(spark)).documents == summary.kept

    # the same index at a file:// URI holds the same documents as on the mapped scheme
    def held(root: Path) -> tuple[int, list[str]]:
        manifest = json.loads((root / index_store.MANIFEST).read_text())
        docs = pq.read_table(root / manifest["batches"][0]["dir"] / "docs").to_pylist()
        return manifest["documents"], sorted(r["doc_id"] for r in docs)

    again = load_config(
        input=str(ROOT / "samples"),
        output=str(tmp_path / "out-uri"),
        against=(tmp_path / "u").as_uri(),
        update_index=True,
        batch_id="b1",
    )
    dedup_job.run(spark, again)
    uri = held(tmp_path / "u")
    assert uri == held(tmp_path / "idx") and uri[0] == summary.kept
    assert index_store.open_index((tmp_path / "u").as_uri()).documents == summary.kept  # CLI
    query = tmp_path / "q.txt"
    query.write_text("any text at all to look up in the index")
    assert cli.main(["similar", "--index", index, str(query)]) == 2  # pyarrow: no viewfs
    assert "readable from a Spark job" in capsys.readouterr().err


def test_cli_reads_outputs_through_file_uris(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``neardup clusters`` and ``neardup report`` on a file:// URI of an output."""
    out = tmp_path / "out"
    out.mkdir()
    pq.write_table(
        pa.table(
            {
                "doc_id": ["a", "b"],
                "cluster_id": ["a", "a"],
                "is_representative": [True, False],
                "similarity": [1.0, 0.9],
            }
        ),
        out / "clusters.parquet",
    )
    (out / "clusters").mkdir()
    (out / "clusters.parquet").rename(out / "clusters" / "part-0.parquet")
    (out / "_MANIFEST.json").write_text("{}")
    (out / "report.json").write_text(json.dumps({"counts": {"input": 2}, "config": {}}))
    assert cli.main(["clusters", out.as_uri()]) == 0
    assert "2 members" in capsys.readouterr().out
    assert cli.main(["report", out.as_uri()]) == 0
    assert (out / "report.html").exists()


# --- the storage layer without a JVM -----------------------------------------------------


def test_local_storage_drops_stale_checksums_and_creates_exclusively(tmp_path: Path) -> None:
    store = LocalStorage()
    target = tmp_path / "report.json"
    crc = tmp_path / ".report.json.crc"
    target.write_text("old")
    crc.write_bytes(b"stale")
    store.write_bytes(str(target), b"new")
    assert target.read_bytes() == b"new" and not crc.exists()  # Hadoop would reject "new"
    assert store.list(str(tmp_path)) == ["report.json"]
    lock = f"file:{tmp_path}/_LOCK.json"
    assert store.create_new(lock, b"me") and not store.create_new(lock, b"you")
    assert store.read_bytes(lock) == b"me"
    assert store.qualified(str(tmp_path / "x")) == f"file:{tmp_path}/x"
    store.delete(str(tmp_path))
    assert not tmp_path.exists()
