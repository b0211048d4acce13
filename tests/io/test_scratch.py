"""io.scratch and the streamed read's scratch folder: made under ``spark.local.dir`` (the
folder made when missing, as Spark makes it), checked for room before each write, and
removed when the run fails, is refused, or (after a kill) by the next run of its output."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from local_runs import engine_config, streamed, write_lines

from neardup_udfs.config import OUTPUTS
from neardup_udfs.io import scratch
from neardup_udfs.io.outputs import LOCK_NAME, claim_output
from neardup_udfs.io.storage import LocalStorage
from neardup_udfs.runs import local as local_run

ROWS = [{"text": f"words of document {i} " * 20} for i in range(40)]


def _src(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "in.jsonl", ROWS + ROWS)


def _ours(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(scratch.PREFIX))


def test_a_missing_spark_local_dir_is_made_and_the_run_streams_through_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    streamed(monkeypatch)
    local = tmp_path / "not" / "yet"
    out = tmp_path / "out"
    summary = local_run.run_local(engine_config(_src(tmp_path), out, id_col=None,
                                                text_col="text"),
                                  {"spark.local.dir": f"file:{local}"})  # fmt: skip
    assert summary.removed >= 40 and local.is_dir() and _ours(local) == []
    assert json.loads((out / "report.json").read_text())["engine"]["input"] == "streamed"


def test_a_spark_local_dir_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("in the way")
    with pytest.raises(scratch.ScratchSpaceError, match=r"spark.local.dir '.*file/sub' cannot"):
        scratch.scratch_parent({"spark.local.dir": str(tmp_path / "file" / "sub") + ",/other"})
    assert scratch.scratch_parent({}) == scratch.tempfile.gettempdir()


def test_a_full_scratch_space_stops_the_run_naming_spark_local_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Room is checked before each write: the run stops with one line naming
    spark.local.dir, its scratch folder and lock gone, no success marker written."""
    streamed(monkeypatch)
    local = tmp_path / "local"
    local.mkdir()
    room = {"free": scratch.RESERVE_BYTES + 20_000}  # the first block fits, not all

    def free(folder: str) -> int:
        room["free"] -= 5_000
        return room["free"]

    monkeypatch.setattr(scratch, "free_bytes", free)
    out = tmp_path / "out"
    config = engine_config(_src(tmp_path), out, id_col=None, text_col="text")
    with pytest.raises(scratch.ScratchSpaceError) as e:
        local_run.run_local(config, {"spark.local.dir": str(local), "spark.master": "local[1]"})
    message = str(e.value)
    assert "point spark.local.dir at a folder with more room" in message and "\n" not in message
    assert str(local) in message and "MiB free" in message
    assert _ours(local) == [] and not (out / LOCK_NAME).exists()
    assert not (out / "_MANIFEST.json").exists()
    monkeypatch.setattr(scratch, "free_bytes", lambda folder: 0)
    with pytest.raises(scratch.ScratchSpaceError, match="0 MiB free"):
        local_run.run_local(config, {"spark.local.dir": str(local)})
    assert _ours(local) == [] and not (out / LOCK_NAME).exists()


def test_a_write_the_filesystem_refuses_as_full_is_named() -> None:
    full = scratch.full(OSError(28, "No space left on device"), "/scratch/neardup-x")
    assert full is not None and "spark.local.dir" in str(full)
    assert scratch.full(OSError(13, "Permission denied"), "/x") is None


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def test_the_next_run_removes_the_scratch_a_killed_run_left(tmp_path: Path) -> None:
    """A stale lock (its run's process gone) names the run's scratch folders: the next claim
    of the output removes those folders, and nothing else the lock names."""
    out = tmp_path / "out"
    out.mkdir()
    left = tmp_path / f"{scratch.PREFIX}left"
    (left / "sets").parent.mkdir()
    (left / "sets").write_bytes(b"\0" * 1000)
    mine = tmp_path / "my-folder"  # not a scratch folder: never removed
    mine.mkdir()
    lock = {"job": "dedup", "host": socket.gethostname(), "pid": _dead_pid(),
            "started": "2026-12-06T00:00:00Z", "scratch": [str(left), str(mine)]}  # fmt: skip
    (out / LOCK_NAME).write_text(json.dumps(lock))
    claim = claim_output(LocalStorage(), str(out), job="dedup", names=OUTPUTS)
    claim.release()
    assert not left.exists() and mine.is_dir() and not (out / LOCK_NAME).exists()


def test_a_run_notes_its_scratch_in_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    streamed(monkeypatch)
    seen: list[dict[str, object]] = []
    note = local_run.OutputClaim.note_scratch

    def noted(self: local_run.OutputClaim, folder: str) -> None:
        note(self, folder)
        seen.append(json.loads(Path(self.lock).read_text()))
        assert os.path.isdir(folder) and os.listdir(folder) == []  # before any write

    monkeypatch.setattr(local_run.OutputClaim, "note_scratch", noted)
    local = tmp_path / "local"
    config = engine_config(_src(tmp_path), tmp_path / "out", id_col=None, text_col="text")
    local_run.run_local(config, {"spark.local.dir": str(local)})
    assert len(seen) == 1 and Path(seen[0]["scratch"][0]).parent == local  # type: ignore[index]
    assert _ours(local) == []
