"""spark-submit entry point: build, grow and query a persistent near-duplicate index.

    spark-submit jobs/index.py build --input PATH --index DIR [method flags] [--batch-id ID]
    spark-submit jobs/index.py add   --input PATH --index DIR [method flags] [--batch-id ID]
    spark-submit jobs/index.py query --queries PATH --index DIR --output OUT \\
        [--max-distance D | --top N]

Parses the arguments and calls ``neardup_udfs.runs.index.run``. build creates DIR (an error
if it already holds an index); add appends a batch atomically (a batch id already committed
is a no-op). query writes OUT/results/ (query_id, rank, doc_id, distance | similarity),
OUT/rejects/, report.json and _MANIFEST.json. See docs/persistent-index.md.
"""

from __future__ import annotations

import argparse
import sys

from neardup_udfs.config import INDEX_ACTIONS, IndexConfig
from neardup_udfs.runs.index import Summary, run
from neardup_udfs.submit import Job

__all__ = ["JOB", "Summary", "build_parser", "describe", "main", "run"]


def describe(config: IndexConfig, s: Summary) -> str:
    if s.action == "query":
        return (
            f"{s.queries} queries ({s.rejected} rejected), {s.results} results "
            f"from {s.index_documents} indexed documents -> {config.output}"
        )
    what = f"added {s.indexed} documents" if s.indexed else "batch already committed: no change"
    return (
        f"{s.action}: {what} ({s.rejected} rejected); index {config.index} holds "
        f"{s.index_documents} documents in {s.batches} batches ({s.pipeline})"
    )


def own_arguments(p: argparse.ArgumentParser) -> None:
    """The action; ``--queries``, ``--input`` by another name."""
    p.add_argument("action", choices=INDEX_ACTIONS)
    p.add_argument("--queries", dest="input", help="query: the query documents (= --input)")


# every key of IndexConfig is a flag (the action: the first argument); its file is dedup's
JOB = Job(
    "index.py",
    "A persistent near-duplicate index.",
    IndexConfig,
    "conf/dedup.toml",
    run,
    describe,
    extend=own_arguments,
)

build_parser, main = JOB.build_parser, JOB.main

if __name__ == "__main__":
    sys.exit(main())
