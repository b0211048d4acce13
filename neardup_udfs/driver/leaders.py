"""Exact-duplicate leaders, the one rule both shells apply: a document's group is every row
of its exact key (rows without a key are one group), led by the group's smallest id in
UTF-8 byte order (Spark's string order); a row normalization left without text
(``empty``) leads itself.

The rule runs over rows sorted by key, then id: a group's leader is its first row. The Spark
shell sorts each partition of a shuffle by key (``stages.exact.led``) and runs
:func:`leaders_fn` on it, batch after batch; the local engine sorts its whole table once
(:func:`leaders`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.driver.batches import group_starts
from neardup_udfs.schemas import DOC_ID, EXACT_KEY, LEADER

__all__ = ["leaders", "leaders_fn", "sorted_leaders"]

Run = tuple[Any, Any]  # the key a batch ends in, and its group's leader


def sorted_leaders(
    keys: pa.Array | pa.ChunkedArray,
    ids: npt.NDArray[Any],
    empty: npt.NDArray[np.bool_],
    before: Run | None = None,
) -> tuple[npt.NDArray[Any], Run | None]:
    """Each row's leader, for rows sorted by key, then id (null keys together), and the run
    the rows end in. ``before``: the run that the rows before these (sorted with them) ended
    in, so that a group cut between two batches keeps one leader."""
    n = len(ids)
    if n == 0:
        return ids.copy(), before
    starts = group_starts([keys], None if before is None else (before[0],))
    goes_on = not starts[0]  # the group the rows before ended in goes on
    heads = ids[starts]
    if goes_on:
        assert before is not None
        heads = np.concatenate([np.array([before[1]], dtype=object), heads])
    leader = heads[np.cumsum(starts) - (0 if goes_on else 1)]
    return np.where(empty, ids, leader), (keys[n - 1].as_py(), leader[n - 1])


def leaders(
    keys: pa.Array | pa.ChunkedArray,
    ids: npt.NDArray[Any],
    empty: npt.NDArray[np.bool_],
    id_array: pa.Array | pa.ChunkedArray | None = None,
) -> npt.NDArray[Any]:
    """Each row's leader, for rows in any order (``keys``, ``ids``, ``empty`` aligned;
    ``id_array``: the same ids as Arrow strings, when the caller holds them)."""
    if len(ids) == 0:
        return ids.copy()
    id_array = pa.array(ids, pa.string()) if id_array is None else id_array
    keyed = pa.table({"k": keys, "i": id_array})
    order = pc.sort_indices(keyed, [("k", "ascending"), ("i", "ascending")]).to_numpy()
    found, _ = sorted_leaders(keyed.column("k").take(order), ids[order], empty[order])
    leader = np.empty(len(ids), dtype=object)
    leader[order] = found
    return leader


def leaders_fn(empty: str) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A batch function (``driver.batches``) over the batches of one partition that holds
    every row of its keys, sorted by ``exact_key`` then ``doc_id``: each batch with
    ``leader`` appended (``empty``: the column that says a row leads itself)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        before: Run | None = None
        for batch in batches:
            ids = batch.column(DOC_ID).to_numpy(zero_copy_only=False)
            alone = pc.fill_null(batch.column(empty), False).to_numpy(zero_copy_only=False)
            found, before = sorted_leaders(batch.column(EXACT_KEY), ids, alone, before)
            yield batch.append_column(LEADER, pa.array(found, pa.string()))

    return run
