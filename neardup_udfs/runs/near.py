"""The near-duplicate core every deduplicating run shares (text and images): candidates ->
verify -> cluster, each a timed stage of the run's clock, with the counts its report shows.

A run brings its own reading and exact-duplicate grouping (``sketches``: one row per group
leader) and its own outputs; everything between is here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from neardup_udfs.clock import StageClock
from neardup_udfs.driver.near import (
    IndexMatches,
    anchored_clusters,
    cluster_tally,
)
from neardup_udfs.driver.settings import (
    HOT_BUCKETS_LISTED,
    NearCounts,
    NearSettings,
    hot_bucket,
    rule_order,
)
from neardup_udfs.engine import cluster_on_driver, edge_budget
from neardup_udfs.io.frames import arrow_frame
from neardup_udfs.presets import Pipeline
from neardup_udfs.runtime import Cache
from neardup_udfs.schemas import (
    BAND,
    CLUSTER_ID,
    CONTAINMENT,
    DISTANCE,
    DOC_ID,
    INDEXED_ID,
    IS_REPRESENTATIVE,
    LEADER,
    RELATION,
    SIMILARITY,
    A,
    B,
)
from neardup_udfs.session import conf_of
from neardup_udfs.stages.candidates import first_band_counts, scored_candidates
from neardup_udfs.stages.cluster import cluster
from neardup_udfs.stages.containment import contain
from neardup_udfs.stages.verify import verify

__all__ = ["Clusters", "NearDuplicates"]


@dataclass(frozen=True)
class Clusters:
    """The cluster stage's output and its tally."""

    clusters: DataFrame  # doc_id, cluster_id, is_representative, score (+ indexed_id)
    rows: int
    indexed: int  # rows represented by an indexed document
    histogram: dict[int, int]  # cluster size -> clusters of that size


class NearDuplicates:
    """The shared stages over one run's ``sketches`` (``doc_id`` and the pipeline's sketch
    column, one row per exact-duplicate group leader).

    Call :meth:`find` (stage ``pairs``), then optionally :meth:`band_report`, then
    :meth:`cluster` (stage ``cluster``).
    Counts land in ``counts``; every frame persisted goes to ``cache``.
    """

    def __init__(
        self,
        sketches: DataFrame,
        n_sketched: int,
        pipeline: Pipeline,
        settings: NearSettings,
        *,
        cache: Cache,
        clock: StageClock,
        counts: NearCounts,
    ) -> None:
        self.sketches, self.n_sketched = sketches, n_sketched
        self.pipeline, self.settings = pipeline, settings
        self.cache, self.clock, self.counts = cache, clock, counts
        self.hot: list[dict[str, Any]] = []  # the largest hot buckets, for the report
        self.edges: DataFrame | None = None  # the verified pairs as the outputs show them
        self._bands: list[dict[str, Any]] | None = None
        self.cluster_path: dict[str, Any] = {}  # report.json "cluster": how it was clustered

    def find(self, texts: DataFrame | None = None, *, prepared: bool = True) -> DataFrame:
        """The verified pairs, ``a, b`` and ``similarity`` or ``distance`` (``edges``),
        persisted and counted (stage ``pairs``: candidates, their scores and the checks of
        unsure ones, counted per band in one Spark job). ``texts`` (``doc_id, text`` of the
        leaders): MinHash exact checks need them (``prepared=False``: the input texts,
        normalized where checked)."""
        s, counts, keep = self.settings, self.counts, self.cache.keep
        with self.clock.stage("pairs") as rows:
            scheme = s.hamming_scheme() if self.pipeline.kind == "simhash" else None
            # every pair once, in the first band or table that produces it, with its score
            found = scored_candidates(
                self.sketches, self.pipeline, s.hot_bucket_size, keep, scheme=scheme
            )
            pairs = keep(found.pairs)
            verified = keep(
                verify(
                    pairs,
                    self.sketches,
                    self.pipeline,
                    max_distance=s.max_distance,
                    threshold=s.threshold,
                    verification=s.verification,
                    texts=texts,
                    prepared=prepared,
                    keep=keep,
                )
            )
            per_band = first_band_counts(pairs, verified)  # computes both
            self._bands = [r.asDict() for r in per_band.orderBy(BAND).collect()]
            counts.candidates = sum(int(r["candidates"]) for r in self._bands)
            counts.verified = sum(int(r["verified"]) for r in self._bands)
            self.edges = verified.drop(BAND) if BAND in verified.columns else verified
            largest = found.hot_buckets.orderBy(F.col("size").desc(), BAND, "key")
            hot = largest.limit(HOT_BUCKETS_LISTED).collect()
            counts.hot_buckets = (
                len(hot) if len(hot) < HOT_BUCKETS_LISTED else found.hot_buckets.count()
            )
            self.hot = [hot_bucket(r[BAND], r["key"], r["size"]) for r in hot]
            rows.rows_in, rows.rows_out = self.n_sketched, counts.verified
        return self.edges

    def band_report(self) -> list[dict[str, Any]]:
        """``band, candidates, verified`` per band (SimHash, pHash: table) that produced a
        pair; each pair counts in the first band that produced it (counted by :meth:`find`)."""
        assert self._bands is not None, "find() first"
        return self._bands

    def cluster(
        self,
        members: DataFrame,
        matches: DataFrame | None = None,
        documents: int | None = None,
        matched: int = 0,
    ) -> Clusters:
        """One row per member document (stage ``cluster``): ``members`` is ``doc_id,
        leader, __length, __order`` (``stages.cluster.cluster``); ``matches``: leaders near
        an indexed document (``matched`` rows); ``documents``: the rows of ``members``, when
        the caller knows them. Sets the cluster counts.

        Notes:
            Anchored, a graph whose edges and index matches fit the edge budget and whose
            members fit the driver (``engine.cluster_on_driver``) is clustered by the core
            there (``driver.near.anchored_clusters``, the function the one-process engines
            call); otherwise by the Spark stages (``stages.cluster``). The rows are the same.
        """
        assert self.edges is not None, "find() first"
        s, counts = self.settings, self.counts
        conf = conf_of(members.sparkSession)
        budget, source = (
            (s.max_driver_edges, "max_driver_edges")
            if s.max_driver_edges is not None
            else edge_budget(conf)
        )
        in_core = s.clustering == "anchored" and cluster_on_driver(
            counts.verified + matched, documents, conf, budget
        )
        with self.clock.stage("cluster") as rows:
            if in_core:
                done = self._in_core(members, matches)
                self.cluster_path = _cluster_path(s.clustering, 0, budget, source)
                rows.rows_in, rows.rows_out = counts.verified, counts.kept
                return done
            clustered = cluster(
                members,
                self.edges,
                self.sketches,
                kind=self.pipeline.kind,
                rule=s.rule,
                clustering=s.clustering,
                max_rounds=s.max_rounds,
                max_driver_edges=budget,
                edge_count=counts.verified,
                floor=s.floor,
                no_chaining=s.no_chaining,
                matches=matches,
            )
            self.cache.frames.extend(clustered.persisted)
            clusters = self.cache.keep(clustered.clusters)
            n, kept, indexed, histogram = _cluster_tally(clusters)  # one Spark job
            counts.kept, counts.removed = kept, n - kept
            counts.clusters = sum(c for size, c in histogram.items() if size > 1)
            counts.rounds, counts.driver_edges = clustered.rounds, clustered.driver_edges
            counts.chained = clustered.chained
            self.cluster_path = _cluster_path(s.clustering, clustered.rounds, budget, source)
            rows.rows_in, rows.rows_out = counts.verified, kept
        return Clusters(clusters, n, indexed, histogram)

    def _in_core(self, members: DataFrame, matches: DataFrame | None) -> Clusters:
        """The anchored clusters of the collected ``members``, verified edges and index
        ``matches``, computed by the core on the driver; the cluster counts set (the whole
        graph on the driver: no round)."""
        assert self.edges is not None
        simhash = self.pipeline.kind == "simhash"
        score = DISTANCE if simhash else SIMILARITY
        table = members.select(DOC_ID, LEADER, "__length", "__order").toArrow()
        edges = self.edges.select(A, B, score).toArrow()

        def values(t: pa.Table, name: str) -> Any:
            return t.column(name).to_numpy(zero_copy_only=False)

        near_index = None
        if matches is not None:
            found = matches.select(DOC_ID, INDEXED_ID, score).toArrow()
            near_index = IndexMatches(values(found, DOC_ID), values(found, INDEXED_ID),
                                      values(found, score))  # fmt: skip
        ids = values(table, DOC_ID)
        place = rule_order(ids, table.column("__length"), table.column("__order"),
                           self.settings.rule)  # fmt: skip
        clustered = anchored_clusters(ids, values(table, LEADER), place, values(edges, A),
                                      values(edges, B), values(edges, score),
                                      simhash=simhash, matches=near_index)  # fmt: skip
        tally: dict[str, int] = {}
        histogram = cluster_tally(clustered, tally)
        counts = self.counts
        counts.kept, counts.removed = tally["kept"], tally["removed"]
        counts.clusters = tally["clusters"]
        counts.rounds, counts.driver_edges, counts.chained = 0, counts.verified, 0
        indexed = 0
        if matches is not None:
            indexed = clustered.num_rows - clustered.column(INDEXED_ID).null_count
        clusters = self.cache.keep(arrow_frame(members.sparkSession, clustered))
        return Clusters(clusters, clustered.num_rows, indexed, histogram)

    def contain(
        self, clustered: Clusters, texts: DataFrame, members: DataFrame
    ) -> tuple[Clusters, DataFrame, dict[str, int]]:
        """The clusters after containment (stage ``containment``, ``stages.containment``;
        ``settings.containment`` must be set), the containment pairs, and the containment
        counts (``containment_pairs``, ``contained``, ``containment_kept``); the cluster
        counts are set again. ``texts``: ``doc_id, text`` (input texts); ``members``: as
        :meth:`cluster` takes them."""
        s, counts = self.settings, self.counts
        assert s.containment is not None, "containment is off"
        with self.clock.stage("containment") as rows:
            rows.rows_in = counts.kept
            done = contain(clustered.clusters, texts, members, self.pipeline,
                           threshold=s.containment, min_shingles=s.containment_min_shingles,
                           rule=s.rule, keep=self.cache.keep)  # fmt: skip
            clusters = self.cache.keep(done.clusters)
            n, kept, indexed, histogram = _cluster_tally(clusters)
            counts.kept, counts.removed = kept, n - kept
            counts.clusters = sum(c for size, c in histogram.items() if size > 1)
            contained = clusters.where(F.col(RELATION) == CONTAINMENT).count()
            rows.rows_out = kept
        return (
            Clusters(clusters, n, indexed, histogram),
            done.pairs,
            {
                **done.counts,
                "contained": contained,
            },
        )


def _cluster_path(clustering: str, rounds: int, budget: int, source: str) -> dict[str, Any]:
    """What report.json says of the cluster stage: which path ran and why."""
    if clustering != "anchored":
        return {"clustering": clustering, "path": "rounds", "rounds": rounds}
    path = "driver" if rounds == 0 else "rounds, then the driver"
    why = (
        "the verified graph fits the driver's edge budget"
        if rounds == 0
        else "the verified graph exceeds the driver's edge budget: parallel rounds until the "
        "undecided remainder fits"
    )
    return {
        "clustering": clustering,
        "path": path,
        "why": why,
        "rounds": rounds,
        "driver_edge_budget": budget,
        "budget_from": source,
    }


def _cluster_tally(clusters: DataFrame) -> tuple[int, int, int, dict[int, int]]:
    """``rows, kept, indexed, histogram`` of the cluster stage's output: its rows, its
    representatives, its rows represented by an indexed document (0 without ``indexed_id``)
    and the number of clusters of each size."""
    indexed = F.col(INDEXED_ID).isNotNull() if INDEXED_ID in clusters.columns else F.lit(False)
    per_cluster = clusters.groupBy(CLUSTER_ID).agg(
        F.count(F.lit(1)).alias("size"),
        F.sum(F.col(IS_REPRESENTATIVE).cast("long")).alias("kept"),
        F.sum(indexed.cast("long")).alias("indexed"),
    )
    by_size = per_cluster.groupBy("size").agg(
        F.count(F.lit(1)).alias("n"), F.sum("kept").alias("kept"), F.sum("indexed").alias("indexed")
    )
    rows = by_size.collect()
    histogram = {int(r["size"]): int(r["n"]) for r in sorted(rows, key=lambda r: r["size"])}
    return (
        sum(int(r["size"]) * int(r["n"]) for r in rows),
        sum(int(r["kept"]) for r in rows),
        sum(int(r["indexed"]) for r in rows),
        histogram,
    )
