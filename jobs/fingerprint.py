"""spark-submit entry point: fingerprint every document of a corpus with a frozen preset.

    spark-submit --properties-file conf/spark-local.conf jobs/fingerprint.py \\
        --input DIR_OR_FILES --output DIR [--config conf/fingerprint.toml] [overrides]

Parses the arguments and calls ``neardup_udfs.runs.fingerprint.run``, which writes
``DIR/fingerprints`` (doc_id, fingerprint bigint, fingerprint_hex, pipeline),
``DIR/rejects`` (doc_id, reason) and, last, ``DIR/_MANIFEST.json``.
"""

from __future__ import annotations

import sys

from neardup_udfs.config import FingerprintConfig
from neardup_udfs.runs.fingerprint import Summary, run
from neardup_udfs.submit import Job

__all__ = ["JOB", "Summary", "build_parser", "main", "run"]


def describe(c: FingerprintConfig, s: Summary) -> str:
    return (
        f"{s.input} document(s): {s.fingerprinted} fingerprinted, "
        f"{s.rejected} rejected ({s.pipeline}) -> {c.output}"
    )


JOB = Job(
    "fingerprint.py",
    __doc__.split("\n")[0],
    FingerprintConfig,
    "conf/fingerprint.toml",
    run,
    describe,
)

build_parser, main = JOB.build_parser, JOB.main

if __name__ == "__main__":
    sys.exit(main())
