"""neardup_udfs.io.writer: an output claimed for one run (released when the run ends) and its
frames written, every output folder of the job removed first, so a rerun leaves nothing stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from neardup_udfs.io.outputs import LOCK_NAME
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.writer import begin_output, write_frames
from neardup_udfs.runtime import Cache, RunScope
from neardup_udfs.session import JobCount

pytestmark = pytest.mark.spark


def _scope() -> RunScope:
    return RunScope(Cache(), JobCount(), {})


def test_the_claim_is_released_when_the_run_ends_and_refuses_an_input_inside(
    spark: Any, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    scope = _scope()
    begin_output(HadoopStorage(spark), str(out), scope, job="dedup", names=("docs",))
    assert (out / LOCK_NAME).exists() and len(scope.exits) == 1
    for release in scope.exits:
        release()
    assert not (out / LOCK_NAME).exists()
    with pytest.raises(InputError, match="input"):
        begin_output(
            HadoopStorage(spark), str(tmp_path), _scope(), job="dedup", names=("docs",),
            inputs=[("input", str(tmp_path / "in"))],
        )  # fmt: skip


def test_every_output_folder_is_removed_and_only_the_wanted_are_written(
    spark: Any, tmp_path: Path
) -> None:
    store = HadoopStorage(spark)
    out = str(tmp_path)
    frames = {
        "a": spark.createDataFrame([(1,)], "x int"),
        "b": spark.createDataFrame([(2,)], "x int"),
    }
    write_frames(store, out, frames, ["a", "b"], ["a", "b", "c"])
    (tmp_path / "c").mkdir()  # a stale output of an earlier run, with other outputs wanted
    write_frames(store, out, frames, ["b"], ["a", "b", "c"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    assert pq.read_table(tmp_path / "b").column("x").to_pylist() == [2]
