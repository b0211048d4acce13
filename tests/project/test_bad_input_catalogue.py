"""The catalogue of bad inputs and outputs an adversarial user tried (issue 38 and the probe
before it), each case held to the same three promises, job by job:

- the job ends with exit 0 and every bad record a named reject, or with exit 2 and one
  line naming the file, record or option at fault (``InputError``, which ``job_main``
  prints as one line on stderr: any other exception, a traceback, fails the test);
- no file of the user's is deleted or modified (the whole tree around the input is
  compared before and after);
- nothing is lost: input = kept + removed + rejected (hashed / fingerprinted + rejected).

Records of many cases share a run where they can (one folder, one Spark run), to keep the
tier fast; each case's own assertion says which row of the catalogue it holds.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from warc_corpus import BROTLI_PAGE, Crawl, CrawlWriter

from neardup_udfs.cli import main as cli_main
from neardup_udfs.config import (
    load_config,
    load_fingerprint_config,
    load_images_config,
    load_index_config,
)
from neardup_udfs.io.input_files import DANGLING_REASON, HIDDEN_REASON
from neardup_udfs.io.outputs import LOCK_NAME, claim_output
from neardup_udfs.io.readers import (
    GZIP_TRUNCATED,
    MALFORMED_JSON,
    NOT_A_STRING,
    NOT_UNICODE,
    NOT_UTF8,
    InputError,
)
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.runs import dedup, fingerprint, images, index

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.txt"))


def _tree(path: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and link under ``path``: content (a link: its target) and mtime."""
    out = {}
    for p in sorted(path.rglob("*")):
        if p.is_symlink():
            out[str(p)] = (os.readlink(p).encode(), 0)
        elif p.is_file():
            out[str(p)] = (p.read_bytes(), p.stat().st_mtime_ns)
    return out


def _exit(call: Callable[[], Any]) -> tuple[int, Any]:
    """``(0, summary)``, or ``(2, message)`` when the job refuses as ``job_main`` maps it."""
    try:
        return 0, call()
    except InputError as e:
        assert "\n" not in str(e), "an error is one line"
        return 2, str(e)


def _four_samples(tmp_path: Path) -> Path:
    """A folder ``docs`` under ``tmp_path`` holding the first four bundled samples."""
    src = tmp_path / "docs"
    src.mkdir()
    for p in SAMPLES[:4]:
        shutil.copy(p, src / p.name)
    return src


def _rejects(spark: Any, out: Path, id_col: str = "doc_id") -> dict[str, str]:
    return {r[id_col]: r["reason"] for r in spark.read.parquet(str(out / "rejects")).collect()}


def _dedup(spark: Any, src: Path | str, out: Path, **kw: Any) -> tuple[int, Any]:
    cfg = load_config(str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **kw)
    return _exit(lambda: dedup.run(spark, cfg))


def _accounted(s: Any) -> None:
    assert s.kept + s.removed + s.rejected == s.input, s


# --- text files: hidden, empty, dangling, token-less, a folder named like a glob ------------


def test_text_folder_catalogue(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "crawl[1]"  # probe: a path with glob characters was "does not exist"
    src.mkdir()
    for p in SAMPLES[:3]:
        shutil.copy(p, src / p.name)
    (src / "_draft.txt").write_text("a draft Spark never reads")
    (src / ".notes.txt").write_text("hidden notes")
    (src / "empty.txt").write_bytes(b"")
    (src / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    for name, text in {"emoji": "😀😀🎉", "cjk": "。、「」", "symbols": "+++ ### ~~~"}.items():
        (src / f"{name}.txt").write_text(text)
    (src / "emoji-again.txt").write_text("😀😀🎉")
    before = _tree(tmp_path)
    code, s = _dedup(spark, src, tmp_path / "out")
    assert code == 0
    _accounted(s)
    assert s.input == 3 + 4 + 4  # every file, the ones Spark passes over included
    rejects = _rejects(spark, tmp_path / "out")
    uri = f"file:{src}"
    assert rejects == {  # issue 3 (hidden files), probe (dangling link): named rejects
        f"{uri}/_draft.txt": HIDDEN_REASON,
        f"{uri}/.notes.txt": HIDDEN_REASON,
        f"{uri}/gone.txt": DANGLING_REASON,
    }
    kept = {
        r.doc_id.rsplit("/", 1)[1] for r in spark.read.parquet(str(tmp_path / "out/docs")).collect()
    }
    # issue 2: different texts without a word are not duplicates; identical ones still are
    assert {"cjk.txt", "symbols.txt", "empty.txt"} <= kept
    assert len({"emoji.txt", "emoji-again.txt"} & kept) == 1
    assert _tree(tmp_path) == {
        **before,
        **{k: v for k, v in _tree(tmp_path).items() if "/out/" in k},
    }


# --- JSON lines: every bad record of the issue in one folder ---------------------------------


def test_json_lines_catalogue(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "jsonl"
    src.mkdir()
    good = [
        {"id": f"g{i}", "text": f"good record number {i} about harbour ferries"} for i in range(4)
    ]
    lines = [json.dumps(r).encode() for r in good]
    lines.insert(1, b"{not json")  # probe: malformed JSON -> <file>#L2
    lines.insert(3, b"\xff\xfe\x00A not json and not UTF-8")  # issue: ArrowException -> #L4
    lines.append(json.dumps({"id": "n42", "text": 42}).encode())  # issue 3: 42 is not text
    lines.append(rb'{"id": "lone", "text": "x\ud800y"}')  # issue 50: was "null text"
    long = "word " * 400  # over max_text_bytes: the duplicate id keeps its other copy
    lines.append(json.dumps({"id": "dup", "text": long}).encode())
    lines.append(json.dumps({"id": "dup", "text": "the short copy of a repeated id"}).encode())
    (src / "a.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    whole = "\n".join(
        json.dumps({"id": f"z{i}", "text": f"zipped line {i} " * 3}) for i in range(200)
    )
    packed = gzip.compress(whole.encode(), mtime=0)
    (src / "cut.jsonl.gz").write_bytes(packed[: len(packed) // 2])  # issue: EOFException
    utf16 = "\n".join(json.dumps({"id": f"u{i}", "text": f"UTF-16 line {i}"}) for i in range(3))
    (src / "wide.jsonl").write_bytes(utf16.encode("utf-16"))  # probe: one made-up reject
    before = _tree(tmp_path)
    code, s = _dedup(
        spark, src, tmp_path / "out", input_format="jsonl", id_col="id", max_text_bytes=1000
    )
    assert code == 0
    _accounted(s)
    rejects = _rejects(spark, tmp_path / "out")
    a, cut = f"file:{src}/a.jsonl", f"file:{src}/cut.jsonl.gz"
    assert rejects[f"{a}#L2"] == MALFORMED_JSON
    assert rejects[f"{a}#L4"] == NOT_UTF8
    assert rejects["n42"] == NOT_A_STRING
    assert rejects["lone"] == NOT_UNICODE  # its text is there, and not Unicode
    assert [d for d in rejects if d.startswith(f"{cut}#L")] and GZIP_TRUNCATED in rejects.values()
    assert rejects["dup"].startswith("text larger than")  # the long copy, by its own reason
    docs = spark.read.parquet(str(tmp_path / "out/clusters")).select("doc_id").collect()
    ids = {r.doc_id for r in docs}
    assert {"g0", "g1", "g2", "g3", "dup", "u0", "u1", "u2"} <= ids  # UTF-16 decoded
    assert len([i for i in ids if i.startswith("z")]) > 50  # the lines before the break
    assert None not in ids and None not in rejects
    assert {k: v for k, v in _tree(tmp_path).items() if "/out/" not in k} == before


# --- Parquet: hidden files, and files that disagree on a type -------------------------------


def test_parquet_catalogue(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "pq"
    src.mkdir()
    table = pa.table({"id": ["p1", "p2", "p3"], "text": ["one two three", "four five", "six"]})
    for name in ("a.parquet", "_x.parquet", ".y.parquet"):  # issue 3: 6 of 9 rows counted
        pq.write_table(table, src / name)
    code, s = _dedup(spark, src, tmp_path / "out", input_format="parquet", id_col="id")
    assert code == 0
    _accounted(s)
    hidden = {d: r for d, r in _rejects(spark, tmp_path / "out").items() if r == HIDDEN_REASON}
    assert set(hidden) == {f"file:{src}/_x.parquet", f"file:{src}/.y.parquet"}

    mixed = tmp_path / "mixed"
    mixed.mkdir()
    pq.write_table(table, mixed / "a.parquet")
    pq.write_table(pa.table({"id": ["q"], "text": [7]}), mixed / "b.parquet")
    code, message = _dedup(spark, mixed, tmp_path / "out2", input_format="parquet", id_col="id")
    assert code == 2 and "'text'" in message  # issue: PARQUET_COLUMN_DATA_TYPE_MISMATCH
    assert "a.parquet" in message and "b.parquet" in message
    assert not (tmp_path / "out2" / "docs").exists()


# --- WARC: brotli pages ----------------------------------------------------------------------


def test_brotli_warc_pages_decode(spark: Any, tmp_path: Path) -> None:
    import brotli

    src = tmp_path / "warc"
    src.mkdir()
    crawl = Crawl()
    w = CrawlWriter(src / "crawl.warc.gz", crawl)
    rid = w.response(
        "br",
        "http://news.example/br",
        brotli.compress(BROTLI_PAGE.encode()),
        extra=[("Content-Encoding", "br")],
        expect=BROTLI_PAGE,
    )
    w.close()
    code, s = _dedup(spark, src, tmp_path / "out", input_format="warc")
    assert code == 0 and (s.input, s.rejected, s.kept) == (1, 0, 1)  # issue 5: was rejected
    docs = spark.read.parquet(str(tmp_path / "out/docs")).collect()
    assert [r.doc_id for r in docs] == [rid]
    assert "ferry timetable changes on Monday" in docs[0].text


# --- the images and fingerprint jobs ---------------------------------------------------------


def _png(colour: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (48, 48), (colour, 255 - colour, 90)).save(buf, "PNG")
    return buf.getvalue()


def test_images_job_accounts_for_every_file(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "img"
    src.mkdir()
    for i in range(3):
        (src / f"ok{i}.png").write_bytes(_png(40 * i))
    (src / "zero.png").write_bytes(b"")
    (src / "_a.png").write_bytes(_png(1))
    (src / ".b.png").write_bytes(_png(2))
    cfg = load_images_config(input=str(src), output=str(tmp_path / "out"))
    code, s = _exit(lambda: images.run(spark, cfg))
    assert code == 0 and s.input == 6 and s.hashed + s.rejected == s.input  # issue 3: 7 of 10
    rejects = _rejects(spark, tmp_path / "out", "path")
    assert {p.rsplit("/", 1)[1] for p in rejects} == {"zero.png", "_a.png", ".b.png"}


def test_fingerprint_job_accounts_and_keeps_an_earlier_run(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "fp"
    src.mkdir()
    (src / "a.jsonl").write_text(
        "\n".join(
            [
                json.dumps({"id": "t1", "text": "plain words to fingerprint"}),
                "{broken",
                json.dumps({"id": "t42", "text": 42}),
                json.dumps({"id": "t2", "text": "more plain words"}),
            ]
        )
        + "\n"
    )
    (src / "_skip.jsonl").write_text(json.dumps({"id": "h", "text": "hidden"}) + "\n")
    out = tmp_path / "out"

    def run(**kw: Any) -> tuple[int, Any]:
        cfg = load_fingerprint_config(
            input=str(src), output=str(out), input_format="jsonl", id_col="id", **kw
        )
        return _exit(lambda: fingerprint.run(spark, cfg))

    code, s = run()
    assert code == 0 and (s.input, s.fingerprinted, s.rejected) == (5, 2, 3)  # issue 3
    rejects = _rejects(spark, out)
    assert rejects == {
        f"file:{src}/a.jsonl#L2": MALFORMED_JSON,
        "t42": NOT_A_STRING,
        f"file:{src}/_skip.jsonl": HIDDEN_REASON,
    }
    manifest = (out / "_MANIFEST.json").read_bytes()
    code, message = run()  # issue 4: a rerun without --overwrite deleted the manifest
    assert code == 2 and "pass --overwrite" in message
    assert (out / "_MANIFEST.json").read_bytes() == manifest


# --- issue 50: the messages users read ------------------------------------------------------


def test_a_missing_input_and_a_lone_option_are_one_line(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import dedup as dedup_job  # jobs/dedup.py, as spark-submit runs it

    src = tmp_path / "docs"
    src.mkdir()
    shutil.copy(SAMPLES[0], src / SAMPLES[0].name)
    before = _tree(tmp_path)
    missing = tmp_path / "nowhere"
    code, message = _dedup(spark, missing, tmp_path / "out")  # issue 50: a 90-frame Java stack
    assert (code, message) == (2, f"input path '{missing}' does not exist")
    flags = ["--input", str(src), "--output", str(tmp_path / "out")]
    capsys.readouterr()
    # issue 50: --containment-min-shingles without --containment was ignored
    assert dedup_job.main([*flags, "--containment-min-shingles", "30"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'containment_min_shingles': applies with containment" in err
    assert "containment is off" in err
    assert _tree(tmp_path) == before


def test_a_streaming_dataframe_is_refused_up_front(spark: Any, tmp_path: Path) -> None:
    import neardup_udfs

    src = tmp_path / "arriving"
    src.mkdir()
    (src / "a.jsonl").write_text(json.dumps({"id": "a", "text": "one two three"}) + "\n")
    stream = spark.readStream.schema("id string, text string").json(str(src))
    code, message = _exit(lambda: neardup_udfs.dedup(stream))  # issue 50: AnalysisException
    assert code == 2 and "streaming DataFrame" in message and "foreachBatch" in message
    assert not spark.streams.active


def test_the_cli_names_a_damaged_or_missing_output(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _four_samples(tmp_path)
    out = tmp_path / "out"
    assert _dedup(spark, src, out)[0] == 0
    assert cli_main(["clusters", str(out)]) == 0
    part = next((out / "clusters").glob("part-*.parquet"))
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    capsys.readouterr()
    assert cli_main(["clusters", str(out)]) == 2  # issue 50: a pyarrow traceback
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"'{part}' is damaged" in err and "Traceback" not in err
    missing = tmp_path / "nowhere"  # issue 50: "not a finished dedup output"
    assert cli_main(["clusters", str(missing)]) == 2
    assert capsys.readouterr().err == f"neardup: error: '{missing}' does not exist\n"


# --- outputs and indexes ---------------------------------------------------------------------


def test_outputs_that_would_touch_inputs_or_other_runs(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "P" / "docs"
    src.mkdir(parents=True)
    for p in SAMPLES[:3]:
        shutil.copy(p, src / p.name)
    before = _tree(tmp_path)
    for out, relation in ((src.parent, "contains"), (src, "is"), (src / "o", "lies inside")):
        code, message = _dedup(spark, src, out)  # issue 1: deleted the input
        assert code == 2 and f"output '{out}' {relation} input '{src}'" in message
    user = tmp_path / "mine"
    (user / "clusters").mkdir(parents=True)
    (user / "clusters" / "notes.md").write_text("the user's")
    code, message = _dedup(spark, src, user)  # never delete a folder it did not write
    assert code == 2 and "already holds 'clusters'" in message
    held = claim_output(HadoopStorage(spark), str(tmp_path / "busy"), job="dedup", names=())
    try:
        code, message = _dedup(spark, src, tmp_path / "busy")  # issue 6: two runs, one output
        assert code == 2 and "in use by another neardup run" in message
    finally:
        held.release()
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        code, message = _dedup(spark, src, ro / "out")  # issue: found only after the run
        assert code == 2 and "is not writable" in message
        ro.chmod(stat.S_IRWXU)
    code, message = _dedup(spark, src, Path("/proc/neardup-out"))
    assert code == 2 and "/proc/neardup-out" in message
    assert {k: v for k, v in _tree(tmp_path).items() if LOCK_NAME not in k} == before | {
        str(user / "clusters" / "notes.md"): _tree(user)[str(user / "clusters" / "notes.md")]
    }


def test_damaged_indexes_are_refused_before_work(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _four_samples(tmp_path)
    idx = tmp_path / "idx"
    cfg = load_index_config(action="build", input=str(src), index=str(idx), batch_id="b1")
    assert _exit(lambda: index.run(spark, cfg))[0] == 0
    manifest = idx / "_INDEX.json"
    whole = manifest.read_bytes()
    manifest.write_bytes(whole[: len(whole) // 2])  # issue: ChecksumException traceback
    code, message = _dedup(spark, src, tmp_path / "out", against=str(idx))
    assert code == 2 and "_INDEX.json" in message and "damaged" in message
    assert cli_main(["index", "check", str(idx)]) == 2
    manifest.write_bytes(whole)
    batch = next((idx / "batches").iterdir())
    shutil.rmtree(batch)  # issue: PATH_NOT_FOUND after 86 s
    code, message = _dedup(spark, src, tmp_path / "out", against=str(idx))
    assert code == 2 and batch.name in message and "missing" in message
    assert not (tmp_path / "out" / "docs").exists()
    capsys.readouterr()
    assert cli_main(["similar", "--index", str(idx), str(SAMPLES[0])]) == 2
    assert cli_main(["index", "check", str(idx)]) == 2
    err = capsys.readouterr().err
    assert batch.name in err and "Traceback" not in err


# --- WARC: garbage declared gzip or deflate (issue 50) -----------------------------------------


def test_garbage_declared_gzip_is_a_named_reject(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "warc"
    src.mkdir()
    crawl = Crawl()
    w = CrawlWriter(src / "crawl.warc.gz", crawl)
    gz = [("Content-Encoding", "gzip")]
    packed = gzip.compress(BROTLI_PAGE.encode(), mtime=0)
    bad = {
        w.response("garbage", "http://x/1", b"\x1f\x8b\x08garbage", extra=gz): "corrupt gzip data",
        w.response("not-gzip", "http://x/2", b"\x1f\xff\x08garbage", extra=gz): "corrupt gzip data",
        w.response("cut", "http://x/3", packed[:40], extra=gz): "gzip data cut short",
        w.response(
            "deflate", "http://x/4", b"\x00\xff\x08garbage", extra=[("Content-Encoding", "deflate")]
        ): "corrupt deflate data",
        w.response("undeclared", "http://x/5", packed): "gzip data not declared",
    }
    good = w.response("gzip", "http://x/6", packed, extra=gz, expect=BROTLI_PAGE)
    w.close()
    before = _tree(tmp_path)
    code, s = _dedup(spark, src, tmp_path / "out", input_format="warc")
    assert code == 0
    _accounted(s)
    assert (s.input, s.rejected, s.kept) == (6, 5, 1)  # issue 50: each was a document
    assert _rejects(spark, tmp_path / "out") == {
        rid: f"undecodable payload ({why})" for rid, why in bad.items()
    }
    docs = spark.read.parquet(str(tmp_path / "out/docs")).collect()
    assert [r.doc_id for r in docs] == [good]
    assert "ferry timetable changes on Monday" in docs[0].text
    assert _tree(tmp_path) == {
        **before,
        **{k: v for k, v in _tree(tmp_path).items() if "/out/" in k},
    }
