"""neardup_udfs.io.writer: an output claimed for one run (released when the run ends) and its
frames written, every output folder of the job removed first, so a rerun leaves nothing stale."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow.parquet as pq
import pytest

from neardup_udfs.io.outputs import LOCK_NAME
from neardup_udfs.io.readers import InputError
from neardup_udfs.io.storage import HadoopStorage
from neardup_udfs.io.writer import claim_run_output, write_frames
from neardup_udfs.runtime import Cache, RunScope
from neardup_udfs.session import JobCount

pytestmark = pytest.mark.spark


def _scope() -> RunScope:
    return RunScope(Cache(), JobCount(), {})


def test_the_claim_is_released_when_the_run_ends(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    scope = _scope()
    config = SimpleNamespace(output=str(out), input=None)
    claim_run_output(HadoopStorage(spark), config, scope, job="dedup", names=("docs",))  # type: ignore[arg-type]
    assert (out / LOCK_NAME).exists() and len(scope.exits) == 1
    for release in scope.exits:
        release()
    assert not (out / LOCK_NAME).exists()


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


def test_a_run_claims_its_output_against_its_input_and_the_other_locations(
    spark: Any, tmp_path: Path
) -> None:
    """``claim_run_output``: the config's output, refused inside the config's input or one of
    ``also`` (named by its setting); None entries are skipped."""
    store = HadoopStorage(spark)
    config = SimpleNamespace(output=str(tmp_path / "in" / "out"), input=str(tmp_path / "in"))
    with pytest.raises(InputError, match="input"):
        claim_run_output(store, config, _scope(), job="dedup", names=("docs",))  # type: ignore[arg-type]
    config = SimpleNamespace(output=str(tmp_path / "idx" / "out"), input=str(tmp_path / "in"))
    with pytest.raises(InputError, match="the index"):
        claim_run_output(
            store, config, _scope(), job="dedup", names=("docs",),  # type: ignore[arg-type]
            also=[("the index", str(tmp_path / "idx")), ("query", None)],
        )  # fmt: skip
    scope = _scope()
    config = SimpleNamespace(output=str(tmp_path / "out"), input=str(tmp_path / "in"))
    claim_run_output(store, config, scope, job="dedup", names=("docs",), also=[("q", None)])  # type: ignore[arg-type]
    assert (tmp_path / "out" / LOCK_NAME).exists()
    for release in scope.exits:
        release()
