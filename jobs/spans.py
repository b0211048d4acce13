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
from neardup_udfs.runtime import add_input_arguments, job_main

__all__ = ["Summary", "build_parser", "describe", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spans.py", description=__doc__.split("\n")[0])
    add_input_arguments(p, "conf/spans.toml")
    p.add_argument("--pairs", help="a dedup output's pairs/ or clusters/ directory")
    p.add_argument("--query", help="provenance: query documents (same format and columns)")
    p.add_argument("-k", type=int, help="winnowing k-gram size in bytes (default 16)")
    p.add_argument("-w", type=int, help="winnowing window (default 16)")
    p.add_argument("--max-doc-freq", dest="max_doc_freq", type=int, help="default 100")
    return p


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
