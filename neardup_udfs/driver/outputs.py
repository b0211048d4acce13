"""The dedup run's outputs without Spark (the ``local`` engine): the samples, the rows of them
report.html shows, equal to what ``stages.samples`` computes for the same rows; the score
summary (``stages.summaries`` runs the same functions per partition); and Parquet folders
laid out as Spark's writer lays them out (``part-*.parquet`` files and ``_SUCCESS``).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from neardup_udfs.driver.samples import chosen_clusters, shown_mask
from neardup_udfs.io.storage import LocalStorage, join
from neardup_udfs.report.data import Scores
from neardup_udfs.schemas import (
    CLUSTER_ID,
    CLUSTER_SIZE,
    DISTANCE,
    DOC_ID,
    IS_REPRESENTATIVE,
    SIMILARITY,
    TEXT,
)

__all__ = [
    "SUMMARY",
    "merged_scores",
    "partial_scores_fn",
    "sample_table",
    "score_summary_of",
    "shown_table",
    "write_parquet",
    "write_parquet_parts",
]


def sample_table(
    clusters: pa.Table,
    texts: pa.Table | Callable[[pa.Array], pa.Array],
    *,
    largest: int = 5,
    sample: int = 5,
    seed: int = 0,
    max_chars: int = 20_000,
) -> pa.Table:
    """``stages.samples.sample_clusters`` of ``clusters`` and ``texts`` (``doc_id``,
    ``text``: strings; or a function from ids to their texts): the same clusters, members,
    columns and order."""
    counted = pc.value_counts(clusters.column(CLUSTER_ID))
    sizes = pa.table({CLUSTER_ID: counted.field("values"), CLUSTER_SIZE: counted.field("counts")})
    chosen = chosen_clusters(sizes, largest, sample, seed)
    members = clusters.filter(pc.is_in(clusters.column(CLUSTER_ID), chosen.column(CLUSTER_ID)))
    at = pc.index_in(members.column(CLUSTER_ID), chosen.column(CLUSTER_ID))
    size = chosen.column(CLUSTER_SIZE).take(at).cast(pa.int64())
    members = members.append_column(pa.field(CLUSTER_SIZE, pa.int64(), False), size)
    member_ids = members.column(DOC_ID).combine_chunks()
    if callable(texts):
        text = texts(member_ids)
    else:
        text = texts.column(TEXT).take(pc.index_in(member_ids, texts.column(DOC_ID)))
    members = members.append_column(
        "truncated", pc.greater(pc.utf8_length(text), pa.scalar(max_chars, pa.int32()))
    )
    members = members.append_column(TEXT, pc.utf8_slice_codeunits(text, 0, max_chars))
    order = [(CLUSTER_ID, "ascending"), (IS_REPRESENTATIVE, "descending"), (DOC_ID, "ascending")]
    ordered = members.take(pc.sort_indices(members, sort_keys=order))
    columns = [*clusters.column_names, CLUSTER_SIZE, TEXT, "truncated"]
    return ordered.select(columns)


def shown_table(samples: pa.Table, members: int) -> pa.Table:
    """``stages.samples.shown_samples`` of ``samples`` (:func:`sample_table`'s output)."""
    names = samples.column_names
    metric = SIMILARITY if SIMILARITY in names else DISTANCE if DISTANCE in names else None
    return samples.filter(shown_mask(samples, metric, members))


def score_summary_of(values: np.ndarray, metric: str, source: str) -> dict[str, Any]:
    """The score summary report.json stores as ``scores`` (``report.data.Scores``) of the
    scores ``values`` (float; nulls as NaN): what ``stages.summaries.score_summary`` gives
    of the same values, however Spark partitions them."""
    v = np.asarray(values, dtype=np.float64)
    scores = Scores(metric, source)
    scores.add(v[np.isfinite(v)])
    return scores.to_json()


SUMMARY = "summary"
"""The column of :func:`partial_scores_fn`'s rows: a partial score summary as JSON."""


Batches = Iterator[pa.RecordBatch]


def partial_scores_fn(metric: str) -> Callable[[Batches], Batches]:
    """A batch function (``mapInArrow``): the score summary of the first column of one
    partition's batches, as one row (:data:`SUMMARY`: ``report.data.Scores`` as JSON);
    :func:`merged_scores` folds the rows of every partition into the whole summary."""

    def summarize(batches: Batches) -> Batches:
        scores = Scores(metric, "")
        for batch in batches:
            scores.add_column(batch.column(0))
        summary = pa.array([json.dumps(scores.to_json(exact=True))], pa.string())
        yield pa.record_batch([summary], names=[SUMMARY])

    return summarize


def merged_scores(partials: Iterable[str], metric: str, source: str) -> dict[str, Any]:
    """The score summary (as report.json stores it) of the partial summaries ``partials``
    (:func:`partial_scores_fn`'s rows)."""
    scores = Scores(metric, source)
    for partial in partials:
        scores.merge(Scores.from_json(json.loads(partial)))
    return scores.to_json()


def write_parquet(store: LocalStorage, folder: str, table: pa.Table) -> None:
    """``table`` as a Parquet folder at ``folder`` (replaced whole), laid out as Spark's
    writer lays one out: one snappy ``part-00000-<uuid>-c000.snappy.parquet`` and an empty
    ``_SUCCESS`` written last."""
    write_parquet_parts(store, folder, table.schema, [table])


def write_parquet_parts(
    store: LocalStorage, folder: str, schema: pa.Schema, tables: Iterable[pa.Table]
) -> int:
    """:func:`write_parquet` of the rows of ``tables`` (each of ``schema``) in order, one
    table in memory at a time; the rows written."""
    store.delete(folder)
    local = store.local(folder)
    os.makedirs(local, exist_ok=True)
    name = f"part-00000-{uuid.uuid4()}-c000.snappy.parquet"
    rows = 0
    with pq.ParquetWriter(os.path.join(local, name), schema, compression="snappy") as writer:
        for table in tables:
            writer.write_table(table.cast(schema))
            rows += table.num_rows
    store.write_bytes(join(folder, "_SUCCESS"), b"")
    return rows
