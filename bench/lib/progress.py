"""Progress lines on stderr, stamped ``[bench_dedup HH:MM:SS]`` (the tables and the JSON line
of a bench go to stdout)."""

from __future__ import annotations

import sys
import time


def log(message: str) -> None:
    """Progress on stderr (the table and the JSON line go to stdout)."""
    print(f"[bench_dedup {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
