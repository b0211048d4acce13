"""Run by tests/test_submit.py in a process of its own, to be stopped by a signal: the dedup
job's ``main`` on the local engine, its input streamed (a few records a block), each block
after the first held up for a minute, so that the run is surely under way when stopped.

    python tests/stopped_run.py INPUT.jsonl OUTPUT

Prints ``reading`` once the first block's sketches are in the scratch folder (under the
system's temporary folder: set TMPDIR to watch it).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from neardup_udfs import engine as engine_rules
from neardup_udfs.driver import blocks


def main(src: str, out: str) -> int:
    import dedup  # jobs/dedup.py, as spark-submit runs it

    engine_rules.DRIVER_TEXT_COPIES = 10**12  # never held whole: streamed
    blocks.BLOCK_BYTES = 300
    rows = blocks._block_rows  # noqa: SLF001
    seen: list[int] = []

    def held_up(*args: Any) -> Any:
        got = rows(*args)
        if seen:
            time.sleep(60)
        seen.append(1)
        print("reading", flush=True)
        return got

    blocks._block_rows = held_up  # noqa: SLF001
    return int(dedup.main(["--config", "conf/dedup.toml", "--input", src, "--output", out,
                           "--input-format", "jsonl", "--engine", "local"]))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
