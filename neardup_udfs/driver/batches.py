"""The core's Arrow batch functions: each takes an iterator of record batches (or pandas
frames) and yields batches, with no Spark. The Spark stages run them per partition
(``mapInArrow``, ``mapInPandas``), the local engine per block of its own read; either way
the rows are the same.

64-bit values leave as int64 (bigint): the two's-complement view of the uint64
(``value & (2**64 - 1)`` gives it back).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.driver.containment import ClusterRows, promote
from neardup_udfs.driver.settings import rule_order
from neardup_udfs.kernels import winnow
from neardup_udfs.kernels.band_pairs import (
    HOT,
    HUB,
    NOT_HOT,
    first_band_pairs,
    first_table_pairs,
)
from neardup_udfs.kernels.words_jit import indexed_sets_jaccard, shingle_sets_batch
from neardup_udfs.presets import NO_TOKENS_KEY, Pipeline
from neardup_udfs.schemas import (
    BAND_KEYS,
    CLUSTER_ID,
    DOC_ID,
    EMPTY_TEXT,
    EXACT_KEY,
    FINGERPRINT,
    IS_REPRESENTATIVE,
    LEADER,
    LENGTH,
    RELATION,
    SIGNATURE,
    SIMILARITY,
    TEXT,
    A,
    B,
)

__all__ = [
    "document_features_fn",
    "first_band_pairs_fn",
    "first_table_pairs_fn",
    "group_starts",
    "promoted_clusters_fn",
    "shingle_sets_fn",
    "sorted_jaccard_fn",
    "winnow_fingerprints_fn",
]


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


def sorted_jaccard_fn(
    pipeline: Pipeline, group: Sequence[str], carry: Sequence[str], *, prepared: bool = True
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow`` over partitions that each hold whole groups, their rows sorted by
    the ``group`` columns: one ``a, b, *carry, similarity`` row per pair of a group,
    ``similarity`` = the exact Jaccard of the two texts' word-shingle sets
    (``words_jit.indexed_sets_jaccard``; two texts without a shingle: 0).

    Notes:
        A row is a member of its group (``doc_id`` and ``text``; ``b`` null) or a pair of
        it (``doc_id`` is the pair's ``a``, then ``b``; ``text`` null), with the ``group``
        and ``carry`` columns. A group is checked once all its rows have come, so no group
        is held longer than it takes to read it; each member text is shingled once per
        group, so a text crosses the shuffle once per group it is in, never once per pair.
        ValueError names a pair's document that is not a member of its group.
        ``prepared``: the texts are ``Pipeline.normalize_batch``'s output; else they are
        the input texts, normalized here with the pipeline's normalization.
    """
    w = pipeline.param("w")
    normalize = not prepared and pipeline.normalization.active

    def checked(rows: pa.Table) -> pa.RecordBatch:
        gid = np.cumsum(group_starts([rows.column(c) for c in group])) - 1
        is_pair = rows.column(B).is_valid().to_numpy(zero_copy_only=False)
        member, pair = np.flatnonzero(~is_pair), np.flatnonzero(is_pair)
        ids = rows.column(DOC_ID).to_numpy(zero_copy_only=False)
        a, b = ids[pair], rows.column(B).to_numpy(zero_copy_only=False)[pair]
        names, codes = np.unique(np.concatenate([ids[member], a, b]), return_inverse=True)
        width = np.int64(len(names) + 1)  # a (group, document) key per member and pair end
        member_key = gid[member] * width + codes[: len(member)]
        order = np.argsort(member_key, kind="stable")
        ends = np.split(codes[len(member) :], 2)
        at = [_member_rows(member_key, order, gid[pair] * width + e, names, e) for e in ends]
        texts = rows.column(TEXT).take(pa.array(member)).to_pylist()
        hashes, offsets = shingle_sets_batch(
            pipeline.normalize_batch(texts) if normalize else texts, w
        )
        similarity = indexed_sets_jaccard(hashes, offsets, at[0], at[1])
        carried = [rows.column(c).take(pa.array(pair)).combine_chunks() for c in carry]
        return pa.RecordBatch.from_arrays(
            [pa.array(a, pa.string()), pa.array(b, pa.string()), *carried, pa.array(similarity)],
            names=[A, B, *carry, SIMILARITY],
        )

    def scored(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        held, last = None, None  # the rows of the group read last, and its key
        for batch in batches:
            if not batch.num_rows:
                continue
            starts = np.flatnonzero(group_starts([batch.column(c) for c in group], last))
            rows = pa.Table.from_batches([batch])
            if held is not None:
                rows = pa.concat_tables([held, rows])
            cut = rows.num_rows - batch.num_rows + (starts[-1] if len(starts) else 0)
            if len(starts) and cut:  # the groups before the last one are whole
                yield checked(rows.slice(0, cut))
            held = rows.slice(cut) if len(starts) else rows
            last = tuple(batch.column(c)[batch.num_rows - 1].as_py() for c in group)
        if held is not None:
            yield checked(held)

    return scored


def group_starts(
    columns: Sequence[pa.Array | pa.ChunkedArray], before: tuple[Any, ...] | None = None
) -> npt.NDArray[np.bool_]:
    """Whether each row starts a group of rows sorted by ``columns``: its values differ from
    the row before's, a null equal only to a null (the first row's from ``before``, the
    values of the row before these; None: the first row starts one)."""
    n = len(columns[0])
    starts = np.zeros(n, dtype=bool)
    for c in columns:
        later, earlier = c[1:], c[:-1]
        nulls = pc.or_(later.is_null(), earlier.is_null())
        same_null = pc.and_(later.is_null(), earlier.is_null())
        differs = pc.if_else(nulls, pc.invert(same_null), pc.not_equal(later, earlier))
        starts[1:] |= differs.to_numpy(zero_copy_only=False).astype(bool)
    if n:
        starts[0] = before is None or tuple(c[0].as_py() for c in columns) != before
    return starts


def shingle_sets_fn(pipeline: Pipeline) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: batches of ``doc_id, text`` (the input texts) -> ``doc_id,
    shingles, hashes``: each text's word-shingle set as the pipeline normalizes and shingles
    it (``words_jit.shingle_sets_batch``), its size, and its hashes ascending as unsigned
    values, stored as bigint (the two's-complement view)."""
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


def promoted_clusters_fn(
    pipeline: Pipeline, rule: str, threshold: float, min_shingles: int
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """For ``mapInArrow``: batches of whole clusters -> one ``doc_id, cluster_id,
    is_representative, similarity, relation`` row per member, as containment's promotion
    (``driver.containment.promote``, the rule both engines run) decides it.

    Notes:
        A group row is ``cluster_id`` and ``members`` (list of ``doc_id``, ``leader``,
        ``is_representative``, ``similarity``, ``__length``, ``__order``, ``text``: every
        document of the cluster, its kept one included, with its input text, normalized here
        as the pipeline does). ``relation`` is ``containment`` exactly for the rows a
        promotion removed next to the member kept instead (each one a containment pair:
        ``doc_id`` in ``cluster_id``, ``similarity`` its containment), null for kept rows,
        ``jaccard`` otherwise.
    """

    def promoted(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            yield _promoted_batch(batch, pipeline, rule, threshold, min_shingles)

    return promoted


def _promoted_batch(
    batch: pa.RecordBatch, pipeline: Pipeline, rule: str, threshold: float, min_shingles: int
) -> pa.RecordBatch:
    """:func:`promoted_clusters_fn`'s rows of one batch of clusters."""
    members = batch.column("members")
    sizes = members.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
    rows = members.flatten()
    ids = rows.field(DOC_ID).to_numpy(zero_copy_only=False)
    is_rep = rows.field(IS_REPRESENTATIVE).to_numpy(zero_copy_only=False).astype(bool)
    cluster_of = np.repeat(batch.column(CLUSTER_ID).to_numpy(zero_copy_only=False), sizes)
    score = rows.field(SIMILARITY).to_numpy(zero_copy_only=False).astype(np.float64)
    place = rule_order(ids, rows.field("__length"), rows.field("__order"), rule)
    texts = rows.field(TEXT).to_pylist()
    normalize = pipeline.normalization.active
    hashes, offsets = shingle_sets_batch(
        pipeline.normalize_batch(texts) if normalize else texts, pipeline.param("w")
    )
    done = promote(
        ClusterRows.from_jaccard(is_rep, cluster_of, score),
        ids,
        rows.field(LEADER).to_numpy(zero_copy_only=False),
        np.zeros(len(ids), dtype=bool),  # an empty text has no shingles: never a candidate
        place,
        lambda wanted: (hashes, offsets, wanted),  # every row's set, row i at slot i
        threshold,
        min_shingles,
    )
    return pa.RecordBatch.from_arrays(
        [
            rows.field(DOC_ID),
            pa.array(done.cluster_of, pa.string()),
            pa.array(done.is_rep),
            pa.array(done.score, pa.float64()),
            pa.array(done.relation, pa.string()),
        ],
        names=[DOC_ID, CLUSTER_ID, IS_REPRESENTATIVE, SIMILARITY, RELATION],
    )


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
