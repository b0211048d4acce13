"""spark-submit entry point: find and remove near-duplicate documents.

    spark-submit --properties-file conf/spark-local.conf jobs/dedup.py \\
        --input PATH --output DIR [--config conf/dedup.toml] [overrides]

Parses the arguments and calls ``neardup_udfs.runs.dedup.run``, which writes under DIR:
docs/, clusters/, rejects/, samples/ (and pairs/ when asked), report.json, report.html and
_MANIFEST.json last (the success marker). With ``--against INDEX``: documents near an
indexed one are removed too and listed in matches/; ``--update-index`` then appends the
kept documents to INDEX. See README "Dedup job", "Index".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from neardup_udfs.config import DedupConfig, load_config
from neardup_udfs.runs.dedup import Summary, run
from neardup_udfs.runtime import job_main, job_parser

__all__ = ["Summary", "build_parser", "format_summary", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    """A flag for every key of ``DedupConfig`` (``conf/dedup.toml``)."""
    return job_parser(
        "dedup.py", "Remove near-duplicate documents.", DedupConfig, "conf/dedup.toml"
    )


def format_summary(s: Summary) -> str:
    rows: list[tuple[str, Any]] = [
        ("pipeline", s.pipeline),
        ("input documents", s.input),
        ("rejected", s.rejected),
        ("empty (no visible text)", s.empty),
        ("exact duplicates", s.exact_duplicates),
        ("candidate pairs", s.candidates),
        ("verified pairs", s.verified),
        ("clusters (2+ members)", s.clusters),
        ("removed as duplicates", s.removed),
        ("kept", s.kept),
        ("chained members", s.chained),
        ("hot buckets", s.hot_buckets),
        ("matched the index", s.index_matches),
        ("added to the index", s.index_added),
        ("cluster rounds", s.rounds),
        ("finished on the driver", s.driver_edges),
        ("seconds", sum(s.seconds.values())),
    ]
    return "\n".join(
        f"{k:<24}{v:>12}" if not isinstance(v, float) else f"{k:<24}{v:>12.1f}" for k, v in rows
    )


def main(argv: Sequence[str] | None = None) -> int:
    return job_main(
        argv,
        prog="dedup.py",
        parser=build_parser(),
        load=load_config,
        run=run,
        describe=lambda c, s: f"{format_summary(s)}\n-> {c.output}",
    )


if __name__ == "__main__":
    sys.exit(main())
