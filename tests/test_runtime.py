"""The job skeleton shared by every spark-submit entry point (no Spark started here)."""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest

from neardup_udfs import runtime
from neardup_udfs.io.storage import ArrowStorage


def test_stage_clock_logs_start_and_done_with_rows(caplog: pytest.LogCaptureFixture) -> None:
    clock = runtime.StageClock(logging.getLogger("neardup.test"))
    with caplog.at_level(logging.INFO, logger="neardup.test"):
        with clock.stage("verify") as rows:
            rows.rows_in, rows.rows_out = 12_345, 67
        with clock.stage("write"):
            pass
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "stage verify: start"
    assert lines[1].startswith("stage verify: done in ")
    assert lines[1].endswith(" s, rows 12,345 in, 67 out")
    assert lines[2:] == ["stage write: start", lines[3]] and lines[3].endswith(" s")
    assert "rows" not in lines[3]
    assert set(clock.seconds) == {"verify", "write"}


class _FakeBuilder:
    def __init__(self, seen: dict[str, str]) -> None:
        self.seen = seen

    def appName(self, name: str) -> _FakeBuilder:  # noqa: N802 (Spark's name)
        self.seen["app"] = name
        return self

    def config(self, key: str, value: str) -> _FakeBuilder:
        self.seen[key] = value
        return self

    def getOrCreate(self) -> Any:  # noqa: N802
        return _FakeSession()


class _FakeSession:
    stopped = False

    def stop(self) -> None:
        _FakeSession.stopped = True


@dataclass
class _Config:
    input: str


def _main(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, str]:
    seen: dict[str, str] = {}

    class FakeSparkSession:
        builder = _FakeBuilder(seen)

    monkeypatch.setattr(runtime, "SparkSession", FakeSparkSession)
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    parser.add_argument("--input")
    code = runtime.job_main(
        argv,
        prog="job.py",
        parser=parser,
        load=lambda path, **kw: _Config(**kw),
        run=lambda spark, config: config.input,
        describe=lambda config, summary: f"ran on {summary}",
    )
    assert code == 0 and _FakeSession.stopped
    return seen


def test_no_progress_bar_turns_spark_console_progress_off(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    quiet = _main(monkeypatch, ["--input", "x", "--no-progress-bar"])
    assert quiet["spark.ui.showConsoleProgress"] == "false" and quiet["app"] == "neardup-job"
    assert "ran on x" in capsys.readouterr().out
    assert "spark.ui.showConsoleProgress" not in _main(monkeypatch, ["--input", "y"])


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

    with caplog.at_level(logging.ERROR, logger="neardup.runtime"):
        runtime.write_report(
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


@pytest.mark.spark
def test_reason_counts_and_the_most_frequent_rejects(spark) -> None:  # type: ignore[no-untyped-def]
    """Every reason counted in one job (None: the accepted rows); report.json lists the
    ``top`` most frequent rejects, ties by reason."""
    rows = [("a", None)] * 3 + [("b", "null text")] * 2 + [("c", "duplicate doc_id")] * 2
    tagged = spark.createDataFrame([*rows, ("d", "corrupt data")], "doc_id string, reason string")
    counts = runtime.reason_counts(tagged)
    assert counts == {None: 3, "null text": 2, "duplicate doc_id": 2, "corrupt data": 1}
    top = runtime.input_stats(tagged, top=2)["rejects_by_reason"]
    assert list(top.items()) == [("duplicate doc_id", 2), ("null text", 2)]
    assert runtime.input_stats(tagged, counts={"x": 1})["rejects_by_reason"] == {"x": 1}


def test_an_error_is_one_line_on_stderr_outside_spark_submit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    runtime.report_error("job.py: error: input 'a\nb' is bad")
    got = capsys.readouterr()
    assert got.err == "job.py: error: input 'a b' is bad\n" and got.out == ""
