"""The near-duplicate core in one process: a table of texts in, the verified pairs and one
cluster row per document out, equal row for row to what the Spark stages give (the dedup
run's ``fingerprint``, ``pairs`` and ``cluster`` with anchored clustering).

The same kernels and Arrow adapters do the work (``driver.batches.document_features_fn``,
``kernels.band_pairs``, ``kernels.words_jit``, ``kernels.greedy``); only the plumbing
between them differs: numpy sorts and index arrays where the Spark stages group, join and
shuffle. A run takes this path when its input fits the driver (``runs.dedup``, config key
``engine``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.clock import StageClock
from neardup_udfs.driver.batches import document_features_fn
from neardup_udfs.driver.buckets import Buckets
from neardup_udfs.driver.containment import contain_on_driver
from neardup_udfs.driver.fork import can_fork, in_parts, split
from neardup_udfs.driver.leaders import leaders
from neardup_udfs.driver.settings import (
    HOT_BUCKETS_LISTED,
    NearSettings,
    hot_bucket,
    match_order,
    rule_order,
)
from neardup_udfs.kernels.band_pairs import HOT, HUB, NOT_HOT, first_band_pairs, first_table_pairs
from neardup_udfs.kernels.greedy import greedy_assignment
from neardup_udfs.kernels.words_jit import indexed_sets_jaccard, shingle_sets_batch
from neardup_udfs.presets import Pipeline
from neardup_udfs.schemas import (
    BAND,
    BAND_KEYS,
    CLUSTER_ID,
    DISTANCE,
    DOC_ID,
    EMPTY_TEXT,
    EXACT_KEY,
    FINGERPRINT,
    INDEXED_ID,
    IS_REPRESENTATIVE,
    JACCARD,
    LENGTH,
    RELATION,
    SIGNATURE,
    SIMILARITY,
    TEXT,
    A,
    B,
)

__all__ = [
    "DriverNear",
    "IndexMatches",
    "anchored_clusters",
    "cluster_tally",
    "SetSource",
    "ShingledTexts",
    "Sketches",
    "TableTexts",
    "TextSource",
    "near_of_sketches",
    "near_on_driver",
    "sketches_of",
]

I64 = npt.NDArray[np.int64]
BATCH_ROWS = 4096  # texts per call of the feature kernel
FORK_MIN_ROWS = 4 * BATCH_ROWS  # fewer texts than this: one process (a fork costs more)
_log = logging.getLogger("neardup.driver")


@dataclass
class DriverNear:
    """What :func:`near_on_driver` found."""

    pairs: pa.Table  # a, b, band, similarity | distance: the verified pairs
    clusters: pa.Table  # doc_id, cluster_id, is_representative, similarity | distance
    counts: dict[str, int] = field(default_factory=dict)  # the run summary's counts
    bands: list[dict[str, Any]] = field(default_factory=list)  # band, candidates, verified
    hot: list[dict[str, Any]] = field(default_factory=list)  # the largest hot buckets
    histogram: dict[int, int] = field(default_factory=dict)  # cluster size -> clusters


def near_on_driver(
    texts: pa.Table,
    pipeline: Pipeline,
    settings: NearSettings,
    *,
    order: pa.ChunkedArray | pa.Array | None = None,
    clock: StageClock | None = None,
    workers: int = 1,
) -> DriverNear:
    """The exact-duplicate groups, verified pairs and anchored clusters of ``texts``
    (``doc_id``, ``text``: unique ids, no null text), as the dedup run's Spark stages
    compute them for the same rows and settings.

    Args:
        texts: the accepted documents.
        pipeline: the run's pipeline (MinHash or SimHash of text).
        settings: the shared stages' settings (``settings.clustering`` must be anchored).
        order: the representative rule's ``earliest`` column, aligned with ``texts``.
        clock: the run's clock: the work is timed as its stages ``fingerprint``, ``pairs``
            and ``cluster`` (None: a clock of this call's own, logging to ``neardup.driver``).
        workers: the cores the run may use: processes for the fingerprint, candidate and
            shingle passes, threads for the Jaccard checks.

    Notes:
        ``pairs`` holds the pairs of ``stages.verify.verify`` over the candidates of
        ``stages.candidates.scored_candidates`` (each with the band that first produced it);
        ``clusters`` those of ``stages.cluster.cluster``; the counts, band counts, hot
        buckets and histogram those the Spark stages report. A test holds the two paths equal
        for every text pipeline, rule and verification.
    """
    clock = clock or StageClock(_log)
    with clock.stage("fingerprint") as rows:
        sketches = sketches_of(_features(texts, pipeline, workers), pipeline)
        rows.rows_in = rows.rows_out = texts.num_rows
    sets = ShingledTexts(TableTexts(texts.column(TEXT)), pipeline, workers)
    return near_of_sketches(sketches, sets, pipeline, settings, order=order, clock=clock,
                            workers=workers)  # fmt: skip


def near_of_sketches(
    sketches: Sketches,
    sets: SetSource,
    pipeline: Pipeline,
    settings: NearSettings,
    *,
    order: pa.ChunkedArray | pa.Array | None = None,
    clock: StageClock | None = None,
    workers: int = 1,
) -> DriverNear:
    """:func:`near_on_driver` of documents whose features are already computed: ``sketches``
    (one row per accepted document, in input order) and their shingle sets by position in
    ``sets`` (taken only for the exact checks of unsure MinHash pairs). Timed as the
    stages ``exact``, ``pairs`` and ``cluster``."""
    if settings.clustering != "anchored":
        raise ValueError("the driver path clusters anchored only")
    stage = (clock or StageClock(_log)).stage
    features = sketches.table
    counts: dict[str, int] = {}
    ids = sketches.ids
    with stage("exact") as rows:
        empty = features.column(EMPTY_TEXT).to_numpy(zero_copy_only=False).astype(bool)
        leader = leaders(features.column(EXACT_KEY), ids, empty, features.column(DOC_ID))
        is_leader = ids == leader
        lead = np.flatnonzero(is_leader & ~empty)
        counts.update(empty=int(empty.sum()), exact_duplicates=len(ids) - int(is_leader.sum()))
        rows.rows_in, rows.rows_out = len(ids), len(lead)
    with stage("pairs") as rows:
        found = _found_pairs(sketches, lead, pipeline, settings, workers)
        verified = _verified(found, sketches, sets, pipeline, settings, workers)
        bands, hot = _band_counts(found, verified), _hot_list(found)
        counts.update(
            candidates=len(found.a),
            verified=len(verified.a),
            hot_buckets=len(found.hot_size),
        )
        rows.rows_in, rows.rows_out = len(lead), len(verified.a)
    with stage("cluster") as rows:
        place = rule_order(ids, features.column(LENGTH), order, settings.rule)  # containment too
        ends = verified.names[verified.a], verified.names[verified.b]
        clusters = anchored_clusters(ids, leader, place, *ends, verified.score,
                                     simhash=pipeline.kind == "simhash")  # fmt: skip
        histogram = cluster_tally(clusters, counts)
        counts.update(driver_edges=len(verified.a))
        rows.rows_in, rows.rows_out = len(verified.a), counts["kept"]
    score = DISTANCE if pipeline.kind == "simhash" else SIMILARITY
    pairs = pa.table(
        {
            A: pa.array(verified.names[verified.a], pa.string()),
            B: pa.array(verified.names[verified.b], pa.string()),
            BAND: pa.array(verified.band, pa.int32()),
            score: _score_array(verified.score, pipeline),
        }
    )
    if settings.containment is not None:
        with stage("containment") as rows:
            rows.rows_in = counts["kept"]
            done = contain_on_driver(clusters, ids, leader, empty, place, sets.shingle_sets,
                                     threshold=settings.containment,
                                     min_shingles=settings.containment_min_shingles,
                                     workers=workers)  # fmt: skip
            clusters = done.clusters
            jaccard = pa.array([JACCARD] * pairs.num_rows, pa.string())
            pairs = pa.concat_tables([pairs.append_column(RELATION, jaccard), done.pairs])
            counts.update(done.counts)
            histogram = cluster_tally(clusters, counts)
            rows.rows_out = counts["kept"]
    return DriverNear(pairs, clusters, counts, bands, hot, histogram)


def cluster_tally(clusters: pa.Table, counts: dict[str, int]) -> dict[int, int]:
    """The cluster-size histogram of ``clusters`` (cluster size -> clusters of that size);
    ``counts`` takes ``kept``, ``removed`` and ``clusters`` (of two or more members)."""
    is_rep = clusters.column(IS_REPRESENTATIVE).to_numpy(zero_copy_only=False)
    sizes = pd.Series(clusters.column(CLUSTER_ID).to_numpy(zero_copy_only=False))
    per_size = sizes.value_counts().value_counts().sort_index()
    histogram = {int(size): int(n) for size, n in per_size.items()}
    kept = int(is_rep.sum())
    counts.update(
        kept=kept,
        removed=len(is_rep) - kept,
        clusters=sum(n for size, n in histogram.items() if size > 1),
    )
    return histogram


@dataclass
class Sketches:
    """The features of the accepted documents, one row each, in input order."""

    table: pa.Table  # doc_id, exact_key, empty_text, length
    sketch: npt.NDArray[np.int64]  # (rows, slots) MinHash signatures | (rows,) fingerprints
    band_keys: npt.NDArray[np.int64] | None = None  # (rows, bands): MinHash only

    @cached_property
    def ids(self) -> npt.NDArray[Any]:
        """The ids as a numpy object array (made once)."""
        return self.table.column(DOC_ID).to_numpy(zero_copy_only=False)


SMALL_COLUMNS = [DOC_ID, EXACT_KEY, EMPTY_TEXT, LENGTH]
"""The columns of :attr:`Sketches.table`."""


def sketches_of(features: pa.Table, pipeline: Pipeline) -> Sketches:
    """``driver.batches.document_features_fn``'s rows as :class:`Sketches` (no copy of the sketches
    where Arrow's buffers allow)."""
    table = features.select(SMALL_COLUMNS)
    if pipeline.kind == "simhash":
        fps = features.column(FINGERPRINT).to_numpy(zero_copy_only=False).astype(np.int64)
        return Sketches(table, fps)
    width = pipeline.param("bands") * pipeline.param("rows")
    return Sketches(
        table,
        _matrix(features.column(SIGNATURE), width),
        _matrix(features.column(BAND_KEYS), pipeline.param("bands")),
    )


class TextSource(Protocol):
    """The accepted documents' texts by position (their rows in :class:`Sketches`)."""

    def chunks(self, rows: I64) -> Iterator[tuple[I64, list[str]]]:
        """``(which, texts)`` pairs: ``texts[j]`` is the text at ``rows[which[j]]``; every
        index of ``rows`` comes once over all chunks, at most :data:`SET_CHUNK` a chunk."""
        ...


class SetSource(Protocol):
    """The accepted documents' word-shingle sets (as the pipeline normalizes and shingles
    them) by position (their rows in :class:`Sketches`)."""

    def shingle_sets(self, rows: I64) -> tuple[Any, I64, I64]:
        """``(hashes, offsets, slot)``: the set of ``rows[i]`` is
        ``hashes[offsets[slot[i]]:offsets[slot[i] + 1]]``, ascending distinct values."""
        ...


@dataclass(frozen=True)
class ShingledTexts:
    """A :class:`SetSource` that shingles the texts of a :class:`TextSource`, on ``workers``
    processes when there are enough of them (the rows cut into that many runs, each but the
    first in a forked process of its own; the sets as from one process)."""

    texts: TextSource
    pipeline: Pipeline
    workers: int = 1

    def shingle_sets(self, rows: I64) -> tuple[Any, I64, I64]:
        runs = split(len(rows), self.workers)
        if self.workers < 2 or not can_fork() or len(rows) < FORK_MIN_SETS or len(runs) < 2:
            return _shingle_sets(self.texts, rows, self.pipeline)
        one = partial(_shingle_sets, self.texts, pipeline=self.pipeline)
        got = in_parts([partial(one, rows[lo:hi]) for lo, hi in runs])
        parts = []
        for (lo, hi), out in zip(runs, got, strict=True):
            if out is None:
                _log.warning("a process of the shingle pass failed: its texts ran here")
                out = one(rows[lo:hi])
            parts.append(out)
        return _joined_sets(parts)


@dataclass(frozen=True)
class TableTexts:
    """A :class:`TextSource` over a text column held in memory."""

    column: pa.ChunkedArray | pa.Array

    def chunks(self, rows: I64) -> Iterator[tuple[I64, list[str]]]:
        for lo in range(0, len(rows), SET_CHUNK):
            which = np.arange(lo, min(lo + SET_CHUNK, len(rows)), dtype=np.int64)
            yield which, self.column.take(pa.array(rows[which])).to_pylist()


def _features(texts: pa.Table, pipeline: Pipeline, workers: int = 1) -> pa.Table:
    """``driver.batches.document_features_fn`` over every row of ``texts``, in order; with
    ``workers`` of 2 or more (and ``os.fork``), a large input is cut into ``workers`` runs of
    batches, each but the first in a forked process of its own, so the pass runs on that many cores
    (``driver.fork.in_parts``; a run whose process fails is redone here)."""
    chosen = texts.select([DOC_ID, TEXT])
    batches = chosen.to_batches(max_chunksize=BATCH_ROWS)
    if not batches:  # no rows: one empty batch, for the output's columns
        batches = [pa.RecordBatch.from_pylist([], schema=chosen.schema)]
    run = document_features_fn(pipeline)
    if workers < 2 or not can_fork() or chosen.num_rows < FORK_MIN_ROWS:
        return pa.Table.from_batches(list(run(iter(batches)))).combine_chunks()
    parts = [batches[lo:hi] for lo, hi in split(len(batches), workers)]
    got = in_parts([partial(_featurized, run, part) for part in parts])
    done: list[pa.RecordBatch] = []
    for part, out in zip(parts, got, strict=True):
        if out is None:
            _log.warning("a process of the feature pass failed: its part ran here")
            out = _featurized(run, part)
        done.extend(out)
    return pa.Table.from_batches(done).combine_chunks()


def _featurized(run: Any, batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    return list(run(iter(batches)))


@dataclass
class _Pairs:
    """Pairs as positions into ``names`` (the keyed documents' ids, ascending), each with
    its band, bucket key and chunk and its score (equal slots, similarity or distance)."""

    names: npt.NDArray[Any]
    a: I64
    b: I64
    band: npt.NDArray[np.int32]
    key: I64
    chunk: npt.NDArray[np.int32]
    score: npt.NDArray[Any]
    hot_band: npt.NDArray[np.int32] = field(default_factory=lambda: np.empty(0, np.int32))
    hot_key: I64 = field(default_factory=lambda: np.empty(0, np.int64))
    hot_size: I64 = field(default_factory=lambda: np.empty(0, np.int64))

    def where(self, keep: npt.NDArray[np.bool_], score: npt.NDArray[Any] | None = None) -> _Pairs:
        values = self.score if score is None else score
        return _Pairs(
            self.names,
            self.a[keep],
            self.b[keep],
            self.band[keep],
            self.key[keep],
            self.chunk[keep],
            values[keep],
        )


def _keyed(
    sketches: Sketches, lead: I64, pipeline: Pipeline, settings: NearSettings
) -> tuple[npt.NDArray[Any], I64, npt.NDArray[np.int64], I64]:
    """The documents that get bucket keys (``stages.candidates.band_keys``), by id: their
    ids and their rows in ``sketches``; and their keys ``(documents, bands)`` as rows
    ``(keys, which)`` of a key matrix (``keys[which]``, not copied)."""
    ids = sketches.ids
    if pipeline.kind == "simhash":
        rows = lead
        if pipeline.preset.input == "text":
            rows = rows[sketches.sketch[rows] != 0]  # no features: exact duplicates only
        rows = rows[np.argsort(ids[rows], kind="stable")]
        scheme = settings.hamming_scheme()
        keys = scheme.keys(sketches.sketch[rows].view(np.uint64)).view(np.int64)
        every = np.arange(len(rows), dtype=np.int64)
        return ids[rows], rows, keys.reshape(len(rows), len(scheme.parts)), every
    assert sketches.band_keys is not None, "MinHash sketches carry band keys"
    sigs = sketches.sketch
    maybe = lead[sigs[lead, 0] == -1] if sigs.shape[1] else lead
    blank = maybe[np.all(sigs[maybe] == -1, axis=1)]  # the empty set: exact duplicates only
    rows = np.setdiff1d(lead, blank, assume_unique=True) if len(blank) else lead
    rows = rows[np.argsort(ids[rows], kind="stable")]
    return ids[rows], rows, sketches.band_keys, rows


def _matrix(column: pa.ChunkedArray, width: int) -> I64:
    """A list<bigint> column of fixed width as an ``(rows, width)`` int64 matrix."""
    whole = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    flat = whole.flatten().to_numpy(zero_copy_only=False).view(np.int64)
    return flat.reshape(-1, width)


def _found_pairs(
    sketches: Sketches, lead: I64, pipeline: Pipeline, settings: NearSettings, workers: int = 1
) -> _Pairs:
    """The scored candidates of ``stages.candidates.scored_candidates``: every pair once,
    from the first band (table) that produces it, hot buckets as stars. With ``workers`` of
    2 or more (and ``os.fork``), the bands are cut into ``workers`` runs, each but the first
    in a forked process of its own (a band's pairs need no other band's buckets: the first
    band rule reads the signatures); the pairs come back in band order, as from one
    process."""
    names, at, keys, which = _keyed(sketches, lead, pipeline, settings)  # document i: i-th id
    sketch = sketches.sketch
    n, bands = len(which), keys.shape[1]
    if n == 0:
        nothing = np.empty(0, dtype=np.int64)
        return _Pairs(names, nothing, nothing, nothing.astype(np.int32), nothing,
                      nothing.astype(np.int32), nothing.astype(np.int32))  # fmt: skip
    limit = settings.hot_bucket_size
    # two passes over the bands, one band's buckets in memory at a time: the roles of every
    # document in every band first (the kernels read them), then each band's pairs
    roles = np.full((n, bands), NOT_HOT, dtype=np.int8)
    hot_band, hot_key, hot_size = [], [], []
    for c in range(bands):
        bucket = Buckets.of(keys[which, c])
        hot = bucket.size > limit
        in_hot = hot[bucket.of_row]
        roles[bucket.doc[in_hot], c] = np.where(bucket.pos[in_hot] == 0, HUB, HOT)
        hot_b = np.flatnonzero(hot)
        hot_band.append(np.full(len(hot_b), c, dtype=np.int32))
        hot_key.append(bucket.key[bucket.starts[hot_b]])
        hot_size.append(bucket.size[hot_b])
    pairs_of = partial(_band_pairs, keys=keys, which=which, sketch=sketch, at=at, roles=roles,
                       limit=limit, pipeline=pipeline, settings=settings)  # fmt: skip
    runs = split(bands, workers)
    if workers < 2 or not can_fork() or n < FORK_MIN_ROWS or len(runs) < 2:
        parts = pairs_of(0, bands)
    else:
        parts = []
        for (lo, hi), out in zip(runs, in_parts([partial(pairs_of, *r) for r in runs]),
                                 strict=True):  # fmt: skip
            if out is None:
                _log.warning("a process of the candidate pass failed: its bands ran here")
                out = pairs_of(lo, hi)
            parts.extend(out)
    a, b, band_of, score, key, chunk = (
        (np.concatenate(x) for x in zip(*parts, strict=True))
        if parts
        else (np.empty(0, np.int64),) * 6
    )
    found = _Pairs(names, a, b, band_of.astype(np.int32), key, chunk.astype(np.int32), score)
    found.hot_band, found.hot_key, found.hot_size = (
        np.concatenate(hot_band),
        np.concatenate(hot_key).astype(np.int64),
        np.concatenate(hot_size).astype(np.int64),
    )
    return found


def _band_pairs(
    first: int,
    last: int,
    *,
    keys: I64,
    which: I64,
    sketch: npt.NDArray[np.int64],
    at: I64,
    roles: npt.NDArray[np.int8],
    limit: int,
    pipeline: Pipeline,
    settings: NearSettings,
) -> list[tuple[Any, ...]]:
    """The first-band pairs of bands ``first`` to ``last - 1`` (``keys[which]``: the keyed
    documents' band keys, one row each, read a band at a time), as ``a, b, band, score, key,
    chunk`` array tuples in band order."""
    parts = []
    for c in range(first, last):
        bucket = Buckets.of(keys[which, c])
        rows, offsets, g_key, g_chunk, g_star = bucket.groups(limit)
        if not len(g_key):
            continue
        for lo, hi in _slices(offsets, GROUP_ROWS):  # a slice's sketches copied at a time
            members = rows[offsets[lo] : offsets[hi]]
            args = (np.full(hi - lo, c, dtype=np.int32), g_star[lo:hi],
                    offsets[lo : hi + 1] - offsets[lo])  # fmt: skip
            if pipeline.kind == "simhash":
                got = first_table_pairs(*args, members, sketch[at[members]], roles[members],
                                        settings.hamming_scheme())  # fmt: skip
            else:
                got = first_band_pairs(*args, members, sketch[at[members]], roles[members],
                                       pipeline.param("rows"))  # fmt: skip
            where = got[4] + lo
            parts.append((*got[:4], g_key[where], g_chunk[where]))
    return parts


GROUP_ROWS = 1 << 16
"""Member rows (and so sketches) handed to a candidate kernel at a time."""


def _slices(offsets: I64, rows: int) -> list[tuple[int, int]]:
    """Runs ``[lo, hi)`` of the groups whose members start at ``offsets`` (the total last),
    each of at most ``rows`` member rows unless one group alone holds more."""
    out, lo = [], 0
    groups = len(offsets) - 1
    while lo < groups:
        hi = int(np.searchsorted(offsets, offsets[lo] + rows, side="right")) - 1
        hi = min(max(hi, lo + 1), groups)
        out.append((lo, hi))
        lo = hi
    return out


def _verified(
    found: _Pairs,
    sketches: Sketches,
    sets: SetSource,
    pipeline: Pipeline,
    settings: NearSettings,
    workers: int = 1,
) -> _Pairs:
    """The pairs of ``stages.verify.verify``: SimHash within ``max_distance``; MinHash by the
    estimate, the exact Jaccard, or the estimate away from the threshold and the exact
    Jaccard near it (``hybrid``), with the score that decided."""
    if pipeline.kind == "simhash":
        return found.where(found.score <= settings.max_distance)
    similarity = found.score / pipeline.param("k")
    checks = settings.checks(pipeline.param("k"))
    sure = similarity >= checks.sure
    check = (similarity >= checks.check) & ~sure
    exact = similarity.copy()
    if check.any():
        exact[check] = _exact_jaccard(found, np.flatnonzero(check), sketches, sets, workers)
    return found.where(sure | (check & (exact >= checks.threshold)), exact)


def _exact_jaccard(
    found: _Pairs, which: I64, sketches: Sketches, sets: SetSource, workers: int = 1
) -> Any:
    """The exact Jaccard of the word-shingle sets of the pairs ``which`` (the input texts,
    normalized as the pipeline normalizes)."""
    if not len(which):
        return np.empty(0)
    ends = np.concatenate([found.a[which], found.b[which]])
    docs, place = np.unique(ends, return_inverse=True)
    del ends
    wanted = pa.array(found.names[docs], pa.string())
    ids = sketches.table.column(DOC_ID).combine_chunks()
    rows = pc.index_in(wanted, value_set=ids).to_numpy(zero_copy_only=False).astype(np.int64)
    hashes, offsets, slot = sets.shingle_sets(rows)
    place = slot[place]
    half = len(which)
    return indexed_sets_jaccard(hashes, offsets, place[:half], place[half:], threads=workers)


def _shingle_sets(source: TextSource, rows: I64, pipeline: Pipeline) -> tuple[Any, I64, I64]:
    """``shingle_sets_batch`` of the texts at ``rows`` normalized as the pipeline normalizes,
    built a chunk of ``source`` at a time (only one chunk's texts are alive): the hashes,
    the offsets, and each row's set (``slot[i]``: the set of ``rows[i]``)."""
    w = pipeline.param("w")
    parts, sizes, seen = [], [], []
    for which, chosen in source.chunks(rows):
        prepared = pipeline.normalize_batch(chosen) if pipeline.normalization.active else chosen
        hashes, offsets = shingle_sets_batch(prepared, w)
        parts.append(hashes)
        sizes.append(np.diff(offsets))
        seen.append(which)
    slot = np.empty(len(rows), dtype=np.int64)
    if not parts:
        return np.empty(0, dtype=np.uint64), np.zeros(1, dtype=np.int64), slot
    slot[np.concatenate(seen)] = np.arange(len(rows))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(sizes), out=offsets[1:])
    return np.concatenate(parts), offsets, slot


SET_CHUNK = 2048
"""Texts shingled at a time for the exact checks."""

FORK_MIN_SETS = 2 * SET_CHUNK
"""Fewer texts to shingle than this: one process (a fork costs more)."""


def _joined_sets(parts: list[tuple[Any, I64, I64]]) -> tuple[Any, I64, I64]:
    """The ``(hashes, offsets, slot)`` of consecutive runs of rows as one: the sets in run
    order, each run's slots shifted past the sets before it."""
    hashes = np.concatenate([h for h, _, _ in parts])
    sizes = np.concatenate([np.diff(o) for _, o, _ in parts])
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    bases = np.cumsum([0] + [len(o) - 1 for _, o, _ in parts[:-1]])
    slot = np.concatenate([s + base for (_, _, s), base in zip(parts, bases, strict=True)])
    return hashes, offsets, slot.astype(np.int64)


def _band_counts(found: _Pairs, verified: _Pairs) -> list[dict[str, Any]]:
    """``band, candidates, verified`` of every band that produced a pair, by band."""
    produced = np.bincount(found.band, minlength=1)
    kept = np.bincount(verified.band, minlength=len(produced))
    return [
        {BAND: int(b), "candidates": int(produced[b]), "verified": int(kept[b])}
        for b in np.flatnonzero(produced)
    ]


def _hot_list(found: _Pairs) -> list[dict[str, Any]]:
    """The largest hot buckets (size descending, then band, then key), at most
    :data:`runs.near.HOT_BUCKETS_LISTED`, as report.json lists them."""
    order = np.lexsort((found.hot_key, found.hot_band, -found.hot_size))[:HOT_BUCKETS_LISTED]
    return [
        hot_bucket(int(found.hot_band[i]), int(found.hot_key[i]), int(found.hot_size[i]))
        for i in order
    ]


def anchored_clusters(
    ids: npt.NDArray[Any],
    leader: npt.NDArray[Any],
    place: I64,
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    score: npt.NDArray[Any],
    *,
    simhash: bool,
    matches: IndexMatches | None = None,
) -> pa.Table:
    """One row per document of ``ids`` (``doc_id, cluster_id, is_representative`` and the
    score: ``distance`` when ``simhash``, else ``similarity``), as ``stages.cluster.cluster``
    clusters anchored: the exact-duplicate groups (``leader``: each row's group leader) take
    their first member's place in the rule's order (``place``, per row: see
    ``driver.settings.rule_order``), the greedy pass over the verified graph (leaders ``a``,
    ``b`` and their ``score``) keeps representatives, and every member of a removed group gets its
    group's score to the kept group.

    With ``matches`` (leaders near indexed documents), the table has ``indexed_id`` too: a
    matched leader's group is removed in favour of its closest indexed document (ties: the
    smallest id), which is its ``cluster_id`` and ``indexed_id``, and its score to it is the
    group's, before any other decision: its edges play no part."""
    fixed_at, fixed_rep, fixed_score = _fixed(ids, matches, simhash)
    if len(fixed_at):
        gone = pd.Index(ids[fixed_at])
        keep = ~(gone.get_indexer(a) >= 0) & ~(gone.get_indexer(b) >= 0)
        a, b, score = a[keep], b[keep], score[keep]
    _, group = np.unique(leader, return_inverse=True)  # the group of each row
    first = np.full(group.max() + 1 if len(group) else 0, np.iinfo(np.int64).max)
    np.minimum.at(first, group, place)  # the group's place: its first member's
    kept_row = np.empty(len(first), dtype=np.int64)
    is_first = place == first[group]
    kept_row[group[is_first]] = np.flatnonzero(is_first)
    own = 0 if simhash else 1.0
    given_score = score
    score = np.full(len(ids), own, dtype=np.int64 if simhash else np.float64)
    rep_group = group.copy()
    if len(a):
        # the verified ends are leaders: their groups, ordered by the groups' places
        where = pd.Index(ids)
        ga, gb = group[where.get_indexer(a)], group[where.get_indexer(b)]
        oa, ob = first[ga], first[gb]
        lo, hi = np.minimum(oa, ob), np.maximum(oa, ob)
        node, rep, value = greedy_assignment(lo, hi, given_score, not simhash)
        group_at = np.empty(len(ids), dtype=np.int64)  # a place -> the group it names
        group_at[first] = np.arange(len(first))
        moved = group_at[node]
        target = np.arange(len(first))
        target[moved] = group_at[rep]
        given = np.full(len(first), own, dtype=score.dtype)
        given[moved] = value
        rep_group = target[group]
        score = given[group]
    cluster_row = kept_row[rep_group]
    is_rep = (rep_group == group) & is_first
    cluster_id = ids[cluster_row]
    indexed_id = None
    if matches is not None:
        indexed_id = np.full(len(ids), None, dtype=object)
        if len(fixed_at):  # every member of a matched leader's group
            by_group = np.full(len(first), -1, dtype=np.int64)
            by_group[group[fixed_at]] = np.arange(len(fixed_at))
            hit = by_group[group]
            on = hit >= 0
            indexed_id[on] = fixed_rep[hit[on]]
            cluster_id = np.where(on, indexed_id, cluster_id)
            is_rep = is_rep & ~on
            score = np.where(on, fixed_score[np.maximum(hit, 0)], score).astype(score.dtype)
    scored = pa.array(score, pa.int32() if simhash else pa.float64())
    fields = [
        (DOC_ID, pa.string()),
        (CLUSTER_ID, pa.string()),
        (IS_REPRESENTATIVE, pa.bool_()),
        pa.field(DISTANCE if simhash else SIMILARITY, scored.type, nullable=False),
    ]  # a cluster row's score is never null (Spark's stage says so too)
    columns = [pa.array(ids, pa.string()), pa.array(cluster_id, pa.string()),
               pa.array(is_rep), scored]  # fmt: skip
    if indexed_id is not None:
        fields.append((INDEXED_ID, pa.string()))
        columns.append(pa.array(indexed_id, pa.string()))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


@dataclass
class IndexMatches:
    """Leaders verified near indexed documents, one row per (leader, indexed document)."""

    doc_id: npt.NDArray[Any]  # the leader
    indexed_id: npt.NDArray[Any]
    score: npt.NDArray[Any]  # similarity, or distance (SimHash)


def _fixed(
    ids: npt.NDArray[Any], matches: IndexMatches | None, simhash: bool
) -> tuple[I64, npt.NDArray[Any], npt.NDArray[Any]]:
    """Rows of ``ids`` that ``matches`` removes, each one's indexed representative (the
    closest, ties: the smallest id) and its score to it."""
    if matches is None or len(matches.doc_id) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object), np.zeros(0)
    frame = pd.DataFrame(
        {"doc": matches.doc_id, "indexed_id": matches.indexed_id, "score": matches.score}
    )
    keys = match_order(simhash)  # the one declaration of the choice
    by, ascending = ["doc", *(k for k, _ in keys)], [True, *(up for _, up in keys)]
    best = frame.sort_values(by, ascending=ascending, kind="stable").drop_duplicates("doc")
    at = pd.Index(ids).get_indexer(best["doc"].to_numpy())
    if (at < 0).any():
        raise ValueError(f"an index match names no document of the run: {best['doc'][at < 0]}")
    return (at.astype(np.int64), best["indexed_id"].to_numpy(dtype=object),
            best["score"].to_numpy())  # fmt: skip


def _score_array(values: npt.NDArray[Any], pipeline: Pipeline) -> pa.Array:
    simhash = pipeline.kind == "simhash"
    return pa.array(values, pa.int32() if simhash else pa.float64())
