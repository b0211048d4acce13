"""What a dedup run reports, whichever engine ran it, with no Spark: its counts (the summary
the job prints and report.json holds), the check that they account for every input row,
report.json's run keys, and the near-duplicate core's settings of a dedup config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neardup_udfs.clock import LostRecords
from neardup_udfs.driver.settings import NearCounts, NearSettings
from neardup_udfs.index import store as index_store
from neardup_udfs.index.store import IndexManifest
from neardup_udfs.io.report_files import run_keys
from neardup_udfs.presets import Pipeline

if TYPE_CHECKING:  # only its type
    from neardup_udfs.config import DedupConfig

__all__ = [
    "DRIVER_PATH",
    "Summary",
    "check_accounted",
    "format_summary",
    "near_settings",
    "report_extras",
    "take_counts",
]


@dataclass
class Summary(NearCounts):
    """What a run did; also the counts of report.json."""

    input: int = 0
    rejected: int = 0
    empty: int = 0  # no text left after normalization: kept, nobody's duplicate
    exact_duplicates: int = 0
    index_matches: int = 0  # --against: documents removed as duplicates of indexed ones
    containment_pairs: int = 0  # --containment: verified pairs of kept documents
    contained: int = 0  # --containment: documents removed next to a container
    containment_kept: int = 0  # --containment: kept, though contained (no container stays)
    index_added: int = 0  # --update-index: documents appended to the index
    pipeline: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    input_stats: dict[str, Any] = field(default_factory=dict)  # report.json "input"


def format_summary(s: Summary) -> str:
    """The summary the job prints: one count per line, the pipeline id first."""
    rows: list[tuple[str, Any]] = [
        ("pipeline", s.pipeline),
        ("input documents", s.input),
        ("rejected", s.rejected),
        ("empty (no visible text)", s.empty),
        ("exact duplicates", s.exact_duplicates),
        ("candidate pairs", s.candidates),
        ("verified pairs", s.verified),
        ("clusters (2+ members)", s.clusters),
        ("removed as duplicates", s.removed),
        ("kept", s.kept),
        ("chained members", s.chained),
        ("hot buckets", s.hot_buckets),
        ("matched the index", s.index_matches),
        *(
            [("containment pairs", s.containment_pairs), ("removed as contained", s.contained)]
            if ";containment=" in s.pipeline
            else []
        ),
        ("added to the index", s.index_added),
        ("cluster rounds", s.rounds),
        ("finished on the driver", s.driver_edges),
        ("seconds", sum(s.seconds.values())),
    ]
    return "\n".join(
        f"{k:<24}{v:>12}" if not isinstance(v, float) else f"{k:<24}{v:>12.1f}" for k, v in rows
    )


def check_accounted(summary: Summary, clustered: int, accepted: int) -> None:
    """LostRecords unless every accepted row has its cluster row and kept + removed +
    rejected = input."""
    if clustered != accepted or summary.kept + summary.removed + summary.rejected != summary.input:
        raise LostRecords(
            f"input {summary.input}: kept {summary.kept} + removed {summary.removed} + "
            f"rejected {summary.rejected} != input (clustered {clustered} of {accepted})"
        )


def report_extras(
    config: DedupConfig,
    summary: Summary,
    settings: NearSettings,
    *,
    histogram: Mapping[int, int],
    engine: Mapping[str, Any],
    cluster: Mapping[str, Any],
    bands: list[dict[str, Any]],
    hot: list[dict[str, Any]],
    scores: Mapping[str, Any],
    spark: Mapping[str, Any],
    index: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """report.json of a dedup run, whichever engine ran it, as ``io.report_files.report_of``'s
    keywords (counts, seconds, pipeline, config, then the run's own keys)."""
    pipeline = config.pipeline()
    return dict(
        **run_keys(summary, config, (config.run_id(), pipeline.version)),
        cluster_size_histogram={str(k): v for k, v in histogram.items()},
        engine=dict(engine),
        cluster=dict(cluster),
        bands=bands,
        **({"index": dict(index)} if index is not None else {}),
        hot_buckets=hot,
        **({"hamming": settings.hamming_scheme().describe()} if pipeline.kind == "simhash" else {}),
        scores=dict(scores),
        spark=dict(spark),
    )


DRIVER_PATH: dict[str, Any] = {
    "clustering": "anchored",
    "path": "driver",
    "why": "the whole run's core ran on the driver (engine)",
    "rounds": 0,
}
"""report.json ``cluster`` of a run whose core ran in the driver's process."""


def take_counts(summary: Summary, counts: Mapping[str, int]) -> None:
    """``summary`` holds ``driver.near``'s ``counts``."""
    for key in ("empty", "exact_duplicates", "candidates", "verified", "hot_buckets", "kept",
                "removed", "clusters", "driver_edges"):  # fmt: skip
        setattr(summary, key, counts[key])
    for key in ("containment_pairs", "contained", "containment_kept"):  # containment runs
        setattr(summary, key, counts.get(key, 0))


def near_settings(
    config: DedupConfig, pipeline: Pipeline, indexed: IndexManifest | None = None
) -> NearSettings:
    """The shared stages' settings of a dedup config (the chaining floor defaults to the
    run's own threshold: ``k`` for SimHash, ``jaccard_threshold`` for MinHash; a SimHash run
    against an existing index, ``indexed``, keys its candidates with the index's scheme)."""
    scheme = config.hamming_scheme()
    if indexed is not None and scheme is not None:
        scheme = index_store.scheme_of(indexed)  # an index keeps its scheme
    floor = config.chaining_floor
    if floor is None:
        floor = config.max_distance if pipeline.kind == "simhash" else config.jaccard_threshold
    return NearSettings(
        max_distance=config.max_distance,
        threshold=config.jaccard_threshold,
        verification=config.verification,
        hot_bucket_size=config.hot_bucket_size,
        clustering=config.clustering,
        max_rounds=config.max_rounds,
        max_driver_edges=config.max_driver_edges,
        rule=config.representative,
        floor=floor,
        no_chaining=config.no_chaining,
        scheme=scheme,
        containment=config.containment,
        containment_min_shingles=config.containment_min_shingles,
    )
