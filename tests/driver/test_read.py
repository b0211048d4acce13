"""driver.read: the local engine's JSON lines reader gives Spark's columns, ids and rejects,
or declines what only Spark reads as promised."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from engine_corpus import LONE_SURROGATES
from local_runs import engine_config, write_lines

from neardup_udfs.driver import blocks
from neardup_udfs.driver.read import Declined, read_jsonl
from neardup_udfs.io.reasons import NOT_UNICODE


def test_reader_gives_sparks_columns_ids_and_rejects(tmp_path: Path) -> None:
    src = write_lines(
        tmp_path / "a.jsonl",
        [
            {"z": 1, "text": "hello world", "day": "2020-01-01", "flag": True},
            "",
            {"text": "second", "z": 2, "gone": None},
            {"text": None},
        ],
    )
    got = read_jsonl(str(src), None, "text", 1000)
    assert got.good.column_names == ["day", "flag", "gone", "text", "z", "doc_id"]
    assert [str(f.type) for f in got.good.schema] == ["string", "bool", "string", "string",
                                                      "int64", "string"]  # fmt: skip
    uri = f"file:{src}"
    assert got.good.column("doc_id").to_pylist() == [f"{uri}:0", f"{uri}:1"]
    assert got.good.column("day").to_pylist() == ["2020-01-01", None]  # never a timestamp
    assert got.rejects.to_pylist() == [{"doc_id": f"{uri}:2", "reason": "null text"}]
    assert got.rows == 3 and got.text_bytes == len("hello world") + len("second")


def test_reader_keeps_the_smallest_text_of_a_repeated_id(tmp_path: Path) -> None:
    src = write_lines(
        tmp_path / "a.jsonl",
        [{"id": 5, "t": "bbb"}, {"id": 5, "t": "aaa"}, {"id": 6, "t": "x" * 50}, {"t": "y"}],
    )
    got = read_jsonl(str(src), "id", "t", 40)
    assert got.good.select(["doc_id", "t"]).to_pylist() == [{"doc_id": "5", "t": "aaa"}]
    assert sorted(got.rejects.to_pylist(), key=str) == sorted(
        [
            {"doc_id": "5", "reason": "duplicate doc_id"},
            {"doc_id": "6", "reason": "text larger than 40 bytes"},
            {"doc_id": None, "reason": "null doc_id"},
        ],
        key=str,
    )
    assert got.counts == {"duplicate doc_id": 1, "text larger than 40 bytes": 1, "null doc_id": 1}


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (['{"text": "a"}', "{not json"], "a.jsonl"),
        (['{"text": "a", "score": 0.5}'], "'score' is double"),
        (['{"text": "a", "meta": {"k": 1}}'], "'meta' is struct"),
        (['{"text": "a", "tags": ["x"]}'], "'tags' is list"),
        (['{"text": "a", "n": 1}', '{"text": "b", "n": "one"}'], "a.jsonl"),
        (['{"text": "a", "Text2": "b", "text2": "c"}'], "differ only in case"),
        (['{"text": 5}'], "'text' is not a string"),
        (['{"body": "a"}'], "no column 'text'"),
        (['{"text": "a", "doc_id": "x"}'], "reserved column"),
        (['["text", "a"]'], "a.jsonl"),
    ],
)
def test_reader_declines_what_only_spark_reads_as_promised(
    tmp_path: Path, lines: list[str], said: str
) -> None:
    src = write_lines(tmp_path / "a.jsonl", lines)
    with pytest.raises(Declined, match=said):
        read_jsonl(str(src), None, "text", 1000)


def test_reader_declines_unusual_files(tmp_path: Path) -> None:
    """Compressed, wide or BOM-marked text, invalid UTF-8, hidden files, sub-folders, a
    glob, an input of no records, and input over the byte limit."""
    line = b'{"text": "caf\xc3\xa9 au lait"}\n'
    cases = {
        "gz": ("a.jsonl.gz", gzip.compress(line), "compressed"),
        "utf16": ("a.jsonl", line.decode().encode("utf-16"), "not plain UTF-8"),
        "bom": ("a.jsonl", b"\xef\xbb\xbf" + line, "not plain UTF-8"),
        "invalid": ("a.jsonl", b'{"text": "caf\xe9"}\n', "UTF-8"),
        "hidden": (".a.jsonl", line, "hidden"),
        "nested": ("sub/a.jsonl", line, "sub-folders"),
        "empty": ("a.jsonl", b"", "no records"),
    }
    for case, (name, data, said) in cases.items():
        folder = tmp_path / case
        (folder / name).parent.mkdir(parents=True)
        (folder / name).write_bytes(data)
        if case == "hidden":
            (folder / "b.jsonl").write_bytes(line)
        with pytest.raises(Declined, match=said):
            read_jsonl(str(folder), None, "text", 1000)
    with pytest.raises(Declined, match="glob"):
        read_jsonl(str(tmp_path / "gz" / "*.gz"), None, "text", 1000)
    (tmp_path / "ok.jsonl").write_bytes(line * 10)
    with pytest.raises(Declined, match="exceed"):
        read_jsonl(str(tmp_path / "ok.jsonl"), None, "text", 1000, max_file_bytes=100)


@pytest.mark.parametrize("id_col", ["id", None])
def test_a_lone_surrogate_in_a_text_is_the_reject_spark_gives(
    tmp_path: Path, id_col: str | None
) -> None:
    """Issue 50: Arrow's reader refused the whole file (the local engine declined it, a
    forced ``engine = "local"`` failed); now the rows tests/io/test_readers.py holds Spark
    to: the text's rejects, '?' for a lone surrogate elsewhere; held and streamed alike."""
    src = write_lines(tmp_path / "a.jsonl", LONE_SURROGATES)
    uri = f"file:{src}"
    names = ["a", "b", "c"] if id_col else [f"{uri}:{i}" for i in range(3)]
    held = read_jsonl(str(src), id_col, "text", 1000)
    pipeline = engine_config(src, tmp_path / "o").pipeline()
    streamed = blocks.read_streamed(str(src), id_col, "text", 1000, pipeline, max_rows=10,
                                    block_bytes=100)  # fmt: skip
    assert len(streamed.blocks) > 3
    for got in (held, streamed):
        assert got.rejects.to_pylist() == [{"doc_id": n, "reason": NOT_UNICODE} for n in names]
        assert got.counts == {NOT_UNICODE: 3} and got.n_good == 4
    rows = {r["n"]: r for r in held.good.to_pylist()}
    assert rows[4]["text"] == "a pair \U0001f600 is one character"
    assert rows[5]["text"] == "an escaped backslash: \\ud800 is six characters"
    assert (rows[6]["title"], rows[7]["id"]) == ("t?", "g?")
    kept = pa.concat_tables(streamed.tables(np.ones(streamed.n_good, dtype=bool)))
    assert kept.to_pylist() == held.good.to_pylist()
    streamed.close()
    (tmp_path / "bad").mkdir()  # invalid UTF-8 beside an escape: still Spark's to reject
    (tmp_path / "bad" / "a.jsonl").write_bytes(
        b'{"text": "caf\xe9"}\n' + LONE_SURROGATES[0].encode() + b"\n"
    )
    with pytest.raises(Declined, match="UTF-8"):
        read_jsonl(str(tmp_path / "bad"), None, "text", 1000)


@pytest.mark.spark
def test_made_ids_name_the_file_as_spark_does(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``spark_file_uri`` is Spark's ``_metadata.file_path``: a space, ``#``, ``%`` and a
    non-breaking space quoted, other punctuation and non-ASCII letters as they are."""
    from neardup_udfs.driver.read import spark_file_uri

    folder = tmp_path / "x y#z\u00a0w;é,=@+$&'!~*()%"
    folder.mkdir()
    (folder / "f.jsonl").write_text('{"text": "a"}\n')
    got = spark.read.json(str(folder)).select("_metadata.file_path").first()[0]
    assert got == spark_file_uri(f"file:{folder / 'f.jsonl'}")
    assert "%20" in got and "%23" in got and "%C2%A0" in got and "%25" in got and "é" in got
