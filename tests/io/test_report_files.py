"""The run's report files: report.json, the pages, and _MANIFEST.json written last."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest

from neardup_udfs.io import report_files
from neardup_udfs.io.storage import ArrowStorage


@dataclass
class _Settings:
    input: str = "in"

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.input}


def test_a_failing_page_is_logged_and_the_manifest_still_written(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def report_html(store: Any, output: str, report: dict[str, Any]) -> None:
        raise ValueError("no plot today")

    seen: list[str] = []

    def view(store: Any, output: str, report: dict[str, Any]) -> None:
        seen.append(output)
        assert report["counts"] == {"input": 3}  # the page gets the report it views

    with caplog.at_level(logging.ERROR, logger="neardup.report"):
        report_files.write_report(
            ArrowStorage(str(tmp_path)),
            str(tmp_path),
            "dedup",
            counts={"input": 3},
            seconds={"read": 1.0},
            pipeline=("p/1", "p/1"),
            config=_Settings(),  # type: ignore[arg-type]
            pages=[report_html, view],
        )
    manifest = json.loads((tmp_path / "_MANIFEST.json").read_text())
    assert manifest["page_errors"] == ["report_html: ValueError: no plot today"]
    assert manifest["counts"] == {"input": 3} and seen == [str(tmp_path)]
    assert "report_html failed (ValueError: no plot today)" in caplog.text
    assert "page_errors" not in json.loads((tmp_path / "report.json").read_text())
