"""Nothing lost, whatever the input: files Spark passes over, malformed JSON lines, text
values that are not strings, empty inputs and outputs that cannot be directories."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from warc_corpus import Crawl, write_documents

from neardup_udfs.config import load_config
from neardup_udfs.io.input_files import HIDDEN_REASON, hidden_name, unread_files
from neardup_udfs.io.readers import MALFORMED_JSON, NOT_A_STRING, EmptyInput, InputError
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.runs.dedup import Summary, run

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent


def _run(spark: Any, src: Path, out: Path, **overrides: Any) -> Summary:
    cfg = load_config(str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **overrides)
    return run(spark, cfg)


def _rows(spark: Any, out: Path, name: str) -> list[dict[str, Any]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).collect()]


def _input_report(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())["input"]


def test_hidden_name_follows_sparks_rule() -> None:
    assert hidden_name("_crawl.warc.gz") and hidden_name(".draft.txt")
    assert hidden_name("page.txt._COPYING_")
    assert not hidden_name("_year=2026")  # a partition directory
    assert not hidden_name("_metadata") and not hidden_name("page.txt")


def test_text_files_spark_skips_are_rejects_and_empty_files_documents(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "_drafts").mkdir()
    texts = {
        "a.txt": "the quick brown fox jumps over the lazy dog",
        "b.txt": "a completely different sentence about rivers",
        "sub/c.txt": "yet another text, with nothing in common",
        "_part1.txt": "a file whose name starts with an underscore",
        ".hidden.txt": "a file whose name starts with a dot",
        "_drafts/d.txt": "a file inside a directory Spark skips",
        "empty.txt": "",
        "sub/also-empty.txt": "",
    }
    for name, text in texts.items():
        (src / name).write_text(text)
    (src / "_SUCCESS").write_text("")  # Spark's own marker: not a user file
    out = tmp_path / "out"
    s = _run(spark, src, out)

    skipped = sorted(r["doc_id"] for r in _rows(spark, out, "rejects"))
    assert skipped == sorted(
        f"file:{src / n}" for n in ("_part1.txt", ".hidden.txt", "_drafts/d.txt")
    )
    assert {r["reason"] for r in _rows(spark, out, "rejects")} == {HIDDEN_REASON}
    read = sum(len(t.encode()) for n, t in texts.items() if not n.startswith(("_", ".")))
    assert unread_files(HadoopStorage(spark), str(src)).read_bytes == read  # what Spark reads
    kept = {r["doc_id"] for r in _rows(spark, out, "docs")}
    assert {f"file:{src / n}" for n in ("empty.txt", "sub/also-empty.txt")} <= kept
    assert s.input == 8 and s.rejected == 3 and s.kept + s.removed == 5
    report = _input_report(out)
    assert report["skipped_files"] == 3
    assert report["rejects_by_reason"] == {HIDDEN_REASON: 3}
    assert (out / "_MANIFEST.json").exists()


def test_a_hidden_warc_file_is_a_reject_not_silence(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "crawl"
    src.mkdir()
    crawl = Crawl()
    write_documents(src / "crawl-part0.warc.gz", [("p0", "first page text")], crawl).close()
    write_documents(src / "_crawl-part1.warc.gz", [("p1", "second page text")], crawl).close()
    out = tmp_path / "out"
    _run(spark, src, out, input_format="warc")
    hidden = [r for r in _rows(spark, out, "rejects") if r["reason"] == HIDDEN_REASON]
    assert [r["doc_id"] for r in hidden] == [f"file:{src / '_crawl-part1.warc.gz'}"]
    assert _input_report(out)["skipped_files"] == 1


def _jsonl_with_bad_lines(path: Path) -> None:
    lines = [
        json.dumps({"id": "a", "text": "the same words in the same order", "n": 1}),
        "",  # blank lines count for the line numbers
        json.dumps({"id": "b", "text": 42}),
        json.dumps({"id": "c", "text": ["alpha", "beta", "gamma"]}),
        '{"id": "d", "text": "unterminated',
        json.dumps({"id": "e", "text": None}),
        json.dumps({"id": "f", "text": "the same words in the same order"}),
        "not json at all",
        json.dumps({"id": "g", "text": {"nested": "object"}}),
    ]
    data = ("\n".join(lines) + "\n").encode()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("name", ["in.jsonl", "in.jsonl.gz"])
def test_malformed_json_lines_are_rejects_named_by_file_and_line(
    spark: Any, tmp_path: Path, name: str
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    _jsonl_with_bad_lines(src / name)
    out = tmp_path / "out"
    s = _run(spark, src, out, input_format="jsonl", id_col="id")
    rejects = sorted((r["doc_id"], r["reason"]) for r in _rows(spark, out, "rejects"))
    uri = f"file:{src / name}"
    assert rejects == [
        ("b", NOT_A_STRING),
        ("c", NOT_A_STRING),
        ("e", "null text"),
        (f"{uri}#L5", MALFORMED_JSON),
        (f"{uri}#L8", MALFORMED_JSON),
        ("g", NOT_A_STRING),
    ]
    docs = spark.read.parquet(str(out / "docs"))
    assert "_corrupt_record" not in docs.columns and "__source_file" not in docs.columns
    assert sorted(docs.columns) == ["doc_id", "id", "n", "text"]
    clusters = _rows(spark, out, "clusters")
    assert sorted(r["doc_id"] for r in clusters) == ["a", "f"]  # exact twins, nothing coerced
    assert s.input == 8 and s.rejected == 6 and s.kept == 1 and s.removed == 1
    assert _input_report(out)["rejects_by_reason"] == {
        NOT_A_STRING: 3,
        MALFORMED_JSON: 2,
        "null text": 1,
    }


@pytest.mark.parametrize("fmt", ["jsonl", "text", "parquet"])
def test_an_empty_input_is_an_error_unless_allowed(spark: Any, tmp_path: Path, fmt: str) -> None:
    src = tmp_path / "day"
    src.mkdir()
    if fmt == "jsonl":
        (src / "part-0.jsonl").write_text("\n\n")  # only blank lines: no records
    out = tmp_path / "out"
    ids = {"id_col": "id"} if fmt != "text" else {}
    with pytest.raises(EmptyInput, match=f"input path '{src}' holds no records.*allow-empty"):
        _run(spark, src, out, input_format=fmt, **ids)
    assert not (out / "_MANIFEST.json").exists()
    s = _run(spark, src, out, input_format=fmt, allow_empty_input=True, **ids)
    assert (s.input, s.kept, s.removed, s.rejected) == (0, 0, 0, 0)
    assert (out / "_MANIFEST.json").exists()
    assert spark.read.parquet(str(out / "docs")).count() == 0


def test_an_empty_warc_directory_is_an_error_unless_allowed(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "crawl"
    src.mkdir()
    out = tmp_path / "out"
    with pytest.raises(EmptyInput, match="holds no records"):
        _run(spark, src, out, input_format="warc")
    s = _run(spark, src, out, input_format="warc", allow_empty_input=True)
    assert s.input == 0 and (out / "_MANIFEST.json").exists()


def test_an_output_that_is_a_file_fails_before_anything_is_read(spark: Any, tmp_path: Path) -> None:
    blocker = tmp_path / "report.txt"
    blocker.write_text("not a directory")
    missing_input = tmp_path / "nothing-here"  # reading it would fail: the output fails first
    with pytest.raises(InputError, match=f"output '{blocker}' is a regular file"):
        _run(spark, missing_input, blocker)
    with pytest.raises(InputError, match=f"lies under '{blocker}'"):
        _run(spark, missing_input, blocker / "sub")
    with pytest.raises(InputError, match=f"against .*'{blocker}' is a regular file"):
        _run(spark, missing_input, tmp_path / "out", against=str(blocker), update_index=True)
    assert blocker.read_text() == "not a directory"
