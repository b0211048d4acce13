"""Column functions for neardup's fingerprints, usable in any ``select``, on a classic or a
Spark Connect session::

    from neardup_udfs import functions as nf
    df.select("id", nf.minhash("text").alias("sig"), nf.simhash("text").alias("fp"))

Each wraps the kernel the jobs use, with the same presets and options
(:func:`neardup_udfs.resolve`): the values are bit for bit the reference libraries' (the
golden vectors hold them). 64-bit values are ``bigint``, the two's-complement view of the
unsigned value (``value & (2**64 - 1)`` gives it back). Nulls in give nulls out.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from neardup_udfs.kernels.phash import DEFAULT_MAX_PIXELS
from neardup_udfs.presets import Pipeline, resolve
from neardup_udfs.udfs import (
    band_keys_udf,
    exact_key_udf,
    fingerprint_udf,
    image_hash_udf,
    normalize_udf,
    signature_udf,
)

__all__ = ["band_keys", "exact_key", "minhash", "normalize", "phash", "simhash"]

ColumnOrName = Column | str


def _pipeline(preset: str, kind: str, normalize: str, options: dict[str, Any]) -> Pipeline:
    pipeline = resolve(preset, normalize=normalize, **options)
    if pipeline.kind != kind or pipeline.preset.input != "text":
        raise ValueError(f"preset {preset!r} is not a {kind} preset of text")
    return pipeline


def _prepared(col: ColumnOrName, pipeline: Pipeline) -> Column:
    """``col`` as the pipeline's kernels read it: normalized first when it normalizes."""
    column = F.col(col) if isinstance(col, str) else col
    return normalize_udf(pipeline)(column) if pipeline.normalization.active else column


def simhash(
    col: ColumnOrName, preset: str = "ditto/2", *, normalize: str = "none", **options: Any
) -> Column:
    """A text column's 64-bit SimHash under a SimHash preset (``ditto/2``, ``fingerprint``,
    ``anchor``, ``semblance-simhash``) as ``bigint``; equal to
    ``neardup_udfs.fingerprint(text, preset, normalize=..., **options)`` row by row.
    ``normalize``: ``none`` or ``web`` (the dedup job's default). Unknown presets or options
    raise ``PresetError`` (a ValueError) when the column is made."""
    pipeline = _pipeline(preset, "simhash", normalize, options)
    return fingerprint_udf(pipeline)(_prepared(col, pipeline))


def minhash(
    col: ColumnOrName, preset: str = "semblance", *, normalize: str = "none", **options: Any
) -> Column:
    """A text column's MinHash signature under a MinHash preset as ``array<bigint>`` of
    ``k`` slots; equal to ``neardup_udfs.signature(text, preset, **options)`` row by row
    (a text shorter than one shingle: every slot ``-1``, the all-ones value)."""
    pipeline = _pipeline(preset, "minhash", normalize, options)
    return signature_udf(pipeline)(_prepared(col, pipeline))


def band_keys(signature: ColumnOrName, preset: str = "semblance", **options: Any) -> Column:
    """The LSH band keys (``array<bigint>``, one per band) of a :func:`minhash` column made
    with the same preset and options: two rows share a key exactly when their signatures
    agree on that band."""
    pipeline = _pipeline(preset, "minhash", "none", options)
    column = F.col(signature) if isinstance(signature, str) else signature
    return band_keys_udf(pipeline)(column)


def exact_key(
    col: ColumnOrName, preset: str = "semblance", *, normalize: str = "none", **options: Any
) -> Column:
    """The key the dedup job groups exact duplicates by (``string``): equal for two texts
    exactly when the preset's tokenizer sees the same token sequence in both."""
    pipeline = resolve(preset, normalize=normalize, **options)
    return exact_key_udf(pipeline)(_prepared(col, pipeline))


def normalize(col: ColumnOrName, how: str = "web") -> Column:
    """A text column as the dedup job shingles it under ``normalize = how`` (``web``: the
    visible text of HTML, whitespace collapsed, CJK characters as tokens)."""
    pipeline = resolve("semblance", normalize=how)
    column = F.col(col) if isinstance(col, str) else col
    return normalize_udf(pipeline)(column) if pipeline.normalization.active else column


def phash(col: ColumnOrName, max_pixels: int = DEFAULT_MAX_PIXELS) -> Column:
    """An encoded image column's (``binary``) 64-bit perceptual hash, fingerprint's pHash,
    as ``bigint``; null for bytes that are not an image Pillow decodes, or one of more than
    ``max_pixels`` pixels."""
    column = F.col(col) if isinstance(col, str) else col
    return image_hash_udf(max_pixels)(column)["phash"]
