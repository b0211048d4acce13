"""The files of an input that Spark passes over: hidden names (Spark's rule) and the
metadata files only Parquet input reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neardup_udfs.io.input_files import hidden_name, unread_files
from neardup_udfs.io.storage import HadoopStorage

pytestmark = pytest.mark.spark


def test_hidden_name_follows_sparks_rule() -> None:
    assert hidden_name("_crawl.warc.gz") and hidden_name(".draft.txt")
    assert hidden_name("page.txt._COPYING_")
    assert not hidden_name("_year=2026")  # a partition directory
    assert not hidden_name("_metadata") and not hidden_name("page.txt")


def test_metadata_files_are_hidden_except_in_parquet_input(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_text("{}\n")
    (src / "_metadata").write_text("{}\n")  # Spark reads it under no format
    store = HadoopStorage(spark)
    assert [f.uri for f in unread_files(store, str(src)).hidden] == [f"file:{src / '_metadata'}"]
    parquet = unread_files(store, str(src), parquet=True)
    assert parquet.hidden == () and [f.uri for f in parquet.read] == [f"file:{src / 'a.jsonl'}"]
