"""spark-submit entry point: find and remove near-duplicate documents.

    spark-submit --properties-file conf/spark-local.conf jobs/dedup.py \\
        --input PATH --output DIR [--config conf/dedup.toml] [overrides]

Parses the arguments and calls ``neardup_udfs.runs.local.try_local`` (local JSON lines in
local mode: no Spark session at all) or else ``neardup_udfs.runs.dedup.run``; both write
under DIR:
docs/, clusters/, rejects/, samples/ (and pairs/ when asked), report.json, report.html and
_MANIFEST.json last (the success marker). With ``--against INDEX``: documents near an
indexed one are removed too and listed in matches/; ``--update-index`` then appends the
kept documents to INDEX. See docs/jobs.md "Dedup job", docs/persistent-index.md.
"""

from __future__ import annotations

import sys

from neardup_udfs.config import DedupConfig
from neardup_udfs.runs.dedup import run
from neardup_udfs.runs.local import try_local
from neardup_udfs.runs.summary import Summary, format_summary
from neardup_udfs.submit import Job

__all__ = ["JOB", "Summary", "build_parser", "format_summary", "main", "run"]

JOB = Job(
    "dedup.py",
    "Remove near-duplicate documents.",
    DedupConfig,
    "conf/dedup.toml",
    run,
    lambda c, s: f"{format_summary(s)}\n-> {c.output}",
    local=try_local,
)

build_parser, main = JOB.build_parser, JOB.main

if __name__ == "__main__":
    sys.exit(main())
