"""The job skeleton shared by every spark-submit entry point (no Spark started here)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from neardup_udfs import submit
from neardup_udfs.config import OUTPUTS
from neardup_udfs.io import scratch
from neardup_udfs.io.outputs import LOCK_NAME, claim_output
from neardup_udfs.io.storage import LocalStorage

ROOT = Path(__file__).resolve().parent.parent


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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_run_with_its_scratch_and_lock_removed(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """The dedup job on the local engine, stopped half way through its streamed read (its
    scratch folder written, its output locked): it exits with 128 + the signal, its scratch
    folder and lock gone, no success marker written. A run killed outright (SIGKILL) leaves
    both, and the next run of the output removes both."""
    rows = [json.dumps({"text": f"words of document {i} " * 20}) for i in range(40)]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(rows + rows) + "\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    for stop in (sig, signal.SIGKILL):
        code = _stopped_run(src, out, tmp, stop)
        left = [p for p in tmp.iterdir() if p.name.startswith(scratch.PREFIX)]
        assert not (out / "_MANIFEST.json").exists()
        if stop == signal.SIGKILL:
            assert code == -signal.SIGKILL and len(left) == 1 and (out / LOCK_NAME).exists()
        else:
            assert code == 128 + stop and left == [] and not (out / LOCK_NAME).exists()
    claim_output(LocalStorage(), str(out), job="dedup", names=OUTPUTS).release()
    assert [p for p in tmp.iterdir() if p.name.startswith(scratch.PREFIX)] == []


def _stopped_run(src: Path, out: Path, tmp: Path, sig: int) -> int | None:
    """tests/stopped_run.py on ``src`` into ``out`` (scratch under ``tmp``), sent ``sig``
    once its first block is in the scratch folder; its exit status."""
    path = os.pathsep.join(str(ROOT / p) for p in (".", "tests", "jobs"))
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": path}
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "stopped_run.py"), str(src),
                             str(out)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    timer = threading.Timer(120, proc.kill)  # never hangs the tier
    timer.start()
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("reading")
        assert [p for p in tmp.iterdir() if p.name.startswith(scratch.PREFIX)]
        assert (out / LOCK_NAME).exists()
        proc.send_signal(sig)
        return proc.wait(timeout=60)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
