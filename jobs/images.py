"""spark-submit entry point: near-duplicate images (resized, re-encoded, cropped, marked).

    spark-submit --properties-file conf/spark-local.conf jobs/images.py \\
        --config conf/images.toml --input DIR_OR_GLOB --output DIR [overrides]

Parses the arguments and calls ``neardup_udfs.runs.images.run``: every file under --input
(``files``, Spark's binaryFile source) or the image records of WARC files (``warc``) is
hashed with fingerprint's pHash; the pairs within ``max_distance`` bits (candidates from the
keys of ``ImagesConfig.hamming_scheme``) are verified and clustered, and one representative
per cluster is kept (the largest pixel count, then the smallest path). Writes under DIR:
clusters/ (path, cluster_id, is_representative, distance), hashes/ (path, phash hex, width,
height, format, animated, go_reference, url, pipeline), rejects/ (path, reason), pairs/ when
asked, report.json, report.html and, last, _MANIFEST.json.
"""

from __future__ import annotations

import sys

from neardup_udfs.config import ImagesConfig
from neardup_udfs.runs.images import Summary, run
from neardup_udfs.submit import Job

__all__ = ["JOB", "Summary", "build_parser", "main", "run"]


def describe(c: ImagesConfig, s: Summary) -> str:
    return (
        f"{s.input} image(s): {s.kept} kept, {s.removed} removed as near-duplicates "
        f"in {s.clusters} cluster(s), {s.rejected} rejected -> {c.output}"
    )


JOB = Job(
    "images.py", "Cluster near-duplicate images.", ImagesConfig, "conf/images.toml", run, describe
)

build_parser, main = JOB.build_parser, JOB.main

if __name__ == "__main__":
    sys.exit(main())
