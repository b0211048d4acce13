"""Stage timings and the accounting error (no Spark started here)."""

from __future__ import annotations

import logging

import pytest

from neardup_udfs.clock import LostRecords, StageClock


def test_stage_clock_logs_start_and_done_with_rows(caplog: pytest.LogCaptureFixture) -> None:
    clock = StageClock(logging.getLogger("neardup.test"))
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


def test_lost_records_is_a_runtime_error_with_its_message() -> None:
    with pytest.raises(RuntimeError, match="kept 1 \\+ removed 0"):
        raise LostRecords("input 2: kept 1 + removed 0 + rejected 0 != input")
