"""spark-submit entry point: where do documents overlap? Aligned passages (winnowing spans)
between the pairs of a dedup run, or between query documents and a corpus (provenance).

    spark-submit --properties-file conf/spark-local.conf jobs/spans.py \\
        --input DOCS --pairs DEDUP_OUTPUT/pairs --output DIR [--config conf/spans.toml]
    spark-submit ... jobs/spans.py --input CORPUS --query QUERIES --output DIR

Parses the arguments and calls ``neardup_udfs.runs.spans.run``, which writes under DIR:
spans/, pair_summary/, rejects/, report.json, and _MANIFEST.json last. See docs/jobs.md
"Spans job".
"""

from __future__ import annotations

import sys

from neardup_udfs.config import SpansConfig
from neardup_udfs.runs.spans import Summary, run
from neardup_udfs.submit import Job

__all__ = ["JOB", "Summary", "build_parser", "describe", "main", "run"]


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


JOB = Job("spans.py", __doc__.split("\n")[0], SpansConfig, "conf/spans.toml", run, describe)

build_parser, main = JOB.build_parser, JOB.main

if __name__ == "__main__":
    sys.exit(main())
