"""What the near-duplicate core needs of a run's configuration, and the counts it reports:
one declaration, read by the Spark stages (``runs.near``) and the core in one process
(``driver.near``) alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup_udfs.kernels.hamming_tables import SampledScheme, Scheme
from neardup_udfs.kernels.minhash import estimate_margin

__all__ = [
    "CLUSTERINGS",
    "Checks",
    "HOT_BUCKETS_LISTED",
    "REPRESENTATIVES",
    "NearCounts",
    "NearSettings",
    "RuleField",
    "hot_bucket",
    "match_order",
    "rule_fields",
    "rule_order",
]

CLUSTERINGS = ("anchored", "connected")  # config key clustering
REPRESENTATIVES = ("min_id", "earliest", "longest")  # config key representative


@dataclass(frozen=True)
class RuleField:
    """One key of the representative rule's order, before the id: the member's ``order``
    (the order column's value, nulls last) or ``length`` (UTF-8 bytes of its text),
    ascending unless ``descending``."""

    name: str  # "order" | "length"
    descending: bool = False
    nullable: bool = False  # a null sorts after every value


_RULE_FIELDS = {
    "min_id": (),
    "earliest": (RuleField("order", nullable=True),),
    "longest": (RuleField("length", descending=True),),
}


def rule_fields(rule: str) -> tuple[RuleField, ...]:
    """The representative rule's keys, in order, the one declaration every engine renders
    (``stages.cluster.rule_key``, ``stages.select``, ``driver.near``): a member comes first
    by them, then by the smallest id (ids compare as UTF-8 bytes, as Spark orders strings).
    ValueError names an unknown rule."""
    if rule not in _RULE_FIELDS:
        raise ValueError(f"representative rule must be one of {REPRESENTATIVES}, got {rule!r}")
    return _RULE_FIELDS[rule]


def match_order(simhash: bool) -> tuple[tuple[str, bool], ...]:
    """How a document matched to several indexed documents picks the one it is removed in
    favour of, the one declaration both shells render (``stages.cluster``'s window,
    ``driver.near``'s sort): ``(field, ascending)`` keys, first wins; the closest indexed
    document (``score``: SimHash the smallest distance, MinHash the largest similarity),
    ties: the smallest ``indexed_id``."""
    return (("score", simhash), ("indexed_id", True))


def rule_order(
    ids: npt.NDArray[Any],
    length: pa.ChunkedArray | pa.Array,
    order: pa.ChunkedArray | pa.Array | None,
    rule: str,
) -> npt.NDArray[np.int64]:
    """Every row's place (0 first) in the representative rule's order
    (:func:`rule_fields`: ``earliest`` by ``order`` with nulls last, ``longest``
    by ``length`` descending, ``min_id`` by id; ties by id), for rows of ``ids`` with their
    ``length`` and ``order`` values aligned."""
    by_id = np.empty(len(ids), dtype=np.int64)
    by_id[np.argsort(ids, kind="stable")] = np.arange(len(ids))
    keys = []
    for key in rule_fields(rule):  # the one declaration of the rule
        values = length if key.name == "length" else order
        assert values is not None, f"the {rule} rule needs the {key.name} column"
        how = "descending" if key.descending else "ascending"
        ranked = pc.rank(values, sort_keys=how, null_placement="at_end", tiebreaker="dense")
        keys.append(ranked.to_numpy(zero_copy_only=False))
    sort = np.lexsort((by_id, *reversed(keys)))  # the last key given sorts first
    place = np.empty(len(ids), dtype=np.int64)
    place[sort] = np.arange(len(ids))
    return place


HOT_BUCKETS_LISTED = 100  # report.json lists the largest hot buckets, at most this many


def hot_bucket(band: int, key: int, size: int) -> dict[str, Any]:
    """One entry of report.json's ``hot_buckets``: the band (or table), the bucket key as 16
    hex digits of its unsigned 64-bit value, and the bucket's size."""
    return {"band": band, "key": f"{key & (2**64 - 1):016x}", "size": size}


@dataclass
class NearCounts:
    """The counts of the shared stages (a run's summary extends it)."""

    candidates: int = 0
    verified: int = 0
    clusters: int = 0  # clusters with at least two members
    kept: int = 0
    removed: int = 0
    chained: int = 0
    hot_buckets: int = 0
    rounds: int = 0
    driver_edges: int = 0  # anchored clustering: undecided edges finished on the driver


@dataclass(frozen=True)
class Checks:
    """How MinHash candidates are verified, by their signature estimate: one at ``sure`` or
    above is kept as estimated; one at ``check`` or above but under ``sure`` is kept when
    its exact Jaccard is at least ``threshold`` (with that score); one under ``check`` is
    dropped. ``exact``: every pair checked; ``estimate``: none; ``hybrid``: those within
    ``kernels.minhash.estimate_margin`` (4 standard deviations) of the threshold."""

    threshold: float
    check: float  # the smallest estimate checked exactly (or kept, at sure or above)
    sure: float  # the smallest estimate kept without a check

    @staticmethod
    def of(verification: str, threshold: float, k: int) -> Checks:
        """The checks of ``verification`` (hybrid | exact | estimate) at ``threshold`` for
        signatures of ``k`` slots."""
        if verification == "exact":
            return Checks(threshold, -np.inf, np.inf)
        if verification == "estimate":
            return Checks(threshold, threshold, threshold)
        margin = estimate_margin(k)
        return Checks(threshold, threshold - margin, threshold + margin)


@dataclass(frozen=True)
class NearSettings:
    """What the shared stages need of a run's configuration."""

    max_distance: int  # SimHash/pHash: the largest Hamming distance kept
    threshold: float  # MinHash: the smallest Jaccard kept
    verification: str  # MinHash: hybrid | exact | estimate | off
    hot_bucket_size: int
    clustering: str
    max_rounds: int
    max_driver_edges: int | None  # None: from spark.driver.memory (session.driver_edge_budget)
    rule: str  # the representative rule: min_id | earliest | longest
    floor: float  # connected clustering's chaining floor
    no_chaining: bool = False
    scheme: Scheme | SampledScheme | None = None  # SimHash/pHash keys (None: ditto's k + 1)
    containment: float | None = None  # MinHash, anchored: the containment threshold (None: off)
    containment_min_shingles: int = 20  # containment: smaller shingle sets take no part

    def checks(self, k: int) -> Checks:
        """How MinHash pairs of signatures of ``k`` slots are verified (:class:`Checks`)."""
        return Checks.of(self.verification, self.threshold, k)

    def hamming_scheme(self) -> Scheme | SampledScheme:
        """The candidate keys' scheme of a Hamming run."""
        return (
            self.scheme
            if self.scheme is not None
            else Scheme(self.max_distance + 1, self.max_distance)
        )
