"""What ``report.html`` is built from: a dedup output directory read through storage
(``report.json`` and the parquet datasets) and the bounded tables the page shows.

Everything is read with pyarrow, no Spark, through the filesystem of the output's path or URI;
a failure to read is a :class:`ReportError` naming the directory or dataset. Memory stays
bounded whatever the size of the output: a score column is summarised one batch at a time
(:class:`Scores`), and of ``samples/`` only the texts the page shows are read. The page
itself is written next to ``report.json`` by :func:`write_page`.

Inputs (all written by ``jobs/dedup.py``; only ``report.json`` is required):
- ``report.json``: ``counts``, ``seconds``, ``pipeline``, ``config``,
  ``cluster_size_histogram``, ``hot_buckets``, ``neardup_version``.
- ``clusters/``: parquet ``doc_id``, ``cluster_id``, ``is_representative`` and either
  ``similarity`` (double, MinHash) or ``distance`` (int, SimHash).
- ``pairs/`` (optional): parquet ``a``, ``b`` and ``similarity`` or ``distance``.
- ``samples/`` (optional): the member texts of the clusters shown side by side.

``samples/`` schema (a parquet dataset, one row per shown document):

====================  ================  ==================================================
column                type              meaning
====================  ================  ==================================================
``cluster_id``        string, not null  the cluster (= its representative's ``doc_id``)
``doc_id``            string, not null  the document
``is_representative`` bool, not null    True for the cluster's representative (one a cluster)
``similarity``        double, nullable  MinHash runs: Jaccard to the representative
``distance``          int, nullable     SimHash runs: Hamming distance to the representative
``text``              string, nullable  the document text, possibly truncated by the job
``truncated``         bool, nullable    True when the job cut ``text`` short
====================  ================  ==================================================

Exactly one of ``similarity`` / ``distance`` is present, as in ``clusters/``. The job picks
the clusters (``neardup_udfs.stages.samples.sample_clusters``: the largest, then a
reproducible sample) and writes every member of each; the report shows at most
:data:`MEMBERS_SHOWN` members a cluster, least similar first, and counts the rest.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.dataset as ds

from neardup_udfs.driver.samples import shown_mask
from neardup_udfs.io.storage import ArrowStorage, Storage, StorageError, join

__all__ = [
    "MEMBERS_SHOWN",
    "REPORT_HTML",
    "REPORT_JSON",
    "SIMILARITY_STEPS",
    "Doc",
    "Output",
    "ReportError",
    "Sample",
    "Samples",
    "Scores",
    "cluster_sizes",
    "config_of",
    "default_metric",
    "load_report",
    "read_samples",
    "read_scores",
    "samples_of",
    "shown_ids",
    "stored_scores",
    "write_page",
]


REPORT_JSON = "report.json"
REPORT_HTML = "report.html"
MEMBERS_SHOWN = 4
"""Members shown per side-by-side cluster (besides the representative)."""
SIMILARITY_STEPS = 10_000
"""Similarities are counted rounded to 1/10,000 (fine enough to keep MinHash's 1/k steps)."""


F64 = npt.NDArray[np.float64]


class ReportError(ValueError):
    """The output directory cannot be reported on; the message names the directory or file."""


# --- reading the output directory -----------------------------------------------------------------


class Output:
    """An output directory read through pyarrow's filesystem of its path or URI."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.shown = str(location)
        try:
            self.store = ArrowStorage(self.shown)
        except StorageError as e:
            raise ReportError(str(e)) from None

    def path(self, name: str) -> str:
        return self.store.path(join(self.shown, name))

    def __str__(self) -> str:
        return self.shown


def load_report(out: Output) -> dict[str, Any]:
    """report.json as a dict; ReportError naming the directory when missing or unreadable."""
    try:
        raw = out.store.read_bytes(join(out.shown, REPORT_JSON))
        if raw is None:
            raise ReportError(f"{out.shown!r} has no {REPORT_JSON} (not a dedup output?)")
        data = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReportError(f"cannot read {REPORT_JSON} in {out.shown!r}: {e}") from e
    if not isinstance(data, dict):
        raise ReportError(f"{REPORT_JSON} in {out.shown!r} is not a JSON object")
    return data


def _dataset(out: Output, name: str) -> ds.Dataset | None:
    """The parquet dataset ``name`` of the output (None when absent); ReportError when
    unreadable."""
    if out.store.kind(join(out.shown, name)) is None:
        return None
    try:
        return ds.dataset(out.path(name), format="parquet", filesystem=out.store.fs)
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {join(out.shown, name)!r}: {e}") from e


def _read(dataset: ds.Dataset, columns: Sequence[str], path: str) -> pa.Table:
    """The given columns of ``dataset``; ReportError naming ``path`` on failure."""
    try:
        return dataset.to_table(columns=list(columns))
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {path!r}: {e}") from e


def _score_name(names: Sequence[str]) -> str | None:
    """``similarity`` or ``distance``, whichever of ``names`` is one (None if neither)."""
    return next((n for n in ("similarity", "distance") if n in names), None)


def _score_column(dataset: ds.Dataset) -> str | None:
    """``similarity`` or ``distance``, whichever the dataset has (None if neither)."""
    return _score_name(dataset.schema.names)


_SUM_CHUNK = 1 << 20


@dataclass
class Scores:
    """A streamed summary of a similarity or distance column (no values kept in memory).

    ``counts[i]`` counts the values that round to ``i``: for ``similarity``, to
    ``i / SIMILARITY_STEPS`` (values outside [0, 1] are clipped); for ``distance``, to the
    integer distance ``i`` (negative values count as 0). ``total`` is the sum of the values
    correctly rounded (``math.fsum``): the same whatever batches they came in and whatever
    order summaries were merged in; ``terms`` hold that sum exactly.
    """

    metric: str
    source: str
    count: int = 0
    low: float = math.inf
    high: float = -math.inf
    terms: list[float] = field(default_factory=list)
    counts: npt.NDArray[np.int64] | None = None

    @property
    def total(self) -> float:
        """The sum of the values, correctly rounded."""
        return math.fsum(self.terms)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Scores:
        """The summary report.json stores as ``scores`` (``stages.summaries.score_summary``:
        the count, low, high, total and the nonzero bins as ``steps`` and ``counts``)."""
        steps = np.asarray(data.get("steps") or [], dtype=np.int64)
        counts = np.zeros(int(steps.max()) + 1 if len(steps) else 0, dtype=np.int64)
        counts[steps] = np.asarray(data.get("counts") or [], dtype=np.int64)
        count = int(data.get("count") or 0)
        return Scores(
            str(data["metric"]),
            str(data.get("source", "")),
            count,
            float(data["low"]) if count else math.inf,
            float(data["high"]) if count else -math.inf,
            [float(t) for t in data.get("terms") or [data.get("total") or 0.0]],
            counts,
        )

    def to_json(self, exact: bool = False) -> dict[str, Any]:
        """The form report.json stores (what :meth:`from_json` reads back): the nonzero bins
        as ``steps`` and ``counts``; ``low`` and ``high`` None when there is no value. With
        ``exact``, also the ``terms`` of the total, which a merge needs to stay exact."""
        counts = self.counts if self.counts is not None else np.zeros(0, dtype=np.int64)
        steps = np.flatnonzero(counts)
        return {
            "metric": self.metric,
            "source": self.source,
            "count": self.count,
            "low": self.low if self.count else None,
            "high": self.high if self.count else None,
            "total": float(self.total),
            "steps": [int(x) for x in steps],
            "counts": [int(counts[x]) for x in steps],
            **({"terms": list(self.terms)} if exact else {}),
        }

    def add_column(self, column: pa.Array | pa.ChunkedArray) -> None:
        """Fold the finite values of a numeric column into the summary (nulls, NaNs and
        infinities left out)."""
        self.add(_finite(column))

    def merge(self, other: Scores) -> None:
        """Fold ``other``, a summary of other values of the same metric, into this one: as
        if its values had been added here."""
        if not other.count:
            return
        self.count += other.count
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)
        self.terms = _exact_terms(self.terms + other.terms)
        self.counts = _summed(self.counts, other.counts)

    def add(self, values: F64) -> None:
        """Fold a batch of finite values into the summary."""
        if len(values) == 0:
            return
        self.count += len(values)
        self.low = min(self.low, float(values.min()))
        self.high = max(self.high, float(values.max()))
        for start in range(0, len(values), _SUM_CHUNK):  # a bounded list of Python floats
            chunk = values[start : start + _SUM_CHUNK].tolist()
            self.terms = _exact_terms([*self.terms, *chunk])
        if self.metric == "distance":
            bins = np.bincount(np.clip(np.rint(values), 0, None).astype(np.int64))
        else:
            steps = np.clip(np.rint(values * SIMILARITY_STEPS), 0, SIMILARITY_STEPS)
            bins = np.bincount(steps.astype(np.int64), minlength=SIMILARITY_STEPS + 1)
        self.counts = _summed(self.counts, bins)


Bins = npt.NDArray[np.int64]


def _summed(a: Bins | None, b: Bins | None) -> Bins:
    """Two bin counts added bin by bin (the shorter padded with zeros)."""
    x = a if a is not None else np.zeros(0, dtype=np.int64)
    y = b if b is not None else np.zeros(0, dtype=np.int64)
    size = max(len(x), len(y))
    return np.pad(x, (0, size - len(x))) + np.pad(y, (0, size - len(y)))


def _exact_terms(values: list[float]) -> list[float]:
    """A few floats whose exact sum is the exact sum of ``values``, largest first (each
    holds the next 53 bits of it; none when the sum is 0)."""
    terms: list[float] = []
    while term := math.fsum([*values, *(-t for t in terms)]):
        terms.append(term)
    return terms


def _finite(column: pa.Array | pa.ChunkedArray) -> F64:
    """The non-null values of a numeric column as float64, NaNs and infinities dropped."""
    values = np.asarray(column.drop_null().to_numpy(), dtype=np.float64)
    return values[np.isfinite(values)]


def _scan_scores(
    out: Output, name: str, source: str, members_only: bool, metric_hint: str
) -> tuple[str, Scores | None]:
    """(metric, summary) of the score column of dataset ``name``, one batch at a time.

    ``members_only`` skips representatives (clusters/). The summary is None when the dataset
    is absent, has no score column or holds no finite score; the metric is then the hint.
    """
    dataset = _dataset(out, name)
    metric = _score_column(dataset) if dataset is not None else None
    if dataset is None or metric is None:
        return metric_hint, None
    scores = Scores(metric, source)
    where = ~ds.field("is_representative") if members_only else None
    try:
        for batch in dataset.to_batches(columns=[metric], filter=where):
            scores.add(_finite(batch.column(0)))
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {join(out.shown, name)!r}: {e}") from e
    return metric, scores if scores.count else None


def read_scores(
    out: Output, report: Mapping[str, Any], config: Mapping[str, Any]
) -> tuple[str, Scores | None]:
    """The scores report.json carries (the job's Spark aggregate of the verified pairs);
    for an output written before it did, a scan of pairs/, else of clusters/ members."""
    stored = stored_scores(report)
    if stored is not None:
        return stored
    metric, found = _scan_scores(
        out, "pairs", "verified pairs (pairs/)", False, default_metric(config)
    )
    if found is not None:
        return metric, found
    source = "cluster members vs. their representative (clusters/)"
    return _scan_scores(out, "clusters", source, True, metric)


def stored_scores(report: Mapping[str, Any]) -> tuple[str, Scores | None] | None:
    """(metric, summary) of report.json's ``scores`` (summary None when it counts nothing);
    None when the report has none (an output written before it did)."""
    stored = report.get("scores")
    if not isinstance(stored, Mapping) or not stored.get("metric"):
        return None
    scores = Scores.from_json(stored)
    return scores.metric, scores if scores.count else None


def cluster_sizes(out: Output, ids: Sequence[str]) -> dict[str, int]:
    """Number of documents of each of the clusters ``ids`` according to clusters/ (outputs
    whose samples/ predate its ``cluster_size`` column)."""
    path = join(out.shown, "clusters")
    dataset = _dataset(out, "clusters")
    if dataset is None or not ids:
        return {}
    try:
        table = dataset.to_table(
            columns=["cluster_id"], filter=ds.field("cluster_id").isin(list(ids))
        )
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {path!r}: {e}") from e
    counts = table.group_by("cluster_id").aggregate([("cluster_id", "count")])
    return dict(
        zip(
            counts.column("cluster_id").to_pylist(),
            counts.column("cluster_id_count").to_pylist(),
            strict=True,
        )
    )


@dataclass
class Doc:
    """One document of ``samples/``."""

    doc_id: str
    text: str
    score: float | None
    truncated: bool
    relation: str | None = None  # containment runs: why it was removed (schemas.RELATION)


@dataclass
class Sample:
    """One cluster of ``samples/``: its representative (if present), members and size."""

    cluster_id: str
    representative: Doc | None
    members: list[Doc]
    size: int | None = None  # the whole cluster's members (samples/ ``cluster_size``)


_SAMPLE_COLUMNS = ("cluster_id", "doc_id", "is_representative", "text")
Samples = tuple[str | None, list[Sample]]


def read_samples(out: Output) -> Samples | None:
    """(metric, clusters) from ``samples/``; None when the job wrote no samples."""
    dataset = _dataset(out, "samples")
    if dataset is None:
        return None
    path = join(out.shown, "samples")
    names = dataset.schema.names
    missing = [c for c in _SAMPLE_COLUMNS if c not in names]
    if missing:
        raise ReportError(f"samples {path!r} lacks column(s) {', '.join(missing)}")
    metric = _score_name(names)
    extra = [c for c in (metric, "truncated", "cluster_size") if c is not None and c in names]
    keys = _read(dataset, ["cluster_id", "doc_id", "is_representative", *extra[:1]], path)
    wanted = pa.array(shown_ids(keys, metric), pa.string())
    try:  # only the texts the page shows: samples/ holds every member of its clusters
        shown = dataset.to_table(
            columns=[*_SAMPLE_COLUMNS, *extra], filter=ds.field("doc_id").isin(wanted)
        )
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"cannot read parquet {path!r}: {e}") from e
    return samples_of(shown)


def shown_ids(keys: pa.Table, metric: str | None) -> list[str]:
    """The doc_ids the page shows of samples/ rows (``cluster_id, doc_id,
    is_representative`` and the score): per cluster its representative and the
    MEMBERS_SHOWN least similar members (``driver.samples.shown_mask``)."""
    shown = keys.column("doc_id").filter(shown_mask(keys, metric, MEMBERS_SHOWN))
    return [str(d) for d in shown.to_pylist()]


def samples_of(table: pa.Table) -> Samples:
    """(metric, clusters) of a samples table (``stages.samples.sample_clusters``' rows: the
    job hands them over collected, the CLI reads them from samples/)."""
    metric = _score_name(table.schema.names)
    groups: dict[str, Sample] = {}
    for row in table.to_pylist():
        cid = str(row["cluster_id"])
        size = row.get("cluster_size")
        sample = groups.setdefault(cid, Sample(cid, None, [], None if size is None else int(size)))
        score = row.get(metric) if metric else None
        doc = Doc(
            str(row["doc_id"]),
            row["text"] or "",
            None if score is None else float(score),
            bool(row.get("truncated")),
            row.get("relation"),
        )
        if row["is_representative"] and sample.representative is None:
            sample.representative = doc
        else:
            sample.members.append(doc)
    return metric, list(groups.values())


def config_of(report: Mapping[str, Any]) -> dict[str, Any]:
    """report.json's ``config`` (an empty dict when missing or not an object)."""
    config = report.get("config")
    return config if isinstance(config, dict) else {}


def default_metric(config: Mapping[str, Any]) -> str:
    """The score column a run of ``config`` writes: ``distance`` for SimHash, else
    ``similarity``."""
    return "distance" if config.get("method") == "simhash" else "similarity"


# --- writing the page -----------------------------------------------------------------------------


def write_page(store: Storage, output: str, page: str) -> str:
    """Write ``page`` as ``report.html`` of the output directory ``output`` through
    ``store`` (UTF-8); return its location."""
    target = join(output, REPORT_HTML)
    store.write_bytes(target, page.encode("utf-8"))
    return target
