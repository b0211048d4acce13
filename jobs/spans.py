"""spark-submit entry point: where do documents overlap? Aligned passages (winnowing spans)
between the pairs of a dedup run, or between query documents and a corpus (provenance).

    spark-submit --properties-file conf/spark-local.conf jobs/spans.py \\
        --input DOCS --pairs DEDUP_OUTPUT/pairs --output DIR [--config conf/spans.toml]
    spark-submit ... jobs/spans.py --input CORPUS --query QUERIES --output DIR

Parses the arguments and calls ``neardup_udfs.runs.spans.run``, which writes under DIR:
spans/, pair_summary/, rejects/, report.json, and _MANIFEST.json last. See README
"Spans job".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from neardup_udfs.config import SpansConfig, load_spans_config
from neardup_udfs.runs.spans import Summary, run
from neardup_udfs.runtime import job_main, job_parser

__all__ = ["Summary", "build_parser", "describe", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    """A flag for every key of ``SpansConfig`` (``conf/spans.toml``)."""
    return job_parser("spans.py", __doc__.split("\n")[0], SpansConfig, "conf/spans.toml")


def describe(config: SpansConfig, s: Summary) -> str:
    extra = (
        f"{s.pairs_missing_docs} pair(s) without both documents"
        if s.mode == "pairs"
        else f"{s.hot_hashes} hot hash(es) skipped"
    )
    return (
        f"{s.mode}: {s.input + s.query} row(s), {s.rejected} rejected; {s.pairs} pair(s), "
        f"{s.spans} span(s); {extra}; {s.pipeline} -> {config.output}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    return job_main(
        argv,
        prog="spans.py",
        parser=build_parser(),
        load=load_spans_config,
        run=run,
        describe=describe,
    )


if __name__ == "__main__":
    sys.exit(main())
