"""driver.blocks: the streamed read's blocks cover each file in whole lines, decline a line
past any text limit, and keep their scratch under ``spark.local.dir``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from local_runs import engine_config, streamed, write_lines

from neardup_udfs.driver import blocks
from neardup_udfs.driver.read import Declined
from neardup_udfs.io.storage import LocalStorage
from neardup_udfs.runs import local as local_run


def test_blocks_cover_each_file_in_whole_lines(tmp_path: Path) -> None:
    lines = [json.dumps({"text": "x" * (i % 7) + str(i)}) for i in range(50)]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines))  # no line end after the last record
    files = [f for f in LocalStorage().files(str(src))]
    cut = blocks.plan_blocks(files, 64)
    data = src.read_bytes()
    assert [b.start for b in cut] == [0, *(b.end for b in cut[:-1])]
    assert cut[-1].end == len(data) and len(cut) > 5
    assert all(data[b.end - 1 : b.end] == b"\n" for b in cut[:-1])
    assert sum(b.read().num_rows for b in cut) == 50


def test_a_line_past_any_text_limit_is_declined_before_it_is_read(tmp_path: Path) -> None:
    """A block ends at the first line end after its cut, but never reads a line longer
    than a text the run accepts could make (6 bytes a byte, plus 1 MiB): such an input
    goes to Spark's reader, which rejects the text."""
    src = write_lines(tmp_path / "in.jsonl", [{"text": "a b c"}, {"text": "x" * (3 << 20)}])
    pipeline = engine_config(src, tmp_path / "o").pipeline()
    with pytest.raises(Declined, match="a line longer than 1048636 bytes near byte 26"):
        blocks.read_streamed(str(src), None, "text", 10, pipeline, max_rows=10, block_bytes=8)
    got = blocks.read_streamed(str(src), None, "text", 10**6, pipeline, max_rows=10,
                               block_bytes=8)  # fmt: skip
    assert got.n_good == 1 and got.counts == {"text larger than 1000000 bytes": 1}
    got.close()


def test_streamed_scratch_lives_under_spark_local_dir_and_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sketches and sets wait in a folder of the run's own under ``spark.local.dir``,
    removed when the run ends, as when the read fails half way."""
    streamed(monkeypatch)
    made: list[str] = []
    real = blocks.tempfile.mkdtemp

    def mkdtemp(**kwargs: Any) -> str:
        made.append(real(**kwargs))
        return made[-1]

    monkeypatch.setattr(blocks.tempfile, "mkdtemp", mkdtemp)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    rows = [{"text": f"words of document {i} " * 20} for i in range(40)]
    src = write_lines(tmp_path / "in.jsonl", rows + rows)
    conf = {"spark.local.dir": f"{scratch},/elsewhere", "spark.driver.memory": "1g"}
    summary = local_run.run_local(
        engine_config(src, tmp_path / "out", id_col=None, text_col="text"), conf
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["engine"]["input"] == "streamed" and summary.removed >= 40
    assert len(made) == 1 and made[0].startswith(str(scratch)) and os.listdir(scratch) == []
    bad = write_lines(tmp_path / "bad.jsonl", rows + [{"text": "a float", "score": 0.5}])
    with pytest.raises(Declined, match="'score' is double"):
        blocks.read_streamed(str(bad), None, "text", 1000,
                             engine_config(bad, tmp_path / "o").pipeline(),
                             max_rows=10**6, scratch_dir=str(scratch), workers=2)  # fmt: skip
    assert len(made) == 2 and os.listdir(scratch) == []
