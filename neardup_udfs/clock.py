"""What every run measures and answers for, with no Spark: wall time per named stage (one
log line as it starts and one as it ends), and the error of a run whose outputs do not
account for its input."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["LostRecords", "StageClock", "StageRows"]


@dataclass
class StageRows:
    """Row counts a stage reports for its "done" log line (None = not counted)."""

    rows_in: int | None = None
    rows_out: int | None = None


class StageClock:
    """Wall time per named stage; one log line when each stage starts and one when it ends
    (with the rows in and out the stage sets on the yielded :class:`StageRows`)."""

    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[StageRows]:
        self.log.info("stage %s: start", name)
        rows = StageRows()
        t = time.perf_counter()
        yield rows
        self.seconds[name] = round(time.perf_counter() - t, 3)
        counted = ""
        if rows.rows_in is not None or rows.rows_out is not None:
            counted = f", rows {_count(rows.rows_in)} in, {_count(rows.rows_out)} out"
        self.log.info("stage %s: done in %.1f s%s", name, self.seconds[name], counted)


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


class LostRecords(RuntimeError):
    """The job's outputs do not account for every input row: it writes no manifest."""
