"""The fingerprint job on a local SparkSession: text files and JSON lines, rejects named by
their reason, files Spark skips, lost records, options refused before Spark starts."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from job_runs import URL_BODY, write_texts

import neardup_udfs
from neardup_udfs.clock import LostRecords
from neardup_udfs.config import FingerprintConfig, load_fingerprint_config
from neardup_udfs.io.input_files import HIDDEN_REASON
from neardup_udfs.io.readers import MALFORMED_JSON, NOT_A_STRING, InputError
from neardup_udfs.kernels.simhash import format_hex
from neardup_udfs.runs import fingerprint as fingerprint_job

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def _job_config(**kw) -> FingerprintConfig:  # type: ignore[no-untyped-def]
    return load_fingerprint_config(**kw)


def test_job_on_text_files(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    summary = fingerprint_job.run(spark, _job_config(input=str(ROOT / "samples"), output=str(out)))
    assert summary.input == summary.fingerprinted == len(os.listdir(ROOT / "samples"))
    assert summary.rejected == 0
    rows = spark.read.parquet(str(out / "fingerprints")).collect()
    for r in rows:
        path = r.doc_id.removeprefix("file:")
        assert r.fingerprint_hex == format_hex(neardup_udfs.fingerprint(Path(path).read_bytes()))
    manifest = json.loads((out / "_MANIFEST.json").read_text())
    assert manifest["pipeline"] == {"id": "ditto/2", "version": "ditto/2"}
    assert manifest["counts"]["fingerprinted"] == summary.fingerprinted
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    with pytest.raises(InputError, match=r"already holds fingerprints/ .* pass --overwrite"):
        fingerprint_job.run(spark, _job_config(input=str(ROOT / "samples"), output=str(out)))
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before  # manifest kept too
    again = fingerprint_job.run(
        spark, _job_config(input=str(ROOT / "samples"), output=str(out), overwrite=True)
    )
    assert again == summary and (out / "_MANIFEST.json").exists()


def test_job_on_jsonl_with_rejects(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "docs.jsonl"
    src.write_text(
        "\n".join(
            json.dumps(r)
            for r in [{"url": "u1", "body": "hello world"}, {"url": "u2"}, {"body": "no id"}]
        )
    )
    cfg = _job_config(input=str(src), output=str(tmp_path / "o"), **URL_BODY)
    summary = fingerprint_job.run(spark, cfg)
    assert (summary.input, summary.fingerprinted, summary.rejected) == (3, 1, 2)
    with pytest.raises(InputError, match="has no column 'content'"):
        fingerprint_job.run(
            spark,
            _job_config(
                input=str(src),
                output=str(tmp_path / "p"),
                input_format="jsonl",
                id_col="url",
                text_col="content",
            ),
        )
    # without --id-col: the dedup job's ids, <file URI>:<record index>
    cfg = _job_config(
        input=str(src), output=str(tmp_path / "q"), input_format="jsonl", text_col="body"
    )
    assert fingerprint_job.run(spark, cfg).fingerprinted == 2
    ids = sorted(
        r.doc_id for r in spark.read.parquet(str(tmp_path / "q" / "fingerprints")).collect()
    )
    assert ids == [f"file:{src}:0", f"file:{src}:2"]


def _pairs(spark, out: Path, name: str) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """``(doc_id, fingerprint_hex or reason)`` of one output of a fingerprint run, sorted."""
    value = "fingerprint_hex" if name == "fingerprints" else "reason"
    return sorted((r.doc_id, r[value]) for r in spark.read.parquet(str(out / name)).collect())


def test_job_accounts_for_files_spark_skips_and_empty_files(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Spark never reads a hidden name and yields no row for a 0-byte file: the first are
    rejects named by their URI, the second documents of empty text, so 7 files -> 7."""
    src = tmp_path / "in"
    texts = {
        "a.txt": "the first document",
        "sub/b.txt": "the second document",
        "c.txt": "the third document",
        "empty.txt": "",
        "_d.txt": "a name starting with an underscore",
        ".e.txt": "a name starting with a dot",
        "_drafts/f.txt": "inside a directory Spark skips",
    }
    write_texts(src, texts)
    out = tmp_path / "out"
    s = fingerprint_job.run(spark, _job_config(input=str(src), output=str(out)))
    assert (s.input, s.fingerprinted, s.rejected) == (7, 4, 3)
    uri = {name: f"file:{src / name}" for name in texts}
    assert _pairs(spark, out, "fingerprints") == sorted(
        (uri[n], format_hex(neardup_udfs.fingerprint(texts[n].encode())))
        for n in ("a.txt", "sub/b.txt", "c.txt", "empty.txt")
    )
    assert _pairs(spark, out, "rejects") == sorted(
        (uri[n], HIDDEN_REASON) for n in ("_d.txt", ".e.txt", "_drafts/f.txt")
    )
    assert json.loads((out / "_MANIFEST.json").read_text())["counts"]["input"] == 7
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty()  # the run released it


def test_job_writes_no_manifest_when_a_record_is_lost(spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """fingerprinted + rejected must equal the records read: a reader that counts one more
    record than it gives makes the run fail without its success marker."""
    real = fingerprint_job.read_checked

    def one_more(*args, **kwargs):  # type: ignore[no-untyped-def]
        read = real(*args, **kwargs)
        return dataclasses.replace(read, n_good=read.n_good + 1)

    monkeypatch.setattr(fingerprint_job, "read_checked", one_more)
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.txt").write_text("one document")
    out = tmp_path / "out"
    with pytest.raises(LostRecords, match="2 read, 1 fingerprinted, 0 rejected"):
        fingerprint_job.run(spark, _job_config(input=str(src), output=str(out)))
    assert not (out / "_MANIFEST.json").exists()


def test_job_rejects_json_it_cannot_fingerprint_by_name(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A JSON text that is not a string is a reject (not fingerprinted as the text "42"); a
    line that is not JSON is a reject named by its file and line, never a null doc_id."""
    src = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"id": "a", "text": "a real text"}),
        json.dumps({"id": "b", "text": 42}),
        "",  # blank lines count for the line numbers
        '{"id": "c", "text": "unterminated',
        json.dumps({"id": "d", "text": ["a", "list"]}),
        json.dumps({"id": "e", "text": "another text"}),
    ]
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    cfg = _job_config(input=str(src), output=str(out), input_format="jsonl", id_col="id")
    s = fingerprint_job.run(spark, cfg)
    assert (s.input, s.fingerprinted, s.rejected) == (5, 2, 3)
    assert _pairs(spark, out, "fingerprints") == [
        ("a", format_hex(neardup_udfs.fingerprint("a real text"))),
        ("e", format_hex(neardup_udfs.fingerprint("another text"))),
    ]
    assert _pairs(spark, out, "rejects") == [
        ("b", NOT_A_STRING),
        ("d", NOT_A_STRING),
        (f"file:{src}#L4", MALFORMED_JSON),
    ]
    for name, columns in [
        ("fingerprints", ["doc_id", "fingerprint", "fingerprint_hex", "pipeline"]),
        ("rejects", ["doc_id", "reason"]),
    ]:
        assert spark.read.parquet(str(out / name)).columns == columns


def test_job_refuses_bad_preset_before_spark_starts(tmp_path: Path) -> None:
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "jobs/fingerprint.py"),
            "--input",
            "x",
            "--output",
            str(tmp_path),
            "--preset",
            "ditto/2",
            "--word",
            "-1",
            "--char",
            "99999",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 2
    assert "option 'char' of preset 'ditto/2' must be in [0, 1024], got 99999" in res.stderr
