"""The job skeleton shared by every spark-submit entry point (no Spark started here)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import pytest

from neardup_udfs import submit


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

    monkeypatch.setattr(submit, "SparkSession", FakeSparkSession)
    parser = argparse.ArgumentParser()
    parser.add_argument("--config")
    parser.add_argument("--input")
    code = submit.job_main(
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


def test_an_error_is_one_line_on_stderr_outside_spark_submit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    submit.report_error("job.py: error: input 'a\nb' is bad")
    got = capsys.readouterr()
    assert got.err == "job.py: error: input 'a b' is bad\n" and got.out == ""
