"""spark-submit entry point: near-duplicate images (resized, re-encoded, cropped, marked).

    spark-submit --properties-file conf/spark-local.conf jobs/images.py \\
        --config conf/images.toml --input DIR_OR_GLOB --output DIR [overrides]

Parses the arguments and calls ``neardup_udfs.runs.images.run``: every file under --input
(``files``, Spark's binaryFile source) or the image records of WARC files (``warc``) is
hashed with fingerprint's pHash; the pairs within ``k`` bits (found through the k+1 block
keys: no false negatives) are verified and clustered, and one representative per cluster
is kept (the largest pixel count, then the smallest path). Writes under DIR: clusters/
(path, cluster_id, is_representative, distance), hashes/ (path, phash hex, width, height,
format, animated, go_reference, url, pipeline), rejects/ (path, reason), pairs/ when asked,
report.json, report.html and, last, _MANIFEST.json.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from neardup_udfs.config import CLUSTERINGS, comma_list, load_images_config
from neardup_udfs.runs.images import Summary, run
from neardup_udfs.runtime import job_main

__all__ = ["Summary", "build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="images.py", description="Cluster near-duplicate images.")
    p.add_argument("--config", help="TOML file (conf/images.toml); flags override it")
    p.add_argument("--input", help="input path (file, directory or glob)")
    p.add_argument(
        "--output", help="output directory (any filesystem Spark writes: a path or a URI)"
    )
    p.add_argument("--input-format", dest="input_format", choices=("files", "warc"))
    p.add_argument("-k", type=int, help="max Hamming distance (default 10)")
    p.add_argument(
        "--hamming-blocks",
        dest="hamming_blocks",
        type=int,
        help="candidate keys: guaranteed multi-table keys on this many blocks (k+1: ditto's)",
    )
    p.add_argument(
        "--hamming-key-bits",
        dest="hamming_key_bits",
        type=int,
        help="candidate keys: 20 tables of this many sampled bits (default at k=10: 12)",
    )
    p.add_argument("--max-pixels", dest="max_pixels", type=int)
    p.add_argument("--max-bytes", dest="max_bytes", type=int)
    p.add_argument("--batch-images", dest="batch_images", type=int)
    p.add_argument("--representative", choices=("pixels", "min_id"))
    p.add_argument("--hot-bucket-size", dest="hot_bucket_size", type=int)
    p.add_argument("--clustering", choices=CLUSTERINGS)
    p.add_argument("--max-rounds", dest="max_rounds", type=int)
    p.add_argument("--max-driver-edges", dest="max_driver_edges", type=int)
    p.add_argument(
        "--warc-content-types",
        type=comma_list,
        help="warc: media types read as images (comma-separated)",
    )
    p.add_argument("--outputs", type=comma_list, help="comma-separated")
    p.add_argument("--checkpoint-dir", dest="checkpoint_dir", help="reliable lineage cuts here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    return job_main(
        argv,
        prog="images.py",
        parser=build_parser(),
        load=load_images_config,
        run=run,
        describe=lambda c, s: (
            f"{s.input} image(s): {s.kept} kept, {s.removed} removed as near-duplicates "
            f"in {s.clusters} cluster(s), {s.rejected} rejected -> {c.output}"
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
