"""What the index tests share: a crawl written as JSON lines, and one run of the index job
over such a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from job_runs import URL_BODY, run_released

from neardup_udfs.config import load_index_config
from neardup_udfs.runs import index as index_job


def write_crawl(path: Path, docs: list[tuple[str, str]], crawl: int = 0) -> Path:
    """``path``, holding ``docs`` as records (``url``, ``body``, ``crawl``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for doc_id, text in docs:
            fh.write(json.dumps({"url": doc_id, "body": text, "crawl": crawl}) + "\n")
    return path


def run_index(spark, action: str, src: Path | None, index: Path, **overrides: Any):  # type: ignore[no-untyped-def]
    """The index job's summary of ``action`` on ``index`` over ``src``; checks that it
    leaves nothing cached behind."""
    cfg = load_index_config(
        action=action,
        input=str(src) if src else "unused",
        index=str(index),
        **URL_BODY,
        **overrides,
    )
    return run_released(spark, index_job, cfg)
