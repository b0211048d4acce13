"""An output folder never touches what the job did not write (neardup_udfs.io.outputs):
outputs over inputs, folders of the user's under an output's names, a second run into a
locked output, unwritable outputs; all refused before any work, nothing deleted."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from neardup_udfs.config import load_config
from neardup_udfs.io.outputs import (
    LOCK_NAME,
    OutputRefused,
    claim_output,
    overlap,
    written_by_spark,
)
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.runs.dedup import run

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "samples").glob("*.txt"))[:4]


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _heartbeat(lock: Path) -> int | None:
    try:  # read while it is rewritten: may be partial
        return int(json.loads(lock.read_text())["heartbeat"])
    except (ValueError, KeyError, OSError):
        return None


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for p in SAMPLES:
        shutil.copy(p, folder / p.name)
    return folder


def _dedup(spark: Any, src: Path, out: Path, **overrides: Any) -> Any:
    cfg = load_config(str(ROOT / "conf/dedup.toml"), input=str(src), output=str(out), **overrides)
    return run(spark, cfg)


def test_overlap_names_the_relation() -> None:
    assert overlap("file:/a/b", "file:/a/b") == "is"
    assert overlap("file:/a", "file:/a/b") == "contains"
    assert overlap("file:/a/b/c", "file:/a/b") == "lies inside"
    assert overlap("file:/a/bc", "file:/a/b") is None
    assert overlap("file:/a/b", "file:/a/bc") is None


def test_only_sparks_own_files_count_as_written_by_the_job() -> None:
    for under in (
        "part-00000-1f2e-c000.snappy.parquet",
        ".part-00000-1f2e-c000.snappy.parquet.crc",
        "_SUCCESS",
        "._SUCCESS.crc",
        "_committed_123",
        "_temporary/0/_temporary/attempt_1/part-00000.parquet",
        "bucket=3/part-00001.parquet",
    ):
        assert written_by_spark(under), under
    for under in ("notes.txt", "a.parquet", "sub/part-00000.parquet", "doc1.html", ".x.crcx"):
        assert not written_by_spark(under), under


@pytest.mark.parametrize("where", ["parent", "same", "inside"])
def test_an_output_over_the_input_is_refused_and_nothing_is_touched(
    spark: Any, tmp_path: Path, where: str
) -> None:
    src = _corpus(tmp_path / "P" / "docs")
    out = {"parent": tmp_path / "P", "same": src, "inside": src / "out"}[where]
    before = _tree(tmp_path / "P")
    relation = {"parent": "contains", "same": "is", "inside": "lies inside"}[where]
    with pytest.raises(OutputRefused, match=f"output '{out}' {relation} input '{src}'"):
        _dedup(spark, src, out)
    assert _tree(tmp_path / "P") == before
    assert not (out / LOCK_NAME).exists()


def test_a_symlinked_output_into_the_input_is_refused(spark: Any, tmp_path: Path) -> None:
    src = _corpus(tmp_path / "docs")
    (tmp_path / "alias").symlink_to(src)
    with pytest.raises(OutputRefused, match="lies inside input"):
        _dedup(spark, src, tmp_path / "alias" / "out")


def test_a_user_folder_under_an_output_name_is_refused_then_a_rerun_replaces_its_own(
    spark: Any, tmp_path: Path
) -> None:
    src = _corpus(tmp_path / "in")
    out = tmp_path / "out"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "keep-me.txt").write_text("the user's own file")
    (out / "unrelated").mkdir()
    (out / "unrelated" / "x.txt").write_text("left alone")
    with pytest.raises(OutputRefused, match=r"already holds 'docs' \(e.g. 'keep-me.txt'\)"):
        _dedup(spark, src, out)
    assert (out / "docs" / "keep-me.txt").read_text() == "the user's own file"
    shutil.rmtree(out / "docs")
    first = _dedup(spark, src, out)
    second = _dedup(spark, src, out)  # its own earlier outputs: replaced
    assert (first.kept, first.removed) == (second.kept, second.removed)
    assert (out / "unrelated" / "x.txt").read_text() == "left alone"
    assert (out / "_MANIFEST.json").exists() and not (out / LOCK_NAME).exists()


def test_a_report_the_job_did_not_write_is_refused(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text('{"mine": true}')
    store = HadoopStorage(spark)
    with pytest.raises(OutputRefused, match="already holds report.json"):
        claim_output(store, str(out), job="dedup", names=("docs",))
    assert (out / "report.json").read_text() == '{"mine": true}'
    assert not (out / LOCK_NAME).exists()


def test_a_second_run_into_a_locked_output_is_refused(spark: Any, tmp_path: Path) -> None:
    store = HadoopStorage(spark)
    out = tmp_path / "out"
    first = claim_output(store, str(out), job="dedup", names=("docs",))
    try:
        holder = json.loads((out / LOCK_NAME).read_text())
        assert holder["pid"] == os.getpid() and holder["job"] == "dedup"
        with pytest.raises(OutputRefused, match=r"in use by another neardup run \(dedup, host"):
            claim_output(store, str(out), job="dedup", names=("docs",))
        with pytest.raises(OutputRefused, match="in use by another neardup run"):
            _dedup(spark, _corpus(tmp_path / "in"), out)
    finally:
        first.release()
    assert not (out / LOCK_NAME).exists()
    claim_output(store, str(out), job="dedup", names=("docs",)).release()


def test_the_lock_of_a_run_that_died_is_taken_over(spark: Any, tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    out = tmp_path / "out"
    out.mkdir()
    dead = {"job": "dedup", "host": socket.gethostname(), "pid": int(gone.stdout), "started": "x"}
    (out / LOCK_NAME).write_text(json.dumps(dead))
    claim = claim_output(HadoopStorage(spark), str(out), job="images", names=())
    assert json.loads((out / LOCK_NAME).read_text())["job"] == "images"
    claim.release()


def test_an_unwritable_output_is_refused_before_any_work(spark: Any, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        target = "/proc/neardup-out"  # root writes everywhere else
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        target = str(ro / "out")
    missing = tmp_path / "nothing-here"  # reading it would fail: the output fails first
    with pytest.raises(InputError, match=f"output '{target}' is not writable"):
        _dedup(spark, missing, Path(target))


def test_an_index_built_inside_its_input_is_refused(spark: Any, tmp_path: Path) -> None:
    from neardup_udfs.config import load_index_config
    from neardup_udfs.runs import index as index_job

    src = _corpus(tmp_path / "docs")
    before = _tree(src)
    cfg = load_index_config(action="build", input=str(src), index=str(src / "idx"))
    with pytest.raises(OutputRefused, match=f"index '{src / 'idx'}' lies inside input"):
        index_job.run(spark, cfg)
    assert _tree(src) == before


def test_a_lock_whose_heartbeat_stopped_is_taken_over_and_a_live_one_beats(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from neardup_udfs.io import outputs

    out = tmp_path / "out"
    out.mkdir()
    old = int(time.time()) - outputs.STALE_SECONDS - 5
    dead = {"job": "dedup", "host": "elsewhere", "pid": 1, "started": "x", "heartbeat": old}
    (out / LOCK_NAME).write_text(json.dumps(dead))
    monkeypatch.setattr(outputs, "HEARTBEAT_SECONDS", 0.2)
    claim = claim_output(HadoopStorage(spark), str(out), job="images", names=())
    try:
        first = json.loads((out / LOCK_NAME).read_text())["heartbeat"]
        assert first > old
        deadline = time.time() + 30
        while _heartbeat(out / LOCK_NAME) in (first, None):
            assert time.time() < deadline, "the heartbeat was not renewed"
            time.sleep(0.3)
        live = {**dead, "heartbeat": int(time.time())}
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / LOCK_NAME).write_text(json.dumps(live))
        with pytest.raises(OutputRefused, match="host elsewhere, pid 1"):
            claim_output(HadoopStorage(spark), str(tmp_path / "other"), job="dedup", names=())
    finally:
        claim.release()
    assert not (out / LOCK_NAME).exists()


def test_a_location_hadoop_cannot_open_is_named(spark: Any, tmp_path: Path) -> None:
    store = HadoopStorage(spark)
    with pytest.raises(OutputRefused, match=r"^input: cannot open 'nosuchfs://bucket/docs'"):
        claim_output(
            store,
            str(tmp_path / "out"),
            job="dedup",
            names=(),
            inputs=[("input", "nosuchfs://bucket/docs")],
        )
    assert not (tmp_path / "out").exists()
