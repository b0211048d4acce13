"""spark-submit entry point: fingerprint every document of a corpus with a frozen preset.

    spark-submit --properties-file conf/spark-local.conf jobs/fingerprint.py \\
        --input DIR_OR_FILES --output DIR [--config conf/fingerprint.toml] [overrides]

Parses the arguments and calls ``neardup_udfs.runs.fingerprint.run``, which writes
``DIR/fingerprints`` (doc_id, fingerprint bigint, fingerprint_hex, pipeline),
``DIR/rejects`` (doc_id, reason) and, last, ``DIR/_MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from neardup_udfs.config import FingerprintConfig, load_fingerprint_config
from neardup_udfs.runs.fingerprint import Summary, run
from neardup_udfs.runtime import job_main, job_parser

__all__ = ["Summary", "build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    """A flag for every key of ``FingerprintConfig`` (``conf/fingerprint.toml``)."""
    return job_parser(
        "fingerprint.py", __doc__.split("\n")[0], FingerprintConfig, "conf/fingerprint.toml"
    )


def main(argv: Sequence[str] | None = None) -> int:
    return job_main(
        argv,
        prog="fingerprint.py",
        parser=build_parser(),
        load=load_fingerprint_config,
        run=run,
        describe=lambda c, s: (
            f"{s.input} document(s): {s.fingerprinted} fingerprinted, "
            f"{s.rejected} rejected ({s.pipeline}) -> {c.output}"
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
