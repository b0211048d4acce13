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

from neardup_udfs.config import (
    REPRESENTATIVES,
    VERIFICATIONS,
    add_method_arguments,
    load_config,
)
from neardup_udfs.runs.dedup import Summary, run
from neardup_udfs.runtime import add_input_arguments, job_main
from neardup_udfs.stages.cluster import CLUSTERINGS

__all__ = ["Summary", "build_parser", "format_summary", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dedup.py", description="Remove near-duplicate documents.")
    add_input_arguments(p, "conf/dedup.toml")
    add_method_arguments(p, k_help="SimHash: max Hamming distance (default 3)")
    p.add_argument("--verification", choices=VERIFICATIONS)
    p.add_argument("--representative", choices=REPRESENTATIVES)
    p.add_argument("--order-col", dest="order_col")
    p.add_argument("--hot-bucket-size", dest="hot_bucket_size", type=int)
    p.add_argument("--clustering", choices=CLUSTERINGS)
    p.add_argument("--max-rounds", dest="max_rounds", type=int)
    p.add_argument("--max-driver-edges", dest="max_driver_edges", type=int)
    p.add_argument("--chaining-floor", dest="chaining_floor", type=float)
    p.add_argument("--no-chaining", dest="no_chaining", action="store_true", default=None)
    p.add_argument("--against", help="an index directory: also remove duplicates of it")
    p.add_argument(
        "--update-index",
        dest="update_index",
        action="store_true",
        default=None,
        help="append the kept documents to the --against index (created if absent)",
    )
    p.add_argument("--batch-id", dest="batch_id", help="the batch's id in the index")
    return p


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
