"""What the readers give the jobs, whatever the input, and nothing lost: files Spark passes
over, malformed JSON lines, text values that are not strings, lines that are not text, broken
gzip streams, UTF-16 files, Parquet files that disagree, duplicate ids, glob characters in
names, dangling links, empty inputs and outputs that cannot be directories; WARC and WET input
read as the same documents as JSON lines, every record accounted for, damaged files reported
by how much they lost."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import zlib
from pathlib import Path
from typing import Any

import boilerplate as boilerplate_job
import dedup as dedup_job
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dedup_corpus import planted
from engine_corpus import LONE_SURROGATES
from job_runs import write_texts
from warc_corpus import (
    BROTLI_PAGE,
    JAPANESE_PAGE,
    SHIFT_JIS_PAGE,
    Crawl,
    add_charset_twins,
    add_odd_records,
    corrupt,
    record_id,
    write_documents,
    write_wet,
)
from warcio.archiveiterator import ArchiveIterator

from neardup_udfs.config import ConfigError, load_boilerplate_config, load_config
from neardup_udfs.io import readers
from neardup_udfs.io.input_files import DANGLING_REASON, HIDDEN_REASON, unread_files
from neardup_udfs.io.readers import (
    GZIP_CORRUPT,
    GZIP_TRUNCATED,
    MALFORMED_JSON,
    NOT_A_STRING,
    NOT_UNICODE,
    NOT_UTF8,
    NOT_UTF16,
    EmptyInput,
    InputError,
    open_uri,
    read_input,
    read_warc,
)
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.warc import WarcOptions
from neardup_udfs.runs.dedup import run
from neardup_udfs.runs.summary import Summary
from neardup_udfs.runtime import Cache
from neardup_udfs.stages.read import Checked, read_checked

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def _run(spark: Any, src: Path, out: Path, **overrides: Any) -> Summary:
    cfg = load_config(str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **overrides)
    return run(spark, cfg)


def _rows(spark: Any, out: Path, name: str) -> list[dict[str, Any]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).collect()]


def _input_report(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())["input"]


def test_text_files_spark_skips_are_rejects_and_empty_files_documents(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
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
    write_texts(src, texts)
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


def _accounted(spark: Any, out: Path, s: Summary) -> tuple[set[str], list[tuple[str, str]]]:
    """The ids of the accepted records (every one is in clusters/) and the rejects, after
    checking that the run accounts for every input record."""
    assert s.input == s.kept + s.removed + s.rejected
    accepted = {r["doc_id"] for r in _rows(spark, out, "clusters")}
    rejects = sorted((r["doc_id"], r["reason"]) for r in _rows(spark, out, "rejects"))
    assert len(accepted) == s.kept + s.removed and len(rejects) == s.rejected
    return accepted, rejects


def _words(rng: random.Random, n: int) -> str:
    stems = ["alpha", "beta", "gamma", "delta", "river", "stone"]
    return " ".join(f"{rng.choice(stems)}{rng.randrange(10_000)}" for _ in range(n))


@pytest.mark.parametrize("id_col", ["id", None])
def test_a_line_that_is_not_utf8_is_a_reject_named_by_its_line(
    spark: Any, tmp_path: Path, id_col: str | None
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(
        b'{"id": "a", "text": "the first good line of words"}\n'
        b"\xff\xfe\x00A\x00B\n"  # neither JSON nor UTF-8
        b'{"id": "b", "text": "caf\xe9 is Latin-1, not UTF-8"}\n'  # JSON, but not UTF-8
        b'{"id": "c", "text": "another good line, caf\xc3\xa9"}\n'
    )
    out = tmp_path / "out"
    s = _run(spark, src, out, input_format="jsonl", id_col=id_col)
    accepted, rejects = _accounted(spark, out, s)
    uri = f"file:{src / 'a.jsonl'}"
    assert rejects == [(f"{uri}#L2", NOT_UTF8), (f"{uri}#L3", NOT_UTF8)]
    assert accepted == ({"a", "c"} if id_col else {f"{uri}:0", f"{uri}:3"})
    texts = {r["text"] for r in _rows(spark, out, "docs")}
    assert "another good line, café" in texts
    assert _input_report(out)["rejects_by_reason"] == {NOT_UTF8: 2}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])  # Spark's reader; neardup's own
@pytest.mark.parametrize("id_col", ["id", None])
def test_a_lone_surrogate_in_a_text_is_a_reject_that_says_so(
    spark: Any, tmp_path: Path, encoding: str, id_col: str | None
) -> None:
    """Issue 50: such a line was rejected as "null text"; its text is there, and not
    Unicode. Elsewhere than the text, Spark reads a lone surrogate as '?'."""
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_bytes(("\n".join(LONE_SURROGATES) + "\n").encode(encoding))
    out = tmp_path / "out"
    s = _run(spark, src, out, input_format="jsonl", id_col=id_col, engine="driver")
    _, rejects = _accounted(spark, out, s)
    uri = f"file:{src / 'a.jsonl'}"
    names = ["a", "b", "c"] if id_col else [f"{uri}:{i}" for i in range(3)]
    assert rejects == [(name, NOT_UNICODE) for name in names]
    docs = {r["n"]: r for r in _rows(spark, out, "docs")}
    assert sorted(docs) == [4, 5, 6, 7]
    assert docs[4]["text"] == "a pair \U0001f600 is one character"
    assert docs[5]["text"] == "an escaped backslash: \\ud800 is six characters"
    assert (docs[6]["title"], docs[7]["id"]) == ("t?", "g?")
    assert _input_report(out)["rejects_by_reason"] == {NOT_UNICODE: 3}


def _complete_lines(data: bytes) -> int:
    """The whole lines zlib gets out of the (broken) gzip ``data``."""
    inflate = zlib.decompressobj(31)
    return inflate.decompress(data).count(b"\n")


def test_a_truncated_gzip_file_keeps_its_lines_before_the_break(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    rng = random.Random(7)
    lines = [json.dumps({"text": _words(rng, 12)}) for _ in range(400)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    cut = whole[: len(whole) * 3 // 5]  # a copy that stopped short
    (src / "a.jsonl.gz").write_bytes(cut)
    (src / "b.jsonl").write_text(json.dumps({"text": "a file Spark reads as it is"}) + "\n")
    out = tmp_path / "out"
    s = _run(spark, src, out, input_format="jsonl")  # ids: <file URI>:<record index>
    accepted, rejects = _accounted(spark, out, s)
    read = _complete_lines(cut)
    assert 0 < read < 400
    a, b = f"file:{src / 'a.jsonl.gz'}", f"file:{src / 'b.jsonl'}"
    assert rejects == [(f"{a}#L{read + 1}", GZIP_TRUNCATED)]
    assert accepted == {f"{a}:{i}" for i in range(read)} | {f"{b}:0"}
    assert s.input == read + 2
    docs = {r["doc_id"]: r["text"] for r in _rows(spark, out, "docs")}
    for doc_id, text in docs.items():
        if doc_id.startswith(a):
            assert json.loads(lines[int(doc_id.rsplit(":", 1)[1])])["text"] == text


def test_a_corrupt_gzip_stream_and_lines_not_utf16_by_the_line_reader(tmp_path: Path) -> None:
    """The Python line reader (for the files Spark's reader cannot read as they are), on its
    own: a gzip member followed by garbage, and UTF-16 with a lone surrogate and a last
    line cut inside a character."""
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(gzip.compress(b'{"a": 1}\n{"b": 2}\n{"c"') + b"not gzip at all")
    assert readers._inspect(f"file:{junk}")[1:] == ("corrupt", 22)
    rows = readers._file_lines(f"file:{junk}", "F", "utf-8")
    got = [(r["line"], r["value"], r["problem"]) for b in rows for r in b.to_pylist()]
    assert got == [(1, '{"a": 1}', None), (2, '{"b": 2}', None), (3, None, GZIP_CORRUPT)]
    two = tmp_path / "two.jsonl.gz"  # two gzip members, as Hadoop writes them: one stream
    two.write_bytes(gzip.compress(b'{"a": 1}\n') + gzip.compress(b'{"b": 2}\n'))
    assert readers._inspect(f"file:{two}") == (None, None, 18)
    utf16 = tmp_path / "u.jsonl"
    utf16.write_bytes(
        '\ufeff{"a": "ਊĀ"}\n\n'.encode("utf-16-le")
        + b"\x00\xd8"  # a high surrogate without its low half
        + '"x"\n{"b": 2}\n'.encode("utf-16-le")
        + b"{"  # half a character
    )
    assert readers._inspect(f"file:{utf16}") == ("utf-16-le", None, 0)
    rows = readers._file_lines(f"file:{utf16}", "F", "utf-16-le")
    got = [(r["line"], r["value"], r["problem"]) for b in rows for r in b.to_pylist()]
    assert got == [
        (1, '{"a": "ਊĀ"}', None),
        (3, None, NOT_UTF16),
        (4, '{"b": 2}', None),
        (5, None, NOT_UTF16),
    ]
    assert readers._encoding(b"\xff\xfe\x00A\x00B\n") is None  # junk, not a byte order mark
    assert readers._encoding('{"a"'.encode("utf-16-be")) == "utf-16-be"  # no mark: zeros tell
    assert readers._encoding("{}".encode("utf-32")) == "utf-32-le"


def test_utf16_json_lines_are_decoded(spark: Any, tmp_path: Path) -> None:
    day = tmp_path / "in" / "day=1"  # a partition folder: its column reaches every row
    day.mkdir(parents=True)
    records = [
        {"text": "héllo wörld, a first text in UTF-16 ਊ"},
        {"text": "a second text with quite different words"},
    ]
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    (day / "le.jsonl").write_bytes(("\ufeff" + body).encode("utf-16-le"))  # byte order mark
    (day / "be.jsonl.gz").write_bytes(gzip.compress(body.encode("utf-16-be")))  # none
    (day / "plain.jsonl").write_text(json.dumps({"text": "plain UTF-8 text here"}) + "\n")
    out = tmp_path / "out"
    s = _run(spark, tmp_path / "in", out, input_format="jsonl")
    accepted, rejects = _accounted(spark, out, s)
    uris = {n: f"file:{day / n}" for n in ("le.jsonl", "be.jsonl.gz", "plain.jsonl")}
    assert rejects == [] and s.input == 5
    assert accepted == {f"{uris[n]}:{i}" for n in ("le.jsonl", "be.jsonl.gz") for i in (0, 1)} | {
        f"{uris['plain.jsonl']}:0"
    }
    docs = _rows(spark, out, "docs")  # each text of le.jsonl is an exact twin in be.jsonl.gz
    assert {r["text"] for r in docs} == {r["text"] for r in records} | {"plain UTF-8 text here"}
    assert {r["day"] for r in docs} == {1}


def test_parquet_files_that_disagree_on_a_type_are_an_error_naming_them(
    spark: Any, tmp_path: Path
) -> None:
    src = tmp_path / "in"
    src.mkdir()
    pq.write_table(pa.table({"id": ["a"], "text": ["a text"]}), src / "a.parquet")
    pq.write_table(pa.table({"id": ["b"], "text": [42]}), src / "b.parquet")
    pq.write_table(pa.table({"id": ["c"], "text": [b"bytes"]}), src / "c.parquet")
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        _run(spark, src, out, input_format="parquet", id_col="id")
    message = str(caught.value)
    assert "input column 'text' has different types" in message and "\n" not in message
    assert f"string in 'file:{src / 'a.parquet'}'" in message
    assert f"bigint in 'file:{src / 'b.parquet'}'" in message
    assert "(and 1 more types)" in message
    assert not (out / "_MANIFEST.json").exists()
    (src / "b.parquet").unlink()
    (src / "c.parquet").unlink()
    (src / "notes.txt").write_text("not Parquet")
    with pytest.raises(InputError, match=f"input file 'file:{src / 'notes.txt'}' is not a"):
        _run(spark, src, out, input_format="parquet", id_col="id")


def test_hidden_parquet_files_are_rejects(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for name in ("part-0", "_x", ".x"):
        ids = [f"{name}-{i}" for i in range(3)]
        table = pa.table({"id": ids, "text": [f"text {i} of file {name}" for i in ids]})
        pq.write_table(table, src / f"{name}.parquet")
    (src / "_SUCCESS").write_text("")  # the writer's bookkeeping: not a user file
    pq.write_metadata(pq.read_schema(src / "part-0.parquet"), src / "_common_metadata")
    out = tmp_path / "out"
    s = _run(spark, src, out, input_format="parquet", id_col="id")
    accepted, rejects = _accounted(spark, out, s)
    assert accepted == {f"part-0-{i}" for i in range(3)}
    assert rejects == sorted((f"file:{src / n}.parquet", HIDDEN_REASON) for n in ("_x", ".x"))
    assert s.input == 5 and _input_report(out)["skipped_files"] == 2


def test_a_duplicate_id_keeps_a_copy_that_passes_the_checks(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    rows = [
        {"id": "x", "text": "A" * 80},  # the smallest text of x, but over max_text_bytes
        {"id": "x", "text": "x" * 80},
        {"id": "x", "text": "a good copy of x"},
        {"id": "y", "text": "one good copy of y"},
        {"id": "y", "text": "another good copy of y"},
    ]
    (src / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    s = _run(spark, src, out, input_format="jsonl", id_col="id", max_text_bytes=40)
    accepted, rejects = _accounted(spark, out, s)
    assert accepted == {"x", "y"}
    assert rejects == [
        ("x", "text larger than 40 bytes"),
        ("x", "text larger than 40 bytes"),
        ("y", "duplicate doc_id"),
    ]
    texts = {r["doc_id"]: r["text"] for r in _rows(spark, out, "docs")}
    assert texts == {"x": "a good copy of x", "y": "another good copy of y"}


def test_a_path_with_glob_characters_is_read_literally_when_it_exists(
    spark: Any, tmp_path: Path
) -> None:
    literal, decoy = tmp_path / "run[1]", tmp_path / "run1"  # as a glob, run[1] is run1
    for folder, ids in ((literal, "ab"), (decoy, "cd")):
        folder.mkdir()
        (folder / "p.jsonl").write_text(
            "".join(json.dumps({"id": i, "text": f"text number {i}"}) + "\n" for i in ids)
        )
    out = tmp_path / "out"
    s = _run(spark, literal, out, input_format="jsonl", id_col="id")
    accepted, _ = _accounted(spark, out, s)
    assert accepted == {"a", "b"}

    def ids(path: Path | str) -> set[str]:
        df, _ = read_input(spark, str(path), "jsonl", "id", "text")
        return {r["doc_id"] for r in df.select("doc_id").collect()}

    assert ids(literal / "*.jsonl") == {"a", "b"}  # a literal part, then a glob
    assert ids(tmp_path / "run[12]") == {"c", "d"}  # no such folder: a glob still
    assert HadoopStorage(spark).pattern(str(literal)) == str(tmp_path / "run\\[1\\]")


def test_a_dangling_symbolic_link_is_a_reject(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.txt").write_text("a text that Spark reads")
    os.symlink(tmp_path / "gone.txt", src / "b.txt")  # its target was never there
    os.symlink(src / "b.txt", src / "c.txt")  # a link to the dangling one
    out = tmp_path / "out"
    s = _run(spark, src, out)
    accepted, rejects = _accounted(spark, out, s)
    assert accepted == {f"file:{src / 'a.txt'}"}
    assert rejects == [(f"file:{src / n}", DANGLING_REASON) for n in ("b.txt", "c.txt")]
    assert s.input == 3 and _input_report(out)["skipped_files"] == 2


# --- WARC and WET input: the same documents as JSON lines, every record accounted for ---

CORPUS = planted(n_families=8, n_singles=12, seed=11)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Crawl, Path, int, int]:
    """Three .warc.gz files holding the planted corpus as HTML pages (with their request
    records), one with every odd kind of record and one corrupt member."""
    root = tmp_path_factory.mktemp("crawl") / "2026-11-30"
    root.mkdir()
    crawl = Crawl()
    docs = CORPUS.docs
    thirds = [docs[i::3] for i in range(3)]
    for i, part in enumerate(thirds):
        w = write_documents(root / f"part-{i}.warc.gz", part, crawl)
        if i == 1:
            add_odd_records(w)
        w.close()
    # damage one page of part-2: it is lost, reported, and the rest of the file is read
    w2_names = [name for name, _ in thirds[2]]
    victim = w2_names[3]
    path = root / "part-2.warc.gz"
    offsets = _offsets(path)
    start = offsets[victim]
    end = min(o for o in offsets.values() if o > start)
    corrupt(path, start)
    del crawl.documents[record_id(victim)]
    return crawl, root, start, end - start


def _offsets(path: Path) -> dict[str, int]:
    """name -> member offset of each response record of a generated file (ids are derived
    from names, so map them back)."""
    names = {record_id(n): n for n, _ in CORPUS.docs}
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        out = {}
        for r in it:
            rid = r.rec_headers.get_header("WARC-Record-ID")
            out[names.get(rid, rid)] = it.get_record_offset()
    return out


def _dedup(spark, src: Path, out: Path, **overrides: Any) -> dedup_job.Summary:  # type: ignore[no-untyped-def]
    cfg = load_config(
        str(ROOT / "conf/dedup.toml"),
        input=str(src),
        output=str(out),
        outputs=("docs", "clusters", "rejects", "samples"),
        **overrides,
    )
    return dedup_job.run(spark, cfg)


def test_read_warc_rows_match_the_records(spark, crawl) -> None:  # type: ignore[no-untyped-def]
    c, root, start, lost = crawl
    df = read_warc(spark, str(root), WarcOptions())
    rows = {r.doc_id: r for r in df.collect()}
    good = {k: r.text for k, r in rows.items() if r.read_error is None}
    assert good == c.documents
    assert good[record_id("brotli")] == BROTLI_PAGE  # Content-Encoding: br, on the executors
    for rid, reason in c.rejected.items():
        assert rows[rid].read_error == reason
    damaged = [r for r in rows.values() if r.read_error == "corrupt data"]
    assert len(damaged) == 1 and damaged[0].lost_bytes == lost
    assert damaged[0].doc_id == f"{damaged[0].path}@{start}"
    assert damaged[0].path.endswith("part-2.warc.gz")


def test_dedup_on_warc_reads_the_same_documents_as_jsonl(spark, crawl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The job's read stage gives the WARC crawl's documents exactly as a JSON-lines file of
    them would (ids and texts), so every later stage sees the same input; the job run on the
    crawl keeps the WARC columns and accounts for every record."""
    c, root, _, lost = crawl
    s = _dedup(spark, root, tmp_path / "warc", input_format="warc")
    jsonl = tmp_path / "docs.jsonl"
    with open(jsonl, "w", encoding="utf-8") as fh:
        for rid, text in sorted(c.documents.items()):
            fh.write(json.dumps({"id": rid, "body": text}) + "\n")
    read = {}
    for fmt, path, extra in [
        ("warc", root, {}),
        ("jsonl", jsonl, {"id_col": "id", "text_col": "body"}),
    ]:
        cfg = load_config(input=str(path), output="o", input_format=fmt, **extra)
        cache = Cache()
        try:
            read[fmt] = sorted(
                (r.doc_id, r.text)
                for r in read_checked(spark, cfg, cache).good.select("doc_id", "text").collect()
            )
        finally:
            cache.release()
    assert read["warc"] == read["jsonl"] == sorted(c.documents.items())
    kept = spark.read.parquet(str(tmp_path / "warc" / "docs"))
    clustered = spark.read.parquet(str(tmp_path / "warc" / "clusters"))
    assert kept.count() == clustered.where("is_representative").count() == s.kept
    assert {"url", "warc_date", "http_status", "content_type", "path", "offset"} <= set(
        kept.columns
    )
    assert "read_error" not in kept.columns and "lost_bytes" not in kept.columns
    # every record accounted for: the documents, and one reject per other record or range
    assert s.input == len(c.documents) + len(c.rejected) + 1
    assert s.rejected == len(c.rejected) + 1
    assert s.kept + s.removed + s.rejected == s.input
    report = json.loads((tmp_path / "warc" / "report.json").read_text())
    assert report["input"]["unreadable_bytes"] == lost
    assert report["input"]["files"] == 3
    by_reason = report["input"]["rejects_by_reason"]
    assert by_reason["corrupt data"] == 1
    assert by_reason["warc request record (not a document)"] == len(CORPUS.docs)
    assert by_reason["content type image/png is not a document type"] == 1
    assert by_reason["undecodable payload (corrupt brotli data)"] == 1
    assert "undecodable payload (AttributeError)" not in by_reason
    assert sum(by_reason.values()) == s.rejected
    # the planted families were found (the corrupt page's family lost a member, not more)
    clusters = {
        r.cluster_id for r in spark.read.parquet(str(tmp_path / "warc" / "clusters")).collect()
    }
    assert s.clusters >= 6 and len(clusters) >= 6


def test_charset_twins_are_exact_duplicates_and_the_override_is_counted(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Byte-identical UTF-8 pages, one declared Shift_JIS, one UTF-8: the same text, so one
    exact-duplicate group; report.json counts the record decoded against its charset, and
    docs/ says which kept record was."""
    (tmp_path / "in").mkdir()
    crawl = Crawl()
    singles = [d for d in CORPUS.docs if d[0].startswith("single")][:6]
    w = write_documents(tmp_path / "in" / "a.warc.gz", singles, crawl, with_requests=False)
    ids = add_charset_twins(w)
    w.close()
    read, got = _read_texts(spark, tmp_path / "in", "warc")
    assert got == crawl.documents
    assert got[ids["twin-sjis"]] == got[ids["twin-utf8"]] == JAPANESE_PAGE
    assert got[ids["real-sjis"]] == SHIFT_JIS_PAGE
    assert read.stats["charset_overridden"] == 1

    out = tmp_path / "out"
    s = _dedup(spark, tmp_path / "in", out, input_format="warc")
    assert s.input == len(singles) + 3 and s.rejected == 0
    assert s.exact_duplicates == 1
    clusters = {r.doc_id: r for r in spark.read.parquet(str(out / "clusters")).collect()}
    twins = [clusters[ids["twin-sjis"]], clusters[ids["twin-utf8"]]]
    assert twins[0].cluster_id == twins[1].cluster_id
    assert sorted(t.is_representative for t in twins) == [False, True]
    real = clusters[ids["real-sjis"]]
    assert real.is_representative and real.cluster_id != twins[0].cluster_id
    report = json.loads((out / "report.json").read_text())
    assert report["input"]["charset_overridden"] == 1
    assert report["input"]["unreadable_bytes"] == 0
    docs = {r.doc_id: r for r in spark.read.parquet(str(out / "docs")).collect()}
    assert ids["real-sjis"] in docs and not docs[ids["real-sjis"]].charset_overridden
    kept = next(docs[i] for i in (ids["twin-sjis"], ids["twin-utf8"]) if i in docs)
    assert kept.text == JAPANESE_PAGE
    assert kept.charset_overridden == (kept.doc_id == ids["twin-sjis"])


def _read_texts(spark, path: Path, fmt: str) -> tuple[Checked, dict[str, str]]:  # type: ignore[no-untyped-def]
    """The input read as the jobs read it, and its accepted documents' texts by id."""
    cfg = load_config(input=str(path), output="o", input_format=fmt)
    cache = Cache()
    try:
        read = read_checked(spark, cfg, cache)
        return read, {r.doc_id: r.text for r in read.good.collect()}
    finally:
        cache.release()


def test_wet_input_is_read_as_documents(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "in").mkdir()
    crawl = Crawl()
    write_wet(tmp_path / "in" / "a.warc.wet.gz", CORPUS.docs[:30], crawl)
    read, got = _read_texts(spark, tmp_path / "in", "wet")
    assert (read.n_good, read.n_rejected) == (30, 1)  # the warcinfo record is rejected
    assert got == crawl.documents
    assert read.stats["rejects_by_reason"] == {"warc warcinfo record (not a document)": 1}


def test_id_col_url_and_the_html_extractor(spark, crawl, tmp_path) -> None:  # type: ignore[no-untyped-def]
    c, root, _, _ = crawl
    s = _dedup(
        spark,
        root / "part-0.warc.gz",
        tmp_path / "out",
        input_format="warc",
        id_col="url",
        html_extractor="resiliparse",
    )
    docs = spark.read.parquet(str(tmp_path / "out" / "docs"))
    row = docs.first()
    assert row is not None and row.doc_id == row.url and row.doc_id.startswith("http://")
    assert "<p>" not in row.text
    # the WARC-Record-ID is not lost to --id-col: docs/ and clusters/ carry it
    assert row.warc_record_id.startswith("<urn:uuid:")
    clusters = spark.read.parquet(str(tmp_path / "out" / "clusters"))
    ids = {r.doc_id: r.warc_record_id for r in clusters.collect()}
    assert ids and all(v and v.startswith("<urn:uuid:") for v in ids.values())
    assert ids[row.doc_id] == row.warc_record_id
    # a request shares its response's URL: it is rejected for its type, not as a duplicate
    reasons = {r.reason for r in spark.read.parquet(str(tmp_path / "out" / "rejects")).collect()}
    assert reasons == {"warc request record (not a document)"}
    assert s.kept + s.removed + s.rejected == s.input


def test_boilerplate_job_reads_warc(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    footer = "Subscribe to the Harbour Gazette newsletter for the week's stories every Friday."
    docs = [
        (f"p{i}", f"Story {i} about the {i}th bridge and its painters.\n\n{footer}")
        for i in range(5)
    ]
    (tmp_path / "in").mkdir()
    write_documents(tmp_path / "in" / "a.warc.gz", docs, Crawl()).close()
    cfg = load_boilerplate_config(
        str(ROOT / "conf/boilerplate.toml"),
        input=str(tmp_path / "in"),
        output=str(tmp_path / "out"),
        input_format="warc",
    )
    s = boilerplate_job.run(spark, cfg)
    assert s.input == 10 and s.rejected == 5
    cleaned = spark.read.parquet(str(tmp_path / "out" / "cleaned")).collect()
    assert len(cleaned) == 5
    assert all("newsletter" not in r.text and "<html>" in r.text for r in cleaned)


def test_missing_path_and_bad_options(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="does not exist"):
        read_warc(spark, str(tmp_path / "nowhere"), WarcOptions())
    with pytest.raises(ConfigError, match="html_extractor"):
        load_config(input="i", output="o", input_format="warc", html_extractor="lynx")
    with pytest.raises(ConfigError, match="warc_content_types"):
        load_config(input="i", output="o", input_format="warc", warc_content_types=())
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "a.warc.gz").write_bytes(b"not a warc")
    with pytest.raises(InputError, match="--id-col 'host'"):
        _dedup(spark, tmp_path / "w", tmp_path / "o", input_format="warc", id_col="host")


def test_open_uri_reads_local_file_uris(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "a b.warc"
    p.write_bytes(b"12345")
    fh, size = open_uri(p.as_uri())
    with fh:
        assert size == 5 and fh.read() == b"12345"
    fh, size = open_uri("file:" + str(p).replace(" ", "%20"))
    with fh:
        assert size == 5


@pytest.mark.parametrize("fmt", ["text", "jsonl", "parquet", "warc", "images"])
def test_a_missing_input_is_refused_before_sparks_reader_is_asked(
    spark: Any, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 50: Spark's reader, asked for a path that does not exist, logs a WARN with a
    90-frame Java stack (FileStreamSink, under Spark's default log4j profile: a
    spark-submit without conf/log4j2.properties) beside the job's one line. The job checks
    the path itself first, and a glob that matches nothing likewise."""
    from pyspark.sql.readwriter import DataFrameReader

    from neardup_udfs.config import load_images_config
    from neardup_udfs.runs import images

    def asked(self: Any, *args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"Spark's reader was asked for {args or kwargs}")

    for method in ("load", "json", "parquet", "text"):
        monkeypatch.setattr(DataFrameReader, method, asked)
    for missing in (tmp_path / "nothing-here", tmp_path / "in" / "day-*.jsonl"):
        out = tmp_path / "out"
        with pytest.raises(InputError, match=re.escape(f"input path '{missing}' does not exist")):
            if fmt == "images":
                images.run(spark, load_images_config(input=str(missing), output=str(out)))
            else:
                _run(spark, missing, out, input_format=fmt, id_col="id" if fmt == "jsonl" else None)
        assert not (out / "_MANIFEST.json").exists()
