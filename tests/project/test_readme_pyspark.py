"""README "Use from PySpark": its example runs as written, on the test session, and does
what the README says it does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.spark


def _example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"<!-- pyspark-example -->\n```python\n(.*?)```\n<!-- /pyspark-example -->", readme, re.S
    )
    assert found, "README has no marked PySpark example"
    return found.group(1)


def test_readme_pyspark_example_runs(spark, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(ROOT)  # the example's relative path, as a reader runs it from the clone
    scope: dict[str, object] = {}
    exec(compile(_example(), "README.md (Use from PySpark)", "exec"), scope)
    printed = capsys.readouterr().out
    said = re.search(r"(\d+) kept, (\d+) removed of (\d+)", printed)
    assert said, printed
    kept, removed, total = map(int, said.groups())
    assert total == 416 and kept + removed == total and removed > 100
    assert spark.table("pages_deduplicated").count() == kept
    assert spark.table("pages_deduplicated").columns == ["id", "text"]
    assert "representative" in printed  # the removed rows were shown
    sketched = scope["sketched"]
    assert sketched.columns == ["id", "signature", "simhash"]  # type: ignore[attr-defined]
    row = sketched.orderBy("id").first()  # type: ignore[attr-defined]
    assert len(row["signature"]) == 128 and isinstance(row["simhash"], int)
    spark.sql("DROP TABLE pages_deduplicated")
