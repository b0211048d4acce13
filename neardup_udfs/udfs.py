"""pandas UDF factories: each wraps one kernel and holds no algorithm logic.

The UDFs that apply a pipeline to text (fingerprint, signature, exact key, shingle sets)
read text as ``normalize_udf`` gives it: the Spark stages normalize once, first
(``stages.normalize.prepare``), and every later stage reads the prepared text.

64-bit values cross into Spark as ``bigint``: the two's-complement view of the uint64
(``value & (2**64 - 1)`` gives it back). Nulls in give nulls out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import ArrayType, LongType, StringType

from neardup_udfs.kernels import lsh, phash, winnow
from neardup_udfs.kernels.utf8 import whole_characters
from neardup_udfs.presets import Pipeline

__all__ = [
    "utf8_lossy_udf",
    "whole_characters_udf",
    "band_keys_udf",
    "checked_fingerprint_udf",
    "exact_key_udf",
    "fingerprint_udf",
    "image_hash_udf",
    "normalize_udf",
    "prefix_keys_udf",
    "remove_ranges_udf",
    "signature_udf",
]


def _present(texts: pd.Series) -> npt.NDArray[np.bool_]:
    return np.asarray(texts.notna().to_numpy(), dtype=bool)


def scatter(values: Sequence[Any], present: npt.NDArray[np.bool_]) -> pd.Series:
    """An object Series of ``len(present)``: ``values`` in order where ``present``, None
    elsewhere.

    Notes:
        Never through a fixed-width string array: pandas' masked assignment of a list of
        strings (``series[mask] = strings``) builds one, of n times the longest string's
        width (2,000 texts beside one of 2 MB: 15 GiB).
    """
    out = np.full(len(present), None, dtype=object)
    column = np.empty(len(values), dtype=object)
    column[:] = values
    out[present] = column
    return pd.Series(out, dtype=object)


def _rows(matrix: npt.NDArray[np.uint64], present: npt.NDArray[np.bool_]) -> pd.Series:
    """One int64 array per row (None where the input was null)."""
    out: list[Any] = [None] * len(present)
    signed = matrix.view(np.int64)
    for i, j in enumerate(np.flatnonzero(present)):
        out[j] = signed[i]
    return pd.Series(out, dtype=object)


def fingerprint_udf(pipeline: Pipeline) -> Any:
    """Text (string or binary) -> the pipeline's 64-bit fingerprint as ``bigint``."""

    @pandas_udf(LongType())  # type: ignore[call-overload]
    def fingerprint(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for texts in batches:
            present = _present(texts)
            values = np.zeros(len(texts), dtype=np.uint64)
            if present.any():
                values[present] = pipeline.fingerprint_batch(
                    texts[present].tolist(), normalized=True
                )
            out = pd.Series(values.view(np.int64), index=texts.index, dtype="Int64")
            out[~present] = pd.NA
            yield out

    return fingerprint


def checked_fingerprint_udf(pipeline: Pipeline) -> Any:
    """Input (text or image bytes) -> ``struct<fingerprint: bigint, error: string>``.

    Notes:
        A row the preset cannot use (for ``phash``: not an image, truncated, over the pixel
        limit) gets a null fingerprint and the reason in ``error``; the batch goes on.
    """

    @pandas_udf("fingerprint bigint, error string")  # type: ignore[call-overload]
    def checked(batches: Iterator[pd.Series]) -> Iterator[pd.DataFrame]:
        for blobs in batches:
            present = _present(blobs)
            values = np.zeros(len(blobs), dtype=np.uint64)
            errors: list[str | None] = ["null input"] * len(blobs)
            if present.any():
                fps, problems = pipeline.fingerprint_batch_checked(
                    blobs[present].tolist(), normalized=True
                )
                values[present] = fps
                for i, problem in zip(np.flatnonzero(present), problems, strict=True):
                    errors[i] = problem
            out = pd.Series(values.view(np.int64), dtype="Int64")
            out[[e is not None for e in errors]] = pd.NA
            yield pd.DataFrame({"fingerprint": out, "error": pd.Series(errors, dtype=object)})

    return checked


def image_hash_udf(max_pixels: int) -> Any:
    """Encoded image bytes -> ``struct<phash: bigint, width: int, height: int, format:
    string, error: string>`` (fingerprint's pHash; on a bad row null values and the reason).

    Notes:
        One image is decoded at a time (``phash.phash_images``): a Python worker holds the
        batch's encoded bytes plus one decoded image of at most ``max_pixels``.
    """

    @pandas_udf(  # type: ignore[call-overload]
        "phash bigint, width int, height int, format string, error string"
    )
    def hashed(batches: Iterator[pd.Series]) -> Iterator[pd.DataFrame]:
        for blobs in batches:
            found = phash.phash_images(
                [None if b is None else b for b in blobs.tolist()], max_pixels
            )
            bad = np.array([e is not None for e in found.errors], dtype=bool)
            values = pd.Series(found.hashes.view(np.int64), dtype="Int64")
            widths = pd.Series(found.widths, dtype="Int32")
            heights = pd.Series(found.heights, dtype="Int32")
            values[bad] = pd.NA
            widths[bad] = pd.NA
            heights[bad] = pd.NA
            yield pd.DataFrame(
                {
                    "phash": values,
                    "width": widths,
                    "height": heights,
                    "format": pd.Series(found.formats, dtype=object),
                    "error": pd.Series(found.errors, dtype=object),
                }
            )

    return hashed


def signature_udf(pipeline: Pipeline) -> Any:
    """Text -> the pipeline's MinHash signature as ``array<bigint>`` (k slots)."""

    @pandas_udf(ArrayType(LongType()))  # type: ignore[call-overload]
    def signature(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for texts in batches:
            present = _present(texts)
            sigs = pipeline.signature_batch(texts[present].tolist(), normalized=True)
            yield _rows(sigs, present)

    return signature


def band_keys_udf(pipeline: Pipeline) -> Any:
    """Signature (``array<bigint>``) -> its LSH band keys as ``array<bigint>`` (bands)."""

    @pandas_udf(ArrayType(LongType()))  # type: ignore[call-overload]
    def band_keys(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for sigs in batches:
            present = _present(sigs)
            matrix = _signatures(sigs[present], pipeline.param("k"))
            yield _rows(pipeline.band_keys_batch(matrix), present)

    return band_keys


def prefix_keys_udf(bands: int, rows: int) -> Any:
    """Signature -> the keys of every band prefix (``lsh.prefix_keys_batch``) as
    ``array<bigint>`` of bands * rows, band-major: entry ``b * rows + d - 1`` is depth d of
    band b (depth ``rows`` = the band key)."""

    @pandas_udf(ArrayType(LongType()))  # type: ignore[call-overload]
    def prefix_keys(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for sigs in batches:
            present = _present(sigs)
            keys = lsh.prefix_keys_batch(_signatures(sigs[present], bands * rows), bands, rows)
            yield _rows(keys.reshape(len(keys), bands * rows), present)

    return prefix_keys


def _signatures(sigs: pd.Series, width: int) -> npt.NDArray[np.uint64]:
    """Arrow list values (int64 arrays of ``width``) as one uint64 matrix."""
    matrix = np.zeros((len(sigs), width), dtype=np.int64)
    for i, sig in enumerate(sigs):
        matrix[i] = sig
    return matrix.view(np.uint64)


def exact_key_udf(pipeline: Pipeline) -> Any:
    """Text -> a 128-bit hex key of its canonical form (equal keys = exact duplicates)."""

    @pandas_udf(StringType())  # type: ignore[call-overload]
    def exact_key(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for texts in batches:
            present = _present(texts)
            keys = pipeline.exact_keys(texts[present].tolist(), normalized=True)
            yield scatter(keys, present)

    return exact_key


def remove_ranges_udf() -> Any:
    """(text, ``array<struct<start, length>>`` or null) -> ``struct<text, removed_fraction>``.

    Notes:
        ``winnow.remove_ranges`` on the text's UTF-8 bytes (binary input is decoded as UTF-8
        with replacement afterwards); the fraction is of the input's bytes (0 for empty).
    """

    @pandas_udf("text string, removed_fraction double")  # type: ignore[call-overload]
    def remove(texts: pd.Series, ranges: pd.Series) -> pd.DataFrame:
        out_text: list[str] = []
        fraction = np.zeros(len(texts))
        for i, (text, spans) in enumerate(zip(texts, ranges, strict=True)):
            data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
            cuts = [] if spans is None else [(r["start"], r["length"]) for r in spans]
            kept, removed = winnow.remove_ranges(data, cuts)
            out_text.append(kept.decode("utf-8", "replace"))
            fraction[i] = removed / len(data) if data else 0.0
        return pd.DataFrame({"text": out_text, "removed_fraction": fraction})

    return remove


def normalize_udf(pipeline: Pipeline) -> Any:
    """Text (string or binary) -> the string ``pipeline`` shingles
    (``Pipeline.normalize_batch``); nulls stay null."""

    @pandas_udf(StringType())  # type: ignore[call-overload]
    def normalized(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for texts in batches:
            present = _present(texts)
            yield scatter(pipeline.normalize_batch(texts[present].tolist()), present)

    return normalized


def whole_characters_udf() -> Any:
    """(binary, start, length) -> string: the bytes ``[start, start + length)`` widened to
    whole UTF-8 characters (``kernels.utf8.whole_characters``), decoded (a byte that is not
    UTF-8 at all is U+FFFD; nulls stay null)."""

    @pandas_udf(StringType())  # type: ignore[call-overload]
    def cut(blobs: pd.Series, starts: pd.Series, lengths: pd.Series) -> pd.Series:
        out: list[str | None] = []
        for blob, start, length in zip(blobs, starts, lengths, strict=True):
            if blob is None:
                out.append(None)
                continue
            data = bytes(blob)
            lo, hi = whole_characters(data, int(start), int(start) + int(length))
            out.append(data[lo:hi].decode("utf-8", "replace"))
        return pd.Series(out, dtype=object)

    return cut


def utf8_lossy_udf() -> Any:
    """Binary -> string: UTF-8 decoded with ``errors="replace"`` (one U+FFFD per maximal
    invalid subsequence, not per byte; nulls stay null)."""

    @pandas_udf(StringType())  # type: ignore[call-overload]
    def lossy(blobs: pd.Series) -> pd.Series:
        return pd.Series(
            [None if b is None else bytes(b).decode("utf-8", "replace") for b in blobs],
            dtype=object,
        )

    return lossy
