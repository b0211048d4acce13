"""pandas UDF factories: each wraps one kernel and holds no algorithm logic.

The UDFs that apply a pipeline to text (fingerprint, signature, exact key, shingle sets)
read text as ``normalize_udf`` gives it: the Spark stages normalize once, first
(``stages.normalize.prepare``), and every later stage reads the prepared text.

64-bit values cross into Spark as ``bigint``: the two's-complement view of the uint64
(``value & (2**64 - 1)`` gives it back). Nulls in give nulls out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import ArrayType, LongType, StringType

from neardup_udfs.kernels import lsh, phash, winnow
from neardup_udfs.kernels.band_pairs import (
    HOT,
    HUB,
    NOT_HOT,
    first_band_pairs,
    first_table_pairs,
)
from neardup_udfs.kernels.utf8 import whole_characters
from neardup_udfs.kernels.words_jit import indexed_sets_jaccard, shingle_sets_batch
from neardup_udfs.presets import NO_TOKENS_KEY, Pipeline
from neardup_udfs.schemas import (
    BAND_KEYS,
    DOC_ID,
    EMPTY_TEXT,
    EXACT_KEY,
    FINGERPRINT,
    LENGTH,
    SIGNATURE,
    TEXT,
)

__all__ = [
    "utf8_lossy_udf",
    "whole_characters_udf",
    "grouped_jaccard_fn",
    "band_keys_udf",
    "first_band_pairs_fn",
    "first_table_pairs_fn",
    "checked_fingerprint_udf",
    "document_features_fn",
    "exact_key_udf",
    "fingerprint_udf",
    "image_hash_udf",
    "normalize_udf",
    "prefix_keys_udf",
    "remove_ranges_udf",
    "winnow_fingerprints_fn",
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


def document_features_fn(
    pipeline: Pipeline, sets_sink: Callable[[Any, Any], None] | None = None
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: batches of ``doc_id, text`` (text never null) -> ``doc_id,
    exact_key, empty_text, length`` and the sketch (``fingerprint`` bigint, or
    ``signature`` and its ``band_keys``, array<bigint>), one row per input row, in one pass
    over each text.

    Notes:
        ``empty_text``: normalization (when the pipeline has one) left no text; such a row's
        ``exact_key`` is null. ``exact_key`` is ``Pipeline.exact_keys`` of the normalized
        text, except that a text whose canonical form is empty (no token) gets the first 32
        hex digits of the SHA-256 of its normalized UTF-8 bytes instead (the key of
        ``stages.exact.exact_keys``). ``length``: the input text's UTF-8 bytes. The
        normalized text itself never leaves the function. ``sets_sink`` (MinHash only):
        called once a batch with ``kernels.words_jit.shingle_sets_batch`` of the batch's
        normalized texts (the sets the exact checks compare), in order.
    """
    import hashlib

    import pyarrow as pa

    simhash = pipeline.kind == "simhash"
    active = pipeline.normalization.active
    names = [DOC_ID, EXACT_KEY, EMPTY_TEXT, LENGTH, FINGERPRINT if simhash else SIGNATURE]
    names += [] if simhash else [BAND_KEYS]

    def features(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            raw = batch.column(TEXT)
            texts = raw.to_pylist()
            prepared = pipeline.normalize_batch(texts) if active else texts
            if sets_sink is not None and not simhash:  # keys, sets and signatures at once
                signatures, hashes, offsets, made = pipeline.signature_and_sets_batch(
                    prepared, normalized=True
                )
                sets_sink(hashes, offsets)
            else:
                made = pipeline.exact_keys(prepared, normalized=True)
            keys: list[str | None] = list(made)
            empty = np.zeros(len(texts), dtype=bool)
            for i, key in enumerate(keys):
                text = prepared[i]
                if active and len(text) == 0:
                    empty[i], keys[i] = True, None
                elif key == NO_TOKENS_KEY:
                    own = text.encode("utf-8") if isinstance(text, str) else text
                    keys[i] = hashlib.sha256(own).hexdigest()[:32]
            length = pa.compute.binary_length(raw.cast(pa.binary())).cast(pa.int64())
            columns = [batch.column(DOC_ID), pa.array(keys, pa.string()), pa.array(empty), length]
            if simhash:
                values = pipeline.fingerprint_batch(prepared, normalized=True)
                columns.append(pa.array(values.view(np.int64)))
            else:
                if sets_sink is None:
                    signatures = pipeline.signature_batch(prepared, normalized=True)
                keys_of = pipeline.band_keys_batch(signatures)
                columns += [_list_rows(signatures), _list_rows(keys_of)]
            yield pa.RecordBatch.from_arrays(columns, names=names)

    return features


def _list_rows(matrix: npt.NDArray[np.uint64]) -> Any:
    """A (rows, width) uint64 matrix as an Arrow list<int64> array, one list per row."""
    import pyarrow as pa

    offsets = np.arange(len(matrix) + 1, dtype=np.int32) * matrix.shape[1]
    return pa.ListArray.from_arrays(offsets, pa.array(matrix.view(np.int64).ravel()))


def winnow_fingerprints_fn(
    k: int, w: int
) -> Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """For ``mapInPandas``: batches of ``doc_id, text`` -> ``doc_id, j, pos, hash`` rows.

    Notes:
        One row per winnowing fingerprint (``winnow.text(text, k, w)``): ``j`` numbers a
        document's fingerprints from 0 in position order, ``pos`` is the byte offset,
        ``hash`` the XXH64 as ``bigint``. A text too short for a fingerprint gives no rows.
    """

    def fingerprints(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for df in batches:
            fp = winnow.text_batch(df[TEXT].tolist(), k, w)
            starts = np.searchsorted(fp.doc, np.arange(len(df)), side="left")
            yield pd.DataFrame(
                {
                    DOC_ID: df[DOC_ID].to_numpy()[fp.doc],
                    "j": (np.arange(len(fp.doc)) - starts[fp.doc]).astype(np.int32),
                    "pos": fp.pos,
                    "hash": fp.hash.view(np.int64),
                }
            )

    return fingerprints


def first_band_pairs_fn(bands: int, rows: int) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: batches of buckets -> ``a, b, band, key, chunk, equal`` rows
    (``kernels.band_pairs.first_band_pairs``; ``key`` and ``chunk`` name the bucket that
    produced the pair).

    Notes:
        A bucket row is ``band`` (int), ``key`` (bigint), ``chunk`` (int), ``star`` (bool:
        hot, hub pairs only) and ``members``,
        a list of ``doc_id`` (string), ``signature`` (array<bigint> of bands * rows) and
        ``hot`` (the document's hot buckets: list of ``band``, ``hub``; null for none).
        ``a < b`` as Spark orders strings (UTF-8 bytes, i.e. code points).
    """
    width = bands * rows

    def scored(sketch: Any, buckets: tuple[Any, ...], n: int) -> tuple[Any, ...]:
        flat = sketch.flatten().to_numpy(zero_copy_only=False)
        if len(flat) != n * width:
            raise ValueError(f"signatures must have {width} slots")
        band, star, offsets, member, roles = buckets
        return first_band_pairs(band, star, offsets, member, flat.reshape(n, width), roles, rows)

    return _first_pairs_fn(bands, "equal", scored)


def first_table_pairs_fn(scheme: Any) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: Hamming buckets -> ``a, b, band, key, chunk, distance`` rows
    (``kernels.band_pairs.first_table_pairs`` under ``scheme``, a ``kernels.hamming_tables``
    scheme; ``band`` is the table). A bucket row is as :func:`first_band_pairs_fn` reads
    it, with each member's ``fingerprint`` (bigint) in place of its signature."""

    def scored(sketch: Any, buckets: tuple[Any, ...], n: int) -> tuple[Any, ...]:
        fps = sketch.to_numpy(zero_copy_only=False).astype(np.int64)
        band, star, offsets, member, roles = buckets
        return first_table_pairs(band, star, offsets, member, fps, roles, scheme)

    return _first_pairs_fn(len(scheme.parts), "distance", scored)


def _first_pairs_fn(
    bands: int, score: str, scored: Callable[[Any, tuple[Any, ...], int], tuple[Any, ...]]
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The Arrow side both first-pair adapters share: a batch of buckets decoded into the
    kernel's arrays, ``scored(sketch column, (band, star, offsets, member, roles), members)``
    called, its ``a, b, band, score, bucket`` written as named rows."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("a", pa.string()),
            ("b", pa.string()),
            ("band", pa.int32()),
            ("key", pa.int64()),
            ("chunk", pa.int32()),
            (score, pa.int32()),
        ]
    )

    def pairs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            members = batch.column("members")
            lengths = members.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
            doc, sketch, hot = members.flatten().flatten()
            ids = doc.to_numpy(zero_copy_only=False)
            names, number = np.unique(ids, return_inverse=True)
            roles = np.full((len(ids), bands), NOT_HOT, dtype=np.int8)
            per_doc = hot.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
            hot_band, hub = hot.flatten().flatten()
            owner = np.repeat(np.arange(len(ids)), per_doc)
            is_hub = hub.to_numpy(zero_copy_only=False).astype(bool)
            roles[owner, hot_band.to_numpy(zero_copy_only=False)] = np.where(is_hub, HUB, HOT)
            buckets = (
                batch.column("band").to_numpy(zero_copy_only=False),
                batch.column("star").to_numpy(zero_copy_only=False),
                np.concatenate([[0], np.cumsum(lengths)]),
                number.astype(np.int64),
                roles,
            )
            a, b, band, value, bucket = scored(sketch, buckets, len(ids))
            key = batch.column("key").to_numpy(zero_copy_only=False)[bucket]
            chunk = batch.column("chunk").to_numpy(zero_copy_only=False)[bucket]
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(names[a], pa.string()),
                    pa.array(names[b], pa.string()),
                    band,
                    key,
                    chunk.astype(np.int32),
                    value,
                ],
                schema=schema,
            )

    return pairs


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


def grouped_jaccard_fn(
    pipeline: Pipeline, carry: Sequence[str], *, prepared: bool = True
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: batches of groups -> one ``a, b, *carry, similarity`` row per pair
    of a group, ``similarity`` = the exact Jaccard of the two texts' word-shingle sets
    (``words_jit.indexed_sets_jaccard``; two texts without a shingle: 0).

    Notes:
        A group row is the ``carry`` columns, ``members`` (list of ``doc_id``, ``text``) and
        ``pairs`` (list of ``a``, ``b``: ids among the group's members). Each member text is
        shingled once per group, so a text crosses the shuffle once per group it is in,
        never once per pair. ValueError names a pair's document that is not a member.
        ``prepared``: the texts are ``Pipeline.normalize_batch``'s output; else they are
        the input texts, normalized here (once per group) with the pipeline's normalization.
    """
    import pyarrow as pa

    w = pipeline.param("w")
    normalize = not prepared and pipeline.normalization.active

    def scored(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            members, pairs = batch.column("members"), batch.column("pairs")
            sizes = members.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
            counts = pairs.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
            doc, text = members.flatten().flatten()
            a, b = pairs.flatten().flatten()
            ids = [x.to_numpy(zero_copy_only=False) for x in (doc, a, b)]
            names, codes = np.unique(np.concatenate(ids), return_inverse=True)
            # a (group, document) key per member row and per pair end
            groups = np.arange(len(sizes), dtype=np.int64)
            pair_group = np.repeat(groups, counts)
            width = np.int64(len(names) + 1)
            member_key = np.repeat(groups, sizes) * width + codes[: len(ids[0])]
            order = np.argsort(member_key, kind="stable")
            ends = np.split(codes[len(ids[0]) :], 2)
            rows = [_member_rows(member_key, order, pair_group * width + e, names, e) for e in ends]
            texts = text.to_pylist()
            hashes, offsets = shingle_sets_batch(
                pipeline.normalize_batch(texts) if normalize else texts, w
            )
            similarity = indexed_sets_jaccard(hashes, offsets, rows[0], rows[1])
            carried = [batch.column(c).take(pa.array(pair_group)) for c in carry]
            yield pa.RecordBatch.from_arrays(
                [a, b, *carried, pa.array(similarity)], names=["a", "b", *carry, "similarity"]
            )

    return scored


def shingle_sets_fn(pipeline: Pipeline) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: batches of ``doc_id, text`` (the input texts) -> ``doc_id,
    shingles, hashes``: each text's word-shingle set as the pipeline normalizes and shingles
    it (``words_jit.shingle_sets_batch``), its size, and its hashes ascending as unsigned
    values, stored as bigint (the two's-complement view)."""
    import pyarrow as pa

    w = pipeline.param("w")
    normalize = pipeline.normalization.active

    def sets(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            texts = batch.column(1).to_pylist()
            hashes, offsets = shingle_sets_batch(
                pipeline.normalize_batch(texts) if normalize else texts, w
            )
            values = pa.array(hashes.view(np.int64), pa.int64())
            listed = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)
            sizes = pa.array(np.diff(offsets).astype(np.int32), pa.int32())
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), sizes, listed], names=["doc_id", "shingles", "hashes"]
            )

    return sets


def _member_rows(
    member_key: npt.NDArray[np.int64],
    order: npt.NDArray[np.int64],
    key: npt.NDArray[np.int64],
    names: npt.NDArray[Any],
    code: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """The member row of each ``key`` (``member_key[order]`` ascending); ValueError naming
    the first document with no row."""
    if not len(key):
        return np.empty(0, dtype=np.int64)
    at = np.searchsorted(member_key, key, sorter=order)
    found = order[np.minimum(at, max(len(order) - 1, 0))] if len(order) else at
    bad = np.flatnonzero((at >= len(order)) | (member_key[found] != key)) if len(order) else [0]
    if len(bad):
        raise ValueError(f"pair document {names[code[bad[0]]]!r} is not a member of its group")
    return found.astype(np.int64)


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
