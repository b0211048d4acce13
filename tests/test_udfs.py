"""The pandas UDF factories (udfs): a checked UDF keeps going past inputs it cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest

from neardup_udfs.presets import resolve

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[1]


def _signed(fp: int) -> int:
    return fp - 2**64 if fp >= 2**63 else fp


def test_checked_udf_keeps_going_past_bad_images(spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from neardup_udfs.udfs import checked_fingerprint_udf

    golden = ROOT / "tests" / "golden" / "phash-images"
    rows = [
        ("circle", bytearray((golden / "circle_128.png").read_bytes())),
        ("junk", bytearray(b"definitely not an image")),
        ("cut", bytearray((golden / "noise_48.png").read_bytes()[:60])),
        ("none", None),
    ]
    df = spark.createDataFrame(rows, "doc_id string, content binary")
    udf = checked_fingerprint_udf(resolve("phash"))
    got = {
        r.doc_id: r
        for r in df.select("doc_id", udf(F.col("content")).alias("h"))
        .select("doc_id", "h.*")
        .collect()
    }
    assert got["circle"].fingerprint == _signed(0xA18CAD6C2D93D25C) and got["circle"].error is None
    assert got["junk"].fingerprint is None and "unsupported image format" in got["junk"].error
    assert got["cut"].fingerprint is None and got["cut"].error
    assert got["none"].fingerprint is None and got["none"].error == "null input"
