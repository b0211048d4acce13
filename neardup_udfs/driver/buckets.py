"""The bucket rule of the candidate pass, stated once for both shells: the documents that share
a band (or table) key form a bucket, in id order, the first its hub; a bucket of more than the
hot-bucket size is hot and is settled in chunks of that many members, each chunk after the
first with the hub added, so no group the kernels read is larger and every member meets the
hub (``kernels.band_pairs``: a hot bucket contributes its star).

The one-process core cuts its buckets with :class:`Buckets`; the Spark stage
(``stages.candidates.scored_candidates``) runs :func:`placed_fn` over its grouped buckets.
Both take the chunks from :func:`chunks`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.schemas import BAND, CHUNK, DOC_ID, KEY

__all__ = ["PLACED", "Buckets", "chunks", "placed_fn"]

I64 = npt.NDArray[np.int64]


def chunks(size: I64, limit: int) -> tuple[I64, I64, I64]:
    """The groups of buckets of ``size`` members each (buckets one after another, each in
    its member order): ``(chunk, hub_bucket, hub_chunk)``, the chunk of every member row (0,
    or in a hot bucket, one of more than ``limit`` members, its place // ``limit``) and the
    hub rows added, one per chunk after the first of each hot bucket (its bucket and chunk,
    buckets in order, chunks ascending)."""
    size = np.asarray(size, dtype=np.int64)
    of_row = np.repeat(np.arange(len(size)), size)
    pos = np.arange(len(of_row), dtype=np.int64) - (np.cumsum(size) - size)[of_row]
    hot = size > limit
    chunk = np.where(hot[of_row], pos // limit, 0).astype(np.int64)
    hot_b = np.flatnonzero(hot)
    extra = (size[hot_b] - 1) // limit  # chunks after the first
    hub_bucket = np.repeat(hot_b, extra).astype(np.int64)
    first = np.repeat(np.cumsum(extra) - extra, extra)
    hub_chunk = np.arange(len(hub_bucket), dtype=np.int64) - first + 1
    return chunk, hub_bucket, hub_chunk


@dataclass
class Buckets:
    """The buckets of one band: documents sorted by key, then by number (the smallest
    first: a hot bucket's hub)."""

    doc: I64  # the documents in bucket order
    key: I64  # their keys
    starts: I64  # each bucket's first row
    size: I64  # each bucket's members
    of_row: I64  # each row's bucket
    pos: I64  # each row's place in its bucket

    @staticmethod
    def of(keys: I64) -> Buckets:
        doc = np.argsort(keys, kind="stable").astype(np.int64)
        key = keys[doc]
        starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
        size = np.diff(np.append(starts, len(doc)))
        of_row = np.repeat(np.arange(len(starts)), size)
        pos = np.arange(len(doc)) - starts[of_row]
        return Buckets(doc, key, starts, size, of_row, pos)

    def groups(self, limit: int) -> tuple[I64, I64, I64, I64, npt.NDArray[np.bool_]]:
        """The kernels' groups (:func:`chunks`) of every bucket of 2+ members: member rows,
        group offsets, and each group's key, chunk and hotness, in key then chunk order."""
        hot = self.size > limit
        chunk, hub_b, hub_chunk = chunks(self.size, limit)
        shared = (self.size > 1)[self.of_row]
        rows_b, rows_chunk, rows_doc = self.of_row[shared], chunk[shared], self.doc[shared]
        if len(hub_b):
            rows_b = np.concatenate([rows_b, hub_b])
            rows_chunk = np.concatenate([rows_chunk, hub_chunk])
            rows_doc = np.concatenate([rows_doc, self.doc[self.starts[hub_b]]])
            grouped = np.lexsort((rows_doc, rows_chunk, rows_b))
            rows_b, rows_chunk, rows_doc = rows_b[grouped], rows_chunk[grouped], rows_doc[grouped]
        first = np.concatenate(
            [[True], (rows_b[1:] != rows_b[:-1]) | (rows_chunk[1:] != rows_chunk[:-1])]
        )
        g_start = np.flatnonzero(first) if len(rows_b) else np.empty(0, np.int64)
        offsets = np.append(g_start, len(rows_b)).astype(np.int64)
        g_bucket = rows_b[g_start]
        return (
            rows_doc,
            offsets,
            self.key[self.starts[g_bucket]],
            rows_chunk[g_start],
            hot[g_bucket],
        )


PLACED = f"{BAND} int, {KEY} bigint, star boolean, {CHUNK} int, {DOC_ID} string"
"""The rows of :func:`placed_fn`, as a Spark schema."""

Batches = Iterator[pa.RecordBatch]


def placed_fn(limit: int) -> Callable[[Batches], Batches]:
    """A batch function (``mapInArrow``) over buckets, ``band, key, ids`` (the members in
    id order) and ``size``: a row per member and group (:data:`PLACED`), the member rows
    with their :func:`chunks` and each hot bucket's hub again in every chunk after its
    first; ``star`` tells a hot bucket's rows."""

    def place(batches: Batches) -> Batches:
        for batch in batches:
            size = batch.column("size").to_numpy(zero_copy_only=False).astype(np.int64)
            members = pc.list_flatten(batch.column("ids"))
            chunk, hub_b, hub_chunk = chunks(size, limit)
            of_row = np.repeat(np.arange(len(size)), size)
            bucket = np.concatenate([of_row, hub_b]).astype(np.int64)
            hubs = members.take(pa.array((np.cumsum(size) - size)[hub_b]))
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column(BAND).take(pa.array(bucket)).cast(pa.int32()),
                    batch.column(KEY).take(pa.array(bucket)).cast(pa.int64()),
                    pa.array(size[bucket] > limit),
                    pa.array(np.concatenate([chunk, hub_chunk]).astype(np.int32)),
                    pa.concat_arrays([members, hubs]).cast(pa.string()),
                ],
                names=[BAND, KEY, "star", CHUNK, DOC_ID],
            )

    return place
