"""What samples/ holds and what report.html shows of it, each rule once for every engine and
the report tool: which clusters are sampled (:func:`chosen_clusters`) and which of their
members the page shows (:func:`shown_mask`).

The local engine applies them to its tables, the report tool to the samples/ it reads, and
the Spark stage (``stages.samples``) runs the same functions on its partitions: the choice
per partition and then once over what the partitions kept (:func:`chosen_clusters_fn`),
the shown members per cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.driver.strings import string_buffers
from neardup_udfs.kernels.xxh64_jit import xxh64, xxh64_spans
from neardup_udfs.schemas import CLUSTER_ID, CLUSTER_SIZE, DOC_ID, IS_REPRESENTATIVE

__all__ = [
    "chosen_clusters",
    "chosen_clusters_fn",
    "sample_hashes",
    "shown_fn",
    "shown_mask",
]

_SPARK_SEED = 42  # the seed Spark's xxhash64 expression starts from
_HASH = "__hash"


def sample_hashes(ids: pa.Array | pa.ChunkedArray, seed: int) -> npt.NDArray[np.int64]:
    """The sample order's key of each id (strings, never null): Spark's
    ``xxhash64(lit(seed), id)`` for a 32-bit int ``seed``, a signed 64-bit value (so the
    clusters sampled are those of every earlier release, which let Spark compute it)."""
    first = xxh64((seed & 0xFFFFFFFF).to_bytes(4, "little"), _SPARK_SEED)
    buf, offsets = _packed(ids)
    return xxh64_spans(buf, offsets, first).view(np.int64)


def chosen_clusters(sizes: pa.Table, largest: int, sample: int, seed: int) -> pa.Table:
    """``cluster_id, cluster_size`` of the clusters samples/ holds, among ``sizes`` (one row
    per cluster, ``cluster_size`` its documents): of those of two or more documents, the
    ``largest`` biggest (ties: the smallest id), then ``sample`` others in the order of
    :func:`sample_hashes` (ties: the smallest id); ids compare as UTF-8 bytes.

    Notes:
        A function of the clusters alone: the same on every run, partitioning and machine.
        Given any rows that include every cluster it would choose from all of them (with
        their whole sizes), it chooses the same. So ``chosen_clusters(part, largest,
        largest + sample, seed)`` of each part of the clusters keeps every cluster chosen
        from the whole, and this function over what the parts kept gives the whole's
        choice (``chosen_clusters_fn``).
    """
    sizes = sizes.select([CLUSTER_ID, CLUSTER_SIZE])
    multi = sizes.filter(pc.greater(sizes.column(CLUSTER_SIZE), 1))
    by_size = pc.sort_indices(
        multi, sort_keys=[(CLUSTER_SIZE, "descending"), (CLUSTER_ID, "ascending")]
    )
    top = multi.take(by_size[:largest])
    rest = multi.take(by_size[largest:])
    rest = rest.append_column(_HASH, pa.array(sample_hashes(rest.column(CLUSTER_ID), seed)))
    order = pc.sort_indices(rest, sort_keys=[(_HASH, "ascending"), (CLUSTER_ID, "ascending")])
    drawn = rest.take(order[:sample]).drop_columns([_HASH])
    return pa.concat_tables([top, drawn.cast(top.schema)])


Batches = Iterator[pa.RecordBatch]


def chosen_clusters_fn(largest: int, sample: int, seed: int) -> Callable[[Batches], Batches]:
    """A batch function (``mapInArrow``) over ``cluster_id, cluster_size`` rows, one per
    cluster: the rows :func:`chosen_clusters` keeps of the partition, batch by batch (so a
    partition's memory is a batch and the kept rows). Run with ``sample`` as given over the
    rows every partition kept with ``largest + sample``, it gives the whole's choice."""

    def choose(batches: Batches) -> Batches:
        kept: pa.Table | None = None
        for batch in batches:
            rows = pa.Table.from_batches([batch])
            both = rows if kept is None else pa.concat_tables([kept, rows.cast(kept.schema)])
            kept = chosen_clusters(both, largest, sample, seed)
        if kept is not None:
            yield from kept.to_batches()

    return choose


def shown_mask(keys: pa.Table, metric: str | None, members: int) -> npt.NDArray[np.bool_]:
    """Which rows of ``keys`` (samples/ rows: ``cluster_id, doc_id, is_representative`` and
    the score ``metric`` when not None) report.html shows: of each cluster its
    representative and its ``members`` least similar other members (``similarity``
    ascending, ``distance`` descending; unscored members last; ties: the smallest id).

    Notes:
        A cluster's rows alone decide its own: any set of whole clusters gets the rows it
        would get among all of them.
    """
    if not keys.num_rows:
        return np.zeros(0, dtype=bool)
    rep = keys.column(IS_REPRESENTATIVE).fill_null(False)
    table = pa.table(
        {CLUSTER_ID: keys.column(CLUSTER_ID), "member": pc.invert(rep), DOC_ID: keys.column(DOC_ID)}
    )
    order = [(CLUSTER_ID, "ascending"), ("member", "ascending")]
    if metric is not None:
        far = metric == "distance"
        score = pc.cast(keys.column(metric), pa.float64())
        table = table.append_column("score", score.fill_null(-np.inf if far else np.inf))
        order.append(("score", "descending" if far else "ascending"))
    order.append((DOC_ID, "ascending"))
    ranked = pc.sort_indices(table, sort_keys=order).to_numpy()
    cluster = table.column(CLUSTER_ID).take(ranked).to_numpy(zero_copy_only=False)
    member = table.column("member").take(ranked).to_numpy(zero_copy_only=False).astype(bool)
    starts = np.flatnonzero(
        np.r_[True, (cluster[1:] != cluster[:-1]) | (member[1:] != member[:-1])]
    )
    rank = np.arange(len(ranked)) - np.repeat(starts, np.diff(np.r_[starts, len(ranked)]))
    mask = np.zeros(len(ranked), dtype=bool)
    mask[ranked[rank < np.where(member, members, 1)]] = True
    return mask


def shown_fn(metric: str | None, members: int) -> Callable[[pa.Table], pa.Table]:
    """A group function (``applyInArrow``, grouped by ``cluster_id``): the ``cluster_id,
    doc_id`` of the group's rows :func:`shown_mask` shows."""

    def shown(keys: pa.Table) -> pa.Table:
        return keys.filter(shown_mask(keys, metric, members)).select([CLUSTER_ID, DOC_ID])

    return shown


def _packed(ids: pa.Array | pa.ChunkedArray) -> tuple[npt.NDArray[np.uint8], npt.NDArray[Any]]:
    """``driver.strings.string_buffers`` of the ids (strings) as one array."""
    array = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = array.cast(pa.large_string())
    return string_buffers(array)
