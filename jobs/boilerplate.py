"""spark-submit entry point: find the boilerplate of a corpus (passages many documents share)
and write the documents without it.

    spark-submit --properties-file conf/spark-local.conf jobs/boilerplate.py \\
        --input PATH --output DIR [--config conf/boilerplate.toml] [overrides]

Parses the arguments and calls ``neardup_udfs.runs.boilerplate.run``, which writes under DIR:
regions/, cleaned/, boilerplate_top/, rejects/, report.json, and _MANIFEST.json last (the
success marker). See docs/jobs.md "Boilerplate job".
"""

from __future__ import annotations

import sys

from neardup_udfs.config import BoilerplateConfig
from neardup_udfs.runs.boilerplate import Summary, run
from neardup_udfs.submit import Job

__all__ = ["JOB", "Summary", "build_parser", "describe", "main", "run"]


def describe(config: BoilerplateConfig, s: Summary) -> str:
    fraction = s.bytes_removed / s.bytes_in if s.bytes_in else 0.0
    return (
        f"{s.input} document(s), {s.rejected} rejected; {s.regions} boilerplate region(s) in "
        f"{s.docs_with_boilerplate} document(s); {s.bytes_removed} of {s.bytes_in} bytes "
        f"removed ({fraction:.1%}); {s.pipeline} -> {config.output}"
    )


JOB = Job(
    "boilerplate.py",
    __doc__.split("\n")[0],
    BoilerplateConfig,
    "conf/boilerplate.toml",
    run,
    describe,
)

build_parser, main = JOB.build_parser, JOB.main

if __name__ == "__main__":
    sys.exit(main())
